/*
 * Shared bits of the integration helpers: each helper is a plain program
 * (not linked to the shim) with one subcommand per libc entry point.  On
 * success it prints its result on stdout and exits 0; on failure it prints
 * "ERR <errno name>" and exits 1.  Included by each helper; not built alone.
 */
#ifndef FE_TESTS_HELPER_H
#define FE_TESTS_HELPER_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>

#include "fakeenv/libc.h"

#ifndef __GLIBC__
/* glibc's strerrorname_np (2.32), for a libc without it (musl): the
 * names the tests read. */
#define FE_ERRNAMES(X) X(EPERM) X(ENOENT) X(ESRCH) X(EINTR) X(EIO)          \
	X(ENXIO) X(E2BIG) X(ENOEXEC) X(EBADF) X(ECHILD) X(EAGAIN)          \
	X(ENOMEM) X(EACCES) X(EFAULT) X(EBUSY) X(EEXIST) X(EXDEV)          \
	X(ENODEV) X(ENOTDIR) X(EISDIR) X(EINVAL) X(ENFILE) X(EMFILE)       \
	X(ENOTTY) X(ETXTBSY) X(EFBIG) X(ENOSPC) X(ESPIPE) X(EROFS)         \
	X(EMLINK) X(EPIPE) X(ERANGE) X(EDEADLK) X(ENAMETOOLONG) X(ENOSYS)  \
	X(ENOTEMPTY) X(ELOOP) X(ENODATA) X(EOVERFLOW) X(ENOTSOCK)          \
	X(EOPNOTSUPP) X(ECONNREFUSED) X(ECONNRESET) X(ENOTCONN)            \
	X(ETIMEDOUT) X(ESTALE) X(EDQUOT) X(EPROTO) X(EBADMSG)              \
	X(EUCLEAN) X(ECANCELED)
static inline const char *strerrorname_np(int e)
{
	switch (e) {
#define FE_ERRCASE(n) case n: return #n;
	FE_ERRNAMES(FE_ERRCASE)
#undef FE_ERRCASE
	default: return NULL;
	}
}
#endif

/* Print "ERR <name>" for errno value e; returns the exit status 1. */
static inline int err_out(int e)
{
	const char *n = strerrorname_np(e);

	if (n)
		printf("ERR %s\n", n);
	else
		printf("ERR %d\n", e);
	return 1;
}

/* Prints "uid gid mode(octal, type bits included) major minor". */
static inline void print_meta(unsigned long uid, unsigned long gid,
			      unsigned long mode, dev_t rdev)
{
	printf("%lu %lu %lo %u %u\n", uid, gid, mode, major(rdev),
	       minor(rdev));
}

/* A decimal number; -1 allowed (for "leave unchanged"). */
static inline long num(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0') {
		fprintf(stderr, "bad number: %s\n", s);
		exit(2);
	}
	return v;
}

/* An octal mode. */
static inline mode_t omode(const char *s)
{
	char *end;
	long v = strtol(s, &end, 8);

	if (*s == '\0' || *end != '\0') {
		fprintf(stderr, "bad mode: %s\n", s);
		exit(2);
	}
	return (mode_t)v;
}

static inline int usage(const char *u)
{
	fprintf(stderr, "usage: %s\n", u);
	return 2;
}

#endif
