/*
 * Programs the preload cannot reach (static binaries, Go, raw system
 * calls) are faked below libc: a seccomp filter turns the calls of
 * FE_SEC_CALLS into user notifications, and the session's supervisor
 * answers each one with the shim's own wrapper, run on the target's
 * arguments with the target's fake ids.  This is the contract between
 * the three places involved: the filter (common/secarm.c, installed by
 * the shim's exec wrappers and by the launcher), the supervisor
 * (shim/supervise.c, a thread of the launcher) and the launcher.
 */
#ifndef FAKEENV_SECCOMP_H
#define FAKEENV_SECCOMP_H

#include <stdint.h>
#include <sys/syscall.h>

#include "fakeenv/env.h"

/* Linux 6.6; one number on every architecture but alpha. */
#if !defined(SYS_fchmodat2) && (defined(__x86_64__) || defined(__aarch64__))
#define SYS_fchmodat2 452
#endif

/*
 * What each argument of a trapped call is, for the supervisor to bring it
 * over from the target: a value, a NUL-terminated string in (a path, an
 * xattr name), a directory fd (AT_FDCWD: the target's cwd), an fd, or a
 * buffer.  A buffer's size is the call's size argument (the row's last
 * field: its index), in bytes or, for gid lists, in entries.
 */
enum fe_sec_arg {
	SA_NONE,  /* no such argument */
	SA_VAL,   /* passed as it is */
	SA_STR,   /* string in */
	SA_DIRFD, /* a directory fd or AT_FDCWD */
	SA_FD,    /* an fd */
	SA_STAT,  /* struct stat out */
	SA_STATX, /* struct statx out */
	SA_IBUF,  /* bytes in, size argument's count */
	SA_OBUF,  /* bytes out, size argument's count, the result's written */
	SA_ID,    /* one uid_t/gid_t out */
	SA_IGIDS, /* gid_t[] in, size argument's count */
	SA_OGIDS, /* gid_t[] out, size argument's count, the result's written */
	SA_CAPH,  /* struct __user_cap_header_struct, in and out */
	SA_CAPDI, /* struct __user_cap_data_struct[2] in */
	SA_CAPDO, /* struct __user_cap_data_struct[2] out (NULL: none) */
};

/* The calls that make a file's creation or removal go through the shim
 * too, so that its records stay right; they are done by the supervisor
 * as the target would, umask included. */
#define FE_SEC_UMASK 0x1u
/* The result is an fd of the supervisor's, to install in the target
 * (SECCOMP_IOCTL_NOTIF_ADDFD). */
#define FE_SEC_FD 0x2u
/* Trapped only when argument 1 (FE_SEC_CREAT1) or 2 (FE_SEC_CREAT2) has
 * O_CREAT: the filter looks, so that every other open stays the
 * kernel's. */
#define FE_SEC_CREAT1 0x4u
#define FE_SEC_CREAT2 0x8u
/* A call that may change where the caller's paths start (its root, or
 * the mounts it sees: unshare, then mount): the supervisor notes it and
 * lets the kernel make it, since it resolves the paths of a target whose
 * root may differ from its own. */
#define FE_SEC_ROOT 0x10u

/*
 * X(number, flags, kind0, ..., kind5, size argument): every call the filter
 * traps.  A number the architecture lacks is left out.  open and openat
 * only with O_CREAT; openat2 (whose flags the filter cannot read) and
 * link are never trapped: the kernel makes the file as it would, and a
 * new inode's stale record is told apart by its birth time.
 */
