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

#include "common/mapread.h"
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

uint32_t fe_statx_btag(const struct statx *stx)
{
	if (!(stx->stx_mask & STATX_BTIME))
		return 0;
	return fe_btag(stx->stx_btime.tv_sec, stx->stx_btime.tv_nsec);
}

/* 1 once statx has failed with ENOSYS (a kernel before 4.11) or EPERM (a
 * seccomp filter that predates it): newfstatat from then on. */
static int no_statx;

#define STATX_FLAGS (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT)

/* A system call of five arguments, returning -errno and leaving errno
 * alone: inline where we know the instruction (the stat family's statx is
 * on every stat's path; libc's syscall() and our router cost it 60
 * instructions more), libc's syscall() elsewhere. */
static long sys5(long nr, long a, long b, long c, long d, long e)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;

	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4)
			 : "memory");
	return x0;
#else
	int saved = errno;
	long r = syscall(nr, a, b, c, d, e);

	r = r < 0 ? -errno : r;
	errno = saved;
	return r;
#endif
}

/* statx of dirfd+path, as much as a stat gives and the birth time.
 * Returns 0, -errno, or 1 when statx cannot be had here.  The stat
 * family never triggers an automount (statx(2): it acts as with
 * AT_NO_AUTOMOUNT), so its callers pass that flag.  errno untouched. */
static int sys_statx(int dirfd, const char *path, int flags, struct statx *stx)
{
	long r;

	if (__atomic_load_n(&no_statx, __ATOMIC_RELAXED))
		return 1;
	/* statx takes flags that fstatat refuses (AT_STATX_*): the caller
	 * must get fstatat's EINVAL. */
	if (flags & ~STATX_FLAGS)
		return -EINVAL;
	r = sys5(SYS_statx, dirfd, (long)path, flags,
		 STATX_BASIC_STATS | STATX_BTIME, (long)stx);
	if (r == -ENOSYS || r == -EPERM) {
		__atomic_store_n(&no_statx, 1, __ATOMIC_RELAXED);
		return 1;
	}
	return (int)r;
}

/*
 * A statx result as the caller's stat struct, field by field as glibc
 * converts it where stat is statx (__cp_stat64_statx): a struct stat of
 * this ABI holds every value, since these are LP64 targets only.
 */
#define STATX_TO_STAT(st, stx)                                              \
	do {                                                                \
		*(st) = (__typeof__(*(st))){                                \
			.st_dev = makedev((stx)->stx_dev_major,             \
					  (stx)->stx_dev_minor),            \
			.st_ino = (stx)->stx_ino,                           \
			.st_mode = (stx)->stx_mode,                         \
			.st_nlink = (stx)->stx_nlink,                       \
			.st_uid = (stx)->stx_uid,                           \
			.st_gid = (stx)->stx_gid,                           \
			/* 0 but for devices: no shifts on the way */    \
			.st_rdev = ((stx)->stx_rdev_major |                 \
				    (stx)->stx_rdev_minor) ?                \
					   makedev((stx)->stx_rdev_major,   \
						   (stx)->stx_rdev_minor) : \
					   0,                               \
			.st_size = (off_t)(stx)->stx_size,                  \
			.st_blksize = (blksize_t)(stx)->stx_blksize,        \
			.st_blocks = (blkcnt_t)(stx)->stx_blocks,           \
			.st_atim = { (stx)->stx_atime.tv_sec,               \
				     (stx)->stx_atime.tv_nsec },            \
			.st_mtim = { (stx)->stx_mtime.tv_sec,               \
				     (stx)->stx_mtime.tv_nsec },            \
			.st_ctim = { (stx)->stx_ctime.tv_sec,               \
				     (stx)->stx_ctime.tv_nsec },            \
		};                                                          \
	} while (0)

int fe_sys_statat(int dirfd, const char *path, int flags, struct stat *st,
		  uint32_t *btag)
{
	struct statx stx;
	int r = sizeof(st->st_ino) == 8 && sizeof(long) == 8 ?
			sys_statx(dirfd, path, flags | AT_NO_AUTOMOUNT, &stx) :
			1;

	*btag = 0;
	if (r == 1)
		return fe_sys_fstatat(dirfd, path, st, flags);
	if (r < 0)
		return r;
	STATX_TO_STAT(st, &stx);
	*btag = fe_statx_btag(&stx);
	return 0;
}

int fe_sys_statat64(int dirfd, const char *path, int flags,
		    struct stat64 *st, uint32_t *btag)
{
	struct statx stx;
	int r = sizeof(struct stat64) == sizeof(struct stat) ?
			sys_statx(dirfd, path, flags | AT_NO_AUTOMOUNT, &stx) :
			1;

