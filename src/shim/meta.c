/*
 * The session's view of an inode: asking the daemon, laying its answer
 * over stat results, and the bookkeeping after a creation.  Every function
 * here returns 0 or -errno and leaves errno as it found it.
 */
#include "shim.h"

#include <limits.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "common/util.h"

int fe_sys_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	int saved = errno;
	long r;

#ifdef SYS_newfstatat
	r = syscall(SYS_newfstatat, dirfd, path, st, flags);
#else
	r = REAL(fstatat, dirfd, path, st, flags);
#endif
	r = r < 0 ? -errno : 0;
	errno = saved;
	return (int)r;
}

int fe_sys_fstat(int fd, struct stat *st)
{
	return fe_sys_fstatat(fd, "", st, AT_EMPTY_PATH);
}

void fe_req_init(struct fe_req *req, uint16_t op, const struct stat *st)
{
	memset(req, 0, sizeof(*req));
	req->op = op;
	req->dev = st->st_dev;
	req->ino = st->st_ino;
	req->real_mode = st->st_mode;
	req->real_uid = st->st_uid;
	req->real_gid = st->st_gid;
}

void fe_meta_get(struct fe_meta *m)
{
	struct fe_view v;
	struct fe_req req = {
		.op = FE_OP_GET,
		.dev = m->dev,
		.ino = m->ino,
		.real_mode = m->mode,
		.real_uid = m->uid,
		.real_gid = m->gid,
	};
	struct fe_rep rep;

	/* The shared mapping first; the daemon when it cannot tell (and
	 * drops a stale record on the way). */
	if (fe_map_view(m->dev, m->ino, m->mode, m->uid, m->gid, &v) >= 0) {
		m->uid = v.uid;
		m->gid = v.gid;
		m->mode = v.mode;
		if (v.dev)
			m->rdev = v.rdev;
		return;
	}
	if (fe_conn_call(&req, NULL, &rep) < 0 || rep.err < 0) {
		/* No daemon: what a file without a record shows. */
		if (!fe_unknown_is_real()) {
			m->uid = 0;
			m->gid = 0;
		}
		return;
	}
	m->uid = rep.uid;
	m->gid = rep.gid;
	/* The daemon never changes the type of a file it did not fake,
	 * but a reply is checked like any input. */
	if ((rep.mode & S_IFMT) != 0)
		m->mode = rep.mode;
	if (rep.flags & FE_R_DEV)
		m->rdev = rep.rdev;
}

#define META_FROM(st)                                                       \
	{                                                                   \
		.dev = (st)->st_dev, .ino = (st)->st_ino,                   \
		.mode = (st)->st_mode, .uid = (st)->st_uid,                 \
		.gid = (st)->st_gid, .rdev = (st)->st_rdev,                 \
	}

#define META_TO(st, m)                                                      \
	do {                                                                \
		(st)->st_mode = (m).mode;                                   \
		(st)->st_uid = (m).uid;                                     \
		(st)->st_gid = (m).gid;                                     \
		(st)->st_rdev = (m).rdev;                                   \
	} while (0)

void fe_meta_faked(const struct stat *st, struct fe_meta *m)
{
	*m = (struct fe_meta)META_FROM(st);
	fe_meta_get(m);
}

void fe_fix_stat(struct stat *st)
{
	struct fe_meta m = META_FROM(st);

	fe_meta_get(&m);
	META_TO(st, m);
}

void fe_fix_stat64(struct stat64 *st)
{
	struct fe_meta m = META_FROM(st);

	fe_meta_get(&m);
	META_TO(st, m);
}

/* The caller made sure type, mode, ids and inode were asked for. */
void fe_fix_statx(struct statx *stx)
{
	struct fe_meta m = {
		.dev = makedev(stx->stx_dev_major, stx->stx_dev_minor),
		.ino = stx->stx_ino,
		.mode = stx->stx_mode,
		.uid = stx->stx_uid,
		.gid = stx->stx_gid,
		.rdev = makedev(stx->stx_rdev_major, stx->stx_rdev_minor),
	};

	fe_meta_get(&m);
	stx->stx_mode = (uint16_t)m.mode;
	stx->stx_uid = m.uid;
	stx->stx_gid = m.gid;
	stx->stx_rdev_major = major(m.rdev);
	stx->stx_rdev_minor = minor(m.rdev);
}

