/*
 * The C library we are built against, and what it may lack.  glibc
 * (FE_GLIBC) has every call the project makes; musl 1.2.3 (Debian's
 * musl-tools, Alpine 3.16/3.17) lacks statx, renameat2, close_range,
 * closefrom and execveat, which the kernel has: here are the kernel's
 * definitions of their types and flags, and, for the programs (never the
 * shim, which exports these names and reaches the kernel by its own
 * means, real.c), each call made by syscall(2).  Included by shim.h and
 * by whatever else calls one of them.
 */
#ifndef FE_LIBC_H
#define FE_LIBC_H

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef __GLIBC__
#define FE_GLIBC 1
#endif

/* fts: glibc's; musl's where it is built with it (Debian's is; Alpine's
 * is a library of its own, musl-fts-dev). */
#if defined(FE_GLIBC) || __has_include(<fts.h>)
#define FE_HAVE_FTS 1
#endif

/* statx's struct and flags: musl declares them from 1.2.5 on, with the
 * call (STATX_TYPE tells); before, the kernel's header has them. */
#if !defined(FE_GLIBC) && !defined(STATX_TYPE)
#define FE_NO_LIBC_STATX 1
#include <linux/stat.h>
#endif

/* renameat2 and its flags: musl declares them from 1.2.5 on. */
#ifndef RENAME_NOREPLACE
#define FE_NO_LIBC_RENAMEAT2 1
#define RENAME_NOREPLACE (1 << 0)
#define RENAME_EXCHANGE (1 << 1)
#define RENAME_WHITEOUT (1 << 2)
#endif

/* close_range, closefrom: glibc's (2.34), no musl's. */
#ifndef CLOSE_RANGE_CLOEXEC
#define FE_NO_LIBC_CLOSE_RANGE 1
#define CLOSE_RANGE_UNSHARE (1U << 1)
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#ifndef FE_IN_SHIM
#ifdef FE_NO_LIBC_STATX
static inline int statx(int dirfd, const char *path, int flags,
			unsigned int mask, struct statx *stx)
{
	return (int)syscall(SYS_statx, dirfd, path, flags, mask, stx);
}
#endif

#ifdef FE_NO_LIBC_RENAMEAT2
static inline int renameat2(int olddirfd, const char *old, int newdirfd,
			    const char *path, unsigned int flags)
{
	return (int)syscall(SYS_renameat2, olddirfd, old, newdirfd, path,
			    flags);
}
#endif

#ifdef FE_NO_LIBC_CLOSE_RANGE
static inline int close_range(unsigned int first, unsigned int last,
			      int flags)
{
	return (int)syscall(SYS_close_range, first, last, flags);
}

static inline void closefrom(int lowfd)
{
	syscall(SYS_close_range, lowfd, ~0U, 0);
}
#endif

/* execveat: glibc's (2.34), no musl's. */
#ifndef FE_GLIBC
static inline int execveat(int dirfd, const char *path, char *const argv[],
			   char *const envp[], int flags)
{
	return (int)syscall(SYS_execveat, dirfd, path, argv, envp, flags);
}
#endif
#endif /* FE_IN_SHIM */

#endif
