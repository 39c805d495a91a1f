/*
 * Finding fakeenvd and libfakeenv.so relative to the running launcher, so
 * that the build tree, an installed tree and a DESTDIR staging tree all
 * work without PATH or LD_LIBRARY_PATH.
 */
#ifndef FE_LAUNCHER_LOCATE_H
#define FE_LAUNCHER_LOCATE_H

/* The real, absolute path of the running launcher (/proc/self/exe).
 * Dies (exit 125) when it cannot be read.  Returns a malloc'd string. */
char *fe_loc_self(void);

/* Look for NAME beside SELF, then in SELF's dir/../REL (the installed
 * layout: bin/ beside libexec/fakeenv/ and lib/fakeenv/).  A candidate
 * counts when it is a regular file that access(2) allows with AMODE.
 * Returns its canonical absolute path (malloc'd), or NULL. */
char *fe_loc_find(const char *self, const char *name, const char *rel,
		  int amode);

/* fe_loc_find(), or die with "cannot find NAME (looked in A, B)". */
char *fe_loc_need(const char *self, const char *name, const char *rel,
		  int amode);

/* A file the user named on the command line (fakeroot's -l LIBRARY and
 * --faked BINARY), checked as fe_loc_find() checks a candidate.  Returns
 * its canonical absolute path (malloc'd), or dies with "OPT PATH: why". */
char *fe_loc_given(const char *opt, const char *path, int amode);

#endif
