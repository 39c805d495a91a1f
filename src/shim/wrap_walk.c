/*
 * glibc's tree walkers (fts, ftw, nftw) stat every entry through internal
 * calls that never reach the PLT, so our stat wrappers never see them.
 * The results are fixed up on their way out instead: fts entries as
 * fts_read/fts_children return them, ftw/nftw entries through a
 * trampoline between glibc and the caller's callback.
 */
#include "shim.h"

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

FTSENT *fts_read(FTS *fts)
{
	FTSENT *e = REAL_PTR(fts_read, fts);

	if (e && e->fts_statp && fts_has_stat(e->fts_info) && fe_faking())
		fe_fix_stat(e->fts_statp);
	return e;
}

FTSENT64 *fts64_read(FTS64 *fts)
{
	FTSENT64 *e = REAL_PTR(fts64_read, fts);

	if (e && e->fts_statp && fts_has_stat(e->fts_info) && fe_faking())
		fe_fix_stat64(e->fts_statp);
	return e;
}

FTSENT *fts_children(FTS *fts, int options)
{
	FTSENT *list = REAL_PTR(fts_children, fts, options);

	if (fe_faking())
		for (FTSENT *e = list; e; e = e->fts_link)
			if (e->fts_statp && fts_has_stat(e->fts_info))
				fe_fix_stat(e->fts_statp);
	return list;
}

FTSENT64 *fts64_children(FTS64 *fts, int options)
{
	FTSENT64 *list = REAL_PTR(fts64_children, fts, options);

	if (fe_faking())
		for (FTSENT64 *e = list; e; e = e->fts_link)
			if (e->fts_statp && fts_has_stat(e->fts_info))
				fe_fix_stat64(e->fts_statp);
	return list;
}

/*
 * The caller's callback of the walk in progress on this thread.  ftw and
 * nftw take no user pointer to carry it; a callback that starts another
 * walk is handled by saving and restoring around each call.
 */
static _Thread_local __ftw_func_t cb_ftw;
static _Thread_local __ftw64_func_t cb_ftw64;
static _Thread_local __nftw_func_t cb_nftw;
static _Thread_local __nftw64_func_t cb_nftw64;

/* FTW_NS: the stat failed and its buffer means nothing. */
static int tramp_ftw(const char *path, const struct stat *st, int flag)
{
	struct stat copy;

	if (flag != FTW_NS && st) {
		copy = *st;
		fe_fix_stat(&copy);
		st = &copy;
	}
	return cb_ftw(path, st, flag);
}

static int tramp_ftw64(const char *path, const struct stat64 *st, int flag)
{
	struct stat64 copy;

	if (flag != FTW_NS && st) {
		copy = *st;
		fe_fix_stat64(&copy);
		st = &copy;
	}
	return cb_ftw64(path, st, flag);
}

static int tramp_nftw(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	struct stat copy;

	if (flag != FTW_NS && st) {
		copy = *st;
		fe_fix_stat(&copy);
		st = &copy;
	}
	return cb_nftw(path, st, flag, ftw);
}

static int tramp_nftw64(const char *path, const struct stat64 *st, int flag,
			struct FTW *ftw)
{
	struct stat64 copy;

	if (flag != FTW_NS && st) {
		copy = *st;
		fe_fix_stat64(&copy);
		st = &copy;
	}
	return cb_nftw64(path, st, flag, ftw);
}

int ftw(const char *dir, __ftw_func_t fn, int nopenfd)
{
	__ftw_func_t prev = cb_ftw;
	int r;

	if (!fe_faking())
		return REAL(ftw, dir, fn, nopenfd);
	cb_ftw = fn;
	r = REAL(ftw, dir, tramp_ftw, nopenfd);
	cb_ftw = prev;
	return r;
}

int ftw64(const char *dir, __ftw64_func_t fn, int nopenfd)
{
	__ftw64_func_t prev = cb_ftw64;
	int r;

	if (!fe_faking())
		return REAL(ftw64, dir, fn, nopenfd);
	cb_ftw64 = fn;
	r = REAL(ftw64, dir, tramp_ftw64, nopenfd);
	cb_ftw64 = prev;
	return r;
}

int nftw(const char *dir, __nftw_func_t fn, int nopenfd, int flags)
{
	__nftw_func_t prev = cb_nftw;
	int r;

	if (!fe_faking())
		return REAL(nftw, dir, fn, nopenfd, flags);
	cb_nftw = fn;
	r = REAL(nftw, dir, tramp_nftw, nopenfd, flags);
	cb_nftw = prev;
	return r;
}

int nftw64(const char *dir, __nftw64_func_t fn, int nopenfd, int flags)
{
	__nftw64_func_t prev = cb_nftw64;
	int r;

	if (!fe_faking())
		return REAL(nftw64, dir, fn, nopenfd, flags);
	cb_nftw64 = fn;
	r = REAL(nftw64, dir, tramp_nftw64, nopenfd, flags);
	cb_nftw64 = prev;
	return r;
}
