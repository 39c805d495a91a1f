/*
 * rawsc: system calls made with the syscall instruction itself (inline
 * asm, x86_64), as Go's runtime and rustix do: no libc function and no
 * syscall(3) for a preload to wrap.  The seccomp tests use it to tell the
 * filter (which sees them) from the shim (which does not).
 *   rawsc ids                       "uid euid gid egid"
 *   rawsc fchownat PATH U G         "ok"
 *   rawsc newfstatat PATH           "uid gid mode major minor"
 * Errors print "ERR <errno name>" (helper.h).  Elsewhere than x86_64 it
 * prints "unsupported" and exits 3.
 */
#include "helper.h"

#include <fcntl.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
/* One syscall instruction; unused arguments are passed as 0. */
static long raw(long nr, long a, long b, long c, long d, long e)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	return ret;
}

int main(int argc, char **argv)
{
	struct stat st;
	long r;

	if (argc == 2 && !strcmp(argv[1], "ids")) {
		printf("%ld %ld %ld %ld\n", raw(SYS_getuid, 0, 0, 0, 0, 0),
		       raw(SYS_geteuid, 0, 0, 0, 0, 0),
		       raw(SYS_getgid, 0, 0, 0, 0, 0),
		       raw(SYS_getegid, 0, 0, 0, 0, 0));
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "fchownat")) {
		r = raw(SYS_fchownat, AT_FDCWD, (long)argv[2], num(argv[3]),
			 num(argv[4]), 0);
		if (r < 0)
			return err_out((int)-r);
		printf("ok\n");
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "newfstatat")) {
		memset(&st, 0, sizeof(st));
		r = raw(SYS_newfstatat, AT_FDCWD, (long)argv[2], (long)&st, 0,
			0);
		if (r < 0)
			return err_out((int)-r);
		print_meta(st.st_uid, st.st_gid, st.st_mode, st.st_rdev);
		return 0;
	}
	return usage("rawsc ids | fchownat PATH U G | newfstatat PATH");
}
#else
int main(void)
{
	printf("unsupported\n");
	return 3;
}
#endif
