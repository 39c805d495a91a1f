/*
 * syscall(3) and prctl(2).  A program that calls syscall(SYS_chown, ...)
 * gets what chown() would give it: each number the shim fakes goes to the
 * shim's own wrapper (fe_self_<name>, never libc through the PLT), with
 * syscall()'s conventions, which are the wrappers' own: -1 and errno on
 * failure.  Every other number goes straight to the kernel.  A program
 * installing a seccomp filter (prctl or SYS_seccomp) has its connection
 * to the daemon opened first, while socket(2) and connect(2) are still
 * allowed.  Strict mode is not helped: it allows too little for any
 * round trip.
 */
#include "shim.h"

#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

/* Here, syscall is the exported wrapper; the shim's own raw calls are
 * fe_syscall (shim.h). */
#undef syscall

/* Linux 6.6; one number on every architecture but alpha. */
#if !defined(SYS_fchmodat2) && (defined(__x86_64__) || defined(__aarch64__))
#define SYS_fchmodat2 452
#endif

/* The kernel's struct stat is glibc's on these: a SYS_stat result can be
 * laid over by the stat wrappers as it is.  Elsewhere (i386's old struct,
 * x32) the stat numbers pass through unfaked. */
#if (defined(__x86_64__) && defined(__LP64__)) || defined(__aarch64__)
#define KSTAT_IS_STAT 1
#endif

/* syscall() takes six longs whatever the number: that is how the kernel
 * reads them too. */
#define ARGS6(ap, a)                                    \
	do {                                            \
		for (int i_ = 0; i_ < 6; i_++)          \
			(a)[i_] = va_arg(ap, long);     \
	} while (0)

