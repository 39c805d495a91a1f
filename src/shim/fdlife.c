/*
 * The lifetimes of the program's fds, as far as the wrappers see them, so
 * that what the shim learnt of an fd (its file, its path) can be used
 * again without a system call to check it is still that fd's.
 *
 * An fd number gets a token when the program opens it through one of our
 * open wrappers (or dup, fcntl's F_DUPFD, opendir; not fopen, which opens
 * inside libc), and loses it when the
 * program closes it through one of ours: close, dup2 or dup3 onto it
 * (and libc's other names for them, __close, __dup2, _IO_fclose),
 * close_range, closefrom, fclose and closedir of a stream on it,
 * fcloseall (which glibc's only flushes), login_tty, syscall().  Between
 * the two, the number names the one open file it was given: the kernel
 * hands a number out again only after a close, and every way libc closes
 * an fd the program opened is one of those.  An fd opened any other way
 * (inside libc: fts, nftw, scandir; socket; inherited) has no token: the
 * callers check it with an fstat.
 *
 * Tokens are unique in the process (a counter), not per number, so that
 * an entry torn by a signal handler, fd of one and token of another,
 * can never pass.
 *
 * What is not seen: a close by a raw system call of the program's own
 * (inline assembly, io_uring).  A vfork child writes in its parent's
 * memory: its closes only make the parent forget, its opens mark numbers
 * it closed first; what it learnt of those is dropped by the exec
 * wrappers (fe_fd_caches_drop()), but not by an _exit without exec.
 */
#include "shim.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <sys/syscall.h>

#undef close

/* fds 0-2 are left out: daemon() and login_tty() dup2 onto them inside
 * libc, and nothing the shim caches is worth it there. */
#define FD_FIRST 3
#define FD_LIMIT 1024

static _Atomic uint32_t token_of[FD_LIMIT];
static _Atomic uint32_t tokens;

uint32_t fe_fd_token(int fd)
{
	if (fd < FD_FIRST || fd >= FD_LIMIT)
		return 0;
	return atomic_load_explicit(&token_of[fd], memory_order_acquire);
}

int fe_fd_opened(int fd)
{
	if (fd >= FD_FIRST && fd < FD_LIMIT) {
		uint32_t t = atomic_fetch_add_explicit(&tokens, 1,
						       memory_order_relaxed);

		/* 0 is "no token"; a wrap after 4 billion opens skips it. */
		atomic_store_explicit(&token_of[fd], t + 1 ? t + 1 : 1,
				      memory_order_release);
	}
	return fd;
}

void fe_fd_closed(int fd)
{
	/* Most closed fds never had a token: no store, no line taken. */
	if (fd >= FD_FIRST && fd < FD_LIMIT &&
	    atomic_load_explicit(&token_of[fd], memory_order_relaxed))
		atomic_store_explicit(&token_of[fd], 0, memory_order_release);
}

