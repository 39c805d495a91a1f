/*
 * glibc's tree walkers (fts, ftw, nftw) stat every entry through internal
 * calls that never reach the PLT, so our stat wrappers never see them.
 * The results are fixed up on their way out instead: fts entries as
 * fts_read/fts_children return them, ftw/nftw entries through a
 * trampoline between glibc and the caller's callback.
 */
#include "shim.h"

#ifdef FE_HAVE_FTS
/* fts_info values whose fts_statp holds a stat result.  FTS_DP is left
 * out: it is the same entry as the FTS_D visit, fixed up already. */
static bool fts_has_stat(int info)
{
	switch (info) {
	case FTS_D:
	case FTS_DC:
	case FTS_DEFAULT:
	case FTS_DNR:
	case FTS_F:
	case FTS_SL:
	case FTS_SLNONE:
		return true;
	default:
		return false;
	}
}

/*
 * The walkers' stat gave no birth time: where a record needs one, the
 * entry is found again by its access path (valid from the current
 * directory while fts hands the entry out; fe_meta_get() checks that it
 * is still the same inode).  A symlink entry was an lstat.
 */
static void fix_fts(struct stat *st, const char *path, int info)
{
	struct fe_restat re = {
		AT_FDCWD, path,
		info == FTS_SL || info == FTS_SLNONE ? AT_SYMLINK_NOFOLLOW : 0
	};

	fe_fix_stat(st, 0, path ? &re : NULL);
}

#ifdef FE_GLIBC
static void fix_fts64(struct stat64 *st, const char *path, int info)
{
	struct fe_restat re = {
		AT_FDCWD, path,
		info == FTS_SL || info == FTS_SLNONE ? AT_SYMLINK_NOFOLLOW : 0
	};

	fe_fix_stat64(st, 0, path ? &re : NULL);
}
#endif

FTSENT *fts_read(FTS *fts)
{
	FTSENT *e = REAL_PTR(fts_read, fts);

	if (e && e->fts_statp && fts_has_stat(e->fts_info) &&
	    fe_faking_at(AT_FDCWD, e->fts_accpath))
		fix_fts(e->fts_statp, e->fts_accpath, e->fts_info);
	return e;
}

#ifdef FE_GLIBC
FTSENT64 *fts64_read(FTS64 *fts)
{
	FTSENT64 *e = REAL_PTR(fts64_read, fts);

	if (e && e->fts_statp && fts_has_stat(e->fts_info) &&
	    fe_faking_at(AT_FDCWD, e->fts_accpath))
		fix_fts64(e->fts_statp, e->fts_accpath, e->fts_info);
	return e;
}
#endif

FTSENT *fts_children(FTS *fts, int options)
{
	FTSENT *list = REAL_PTR(fts_children, fts, options);

	if (fe_faking())
		for (FTSENT *e = list; e; e = e->fts_link)
			if (e->fts_statp && fts_has_stat(e->fts_info) &&
			    !fe_ignored(AT_FDCWD, e->fts_accpath))
				fix_fts(e->fts_statp, e->fts_accpath,
					e->fts_info);
	return list;
}

#ifdef FE_GLIBC
FTSENT64 *fts64_children(FTS64 *fts, int options)
{
	FTSENT64 *list = REAL_PTR(fts64_children, fts, options);

	if (fe_faking())
		for (FTSENT64 *e = list; e; e = e->fts_link)
			if (e->fts_statp && fts_has_stat(e->fts_info) &&
			    !fe_ignored(AT_FDCWD, e->fts_accpath))
				fix_fts64(e->fts_statp, e->fts_accpath,
					  e->fts_info);
	return list;
}
#endif
#endif /* FE_HAVE_FTS */

/*
 * ftw and nftw take no user pointer to carry the caller's callback to a
 * trampoline, so it waits in a per-thread slot for the walk in progress;
 * a callback that starts another walk is handled by saving and restoring
 * around each call.  The trampoline hands the callback a fixed-up copy of
 * glibc's stat buffer (FTW_NS: the stat failed, its buffer means
 * nothing).
 *
 * WALK(name, callback type, stat type, fix-up, trampoline parameters,
 *      trampoline arguments, wrapper parameters, wrapper arguments)
 */
#define WALK(name, fn_t, st_t, fix, tparams, targs, wparams, wargs)         \
	static _Thread_local fn_t cb_##name;                                 \
	static int tramp_##name tparams                                      \
	{                                                                    \
		st_t copy;                                                   \
		if (flag != FTW_NS && st && !fe_ignored(AT_FDCWD, path)) {   \
			struct fe_restat re = {                              \
				AT_FDCWD, path,                              \
				flag == FTW_SL || flag == FTW_SLN ?          \
					AT_SYMLINK_NOFOLLOW : 0              \
			};                                                   \
			copy = *st;                                          \
			fix(&copy, 0, &re);                                  \
			st = &copy;                                          \
		}                                                            \
		return cb_##name targs;                                      \
	}                                                                    \
	int name wparams                                                     \
	{                                                                    \
		fn_t prev = cb_##name;                                       \
		int r;                                                       \
		if (!fe_faking())                                            \
			return REAL(name, dir, fn wargs);                    \
		cb_##name = fn;                                              \
		r = REAL(name, dir, tramp_##name wargs);                     \
		cb_##name = prev;                                            \
		return r;                                                    \
	}

#define A(...) __VA_ARGS__

WALK(ftw, fe_ftw_cb *, struct stat, fe_fix_stat,
     (const char *path, const struct stat *st, int flag),
     (path, st, flag),
     (const char *dir, fe_ftw_cb *fn, int nopenfd), A(, nopenfd))
WALK(nftw, fe_nftw_cb *, struct stat, fe_fix_stat,
     (const char *path, const struct stat *st, int flag, struct FTW *f),
     (path, st, flag, f),
     (const char *dir, fe_nftw_cb *fn, int nopenfd, int flags),
     A(, nopenfd, flags))
#ifdef FE_GLIBC
WALK(ftw64, __ftw64_func_t, struct stat64, fe_fix_stat64,
     (const char *path, const struct stat64 *st, int flag),
     (path, st, flag),
     (const char *dir, __ftw64_func_t fn, int nopenfd), A(, nopenfd))
WALK(nftw64, __nftw64_func_t, struct stat64, fe_fix_stat64,
     (const char *path, const struct stat64 *st, int flag, struct FTW *f),
     (path, st, flag, f),
     (const char *dir, __nftw64_func_t fn, int nopenfd, int flags),
     A(, nopenfd, flags))
#endif
