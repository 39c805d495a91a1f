/*
 * walk: glibc's tree walkers, which call stat internally past the PLT.
 *   walk fts|fts64|fts-children|fts64-children|ftw|ftw64|nftw|nftw64 DIR
 * Prints "path uid gid mode(octal)" per entry (fts-children: the entries
 * of DIR only), in walk order.  Physical walks: symlinks are not followed.
 */
#include "helper.h"

#include <fts.h>
#include <ftw.h>

static void line(const char *path, unsigned long u, unsigned long g,
		 unsigned long m)
{
	printf("%s %lu %lu %lo\n", path, u, g, m);
}

/* fts_children leaves fts_path unfinished: print DIR/NAME. */
static void child(const char *dir, const char *name, unsigned long u,
		  unsigned long g, unsigned long m)
{
	printf("%s/%s %lu %lu %lo\n", dir, name, u, g, m);
}

static int ftw_cb(const char *path, const struct stat *st, int flag)
{
	if (flag != FTW_NS)
		line(path, st->st_uid, st->st_gid, st->st_mode);
	return 0;
}

static int ftw64_cb(const char *path, const struct stat64 *st, int flag)
{
	if (flag != FTW_NS)
		line(path, st->st_uid, st->st_gid, st->st_mode);
	return 0;
}

static int nftw_cb(const char *path, const struct stat *st, int flag,
		   struct FTW *f)
{
	(void)f;
	if (flag != FTW_NS)
		line(path, st->st_uid, st->st_gid, st->st_mode);
	return 0;
}

static int nftw64_cb(const char *path, const struct stat64 *st, int flag,
		     struct FTW *f)
{
	(void)f;
	if (flag != FTW_NS)
		line(path, st->st_uid, st->st_gid, st->st_mode);
	return 0;
}

static int walk_fts(char *dir, int children)
{
	char *roots[] = { dir, NULL };
	FTS *fts = fts_open(roots, FTS_PHYSICAL | FTS_NOCHDIR, NULL);
	FTSENT *e;

	if (!fts)
		return err_out(errno);
	if (children) {
		e = fts_read(fts);
		if (!e)
			return err_out(errno);
		for (e = fts_children(fts, 0); e; e = e->fts_link)
			child(dir, e->fts_name, e->fts_statp->st_uid,
			      e->fts_statp->st_gid, e->fts_statp->st_mode);
	} else {
		errno = 0;
		while ((e = fts_read(fts)))
			if (e->fts_info != FTS_DP && e->fts_info != FTS_NS)
				line(e->fts_path, e->fts_statp->st_uid,
				     e->fts_statp->st_gid,
				     e->fts_statp->st_mode);
		if (errno)
			return err_out(errno);
	}
	fts_close(fts);
	return 0;
}

static int walk_fts64(char *dir, int children)
{
	char *roots[] = { dir, NULL };
	FTS64 *fts = fts64_open(roots, FTS_PHYSICAL | FTS_NOCHDIR, NULL);
	FTSENT64 *e;

	if (!fts)
		return err_out(errno);
	if (children) {
		e = fts64_read(fts);
		if (!e)
			return err_out(errno);
		for (e = fts64_children(fts, 0); e; e = e->fts_link)
			child(dir, e->fts_name, e->fts_statp->st_uid,
			      e->fts_statp->st_gid, e->fts_statp->st_mode);
	} else {
		errno = 0;
		while ((e = fts64_read(fts)))
			if (e->fts_info != FTS_DP && e->fts_info != FTS_NS)
				line(e->fts_path, e->fts_statp->st_uid,
				     e->fts_statp->st_gid,
				     e->fts_statp->st_mode);
		if (errno)
			return err_out(errno);
	}
	fts64_close(fts);
	return 0;
}

int main(int argc, char **argv)
{
	const char *call;
	int r;

	if (argc != 3)
		return usage("walk CALL DIR");
	call = argv[1];
	if (!strcmp(call, "fts"))
		return walk_fts(argv[2], 0);
	if (!strcmp(call, "fts-children"))
		return walk_fts(argv[2], 1);
	if (!strcmp(call, "fts64"))
		return walk_fts64(argv[2], 0);
	if (!strcmp(call, "fts64-children"))
		return walk_fts64(argv[2], 1);
	if (!strcmp(call, "ftw"))
		r = ftw(argv[2], ftw_cb, 16);
	else if (!strcmp(call, "ftw64"))
		r = ftw64(argv[2], ftw64_cb, 16);
	else if (!strcmp(call, "nftw"))
		r = nftw(argv[2], nftw_cb, 16, FTW_PHYS);
	else if (!strcmp(call, "nftw64"))
		r = nftw64(argv[2], nftw64_cb, 16, FTW_PHYS);
	else
		return usage("walk: unknown CALL");
	if (r != 0)
		return err_out(errno);
	return 0;
}
