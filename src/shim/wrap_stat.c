/*
 * The stat family: the real call, then the session's view laid over the
 * result.  Every name glibc has ever exported for it is here, because a
 * binary calls whichever its headers chose at its build time (__xstat
 * before glibc 2.33, stat after; stat64 under _FILE_OFFSET_BITS=64 on
 * 32-bit, statx in coreutils >= 8.32).
 */
#include "shim.h"

#define STAT_WRAP(name, fix, params, args)                            \
	int name params                                                     \
	{                                                                   \
		int r = REAL(name, args);                                   \
		if (r == 0 && fe_faking())                                  \
			fix(st);                                            \
		return r;                                                   \
	}

#define A(...) __VA_ARGS__

STAT_WRAP(stat, fe_fix_stat,
	  (const char *path, struct stat *st), A(path, st))
STAT_WRAP(lstat, fe_fix_stat,
	  (const char *path, struct stat *st), A(path, st))
STAT_WRAP(fstat, fe_fix_stat,
	  (int fd, struct stat *st), A(fd, st))
STAT_WRAP(fstatat, fe_fix_stat,
	  (int dirfd, const char *path, struct stat *st, int flags),
	  A(dirfd, path, st, flags))
STAT_WRAP(stat64, fe_fix_stat64,
	  (const char *path, struct stat64 *st), A(path, st))
STAT_WRAP(lstat64, fe_fix_stat64,
	  (const char *path, struct stat64 *st), A(path, st))
STAT_WRAP(fstat64, fe_fix_stat64,
	  (int fd, struct stat64 *st), A(fd, st))
STAT_WRAP(fstatat64, fe_fix_stat64,
	  (int dirfd, const char *path, struct stat64 *st, int flags),
	  A(dirfd, path, st, flags))
STAT_WRAP(__xstat, fe_fix_stat,
	  (int ver, const char *path, struct stat *st), A(ver, path, st))
STAT_WRAP(__lxstat, fe_fix_stat,
	  (int ver, const char *path, struct stat *st), A(ver, path, st))
STAT_WRAP(__fxstat, fe_fix_stat,
	  (int ver, int fd, struct stat *st), A(ver, fd, st))
STAT_WRAP(__fxstatat, fe_fix_stat,
	  (int ver, int dirfd, const char *path, struct stat *st, int flags),
	  A(ver, dirfd, path, st, flags))
STAT_WRAP(__xstat64, fe_fix_stat64,
	  (int ver, const char *path, struct stat64 *st), A(ver, path, st))
STAT_WRAP(__lxstat64, fe_fix_stat64,
	  (int ver, const char *path, struct stat64 *st), A(ver, path, st))
STAT_WRAP(__fxstat64, fe_fix_stat64,
	  (int ver, int fd, struct stat64 *st), A(ver, fd, st))
STAT_WRAP(__fxstatat64, fe_fix_stat64,
	  (int ver, int dirfd, const char *path, struct stat64 *st, int flags),
	  A(ver, dirfd, path, st, flags))

#define STATX_NEED (STATX_TYPE | STATX_MODE | STATX_UID | STATX_GID | STATX_INO)

int statx(int dirfd, const char *path, int flags, unsigned int mask,
	  struct statx *stx)
{
	int r;

	if (!fe_faking())
		return REAL(statx, dirfd, path, flags, mask, stx);
	/* The overlay needs the key and the fields it replaces; asking for
	 * more than the caller did is allowed, the kernel says what it
	 * filled in stx_mask. */
	r = REAL(statx, dirfd, path, flags, mask | STATX_NEED, stx);
	if (r == 0 && (stx->stx_mask & STATX_NEED) == STATX_NEED)
		fe_fix_statx(stx);
	return r;
}

/* Second names for syscall() (wrap_syscall.c). */
FE_SELF(stat);
FE_SELF(lstat);
FE_SELF(fstat);
FE_SELF(fstatat);
FE_SELF(statx);
