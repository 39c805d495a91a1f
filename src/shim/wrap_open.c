/*
 * Creation of new inodes: open and friends with O_CREAT or O_TMPFILE,
 * fopen in a writing mode, mkdir, symlink.  A new inode belongs to the
 * fake fsuid:fsgid and must not inherit a stale record left at its
 * (dev, ino) by a file that died.
 *
 * Opening a file that exists must cost what it costs natively: no daemon,
 * no extra syscall.  So O_CREAT without O_EXCL first opens without
 * O_CREAT; only ENOENT leads to an O_EXCL creation, which tells for sure
 * that this call made the file.
 */
#include "shim.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>

/*
 * Whether this process's umask keeps owner read and write.  Learnt from a
 * file it made: the kernel gave it mode & ~umask, so a result with both
 * bits says the umask has neither (in a directory with a default ACL the
 * ACL's mask stands in for the umask, and so this rule takes it).
 * Forgotten by umask(), not set from its argument: a child of vfork
 * shares this memory but not the umask.  A process that only rewrites
 * files it never makes (fopen "w" of an existing file) reads its umask
 * from /proc once instead (owner_from_proc()).
 */
static atomic_bool owner_kept;
/* fopens since the last lesson that went the slow way for want of it. */
static atomic_uint slow_fopens;

void fe_owner_learn(mode_t real_mode)
{
	if ((real_mode & 0600) == 0600 &&
	    !atomic_load_explicit(&owner_kept, memory_order_relaxed))
		atomic_store_explicit(&owner_kept, true, memory_order_relaxed);
}

mode_t umask(mode_t mask)
{
	fe_umask_fn *real = real_umask();
	/* umask cannot fail: a libc without it still has the call. */
	mode_t old = real ? real(mask) : (mode_t)fe_syscall(SYS_umask, mask);

	if (atomic_load_explicit(&owner_kept, memory_order_relaxed))
		atomic_store_explicit(&owner_kept, false, memory_order_relaxed);
	atomic_store_explicit(&slow_fopens, 0, memory_order_relaxed);
	return old;
}

/* The umask's lesson from /proc/self/status (Linux 4.7's Umask line). */
static void owner_from_proc(void)
{
	int saved = errno;
	unsigned um = 0777;

	if (fe_sup_status(0, NULL, NULL, &um) == 0 && !(um & 0600))
		fe_owner_learn(0600);
	errno = saved;
}

/*
 * A new regular file made with mode needs nothing of fe_created(), nor
 * its statx, when it is what a file without a record shows: owned by the
 * fake 0:0 (not with -u, where such a file shows its real owner); no
 * set-gid directory in the table whose group it could take (a real one
 * without a record shows group 0, as such a file does); no record in the
 * table without a birth time, the one kind that a file deleted out of the
 * session's sight can leave at the new file's inode number and the new
 * file match (the others carry the dead file's birth time); no set-id
 * bits; and a real mode that keeps the owner access the real user needs.
 */
static bool quiet_but_owner(unsigned long long mode)
{
	return !(mode & 07000) && (mode & 0600) == 0600 &&
	       fe_cred_fs_root() && !fe_unknown_is_real() &&
	       fe_map_sgid_dirs() == 0 && fe_map_blind() == 0;
}

static bool new_file_quiet(unsigned long long mode)
{
	return atomic_load_explicit(&owner_kept, memory_order_relaxed) &&
	       quiet_but_owner(mode);
}

/* fd is a regular file this call made at dirfd+path with mode. */
static void created(int dirfd, const char *path, int fd,
		    unsigned long long mode)
{
	char pbuf[FE_PATH_MAX];

	if (!new_file_quiet(mode)) {
		(void)fe_created(dirfd, path, fd, 0, 0);
		return;
	}
	/* For the fchown and fchmod that may follow, as fe_created()
	 * keeps it. */
	fe_fd_hint_keep(fd, fe_fd_token(fd), NULL,
			fe_cheap_abspath(dirfd, path, pbuf, sizeof(pbuf)));
}

