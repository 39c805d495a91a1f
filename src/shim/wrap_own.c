/*
 * Ownership, permission bits and access checks.  chown is recorded only:
 * the real owner never changes.  chmod is recorded in full and applied to
 * the real file with owner access kept and the set-id and sticky bits
 * left out, so the real user never locks itself out and no real set-id
 * file is ever made.  Access is answered from the faked metadata and the
 * fake ids, as the kernel would answer the fake user.
 */
#include "shim.h"

#include <string.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

#include "common/acl.h"

#define NOCHANGE ((uint32_t)-1)

/*
 * True when CHOWN could change nothing: the ids asked for are those the
 * shared table shows (a record's, or the default a file without one
 * shows), and the kernel's chown would clear no set-id bit of what it
 * shows, nor drop a kept xattr.
 */
static bool chown_is_noop(const struct stat *st, uint32_t btag, uint32_t uid,
			  uint32_t gid)
{
	struct fe_view v;
	int r = fe_map_view_now(st, btag, &v);

	/* A kept security.capability goes with any chown of a file. */
	if (r < 0 || (v.xattr && !S_ISDIR(st->st_mode)))
		return false;
	if ((uid != NOCHANGE && uid != v.uid) ||
	    (gid != NOCHANGE && gid != v.gid))
		return false;
	return S_ISDIR(st->st_mode) ||
	       (!(v.mode & S_ISUID) &&
		!((v.mode & S_ISGID) && (v.mode & S_IXGRP)));
}

/*
 * The one core of the chown family; flags as fchownat
 * (AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH).  Without the fake CAP_CHOWN (fake
 * euid 0), the kernel's rules: only the owner may change the group, to
 * one of its groups, and nobody may give a file away.
 */
static int own_core(int dirfd, const char *path, uint32_t uid, uint32_t gid,
		    int flags)
{
	char pbuf[FE_PATH_MAX];
	const char *hint;
	struct fe_req req;
	struct stat st;
	uint32_t btag;
	bool followed;
	int r, err;

	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	r = fe_stat_target(dirfd, path, flags, &st, &btag, &followed);
	if (r < 0)
		return r;
	if (fe_cred_euid() != 0) {
		struct fe_meta m;
		uid_t fsuid = fe_cred_fsuid();

		fe_meta_faked(&st, btag, &m);
		if (uid != NOCHANGE && (fsuid != m.uid || uid != m.uid))
			return -EPERM;
		if (gid != NOCHANGE &&
		    (fsuid != m.uid || (gid != m.gid && !fe_cred_in_group(gid))))
			return -EPERM;
	}
	if (chown_is_noop(&st, btag, uid, gid))
		return 0;
	fe_req_init(&req, FE_OP_CHOWN, &st, btag);
	if (uid != NOCHANGE) {
		req.flags |= FE_F_UID;
		req.uid = uid;
	}
	if (gid != NOCHANGE) {
		req.flags |= FE_F_GID;
		req.gid = gid;
	}
	hint = fe_target_hint(dirfd, path, followed, &st, pbuf,
			      sizeof(pbuf));
	r = fe_change_hint(&req, hint, &err);
	return r < 0 ? -EIO : err;
}

int chown(const char *path, uid_t uid, gid_t gid)
{
	if (!fe_faking_at(AT_FDCWD, path))
		return REAL(chown, path, uid, gid);
	return fe_ret(own_core(AT_FDCWD, path, uid, gid, 0), errno);
}

int lchown(const char *path, uid_t uid, gid_t gid)
{
	if (!fe_faking_at(AT_FDCWD, path))
		return REAL(lchown, path, uid, gid);
	return fe_ret(own_core(AT_FDCWD, path, uid, gid, AT_SYMLINK_NOFOLLOW),
		      errno);
}

int fchown(int fd, uid_t uid, gid_t gid)
{
	if (!fe_faking_at(fd, ""))
		return REAL(fchown, fd, uid, gid);
	return fe_ret(own_core(fd, "", uid, gid, AT_EMPTY_PATH), errno);
}

int fchownat(int dirfd, const char *path, uid_t uid, gid_t gid, int flags)
{
	if (!fe_faking_at(dirfd, path))
		return REAL(fchownat, dirfd, path, uid, gid, flags);
	return fe_ret(own_core(dirfd, path, uid, gid, flags), errno);
}

