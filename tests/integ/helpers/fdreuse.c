/*
 * fdreuse: an fd number that names one file, then another, behind one of
 * the ways a program closes an fd.  The shim keeps what it learnt of an
 * fd it saw opened (its file's identity, its path) until it sees it
 * closed: a close it missed would send the fchown below to the first
 * file.
 *
 *   fdreuse HOW A B
 *
 * creates A (open, O_CREAT | O_EXCL: the shim learns it), fchowns it to
 * 0:0, closes its fd by HOW, then opens the existing B with the openat
 * system call made by the instruction itself (x86_64), which no wrapper
 * sees, so that B gets the same number; then fchown(fd, 1234, 5678) and
 * fchmod(fd, 04755), which must land on B.  Prints "same fd" or "fd N
 * then M" (the number was not reused: nothing tested), then "done".
 *
 * HOW: close, dup2, dup3, close_range, closefrom, fclose (of an fdopen'd
 * stream), syscall (syscall(SYS_close)), fcntl (F_DUPFD of the number,
 * closed by close: the dup's number is the one reused), and libc's other
 * names __close, __dup2, _IO_fclose.  (glibc's fcloseall flushes the
 * streams but closes no fd.)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helper.h"

/* Exported by glibc, declared by no header. */
extern int __close(int fd);
extern int __dup2(int oldfd, int newfd);
extern int _IO_fclose(FILE *fp);

static long raw_openat(const char *path, int flags)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = 0;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"((long)SYS_openat), "D"((long)AT_FDCWD),
			   "S"((long)path), "d"((long)flags), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
#else
	(void)path;
	(void)flags;
	return -ENOSYS;
#endif
}

static int fail(const char *what)
{
	printf("%s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	const char *how, *a, *b;
	int fd, old;
	long r;

	if (argc != 4) {
		fprintf(stderr, "usage: fdreuse HOW A B\n");
		return 2;
	}
	how = argv[1];
	a = argv[2];
	b = argv[3];
	r = raw_openat("/dev/null", O_RDONLY | O_CLOEXEC);
	if (r < 0) {
		printf("no raw openat here\n");
		return 3;
	}
	close((int)r);
	fd = open(a, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return fail("open A");
	if (fchown(fd, 0, 0) != 0)
		return fail("fchown A");
	old = fd;
	if (!strcmp(how, "close")) {
		close(fd);
	} else if (!strcmp(how, "__close")) {
		__close(fd);
	} else if (!strcmp(how, "dup2") || !strcmp(how, "dup3") ||
		   !strcmp(how, "__dup2")) {
		/* The number is taken over by another file: B itself. */
		long bfd = raw_openat(b, O_RDONLY | O_CLOEXEC);

		if (bfd < 0)
			return fail("raw open B");
		r = !strcmp(how, "dup2")   ? dup2((int)bfd, fd) :
		    !strcmp(how, "__dup2") ? __dup2((int)bfd, fd) :
					     dup3((int)bfd, fd, O_CLOEXEC);
		if (r < 0)
			return fail(how);
		close((int)bfd);
		goto reused;
	} else if (!strcmp(how, "close_range")) {
		if (close_range((unsigned)fd, (unsigned)fd, 0) != 0)
			return fail("close_range");
	} else if (!strcmp(how, "closefrom")) {
		closefrom(fd);
	} else if (!strcmp(how, "fclose") || !strcmp(how, "_IO_fclose")) {
		FILE *f = fdopen(fd, "w");

		if (!f || (!strcmp(how, "fclose") ? fclose(f) : _IO_fclose(f)))
			return fail("fdopen/fclose");
	} else if (!strcmp(how, "syscall")) {
		if (syscall(SYS_close, fd) != 0)
			return fail("syscall(SYS_close)");
	} else if (!strcmp(how, "fcntl")) {
		/* A dup made by fcntl has a life of its own: learn it, close
		 * it, and see its number (the first from 100) reused by a
		 * dup that no wrapper sees. */
		int d = fcntl(fd, F_DUPFD_CLOEXEC, 100);

		if (d < 0)
			return fail("fcntl");
		if (fchown(d, 0, 0) != 0)
			return fail("fchown dup");
		close(d);
		old = d;
		r = raw_openat(b, O_RDONLY | O_CLOEXEC);
		if (r < 0)
			return fail("raw open B");
		fd = (int)syscall(SYS_fcntl, (int)r, F_DUPFD_CLOEXEC, 100);
		goto reused;
	} else {
		fprintf(stderr, "fdreuse: unknown HOW %s\n", how);
		return 2;
	}
	r = raw_openat(b, O_RDONLY | O_CLOEXEC);
	if (r < 0)
		return fail("raw open B");
	fd = (int)r;
reused:
	if (fd == old)
		printf("same fd\n");
	else
		printf("fd %d then %d\n", old, fd);
	if (fchown(fd, 1234, 5678) != 0)
		return fail("fchown B");
	if (fchmod(fd, 04755) != 0)
		return fail("fchmod B");
	printf("done\n");
	return 0;
}