int fe_open_new(fe_open_try_fn *try, const void *ctx,
		unsigned long long flags, unsigned long long mode, int dirfd,
		const char *path)
{
	int fd, saved = errno;

	if ((flags & O_TMPFILE) == O_TMPFILE || (flags & O_EXCL) ||
	    (flags & O_DIRECTORY)) {
		fd = fe_fd_opened(try(ctx, flags, mode));
		if (fd >= 0 && (flags & O_TMPFILE) == O_TMPFILE)
			(void)fe_created(-1, NULL, fd, 0, 0);
		else if (fd >= 0 && (flags & O_EXCL))
			created(dirfd, path, fd, mode);
		goto out;
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		/* Mode 0: openat2 refuses a mode without O_CREAT. */
		fd = fe_fd_opened(
			try(ctx, flags & ~(unsigned long long)O_CREAT, 0));
		if (fd != -ENOENT)
			goto out;
		fd = fe_fd_opened(try(ctx, flags | O_EXCL, mode));
		if (fd >= 0)
			created(dirfd, path, fd, mode);
		/* EEXIST: another process made it in between, or path is a
		 * dangling symlink, which O_EXCL never follows. */
		if (fd != -EEXIST)
			goto out;
	}
	/* Still there and still not openable without O_CREAT: a dangling
	 * symlink whose target this open creates. */
	fd = fe_fd_opened(try(ctx, flags, mode));
	if (fd >= 0)
		(void)fe_created(-1, NULL, fd, 0, 0);
out:
	errno = saved;
	return fd;
}

/* open_core()'s way to open: the openat of the entry point's width. */
struct openat_ctx {
	fe_openat_fn *ropen; /* openat or openat64 */
	int dirfd;
	const char *path;
};

static int try_openat(const void *ctx, unsigned long long flags,
		      unsigned long long mode)
{
	const struct openat_ctx *o = ctx;
	int fd = o->ropen(o->dirfd, o->path, (int)flags, (mode_t)mode);

	return fd < 0 ? -errno : fd;
}

/* ropen is the openat of the entry point's width (openat or openat64).
 * Returns the fd or -errno. */
static int open_core(fe_openat_fn *ropen, int dirfd, const char *path,
		     int flags, mode_t mode)
{
	struct openat_ctx o = { ropen, dirfd, path };

	if (!ropen)
		return -ENOSYS;
	return fe_open_new(try_openat, &o, (unsigned int)flags, mode, dirfd,
			   path);
}

#define OPEN_MODE(flags, mode)                                  \
	do {                                                    \
		if (fe_open_creates(flags)) {                           \
			va_list ap;                             \
			va_start(ap, flags);                    \
			mode = (mode_t)va_arg(ap, int);         \
			va_end(ap);                             \
		}                                               \
	} while (0)

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	if (!fe_open_creates(flags) || !fe_faking_at(AT_FDCWD, path))
		return fe_fd_opened(REAL(open, path, flags, mode));
	return fe_ret(open_core(real_openat(), AT_FDCWD, path, flags, mode),
		      errno);
}

#ifdef FE_GLIBC
int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	if (!fe_open_creates(flags) || !fe_faking_at(AT_FDCWD, path))
		return fe_fd_opened(REAL(open64, path, flags, mode));
	return fe_ret(open_core(real_openat64(), AT_FDCWD, path, flags, mode),
		      errno);
}
#endif

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	if (!fe_open_creates(flags) || !fe_faking_at(dirfd, path))
		return fe_fd_opened(REAL(openat, dirfd, path, flags, mode));
	return fe_ret(open_core(real_openat(), dirfd, path, flags, mode),
		      errno);
}

#ifdef FE_GLIBC
int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	if (!fe_open_creates(flags) || !fe_faking_at(dirfd, path))
		return fe_fd_opened(REAL(openat64, dirfd, path, flags, mode));
	return fe_ret(open_core(real_openat64(), dirfd, path, flags, mode),
		      errno);
}
#endif

#ifdef FE_GLIBC
/* _FORTIFY_SOURCE's opens, for flags the compiler could not see: they
 * refuse O_CREAT (no mode), so they never create; their fds get a token
 * like any other (tar opens its -C directory so). */
int __open_2(const char *path, int flags)
{
	return fe_fd_opened(REAL(__open_2, path, flags));
}

int __open64_2(const char *path, int flags)
{
	return fe_fd_opened(REAL(__open64_2, path, flags));
}

int __openat_2(int dirfd, const char *path, int flags)
{
	return fe_fd_opened(REAL(__openat_2, dirfd, path, flags));
}

int __openat64_2(int dirfd, const char *path, int flags)
{
	return fe_fd_opened(REAL(__openat64_2, dirfd, path, flags));
}
#endif

int creat(const char *path, mode_t mode)
{
	if (!fe_faking_at(AT_FDCWD, path))
		return fe_fd_opened(REAL(creat, path, mode));
	return fe_ret(open_core(real_openat(), AT_FDCWD, path,
				O_CREAT | O_WRONLY | O_TRUNC, mode),
		      errno);
}

