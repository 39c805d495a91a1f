/*
 * syscall(3) and prctl(2).  A program that calls syscall(SYS_chown, ...)
 * gets what chown() would give it: each number the shim fakes (wrap.def's
 * SYSCALL rows) goes to the shim's own wrapper (fe_self_<name>, never
 * libc through the PLT), with syscall()'s conventions, which are the
 * wrappers' own: -1 and errno on failure.  Every other number goes
 * straight to the kernel.  A program
 * installing a seccomp filter (prctl or SYS_seccomp) has its connection
 * to the daemon opened first, while socket(2) and connect(2) are still
 * allowed.  Strict mode is not helped: it allows too little for any
 * round trip.
 */
#include "shim.h"

#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

/* Here, syscall is the exported wrapper; the shim's own raw calls are
 * fe_syscall (shim.h). */
#undef syscall

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

/* The kernel's answer to nr with a[]: the result or -errno, errno
 * untouched.  Inline where we know the instruction: the shim's own calls
 * then need no dlsym of libc's syscall(), which cost every process in a
 * session a lookup at load (the seccomp probe) and every fork child its
 * page faults on libc's syscall().  Elsewhere libc's syscall(). */
static long kernel(long nr, const long *a)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = a[3];
	register long r8 __asm__("r8") = a[4];
	register long r9 __asm__("r9") = a[5];
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a[0]), "S"(a[1]), "d"(a[2]), "r"(r10),
			   "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a[0];
	register long x1 __asm__("x1") = a[1];
	register long x2 __asm__("x2") = a[2];
	register long x3 __asm__("x3") = a[3];
	register long x4 __asm__("x4") = a[4];
	register long x5 __asm__("x5") = a[5];

	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
#else
	int saved = errno;
	long r = raw(nr, a);

	r = r < 0 ? -errno : r;
	errno = saved;
	return r;
#endif
}

/* libc's syscall() conventions: -1 and errno on failure. */
long fe_syscall(long nr, ...)
{
	va_list ap;
	long a[6], r;

	va_start(ap, nr);
	ARGS6(ap, a);
	va_end(ap);
	r = kernel(nr, a);
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* mknod(2)'s dev argument is a 32-bit "new" encoding (the kernel's
 * new_decode_dev): minor bits 0-7, major 8-19, minor 20-31. */
static dev_t kdev(unsigned long d)
{
	unsigned int v = (unsigned int)d;

	return makedev((v & 0xfff00) >> 8, (v & 0xff) | ((v >> 12) & 0xfff00));
}

/* The arguments of wrap.def's SYSCALL rows, from syscall()'s a[]. */
#define ARG(type, i) ((type)a[i])
#define PATH(i) ARG(const char *, i)
#define INT(i) ARG(int, i)
#define UID(i) ARG(uid_t, i)
#define GID(i) ARG(gid_t, i)
#define MODE(i) ARG(mode_t, i)
#define SIZE(i) ARG(size_t, i)
#define KDEV(i) kdev(a[i])

/* openat2 with the caller's open_how but for flags and mode (ctx: the
 * syscall's a[]). */
static int try_openat2(const void *ctx, unsigned long long flags,
		       unsigned long long mode)
{
	const long *a = ctx;
	struct open_how h = *(const struct open_how *)a[2];
	long b[6] = { a[0], a[1], (long)&h, sizeof(h) };
	long fd;

	h.flags = flags;
	h.mode = mode;
	fd = raw(SYS_openat2, b);
	return fd < 0 ? -errno : (int)fd;
}

/*
 * openat2(2) as open() does creation (fe_open_new()).  Only the creating
 * calls with the version-0 open_how are faked; a larger struct (fields
 * this shim does not know) passes through.  The new file is recorded by
 * its fd: with RESOLVE_IN_ROOT or _BENEATH, dirfd+path means more than
 * the path says.
 */
static long openat2_route(const long *a)
{
	const struct open_how *how = (const struct open_how *)a[2];
	int saved = errno;

	if ((size_t)a[3] != sizeof(struct open_how) || !how ||
	    !fe_open_creates(how->flags))
		return raw(SYS_openat2, a);
	return fe_ret(fe_open_new(try_openat2, a, how->flags, how->mode, -1,
				  NULL),
		      saved);
}

/* fchmodat2(2): the flags fchmodat(2) lacks; "" with AT_EMPTY_PATH is
 * dirfd itself. */
static long fchmodat2_route(const long *a)
{
	if ((INT(3) & AT_EMPTY_PATH) && PATH(1) && PATH(1)[0] == '\0')
		return fe_self_fchmod(INT(0), MODE(2));
	return fe_self_fchmodat(INT(0), PATH(1), MODE(2),
				INT(3) & ~AT_EMPTY_PATH);
}

/* The numbers the shim fakes (wrap.def), each to its wrapper; *done is
 * false for the others.  The supervisor answers with it too. */
long fe_route_syscall(long nr, const long *a, bool *done)
{
#define SYSCALL(family, nr_, name, args) \
	case nr_:                        \
		return fe_self_##name args;
#define SYSCALL_ALSO(nr_, name, args) SYSCALL(-, nr_, name, args)
#define SYSCALL_BY(nr_, function) \
	case nr_:                 \
		return function(a);

	*done = true;
	switch (nr) {
#include "wrap.def"
	}
	*done = false;
	return 0;
}

/* A filter is about to forbid connecting: connect first. */
static bool filter_coming(long nr, const long *a)
{
	return (nr == SYS_seccomp && a[0] == SECCOMP_SET_MODE_FILTER) ||
	       (nr == SYS_prctl && a[0] == PR_SET_SECCOMP &&
		a[1] == SECCOMP_MODE_FILTER);
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
	if (filter_coming(nr, a))
		fe_conn_prepare();
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