static long raw(long nr, const long *a)
{
	fe_syscall_fn *f = real_syscall();

	if (!f)
		return fe_enosys();
	return f(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

long fe_syscall(long nr, ...)
{
	va_list ap;
	long a[6];

	va_start(ap, nr);
	ARGS6(ap, a);
	va_end(ap);
	return raw(nr, a);
}

/* mknod(2)'s dev argument is a 32-bit "new" encoding (the kernel's
 * new_decode_dev): minor bits 0-7, major 8-19, minor 20-31. */
static dev_t kdev(unsigned long d)
{
	unsigned int v = (unsigned int)d;

	return makedev((v & 0xfff00) >> 8, (v & 0xff) | ((v >> 12) & 0xfff00));
}

static bool creates(unsigned long long flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

/* openat2 with its own open_how: the fd, or -1 and errno. */
static long openat2_how(int dirfd, const char *path, struct open_how *how)
{
	long a[6] = { dirfd, (long)path, (long)how, sizeof(*how) };

	return raw(SYS_openat2, a);
}

/*
 * openat2(2) as open() does creation: O_CREAT without O_EXCL first opens
 * without O_CREAT, then creates with O_EXCL on ENOENT, so that the file is
 * known to be new before it is recorded as the fake fsuid's.  Only the
 * creating calls with the version-0 open_how are faked; a larger struct
 * (fields this shim does not know) passes through.
 */
static long openat2_route(const long *a)
{
	int dirfd = (int)a[0], saved = errno;
	const char *path = (const char *)a[1];
	const struct open_how *how = (const struct open_how *)a[2];
	struct open_how h;
	long fd;

	if ((size_t)a[3] != sizeof(struct open_how) || !how ||
	    !creates(how->flags))
		return raw(SYS_openat2, a);
	h = *how;
	if ((h.flags & O_TMPFILE) == O_TMPFILE || (h.flags & O_EXCL)) {
		fd = openat2_how(dirfd, path, &h);
		goto out;
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		h.flags = how->flags & ~(unsigned long long)O_CREAT;
		h.mode = 0; /* the kernel refuses a mode without O_CREAT */
		fd = openat2_how(dirfd, path, &h);
		if (fd >= 0) {
			errno = saved;
			return fd;
		}
		if (errno != ENOENT)
			return -1;
		h = *how;
		h.flags |= O_EXCL;
		fd = openat2_how(dirfd, path, &h);
		if (fd >= 0 || errno != EEXIST)
			goto out;
	}
	/* A dangling symlink whose target this open creates. */
	h = *how;
	fd = openat2_how(dirfd, path, &h);
out:
	if (fd >= 0) {
		(void)fe_created(-1, NULL, (int)fd, 0, 0);
		errno = saved;
	}
	return fd;
}

/* fchmodat2(2): the flags fchmodat(2) lacks; "" with AT_EMPTY_PATH is
 * dirfd itself. */
static long fchmodat2_route(const long *a)
{
	int flags = (int)a[3];
	const char *path = (const char *)a[1];

	if ((flags & AT_EMPTY_PATH) && path && path[0] == '\0')
		return fe_self_fchmod((int)a[0], (mode_t)a[2]);
	return fe_self_fchmodat((int)a[0], path, (mode_t)a[2],
				flags & ~AT_EMPTY_PATH);
}

#define PATH(i) ((const char *)a[i])
#define FD(i) ((int)a[i])
#define UID(i) ((uid_t)a[i])
#define GID(i) ((gid_t)a[i])
#define MODE(i) ((mode_t)a[i])

/* The numbers the shim fakes, each to its wrapper; *done is false for the
 * others. */
long fe_route_syscall(long nr, const long *a, bool *done)
{
	*done = true;
	switch (nr) {
	/* Ownership and modes. */
#ifdef SYS_chown
	case SYS_chown:
		return fe_self_chown(PATH(0), UID(1), GID(2));
#endif
#ifdef SYS_lchown
	case SYS_lchown:
		return fe_self_lchown(PATH(0), UID(1), GID(2));
#endif
	case SYS_fchown:
		return fe_self_fchown(FD(0), UID(1), GID(2));
	case SYS_fchownat:
		return fe_self_fchownat(FD(0), PATH(1), UID(2), GID(3), FD(4));
#ifdef SYS_chmod
	case SYS_chmod:
		return fe_self_chmod(PATH(0), MODE(1));
#endif
	case SYS_fchmod:
		return fe_self_fchmod(FD(0), MODE(1));
	case SYS_fchmodat: /* no flags argument: that is fchmodat2 */
		return fe_self_fchmodat(FD(0), PATH(1), MODE(2), 0);
#ifdef SYS_fchmodat2
	case SYS_fchmodat2:
		return fchmodat2_route(a);
#endif
#ifdef SYS_access
	case SYS_access:
		return fe_self_access(PATH(0), FD(1));
#endif
	case SYS_faccessat: /* no flags argument: that is faccessat2 */
		return fe_self_faccessat(FD(0), PATH(1), FD(2), 0);
#ifdef SYS_faccessat2
	case SYS_faccessat2:
		return fe_self_faccessat(FD(0), PATH(1), FD(2), FD(3));
#endif

	/* The stat family. */
#ifdef KSTAT_IS_STAT
#ifdef SYS_stat
	case SYS_stat:
		return fe_self_stat(PATH(0), (struct stat *)a[1]);
#endif
#ifdef SYS_lstat
	case SYS_lstat:
		return fe_self_lstat(PATH(0), (struct stat *)a[1]);
#endif
	case SYS_fstat:
		return fe_self_fstat(FD(0), (struct stat *)a[1]);
	case SYS_newfstatat:
		return fe_self_fstatat(FD(0), PATH(1), (struct stat *)a[2],
				       FD(3));
#endif
	case SYS_statx:
		return fe_self_statx(FD(0), PATH(1), FD(2), (unsigned int)a[3],
				     (struct statx *)a[4]);

	/* Creation, device nodes, removal, renaming. */
#ifdef SYS_open
	case SYS_open:
		return fe_self_open(PATH(0), FD(1), MODE(2));
#endif
	case SYS_openat:
		return fe_self_openat(FD(0), PATH(1), FD(2), MODE(3));
	case SYS_openat2:
		return openat2_route(a);
#ifdef SYS_creat
	case SYS_creat:
		return fe_self_creat(PATH(0), MODE(1));
#endif
#ifdef SYS_mkdir
	case SYS_mkdir:
		return fe_self_mkdir(PATH(0), MODE(1));
#endif
	case SYS_mkdirat:
		return fe_self_mkdirat(FD(0), PATH(1), MODE(2));
#ifdef SYS_symlink
	case SYS_symlink:
		return fe_self_symlink(PATH(0), PATH(1));
#endif
	case SYS_symlinkat:
		return fe_self_symlinkat(PATH(0), FD(1), PATH(2));
#ifdef SYS_mknod
	case SYS_mknod:
		return fe_self_mknod(PATH(0), MODE(1), kdev(a[2]));
#endif
	case SYS_mknodat:
		return fe_self_mknodat(FD(0), PATH(1), MODE(2), kdev(a[3]));
#ifdef SYS_unlink
	case SYS_unlink:
		return fe_self_unlink(PATH(0));
#endif
	case SYS_unlinkat:
		return fe_self_unlinkat(FD(0), PATH(1), FD(2));
#ifdef SYS_rmdir
	case SYS_rmdir:
		return fe_self_rmdir(PATH(0));
#endif
#ifdef SYS_rename
	case SYS_rename:
		return fe_self_rename(PATH(0), PATH(1));
#endif
#ifdef SYS_renameat
	case SYS_renameat:
		return fe_self_renameat(FD(0), PATH(1), FD(2), PATH(3));
#endif
	case SYS_renameat2:
		return fe_self_renameat2(FD(0), PATH(1), FD(2), PATH(3),
					 (unsigned int)a[4]);

	/* Extended attributes and capabilities. */
	case SYS_setxattr:
		return fe_self_setxattr(PATH(0), PATH(1), (const void *)a[2],
					(size_t)a[3], FD(4));
	case SYS_lsetxattr:
		return fe_self_lsetxattr(PATH(0), PATH(1), (const void *)a[2],
					 (size_t)a[3], FD(4));
	case SYS_fsetxattr:
		return fe_self_fsetxattr(FD(0), PATH(1), (const void *)a[2],
					 (size_t)a[3], FD(4));
	case SYS_getxattr:
		return fe_self_getxattr(PATH(0), PATH(1), (void *)a[2],
					(size_t)a[3]);
	case SYS_lgetxattr:
		return fe_self_lgetxattr(PATH(0), PATH(1), (void *)a[2],
					 (size_t)a[3]);
	case SYS_fgetxattr:
		return fe_self_fgetxattr(FD(0), PATH(1), (void *)a[2],
					 (size_t)a[3]);
	case SYS_listxattr:
		return fe_self_listxattr(PATH(0), (char *)a[1], (size_t)a[2]);
	case SYS_llistxattr:
		return fe_self_llistxattr(PATH(0), (char *)a[1], (size_t)a[2]);
	case SYS_flistxattr:
		return fe_self_flistxattr(FD(0), (char *)a[1], (size_t)a[2]);
	case SYS_removexattr:
		return fe_self_removexattr(PATH(0), PATH(1));
	case SYS_lremovexattr:
		return fe_self_lremovexattr(PATH(0), PATH(1));
	case SYS_fremovexattr:
		return fe_self_fremovexattr(FD(0), PATH(1));
	case SYS_capget:
		return fe_self_capget((cap_user_header_t)a[0],
				      (cap_user_data_t)a[1]);
	case SYS_capset:
		return fe_self_capset((cap_user_header_t)a[0],
				      (cap_user_data_t)a[1]);

	/* Exec keeps the session. */
	case SYS_execve:
		return fe_self_execve(PATH(0), (char *const *)a[1],
				      (char *const *)a[2]);
	case SYS_execveat:
		return fe_self_execveat(FD(0), PATH(1), (char *const *)a[2],
					(char *const *)a[3], FD(4));

	/* Credentials. */
	case SYS_getuid:
		return fe_self_getuid();
	case SYS_geteuid:
		return fe_self_geteuid();
	case SYS_getgid:
		return fe_self_getgid();
	case SYS_getegid:
		return fe_self_getegid();
	case SYS_getresuid:
		return fe_self_getresuid((uid_t *)a[0], (uid_t *)a[1],
					 (uid_t *)a[2]);
	case SYS_getresgid:
		return fe_self_getresgid((gid_t *)a[0], (gid_t *)a[1],
					 (gid_t *)a[2]);
	case SYS_getgroups:
		return fe_self_getgroups(FD(0), (gid_t *)a[1]);
	case SYS_setgroups:
		return fe_self_setgroups((size_t)a[0], (const gid_t *)a[1]);
	case SYS_setuid:
		return fe_self_setuid(UID(0));
	case SYS_setgid:
		return fe_self_setgid(GID(0));
	case SYS_setreuid:
		return fe_self_setreuid(UID(0), UID(1));
	case SYS_setregid:
		return fe_self_setregid(GID(0), GID(1));
	case SYS_setresuid:
		return fe_self_setresuid(UID(0), UID(1), UID(2));
	case SYS_setresgid:
		return fe_self_setresgid(GID(0), GID(1), GID(2));
	case SYS_setfsuid:
		return fe_self_setfsuid(UID(0));
	case SYS_setfsgid:
		return fe_self_setfsgid(GID(0));

	/* A filter is about to forbid connecting: connect first. */
	case SYS_seccomp:
		if (a[0] == SECCOMP_SET_MODE_FILTER)
			fe_conn_prepare();
		break;
	case SYS_prctl:
		if (a[0] == PR_SET_SECCOMP && a[1] == SECCOMP_MODE_FILTER)
			fe_conn_prepare();
		break;
	}
	*done = false;
	return 0;
}

long syscall(long nr, ...)
{
	va_list ap;
	long a[6], r;
	bool done;

	va_start(ap, nr);
	ARGS6(ap, a);
	va_end(ap);
	if (!fe_faking())
		return raw(nr, a);
	r = fe_route_syscall(nr, a, &done);
	return done ? r : raw(nr, a);
}

int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;

	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_SET_SECCOMP && a[0] == SECCOMP_MODE_FILTER &&
	    fe_faking())
		fe_conn_prepare();
	return REAL(prctl, option, a[0], a[1], a[2], a[3]);
}