/*
 * The one core of the chmod family.  fd >= 0: fchmod of that fd (dirfd
 * and path unused).  Without fake privilege only the owner may chmod.
 * A real chmod refused with EPERM (the real file belongs to someone else)
 * still records: the session's view is what the build asked for.
 */
static int mode_core(int fd, int dirfd, const char *path, mode_t mode,
		     int flags)
{
	char pbuf[FE_PATH_MAX];
	const char *hint;
	struct fe_req req;
	struct fe_view v;
	struct stat st;
	uint32_t btag;
	bool followed;
	mode_t real;
	long c;
	int r, err, saved = errno;

	if (flags & ~AT_SYMLINK_NOFOLLOW)
		return -EINVAL;
	if (fd >= 0) {
		dirfd = fd;
		path = "";
		flags = AT_EMPTY_PATH;
	}
	r = fe_stat_target(dirfd, path, flags, &st, &btag, &followed);
	if (r < 0)
		return r;
	/* Linux has no modes on symbolic links. */
	if (S_ISLNK(st.st_mode))
		return -EOPNOTSUPP;
	if (fe_cred_euid() != 0) {
		struct fe_meta m;

		fe_meta_faked(&st, btag, &m);
		if (fe_cred_fsuid() != m.uid)
			return -EPERM;
		/* As the kernel does for a group the caller is not in. */
		if (!S_ISDIR(st.st_mode) && !fe_cred_in_group(m.gid))
			mode &= ~(mode_t)S_ISGID;
	}
	real = (mode & 0777) | (S_ISDIR(st.st_mode) ? 0700 : 0600);
	c = fd >= 0 ? syscall(SYS_fchmod, fd, real) :
		      syscall(SYS_fchmodat, dirfd, path, real);
	r = c < 0 ? -errno : 0;
	errno = saved;
	if (r == 0)
		fe_fd_stat_mode(st.st_dev, st.st_ino,
				(st.st_mode & S_IFMT) | real);
	if (r < 0 && r != -EPERM)
		return r;
	/* The real file now has exactly the mode asked for, and what stat
	 * shows over it is that mode (no record, or one that fakes no bits
	 * or these): a CHMOD would change nothing, unless a kept access ACL
	 * is to be rewritten.  The view holds our own changes still in
	 * flight (tar x's chown just before). */
	if (r == 0 && (mode & 07777) == real) {
		struct stat now = st;

		now.st_mode = (st.st_mode & S_IFMT) | real;
		if (fe_map_view_now(&now, btag, &v) >= 0 &&
		    !v.xattr &&
		    (v.mode & 07777) == real)
			return 0;
	}
	fe_req_init(&req, FE_OP_CHMOD, &st, btag);
	req.flags = FE_F_MODE;
	req.mode = mode & 07777;
	hint = fe_target_hint(dirfd, path, followed, &st, pbuf,
			      sizeof(pbuf));
	r = fe_change_hint(&req, hint, &err);
	return r < 0 ? -EIO : err;
}

int chmod(const char *path, mode_t mode)
{
	if (!fe_faking_at(AT_FDCWD, path))
		return REAL(chmod, path, mode);
	return fe_ret(mode_core(-1, AT_FDCWD, path, mode, 0), errno);
}

int fchmod(int fd, mode_t mode)
{
	if (!fe_faking_at(fd, ""))
		return REAL(fchmod, fd, mode);
	return fe_ret(mode_core(fd, AT_FDCWD, NULL, mode, 0), errno);
}

int fchmodat(int dirfd, const char *path, mode_t mode, int flags)
{
	if (!fe_faking_at(dirfd, path))
		return REAL(fchmodat, dirfd, path, mode, flags);
	return fe_ret(mode_core(-1, dirfd, path, mode, flags), errno);
}

/* glibc's lchmod calls fchmodat past the PLT. */
int lchmod(const char *path, mode_t mode)
{
	if (!fe_faking_at(AT_FDCWD, path))
		return REAL(lchmod, path, mode);
	return fe_ret(mode_core(-1, AT_FDCWD, path, mode, AT_SYMLINK_NOFOLLOW),
		      errno);
}

/* Whether name and value set a minimal access ACL (fe_acl_parse()),
 * which means nothing but permission bits: the kernel applies it as a
 * chmod that keeps the set-id and sticky bits; *perm gets those bits. */
