/*
 * Device nodes and fifos.  A character or block device becomes an empty
 * regular file for real, made with O_EXCL so that an existing path gives
 * EEXIST and is left exactly as it was; its type and device number live
 * in the record.  Fifos, sockets and regular files are made for real.
 */
#include "shim.h"

#include <string.h>
#include <sys/syscall.h>

#include "common/util.h"

/* The one core of the mknod family: dirfd+path as mknodat. */
static int node_core(int dirfd, const char *path, mode_t mode, dev_t dev)
{
	mode_t type = mode & S_IFMT, perm;
	char pbuf[FE_PATH_MAX];
	struct fe_req req;
	struct stat st;
	uint32_t btag;
	int fd, r, err, saved = errno;

	if (type == 0)
		type = S_IFREG;
	if (type != S_IFCHR && type != S_IFBLK) {
		if (type != S_IFREG && type != S_IFIFO && type != S_IFSOCK)
			return -EINVAL;
		/* Set-id bits stay out of the real file; fe_created()
		 * records what was asked for when it differs. */
		if (syscall(SYS_mknodat, dirfd, path, type | (mode & 0777),
			    dev) < 0) {
			r = -errno;
			errno = saved;
			return r;
		}
		/* mknod(2) keeps the set-id bits it was given. */
		(void)fe_created(dirfd, path, -1, AT_SYMLINK_NOFOLLOW,
				 mode & 07000);
		return 0;
	}
	/* CAP_MKNOD belongs to the fake root alone. */
	if (fe_cred_euid() != 0)
		return -EPERM;
	/* As glibc's mknod: the kernel's dev_t has 32 bits. */
	if (dev > FE_DEV_MAX)
		return -EINVAL;
	fd = (int)syscall(SYS_openat, dirfd, path,
			  O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY,
			  mode & 0777);
	if (fd < 0) {
		r = -errno;
		errno = saved;
		return r;
	}
	r = fe_sys_statat(fd, "", AT_EMPTY_PATH, &st, &btag);
	if (r == 0 && (st.st_mode & 0600) != 0600)
		(void)syscall(SYS_fchmod, fd, (st.st_mode & 0777) | 0600);
	close(fd);
	errno = saved;
	if (r < 0)
		return 0;
	fe_req_init(&req, FE_OP_MKNOD, &st, btag);
	req.flags = FE_F_UID | FE_F_GID | FE_F_MODE | FE_F_RDEV;
	req.uid = fe_cred_fsuid();
	req.gid = fe_cred_fsgid();
	/* The kernel applied the umask to the bits it was given. */
	perm = (st.st_mode & 0777) | (mode & 07000);
	fe_sgid_inherit(dirfd, path, -1, &st, &req.gid, &perm);
	req.mode = type | perm;
	req.rdev = dev;
	/* One-way as any change: a node the daemon then fails to record is
	 * counted as lost, and the session says so at its end. */
	r = fe_change_hint(&req, fe_abspath(dirfd, path, pbuf, sizeof(pbuf)),
			   &err);
	if (r < 0 || err < 0) {
		/* Without its record the node would be a plain file: undo
		 * rather than leave a lie behind. */
		(void)syscall(SYS_unlinkat, dirfd, path, 0);
		errno = saved;
		return r < 0 ? -EIO : err;
	}
	return 0;
}

int mknod(const char *path, mode_t mode, dev_t dev)
{
	if (!fe_faking_at(AT_FDCWD, path))
		return REAL(mknod, path, mode, dev);
	return fe_ret(node_core(AT_FDCWD, path, mode, dev), errno);
}

int mknodat(int dirfd, const char *path, mode_t mode, dev_t dev)
{
	if (!fe_faking_at(dirfd, path))
		return REAL(mknodat, dirfd, path, mode, dev);
	return fe_ret(node_core(dirfd, path, mode, dev), errno);
}

#ifdef FE_GLIBC
/* _MKNOD_VER is 0 on every Linux port; anything else is a caller bug
 * that glibc answers with EINVAL. */
int __xmknod(int ver, const char *path, mode_t mode, dev_t *dev)
{
	if (!fe_faking_at(AT_FDCWD, path))
		return REAL(__xmknod, ver, path, mode, dev);
	if (ver != 0)
		return fe_ret(-EINVAL, errno);
	return fe_ret(node_core(AT_FDCWD, path, mode, *dev), errno);
}

int __xmknodat(int ver, int dirfd, const char *path, mode_t mode, dev_t *dev)
{
	if (!fe_faking_at(dirfd, path))
		return REAL(__xmknodat, ver, dirfd, path, mode, dev);
	if (ver != 0)
		return fe_ret(-EINVAL, errno);
	return fe_ret(node_core(dirfd, path, mode, *dev), errno);
}
#endif

int mkfifo(const char *path, mode_t mode)
{
	if (!fe_faking_at(AT_FDCWD, path))
		return REAL(mkfifo, path, mode);
	return fe_ret(node_core(AT_FDCWD, path, S_IFIFO | (mode & 07777), 0),
		      errno);
}

int mkfifoat(int dirfd, const char *path, mode_t mode)
{
	if (!fe_faking_at(dirfd, path))
		return REAL(mkfifoat, dirfd, path, mode);
	return fe_ret(node_core(dirfd, path, S_IFIFO | (mode & 07777), 0),
		      errno);
}

/* The second names syscall() reaches this file's wrappers by
 * (wrap.def's SYSCALL rows of family node). */
#define FE_HERE_node 1
#include "self.h"
