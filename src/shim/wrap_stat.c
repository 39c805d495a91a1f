/*
 * The stat family: the real call, then the session's view laid over the
 * result.  Every name glibc has ever exported for it is here, because a
 * binary calls whichever its headers chose at its build time (__xstat
 * before glibc 2.33, stat after; stat64 under _FILE_OFFSET_BITS=64 on
 * 32-bit, statx in coreutils >= 8.32).
 */
#include "shim.h"

/*
 * stat, lstat, fstat, fstatat and their 64 forms: one statx (which gives
 * the birth time that tells a record's file from a newer one at the same
 * inode number) converted to the caller's struct, the view laid over it.
 * Where statx cannot be had, or on an ABI whose struct stat is not
 * statx's conversion (32-bit), libc's own call, and the birth time only
 * looked up when a record needs it.
 */
#define STAT_WRAP(name, st_t, sys, fix, params, at, args)                   \
	int name params                                                     \
	{                                                                   \
		int saved = errno;                                          \
		uint32_t btag;                                              \
		int r;                                                      \
		if (!fe_faking_at(AT2(at)))                                 \
			return REAL(name, args);                            \
		if (sizeof(st_t) == sizeof(struct stat) &&                  \
		    sizeof(long) == 8) {                                    \
			r = sys(at, st, &btag);                             \
			if (r == 0)                                         \
				fix(st, btag, NULL);                        \
			return fe_ret(r, saved);                            \
		}                                                           \
		r = REAL(name, args);                                       \
		if (r == 0) {                                               \
			struct fe_restat re = { at };                       \
			fix(st, 0, &re);                                    \
		}                                                           \
		return r;                                                   \
	}

#define A(...) __VA_ARGS__

/* dirfd and path of an `at` triple, for fe_faking_at(). */
#define AT2(dirfd, path, flags) dirfd, path

STAT_WRAP(stat, struct stat, fe_sys_statat, fe_fix_stat,
	  (const char *path, struct stat *st), A(AT_FDCWD, path, 0),
	  A(path, st))
STAT_WRAP(lstat, struct stat, fe_sys_statat, fe_fix_stat,
	  (const char *path, struct stat *st),
	  A(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW), A(path, st))
STAT_WRAP(fstat, struct stat, fe_sys_statat, fe_fix_stat,
	  (int fd, struct stat *st), A(fd, "", AT_EMPTY_PATH), A(fd, st))
STAT_WRAP(fstatat, struct stat, fe_sys_statat, fe_fix_stat,
	  (int dirfd, const char *path, struct stat *st, int flags),
	  A(dirfd, path, flags), A(dirfd, path, st, flags))
#ifdef FE_GLIBC
STAT_WRAP(stat64, struct stat64, fe_sys_statat64, fe_fix_stat64,
	  (const char *path, struct stat64 *st), A(AT_FDCWD, path, 0),
	  A(path, st))
STAT_WRAP(lstat64, struct stat64, fe_sys_statat64, fe_fix_stat64,
	  (const char *path, struct stat64 *st),
	  A(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW), A(path, st))
STAT_WRAP(fstat64, struct stat64, fe_sys_statat64, fe_fix_stat64,
	  (int fd, struct stat64 *st), A(fd, "", AT_EMPTY_PATH), A(fd, st))
STAT_WRAP(fstatat64, struct stat64, fe_sys_statat64, fe_fix_stat64,
	  (int dirfd, const char *path, struct stat64 *st, int flags),
	  A(dirfd, path, flags), A(dirfd, path, st, flags))
#endif

/*
 * The old names (binaries built before glibc 2.33) take a struct version
 * that only libc knows how to read: its call, then the birth time looked
 * up when a record needs it.
 */
#define XSTAT_WRAP(name, fix, params, at, args)                             \
	int name params                                                     \
	{                                                                   \
		int r = REAL(name, args);                                   \
		if (r == 0 && fe_faking_at(AT2(at))) {                      \
			struct fe_restat re = { at };                       \
			fix(st, 0, &re);                                    \
		}                                                           \
		return r;                                                   \
	}

#ifdef FE_GLIBC
XSTAT_WRAP(__xstat, fe_fix_stat,
	   (int ver, const char *path, struct stat *st), A(AT_FDCWD, path, 0),
	   A(ver, path, st))
XSTAT_WRAP(__lxstat, fe_fix_stat,
	   (int ver, const char *path, struct stat *st),
	   A(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW), A(ver, path, st))
XSTAT_WRAP(__fxstat, fe_fix_stat,
	   (int ver, int fd, struct stat *st), A(fd, "", AT_EMPTY_PATH),
	   A(ver, fd, st))
XSTAT_WRAP(__fxstatat, fe_fix_stat,
	   (int ver, int dirfd, const char *path, struct stat *st, int flags),
	   A(dirfd, path, flags), A(ver, dirfd, path, st, flags))
XSTAT_WRAP(__xstat64, fe_fix_stat64,
	   (int ver, const char *path, struct stat64 *st),
	   A(AT_FDCWD, path, 0), A(ver, path, st))
XSTAT_WRAP(__lxstat64, fe_fix_stat64,
	   (int ver, const char *path, struct stat64 *st),
	   A(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW), A(ver, path, st))
XSTAT_WRAP(__fxstat64, fe_fix_stat64,
	   (int ver, int fd, struct stat64 *st), A(fd, "", AT_EMPTY_PATH),
	   A(ver, fd, st))
XSTAT_WRAP(__fxstatat64, fe_fix_stat64,
	   (int ver, int dirfd, const char *path, struct stat64 *st, int flags),
	   A(dirfd, path, flags), A(ver, dirfd, path, st, flags))
#endif

#define STATX_NEED (STATX_TYPE | STATX_MODE | STATX_UID | STATX_GID | STATX_INO)

int statx(int dirfd, const char *path, int flags, unsigned int mask,
	  struct statx *stx)
{
	int r;

	if (!fe_faking_at(dirfd, path))
		return REAL(statx, dirfd, path, flags, mask, stx);
	/* The overlay needs the key and the fields it replaces; asking for
	 * more than the caller did is allowed, the kernel says what it
	 * filled in stx_mask. */
	r = REAL(statx, dirfd, path, flags, mask | STATX_NEED | STATX_BTIME,
		 stx);
	if (r == 0 && (stx->stx_mask & STATX_NEED) == STATX_NEED)
		fe_fix_statx(stx);
	return r;
}

/* The second names syscall() reaches this file's wrappers by
 * (wrap.def's SYSCALL rows of family stat). */
#define FE_HERE_stat 1
#include "self.h"