	*btag = 0;
	if (r == 1) {
		/* The same layout as struct stat: the wrappers call this only
		 * where it is (LP64), and take libc's path elsewhere. */
		if (sizeof(struct stat64) != sizeof(struct stat))
			return -ENOSYS;
		return fe_sys_fstatat(dirfd, path, (struct stat *)(void *)st,
				      flags);
	}
	if (r < 0)
		return r;
	STATX_TO_STAT(st, &stx);
	*btag = fe_statx_btag(&stx);
	return 0;
}

int fe_stat_target(int dirfd, const char *path, int flags, struct stat *st,
		   uint32_t *btag, bool *followed)
{
	int saved = errno, fd, r;

	*followed = false;
	if (!path[0] && (flags & AT_EMPTY_PATH)) {
		uint32_t tok;

		if (fe_fd_stat_cached(dirfd, st, btag))
			return 0;
		tok = fe_fd_token(dirfd);
		r = fe_sys_statat(dirfd, path, flags, st, btag);
		if (r == 0)
			fe_fd_stat_keep(dirfd, tok, st, *btag);
		return r;
	}
	if (!path[0])
		return fe_sys_statat(dirfd, path, flags, st, btag);
	r = fe_sys_statat(dirfd, path, flags | AT_SYMLINK_NOFOLLOW, st, btag);
	if (r < 0 || (flags & AT_SYMLINK_NOFOLLOW) || !S_ISLNK(st->st_mode))
		return r;
	/* A link followed: the target is what the call changes. */
	fd = (int)syscall(SYS_openat, dirfd, path, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		errno = saved;
		return r;
	}
	r = fe_sys_statat(fd, "", AT_EMPTY_PATH, st, btag);
	close(fd);
	errno = saved;
	*followed = r == 0;
	return r;
}

const char *fe_target_hint(int dirfd, const char *path, bool followed,
			   const struct stat *st, char *buf, size_t size)
{
	const char *hint = NULL;
	int saved = errno, fd;

	if (!path[0])
		return fe_fd_hint(dirfd, fe_fd_token(dirfd), st, buf, size);
	if (!followed)
		return fe_abspath(dirfd, path, buf, size);
	fd = (int)syscall(SYS_openat, dirfd, path, O_PATH | O_CLOEXEC);
	if (fd >= 0) {
		hint = fe_fdpath(fd, buf, size);
		close(fd);
	}
	errno = saved;
	return hint;
}

int fe_change(struct fe_req *req, const char *tail, size_t len, int *err)
{
	struct fe_rep rep;
	uint32_t *pend, *c = NULL;
	bool pends = fe_op_pends(req->op);
	int r;

	*err = 0;
	/* A change without a counter may land late, after its file died:
	 * only its birth time then keeps it off the next file at that
	 * inode number (lookup_own() in the daemon), so without one it
	 * waits for its reply. */
	pend = !fe_ring_resync() && (pends || req->btag) ? fe_map_pend() :
							    NULL;
	if (pend) {
		r = fe_ring_put(req, tail, len, pend,
				pends ? fe_pend_at(pend, req->dev, req->ino) :
					NULL);
		if (r == 0)
			return 0;
		if (r > 0 &&
		    (!pends || (c = fe_map_pend_raise(req->dev, req->ino)))) {
			r = fe_conn_send(req, tail, len);
			if (r == 0) {
				fe_ring_sent();
				return 0;
			}
			/* Not sent: nobody will lower it.  Then as a round
			 * trip, which reconnects when it can. */
			if (c)
				fe_map_pend_undo(c);
		}
		req->flags &= ~FE_F_ONEWAY;
	}
	r = fe_conn_call_tail(req, tail, len, &rep);
	if (r == 0)
		*err = rep.err;
	return r;
}

/* fe_change() of a path hint: one NUL-terminated string, or NULL. */
static size_t hint_len(const char *hint)
{
	size_t n = hint ? strlen(hint) + 1 : 0;

	/* The path is a hint: too long, go without. */
	return n <= FE_PATH_MAX ? n : 0;
}

int fe_change_hint(struct fe_req *req, const char *hint, int *err)
{
	size_t n = hint_len(hint);

	return fe_change(req, n ? hint : NULL, n, err);
}

void fe_req_init(struct fe_req *req, uint16_t op, const struct stat *st,
		 uint32_t btag)
{
	memset(req, 0, sizeof(*req));
	req->op = op;
	req->dev = st->st_dev;
	req->ino = st->st_ino;
	req->real_mode = st->st_mode;
	req->real_uid = st->st_uid;
	req->real_gid = st->st_gid;
	req->btag = btag;
}

/* The birth-time tag of the file m describes, found again through m->re:
 * 0 when it cannot be found or is another inode now. */
static uint32_t restat_btag(const struct fe_meta *m)
{
	const struct fe_restat *re = m->re;
	struct statx stx;
	int flags = re->flags & STATX_FLAGS;

	for (int follow = 0; follow < 2; follow++) {
		if (sys_statx(re->dirfd, re->path, flags, &stx) != 0)
			return 0;
		if (makedev(stx.stx_dev_major, stx.stx_dev_minor) == m->dev &&
		    stx.stx_ino == m->ino)
			return fe_statx_btag(&stx);
		/* The walker may have followed a symlink we did not. */
		if (!(flags & AT_SYMLINK_NOFOLLOW))
			return 0;
		flags &= ~AT_SYMLINK_NOFOLLOW;
	}
	return 0;
}