static void closed_range(unsigned int lo, unsigned int hi)
{
	if (lo < FD_FIRST)
		lo = FD_FIRST;
	for (unsigned int fd = lo; fd <= hi && fd < FD_LIMIT; fd++)
		atomic_store_explicit(&token_of[fd], 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

void fe_fd_closed_all(void)
{
	closed_range(0, FD_LIMIT - 1);
}

/*
 * The wrappers.  close, dup2, dup3 and close_range are the system call
 * itself, never libc's through dlsym: they are called after fork in
 * threaded programs and from signal handlers, where a first dlsym is not
 * safe.  The token goes once the call has returned: a thread that opened
 * the number in between has its new token taken, which costs it an fstat
 * later, never a wrong answer.
 */
static int close_core(int fd)
{
	long r;

	/* The fd a chrooted process reaches the session by (chroot.c):
	 * kept, as closed as the program can tell. */
	if (fd >= 0 && fd == fe_root_fd())
		return 0;
	r = fe_syscall(SYS_close, fd);

	/* Even on EINTR or EIO the number is free again (close(2)). */
	if (r == 0 || errno != EBADF)
		fe_fd_closed(fd);
	return (int)r;
}

/* libc exports its internal names too: a program that calls them
 * closes as surely. */
int close(int fd)
{
	return close_core(fd);
}

#ifdef FE_GLIBC
int __close(int fd)
{
	return close_core(fd);
}
#endif

int dup(int fd)
{
	return fe_fd_opened((int)fe_syscall(SYS_dup, fd));
}

/* Opened inside libc, past our open wrappers; closedir ends it.  ls and
 * cp -a read directories so, and readdir asks for the directory's
 * device once per regular entry where the table holds devices. */
DIR *opendir(const char *name)
{
	DIR *d = REAL_PTR(opendir, name);

	if (d)
		(void)fe_fd_opened(dirfd(d));
	return d;
}

/* fcntl's third argument is an int or a pointer: read as a pointer, as
 * glibc does, and passed on as it came.  The chroot's fd stays open
 * across exec whatever a program sets on every fd it has (apt does,
 * before it runs dpkg). */
#define FCNTL(name, real)                                                   \
	int name(int fd, int cmd, ...)                                      \
	{                                                                   \
		va_list ap;                                                 \
		void *arg;                                                  \
                                                                            \
		va_start(ap, cmd);                                          \
		arg = va_arg(ap, void *);                                   \
		va_end(ap);                                                 \
		if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)               \
			return fe_fd_opened((int)fe_syscall(SYS_fcntl, fd,  \
							    cmd, arg));     \
		if (cmd == F_SETFD && fd >= 0 && fd == fe_root_fd())        \
			return 0;                                           \
		return REAL(real, fd, cmd, arg);                            \
	}
FCNTL(fcntl, fcntl)
#ifdef FE_GLIBC
FCNTL(fcntl64, fcntl64)
FCNTL(__fcntl, fcntl)
#endif

int dup3(int oldfd, int newfd, int flags)
{
	long r = fe_syscall(SYS_dup3, oldfd, newfd, flags);

	if (r >= 0)
		fe_fd_closed(newfd);
	return (int)r;
}

static int dup2_core(int oldfd, int newfd)
{
	long r;

	/* dup3 refuses oldfd == newfd, which dup2 answers with a check. */
	if (oldfd == newfd)
		return fe_syscall(SYS_fcntl, oldfd, F_GETFD) < 0 ? -1 : newfd;
#ifdef SYS_dup2
	r = fe_syscall(SYS_dup2, oldfd, newfd);
#else
	r = fe_syscall(SYS_dup3, oldfd, newfd, 0);
#endif
	if (r >= 0)
		fe_fd_closed(newfd);
	return (int)r;
}

int dup2(int oldfd, int newfd)
{
	return dup2_core(oldfd, newfd);
}

#ifdef FE_GLIBC
int __dup2(int oldfd, int newfd)
{
	return dup2_core(oldfd, newfd);
}
#endif

/* close_range(2) around the chroot's fd (close_core()). */
static long range_sparing(unsigned int first, unsigned int last, int flags)
{
	int h = fe_root_fd();
	long r;

	if (h < 0 || (unsigned int)h < first || (unsigned int)h > last)
		return fe_syscall(SYS_close_range, first, last, flags);
	r = (unsigned int)h > first ?
		    fe_syscall(SYS_close_range, first, h - 1, flags) : 0;
	if (r == 0 && (unsigned int)h < last)
		r = fe_syscall(SYS_close_range, h + 1, last, flags);
	return r;
}

int close_range(unsigned int first, unsigned int last, int flags)
{
	long r = range_sparing(first, last, flags);

	/* CLOSE_RANGE_CLOEXEC closes nothing now; the exec that will
	 * forgets everything anyway. */
	if (r == 0 && !(flags & CLOSE_RANGE_CLOEXEC))
		closed_range(first, last);
	return (int)r;
}

void closefrom(int lowfd)
{
	if (lowfd < 0 || fe_root_fd() < lowfd ||
	    range_sparing((unsigned int)lowfd, ~0u, 0) != 0)
		REAL(closefrom, lowfd);
	if (lowfd >= 0)
		closed_range((unsigned int)lowfd, FD_LIMIT - 1);
}

/* The fd under a stream, or -1 (fmemopen, fopencookie): glibc's FILE
 * is public (bits/types/struct_FILE.h), and reading it costs no call,
 * on the path of every fclose.  musl's is not: fileno(), which sets
 * errno for a stream without an fd. */
static int stream_fd(FILE *fp)
{
	/* The headers say nonnull; glibc checks for NULL all the same. */
	__asm__("" : "+r"(fp));
#ifdef FE_GLIBC
	return fp ? fp->_fileno : -1;
#else
	int saved = errno, fd = fp ? fileno(fp) : -1;

	errno = saved;
	return fd;
#endif
}

void fe_fd_stream_closed(FILE *fp)
{
	fe_fd_closed(stream_fd(fp));
}

static int fclose_core(FILE *fp)
{
	int fd = stream_fd(fp);
	int r = REAL(fclose, fp);

	fe_fd_closed(fd);
	return r;
}

int fclose(FILE *fp)
{
	return fclose_core(fp);
}

#ifdef FE_GLIBC
/* The name of glibc before 2.1's fclose, which old binaries call. */
int _IO_fclose(FILE *fp)
{
	return fclose_core(fp);
}

int fcloseall(void)
{
	int r = REAL(fcloseall);

	fe_fd_closed_all();
	return r;
}
#endif

int closedir(DIR *dir)
{
	DIR *d = dir;
	int fd, r, saved = errno;

	__asm__("" : "+r"(d));
	fd = d ? dirfd(d) : -1;
	errno = saved;
	r = REAL(closedir, dir);

	fe_fd_closed(fd);
	return r;
}

int login_tty(int fd)
{
	int r = REAL(login_tty, fd);

	if (r == 0)
		fe_fd_closed(fd);
	return r;
}

/* The second names syscall() reaches this file's wrappers by
 * (wrap.def's SYSCALL rows of family fdlife). */
#define FE_HERE_fdlife 1
#include "self.h"