#ifdef FE_GLIBC
int creat64(const char *path, mode_t mode)
{
	if (!fe_faking_at(AT_FDCWD, path))
		return fe_fd_opened(REAL(creat64, path, mode));
	return fe_ret(open_core(real_openat64(), AT_FDCWD, path,
				O_CREAT | O_WRONLY | O_TRUNC, mode),
		      errno);
}
#endif

/* open(2) flags for an fopen mode, as glibc reads it: r, w or a, then
 * any of + x e (b, m, c and unknown letters ignored) up to a ','. */
static int fopen_flags(const char *mode)
{
	int flags;

	switch (mode[0]) {
	case 'r':
		flags = O_RDONLY;
		break;
	case 'w':
		flags = O_WRONLY | O_CREAT | O_TRUNC;
		break;
	case 'a':
		flags = O_WRONLY | O_CREAT | O_APPEND;
		break;
	default:
		return -EINVAL;
	}
	for (const char *p = mode + 1; *p && *p != ','; p++) {
		if (*p == '+')
			flags = (flags & ~O_ACCMODE) | O_RDWR;
		else if (*p == 'x')
			flags |= O_EXCL;
		else if (*p == 'e')
			flags |= O_CLOEXEC;
	}
	return flags;
}

/* freopen, and fopen with a ",ccs=" encoding that fdopen does not take:
 * libc opens; whether it created is told by a stat beforehand. */
static FILE *reopen_core(FILE *fp, bool existed)
{
	if (fp && !existed)
		(void)fe_created(-1, NULL, fileno(fp), 0, 0);
	return fp;
}

/*
 * fopen in a creating mode: the file is opened by open_core() and handed
 * to fdopen, so that an existing file costs one open as natively (plus
 * fdopen's fcntl), and a new one is known for sure to be new.
 */
static FILE *fopen_core(fe_openat_fn *ropen, const char *path,
			const char *mode)
{
	int saved = errno;
	int flags = fopen_flags(mode);
	FILE *fp;
	int fd;

	fd = open_core(ropen, AT_FDCWD, path, flags, 0666);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	/* As glibc's fopen("a"): the stream starts at the end. */
	if (mode[0] == 'a' && !strchr(mode, '+'))
		(void)lseek(fd, 0, SEEK_END);
	fp = fdopen(fd, mode);
	if (!fp) {
		int err = errno;

		close(fd);
		errno = err;
		return NULL;
	}
	errno = saved;
	return fp;
}

/*
 * fopen goes straight to libc when it cannot create, and also when a file
 * it creates would need nothing (new_file_quiet(), fopen's mode 0666).
 * Telling new from existing would cost a syscall on every fopen (fdopen's
 * fcntl), 10% of an fopen/fclose loop.
 */
static bool fopen_passes(const char *path, const char *mode)
{
	if (!path || !mode || (mode[0] != 'w' && mode[0] != 'a') ||
	    !fe_faking_at(AT_FDCWD, path))
		return true;
	for (const char *p = mode + 1; *p && *p != ','; p++)
		if (*p == 'x')
			return false; /* O_EXCL: new for sure, cheap to tell */
	if (!quiet_but_owner(0666))
		return false;
	/* The ninth slow one since the last lesson asks /proc. */
	if (!atomic_load_explicit(&owner_kept, memory_order_relaxed) &&
	    atomic_fetch_add_explicit(&slow_fopens, 1, memory_order_relaxed) == 8)
		owner_from_proc();
	return atomic_load_explicit(&owner_kept, memory_order_relaxed);
}

static bool exists(const char *path)
{
	struct stat st;

	return fe_sys_fstatat(AT_FDCWD, path, &st, 0) == 0;
}

/* The slow half of fopen, out of line so that the pass-through path
 * carries none of its frame. */
static __attribute__((noinline)) FILE *
fopen_slow(fe_openat_fn *ropen, fe_fopen_fn *rfopen, const char *path,
	   const char *mode)
{
	if (!rfopen)
		return fe_enosys_ptr();
	if (strstr(mode, ",ccs="))
		return reopen_core(rfopen(path, mode), exists(path));
	return fopen_core(ropen, path, mode);
}

FILE *fopen(const char *path, const char *mode)
{
	if (fopen_passes(path, mode))
		return REAL_PTR(fopen, path, mode);
	return fopen_slow(real_openat(), real_fopen(), path, mode);
}