#define FE_SEC_CALLS_COMMON(X)                                                                  \
	X(SYS_getuid, 0, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)               \
	X(SYS_geteuid, 0, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)              \
	X(SYS_getgid, 0, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)               \
	X(SYS_getegid, 0, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)              \
	X(SYS_getresuid, 0, SA_ID, SA_ID, SA_ID, SA_NONE, SA_NONE, SA_NONE, 0)                  \
	X(SYS_getresgid, 0, SA_ID, SA_ID, SA_ID, SA_NONE, SA_NONE, SA_NONE, 0)                  \
	X(SYS_getgroups, 0, SA_VAL, SA_OGIDS, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)            \
	X(SYS_setgroups, 0, SA_VAL, SA_IGIDS, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)            \
	X(SYS_setuid, 0, SA_VAL, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)                \
	X(SYS_setgid, 0, SA_VAL, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)                \
	X(SYS_setreuid, 0, SA_VAL, SA_VAL, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)               \
	X(SYS_setregid, 0, SA_VAL, SA_VAL, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)               \
	X(SYS_setresuid, 0, SA_VAL, SA_VAL, SA_VAL, SA_NONE, SA_NONE, SA_NONE, 0)               \
	X(SYS_setresgid, 0, SA_VAL, SA_VAL, SA_VAL, SA_NONE, SA_NONE, SA_NONE, 0)               \
	X(SYS_setfsuid, 0, SA_VAL, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)              \
	X(SYS_setfsgid, 0, SA_VAL, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)              \
	X(SYS_capget, 0, SA_CAPH, SA_CAPDO, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)              \
	X(SYS_capset, 0, SA_CAPH, SA_CAPDI, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)              \
	X(SYS_fchown, 0, SA_FD, SA_VAL, SA_VAL, SA_NONE, SA_NONE, SA_NONE, 0)                   \
	X(SYS_fchownat, 0, SA_DIRFD, SA_STR, SA_VAL, SA_VAL, SA_VAL, SA_NONE, 0)                \
	X(SYS_fchmod, 0, SA_FD, SA_VAL, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)                  \
	X(SYS_fchmodat, 0, SA_DIRFD, SA_STR, SA_VAL, SA_NONE, SA_NONE, SA_NONE, 0)              \
	X(SYS_mknodat, FE_SEC_UMASK, SA_DIRFD, SA_STR, SA_VAL, SA_VAL, SA_NONE, SA_NONE, 0)     \
	X(SYS_fstat, 0, SA_FD, SA_STAT, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)                  \
	X(SYS_newfstatat, 0, SA_DIRFD, SA_STR, SA_STAT, SA_VAL, SA_NONE, SA_NONE, 0)            \
	X(SYS_statx, 0, SA_DIRFD, SA_STR, SA_VAL, SA_VAL, SA_STATX, SA_NONE, 0)                 \
	X(SYS_setxattr, 0, SA_STR, SA_STR, SA_IBUF, SA_VAL, SA_VAL, SA_NONE, 3)                 \
	X(SYS_lsetxattr, 0, SA_STR, SA_STR, SA_IBUF, SA_VAL, SA_VAL, SA_NONE, 3)                \
	X(SYS_fsetxattr, 0, SA_FD, SA_STR, SA_IBUF, SA_VAL, SA_VAL, SA_NONE, 3)                 \
	X(SYS_getxattr, 0, SA_STR, SA_STR, SA_OBUF, SA_VAL, SA_NONE, SA_NONE, 3)                \
	X(SYS_lgetxattr, 0, SA_STR, SA_STR, SA_OBUF, SA_VAL, SA_NONE, SA_NONE, 3)               \
	X(SYS_fgetxattr, 0, SA_FD, SA_STR, SA_OBUF, SA_VAL, SA_NONE, SA_NONE, 3)                \
	X(SYS_listxattr, 0, SA_STR, SA_OBUF, SA_VAL, SA_NONE, SA_NONE, SA_NONE, 2)              \
	X(SYS_llistxattr, 0, SA_STR, SA_OBUF, SA_VAL, SA_NONE, SA_NONE, SA_NONE, 2)             \
	X(SYS_flistxattr, 0, SA_FD, SA_OBUF, SA_VAL, SA_NONE, SA_NONE, SA_NONE, 2)              \
	X(SYS_removexattr, 0, SA_STR, SA_STR, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)            \
	X(SYS_lremovexattr, 0, SA_STR, SA_STR, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)           \
	X(SYS_fremovexattr, 0, SA_FD, SA_STR, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)            \
	X(SYS_faccessat, 0, SA_DIRFD, SA_STR, SA_VAL, SA_NONE, SA_NONE, SA_NONE, 0)             \
	X(SYS_mkdirat, FE_SEC_UMASK, SA_DIRFD, SA_STR, SA_VAL, SA_NONE, SA_NONE, SA_NONE, 0)    \
	X(SYS_symlinkat, 0, SA_STR, SA_DIRFD, SA_STR, SA_NONE, SA_NONE, SA_NONE, 0)             \
	X(SYS_unlinkat, 0, SA_DIRFD, SA_STR, SA_VAL, SA_NONE, SA_NONE, SA_NONE, 0)              \
	X(SYS_renameat2, 0, SA_DIRFD, SA_STR, SA_DIRFD, SA_STR, SA_VAL, SA_NONE, 0)                 \
	X(SYS_openat, FE_SEC_UMASK | FE_SEC_FD | FE_SEC_CREAT2, SA_DIRFD, SA_STR, SA_VAL, SA_VAL, SA_NONE, SA_NONE, 0) \
	X(SYS_chroot, FE_SEC_ROOT, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)     \
	X(SYS_pivot_root, FE_SEC_ROOT, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0) \
	X(SYS_setns, FE_SEC_ROOT, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)     \
	X(SYS_unshare, FE_SEC_ROOT, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)

