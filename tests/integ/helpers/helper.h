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

#ifndef __GLIBC__
/* musl has no strerrorname_np: the names the tests expect. */
static inline const char *strerrorname_np(int e)
{
#define FE_ERRNAME(x) case x: return #x;
	switch (e) {
	FE_ERRNAME(EPERM) FE_ERRNAME(ENOENT) FE_ERRNAME(ESRCH)
	FE_ERRNAME(EINTR) FE_ERRNAME(EIO) FE_ERRNAME(E2BIG)
	FE_ERRNAME(EBADF) FE_ERRNAME(ECHILD) FE_ERRNAME(EAGAIN)
	FE_ERRNAME(ENOMEM) FE_ERRNAME(EACCES) FE_ERRNAME(EFAULT)
	FE_ERRNAME(EBUSY) FE_ERRNAME(EEXIST) FE_ERRNAME(EXDEV)
	FE_ERRNAME(ENODEV) FE_ERRNAME(ENOTDIR) FE_ERRNAME(EISDIR)
	FE_ERRNAME(EINVAL) FE_ERRNAME(ENOTTY) FE_ERRNAME(ENOSPC)
	FE_ERRNAME(EROFS) FE_ERRNAME(EMLINK) FE_ERRNAME(ERANGE)
	FE_ERRNAME(ENAMETOOLONG) FE_ERRNAME(ENOSYS) FE_ERRNAME(ENOTEMPTY)
	FE_ERRNAME(ELOOP) FE_ERRNAME(ENODATA) FE_ERRNAME(EOPNOTSUPP)
	FE_ERRNAME(EOVERFLOW) FE_ERRNAME(EDQUOT) FE_ERRNAME(ETXTBSY)
	}
#undef FE_ERRNAME
	return NULL;
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