void fe_meta_get(struct fe_meta *m)
{
	struct fe_view v;
	struct fe_req req;
	struct fe_rep rep;
	int r;

	/* The shared mapping first; the daemon when it cannot tell (and
	 * drops a stale record on the way). */
	r = fe_map_view(m->dev, m->ino, m->btag, m->mode, m->uid, m->gid, &v);
	if (r == 1 && !m->btag && v.btag && m->re) {
		/* A record that knows its birth time, for a stat that did
		 * not say the file's: look it up before trusting it. */
		m->btag = restat_btag(m);
		if (m->btag && m->btag != v.btag)
			r = -1;
	}
	if (r >= 0) {
		m->uid = v.uid;
		m->gid = v.gid;
		m->mode = v.mode;
		if (v.dev)
			m->rdev = v.rdev;
		return;
	}
	req = (struct fe_req){
		.op = FE_OP_GET,
		.dev = m->dev,
		.ino = m->ino,
		.real_mode = m->mode,
		.real_uid = m->uid,
		.real_gid = m->gid,
		.btag = m->btag,
	};
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

#define META_FROM(st, tag, restat)                                          \
	{                                                                   \
		.dev = (st)->st_dev, .ino = (st)->st_ino, .btag = (tag),    \
		.mode = (st)->st_mode, .uid = (st)->st_uid,                 \
		.gid = (st)->st_gid, .rdev = (st)->st_rdev, .re = (restat), \
	}

#define META_TO(st, m)                                                      \
	do {                                                                \
		(st)->st_mode = (m).mode;                                   \
		(st)->st_uid = (m).uid;                                     \
		(st)->st_gid = (m).gid;                                     \
		(st)->st_rdev = (m).rdev;                                   \
	} while (0)

void fe_meta_faked(const struct stat *st, uint32_t btag, struct fe_meta *m)
{
	*m = (struct fe_meta)META_FROM(st, btag, NULL);
	fe_meta_get(m);
}

void fe_fix_stat(struct stat *st, uint32_t btag, const struct fe_restat *re)
{
	struct fe_meta m = META_FROM(st, btag, re);

	fe_meta_get(&m);
	META_TO(st, m);
}

void fe_fix_stat64(struct stat64 *st, uint32_t btag,
		   const struct fe_restat *re)
{
	struct fe_meta m = META_FROM(st, btag, re);

	fe_meta_get(&m);
	META_TO(st, m);
}

/* The caller made sure type, mode, ids and inode were asked for. */
void fe_fix_statx(struct statx *stx)
{
	struct fe_meta m = {
		.dev = makedev(stx->stx_dev_major, stx->stx_dev_minor),
		.ino = stx->stx_ino,
		.btag = fe_statx_btag(stx),
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

int fe_created(int dirfd, const char *path, int fd, int stat_flags,
	       mode_t setid)
{
	char pbuf[FE_PATH_MAX];
	const char *hint;
	struct fe_req req;
	struct fe_view v;
	struct stat st;
	mode_t need, want, real;
	uint32_t btag, tok = fe_fd_token(fd);
	int r, err;

	r = fd >= 0 ? fe_sys_statat(fd, "", AT_EMPTY_PATH, &st, &btag) :
		      fe_sys_statat(dirfd, path, stat_flags, &st, &btag);
	if (r < 0)
		return r;
	if (!S_ISLNK(st.st_mode))
		fe_owner_learn(st.st_mode);
	fe_req_init(&req, FE_OP_CREATE, &st, btag);
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
	if (fd >= 0) {
		struct stat now = st;

		/* For the fchown and fchmod that follow (tar x). */
		now.st_mode = req.real_mode;
		fe_fd_stat_keep(fd, tok, &now, btag);
	}
	/* No record at this inode and none needed: CREATE would change
	 * nothing (a record left by a dead file shows in the mapping, and
	 * then CREATE goes and clears it). */
	if (!(req.flags & FE_F_MODE) && fe_map_view_now(&st, btag, &v) == 0 &&
	    v.uid == req.uid && v.gid == req.gid) {
		if (fd >= 0 && path)
			fe_fd_hint_keep(fd, tok, &st,
					fe_cheap_abspath(dirfd, path, pbuf,
							 sizeof(pbuf)));
		return 0;
	}
	if (fd >= 0 && !path)
		hint = fe_fd_hint(fd, tok, &st, pbuf, sizeof(pbuf));
	else
		hint = fe_abspath(dirfd, path, pbuf, sizeof(pbuf));
	fe_fd_hint_keep(fd, tok, &st, hint);
	r = fe_change_hint(&req, hint, &err);
	return r < 0 ? r : err;
}