static const char *join(char *buf, size_t size, size_t len, const char *path)
{
	size_t plen = strlen(path);

	if (len + 1 + plen + 1 > size)
		return NULL;
	if (len == 0 || buf[len - 1] != '/')
		buf[len++] = '/';
	memcpy(buf + len, path, plen + 1);
	return buf;
}

const char *fe_fdpath(int fd, char *buf, size_t size)
{
	char link[32];
	int saved = errno;
	ssize_t n;

	fe_fmt(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, size - 1);
	errno = saved;
	if (n <= 0 || buf[0] != '/')
		return NULL;
	buf[n] = '\0';
	return buf;
}

const char *fe_abspath(int dirfd, const char *path, char *buf, size_t size)
{
	int saved = errno;

	if (!path)
		return NULL;
	if (path[0] == '/') {
		size_t n = strlen(path);

		if (n + 1 > size)
			return NULL;
		return memcpy(buf, path, n + 1);
	}
	if (dirfd == AT_FDCWD) {
		if (!getcwd(buf, size)) {
			errno = saved;
			return NULL;
		}
	} else if (!fe_fdpath(dirfd, buf, size)) {
		return NULL;
	}
	if (path[0] == '\0')
		return buf;
	return join(buf, size, strlen(buf), path);
}

int fe_created(int dirfd, const char *path, int fd, int stat_flags,
	       mode_t setid)
{
	char pbuf[FE_PATH_MAX];
	const char *hint;
	struct fe_req req;
	struct fe_rep rep;
	struct fe_view v;
	struct stat st;
	mode_t need, want, real;
	int r;

	r = fd >= 0 ? fe_sys_fstat(fd, &st) :
		      fe_sys_fstatat(dirfd, path, &st, stat_flags);
	if (r < 0)
		return r;
	fe_req_init(&req, FE_OP_CREATE, &st);
	req.flags = FE_F_UID | FE_F_GID;
	req.uid = fe_cred_fsuid();
	req.gid = fe_cred_fsgid();

	/* Root can use any file it made, whatever its mode; the real user
	 * can only if it keeps owner access.  And the real file is never
	 * set-id: those bits live in the record only. */
	need = S_ISDIR(st.st_mode) ? 0700 :
	       S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode) ? 0600 : 0;
	want = (st.st_mode & 07777) | (setid & 07000);
	fe_sgid_inherit(dirfd, path, fd, &st, &req.gid, &want);
	real = (want | need) & 0777;
	if (!S_ISLNK(st.st_mode) && real != (st.st_mode & 07777)) {
		int saved = errno;
		long c = fd >= 0 ? syscall(SYS_fchmod, fd, real) :
				   syscall(SYS_fchmodat, dirfd, path, real);

		errno = saved;
		if (c == 0)
			req.real_mode = (st.st_mode & S_IFMT) | real;
	}
	if (!S_ISLNK(st.st_mode) && want != (req.real_mode & 07777)) {
		req.flags |= FE_F_MODE;
		req.mode = want;
	}
	/* No record at this inode and none needed: CREATE would change
	 * nothing (a record left by a dead file shows in the mapping, and
	 * then CREATE goes and clears it). */
	if (!(req.flags & FE_F_MODE) && fe_map_view_st(&st, &v) == 0 &&
	    v.uid == req.uid && v.gid == req.gid)
		return 0;
	hint = fd >= 0 && !path ? fe_fdpath(fd, pbuf, sizeof(pbuf)) :
				  fe_abspath(dirfd, path, pbuf, sizeof(pbuf));
	r = fe_conn_call(&req, hint, &rep);
	return r < 0 ? r : rep.err;
}