static bool acl_minimal(const char *name, const void *value, size_t size,
			mode_t *perm)
{
	uint32_t bits;
	bool minimal;

	if (!name || strcmp(name, FE_XATTR_ACL_ACCESS) != 0 || !value ||
	    fe_acl_parse(value, size, &bits, &minimal) != 1 || !minimal)
		return false;
	*perm = bits;
	return true;
}

/* The chmod a minimal ACL stands for: fd >= 0, or dirfd+path with flags. */
static int acl_core(int fd, const char *path, mode_t perm, int flags)
{
	struct fe_meta m;
	struct stat st;
	uint32_t btag;
	int r;

	r = fd >= 0 ? fe_sys_statat(fd, "", AT_EMPTY_PATH, &st, &btag) :
		      fe_sys_statat(AT_FDCWD, path, flags, &st, &btag);
	if (r < 0)
		return r;
	fe_meta_faked(&st, btag, &m);
	return mode_core(fd, AT_FDCWD, path, (m.mode & 07000) | perm, flags);
}

int fe_acl_as_chmod(int fd, const char *path, int flags, const char *name,
		    const void *value, size_t size)
{
	mode_t perm;

	if (!acl_minimal(name, value, size, &perm))
		return 1;
	return acl_core(fd, path, perm, flags);
}

/*
 * The one core of the access family, answering as the kernel would for
 * the fake ids and the faked metadata: the real ids for access(), the
 * effective ones with AT_EACCESS.  Root may read and write anything and
 * execute what has an x bit (directories: always searchable).  Writing
 * to a read-only filesystem is refused for everyone, as for real.
 */
static int access_core(int dirfd, const char *path, int amode, int flags)
{
	struct fe_meta m;
	struct stat st;
	uint32_t uid, gid, bits, btag;
	int r;

	if (amode & ~(R_OK | W_OK | X_OK))
		return -EINVAL;
	if (flags & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	r = fe_sys_statat(dirfd, path,
			  flags & (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH), &st,
			  &btag);
	if (r < 0)
		return r;
	if (amode == F_OK)
		return 0;
	if (amode & W_OK) {
		int saved = errno;

		r = syscall(SYS_faccessat, dirfd, path, W_OK) < 0 ? -errno : 0;
		errno = saved;
		if (r == -EROFS || r == -ETXTBSY)
			return r;
	}
	fe_meta_faked(&st, btag, &m);
	uid = flags & AT_EACCESS ? fe_cred_euid() : fe_cred_ruid();
	gid = flags & AT_EACCESS ? fe_cred_egid() : fe_cred_rgid();
	if (uid == 0) {
		if ((amode & X_OK) && !S_ISDIR(m.mode) && !(m.mode & 0111))
			return -EACCES;
		return 0;
	}
	if (uid == m.uid)
		bits = (m.mode >> 6) & 7;
	else if (gid == m.gid || fe_cred_in_group(m.gid))
		bits = (m.mode >> 3) & 7;
	else
		bits = m.mode & 7;
	return ((uint32_t)amode & bits) == (uint32_t)amode ? 0 : -EACCES;
}

int access(const char *path, int amode)
{
	if (!fe_faking_at(AT_FDCWD, path))
		return REAL(access, path, amode);
	return fe_ret(access_core(AT_FDCWD, path, amode, 0), errno);
}

int faccessat(int dirfd, const char *path, int amode, int flags)
{
	if (!fe_faking_at(dirfd, path))
		return REAL(faccessat, dirfd, path, amode, flags);
	return fe_ret(access_core(dirfd, path, amode, flags), errno);
}

int euidaccess(const char *path, int amode)
{
	if (!fe_faking_at(AT_FDCWD, path))
		return REAL(euidaccess, path, amode);
	return fe_ret(access_core(AT_FDCWD, path, amode, AT_EACCESS), errno);
}

int eaccess(const char *path, int amode)
{
	if (!fe_faking_at(AT_FDCWD, path))
		return REAL(eaccess, path, amode);
	return fe_ret(access_core(AT_FDCWD, path, amode, AT_EACCESS), errno);
}

/* The second names syscall() reaches this file's wrappers by
 * (wrap.def's SYSCALL rows of family own). */
#define FE_HERE_own 1
#include "self.h"