#ifdef FE_GLIBC
FILE *fopen64(const char *path, const char *mode)
{
	if (fopen_passes(path, mode))
		return REAL_PTR(fopen64, path, mode);
	return fopen_slow(real_openat64(), real_fopen64(), path, mode);
}
#endif

/* freopen closes fp's fd whatever comes of the open. */
FILE *freopen(const char *path, const char *mode, FILE *fp)
{
	bool existed;

	fe_fd_stream_closed(fp);
	if (fopen_passes(path, mode))
		return REAL_PTR(freopen, path, mode, fp);
	existed = exists(path);
	return reopen_core(REAL_PTR(freopen, path, mode, fp), existed);
}

#ifdef FE_GLIBC
FILE *freopen64(const char *path, const char *mode, FILE *fp)
{
	bool existed;

	fe_fd_stream_closed(fp);
	if (fopen_passes(path, mode))
		return REAL_PTR(freopen64, path, mode, fp);
	existed = exists(path);
	return reopen_core(REAL_PTR(freopen64, path, mode, fp), existed);
}
#endif

int mkdir(const char *path, mode_t mode)
{
	int r = REAL(mkdir, path, mode);

	if (r == 0 && fe_faking_at(AT_FDCWD, path))
		(void)fe_created(AT_FDCWD, path, -1, AT_SYMLINK_NOFOLLOW, 0);
	return r;
}

int mkdirat(int dirfd, const char *path, mode_t mode)
{
	int r = REAL(mkdirat, dirfd, path, mode);

	if (r == 0 && fe_faking_at(dirfd, path))
		(void)fe_created(dirfd, path, -1, AT_SYMLINK_NOFOLLOW, 0);
	return r;
}

int symlink(const char *target, const char *path)
{
	int r = REAL(symlink, target, path);

	if (r == 0 && fe_faking_at(AT_FDCWD, path))
		(void)fe_created(AT_FDCWD, path, -1, AT_SYMLINK_NOFOLLOW, 0);
	return r;
}

int symlinkat(const char *target, int dirfd, const char *path)
{
	int r = REAL(symlinkat, target, dirfd, path);

	if (r == 0 && fe_faking_at(dirfd, path))
		(void)fe_created(dirfd, path, -1, AT_SYMLINK_NOFOLLOW, 0);
	return r;
}

/* A temporary file made by libc at tmpl: the fd is new, so is its
 * inode. */
static int made_fd(int fd, const char *tmpl)
{
	if (fe_fd_opened(fd) >= 0 && fe_faking_at(AT_FDCWD, tmpl))
		(void)fe_created(-1, NULL, fd, 0, 0);
	return fd;
}

int mkstemp(char *tmpl)
{
	return made_fd(REAL(mkstemp, tmpl), tmpl);
}

#ifdef FE_GLIBC
int mkstemp64(char *tmpl)
{
	return made_fd(REAL(mkstemp64, tmpl), tmpl);
}
#endif

int mkostemp(char *tmpl, int flags)
{
	return made_fd(REAL(mkostemp, tmpl, flags), tmpl);
}

#ifdef FE_GLIBC
int mkostemp64(char *tmpl, int flags)
{
	return made_fd(REAL(mkostemp64, tmpl, flags), tmpl);
}
#endif

int mkstemps(char *tmpl, int suffixlen)
{
	return made_fd(REAL(mkstemps, tmpl, suffixlen), tmpl);
}

#ifdef FE_GLIBC
int mkstemps64(char *tmpl, int suffixlen)
{
	return made_fd(REAL(mkstemps64, tmpl, suffixlen), tmpl);
}
#endif

int mkostemps(char *tmpl, int suffixlen, int flags)
{
	return made_fd(REAL(mkostemps, tmpl, suffixlen, flags), tmpl);
}

#ifdef FE_GLIBC
int mkostemps64(char *tmpl, int suffixlen, int flags)
{
	return made_fd(REAL(mkostemps64, tmpl, suffixlen, flags), tmpl);
}
#endif

char *mkdtemp(char *tmpl)
{
	char *dir = REAL_PTR(mkdtemp, tmpl);

	if (dir && fe_faking_at(AT_FDCWD, dir))
		(void)fe_created(AT_FDCWD, dir, -1, AT_SYMLINK_NOFOLLOW, 0);
	return dir;
}

/* The second names syscall() reaches this file's wrappers by
 * (wrap.def's SYSCALL rows of family open). */
#define FE_HERE_open 1
#include "self.h"