/* Numbers only some architectures have (x86_64 has them all). */
#ifdef SYS_chown
#define FE_SEC_X_chown(X) X(SYS_chown, 0, SA_STR, SA_VAL, SA_VAL, SA_NONE, SA_NONE, SA_NONE, 0)
#else
#define FE_SEC_X_chown(X)
#endif
#ifdef SYS_lchown
#define FE_SEC_X_lchown(X) X(SYS_lchown, 0, SA_STR, SA_VAL, SA_VAL, SA_NONE, SA_NONE, SA_NONE, 0)
#else
#define FE_SEC_X_lchown(X)
#endif
#ifdef SYS_chmod
#define FE_SEC_X_chmod(X) X(SYS_chmod, 0, SA_STR, SA_VAL, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)
#else
#define FE_SEC_X_chmod(X)
#endif
#ifdef SYS_mknod
#define FE_SEC_X_mknod(X) X(SYS_mknod, FE_SEC_UMASK, SA_STR, SA_VAL, SA_VAL, SA_NONE, SA_NONE, SA_NONE, 0)
#else
#define FE_SEC_X_mknod(X)
#endif
#ifdef SYS_stat
#define FE_SEC_X_stat(X)                                                                        \
	X(SYS_stat, 0, SA_STR, SA_STAT, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)                  \
	X(SYS_lstat, 0, SA_STR, SA_STAT, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)
#else
#define FE_SEC_X_stat(X)
#endif
#ifdef SYS_access
#define FE_SEC_X_access(X) X(SYS_access, 0, SA_STR, SA_VAL, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)
#else
#define FE_SEC_X_access(X)
#endif
#ifdef SYS_mkdir
#define FE_SEC_X_mkdir(X)                                                                       \
	X(SYS_mkdir, FE_SEC_UMASK, SA_STR, SA_VAL, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)       \
	X(SYS_rmdir, 0, SA_STR, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)                 \
	X(SYS_symlink, 0, SA_STR, SA_STR, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)                \
	X(SYS_unlink, 0, SA_STR, SA_NONE, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)                \
	X(SYS_rename, 0, SA_STR, SA_STR, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)                   \
	X(SYS_open, FE_SEC_UMASK | FE_SEC_FD | FE_SEC_CREAT1, SA_STR, SA_VAL, SA_VAL, SA_NONE, SA_NONE, SA_NONE, 0) \
	X(SYS_creat, FE_SEC_UMASK | FE_SEC_FD, SA_STR, SA_VAL, SA_NONE, SA_NONE, SA_NONE, SA_NONE, 0)                 \
	X(SYS_renameat, 0, SA_DIRFD, SA_STR, SA_DIRFD, SA_STR, SA_NONE, SA_NONE, 0)
#else
#define FE_SEC_X_mkdir(X)
#endif
#ifdef SYS_fchmodat2
#define FE_SEC_X_fchmodat2(X) X(SYS_fchmodat2, 0, SA_DIRFD, SA_STR, SA_VAL, SA_VAL, SA_NONE, SA_NONE, 0)
#else
#define FE_SEC_X_fchmodat2(X)
#endif
#ifdef SYS_faccessat2
#define FE_SEC_X_faccessat2(X) X(SYS_faccessat2, 0, SA_DIRFD, SA_STR, SA_VAL, SA_VAL, SA_NONE, SA_NONE, 0)
#else
#define FE_SEC_X_faccessat2(X)
#endif

#define FE_SEC_CALLS(X)                                                                         \
	FE_SEC_CALLS_COMMON(X) FE_SEC_X_chown(X) FE_SEC_X_lchown(X) \
	FE_SEC_X_chmod(X) FE_SEC_X_mknod(X) FE_SEC_X_stat(X)       \
	FE_SEC_X_access(X) FE_SEC_X_mkdir(X) FE_SEC_X_fchmodat2(X) \
	FE_SEC_X_faccessat2(X)

/*
 * A number no kernel gives a call: the filter answers it with
 * FE_SEC_PROBE_ERRNO at once, where a kernel without the filter says
 * ENOSYS.  So a process can tell that it runs under a session's filter
 * (the shim then passes every call through: the supervisor answers).
 */
#define FE_SEC_PROBE_NR    4064
#define FE_SEC_PROBE_ERRNO 57 /* EBADSLT */

/*
 * Arming: the process about to run the program connects to the
 * supervisor's socket (FAKEENV_SUPERVISOR, AF_UNIX SOCK_STREAM), installs
 * the filter, sends its listener fd (SCM_RIGHTS) with this hello, and
 * waits for one byte: the supervisor holds the fd before the program's
 * first call.
 */
#define FE_SEC_MAGIC 0x46455331u /* "FES1" */

/* The launcher's argument for a spawned program to arm (FAKEENV_LAUNCHER):
 * never a command of its own. */
#define FE_SEC_EXEC_ARG "--seccomp-exec"
struct fe_sec_hello {
	uint32_t magic;   /* FE_SEC_MAGIC */
	int32_t pid;      /* the armed process */
	uint32_t uids[4]; /* fake real, effective, saved, fs uid */
	uint32_t gids[4]; /* the same for gids */
	uint32_t ngroups; /* of groups[] in use */
	uint32_t groups[FE_GROUPS_MAX];
};

#endif
