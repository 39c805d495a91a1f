/*
 * Where the daemon and the shim are; see locate.h.  Only the launcher's own
 * location is trusted: nothing is searched on PATH or taken from the
 * environment, so a stray fakeenvd or libfakeenv.so cannot be picked up.
 */
#include "locate.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "utils.h"

char *fe_loc_self(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf));

	if (n < 0)
		die_errno("cannot find the fakeenv executable: /proc/self/exe");
	if ((size_t)n >= sizeof(buf))
		die("cannot find the fakeenv executable: path too long");
	buf[n] = '\0';
	return xstrdup(buf);
}

/* SELF's directory, without the trailing slash ("/" stays "/"). */
static char *dir_of(const char *self)
{
	char *dir = xstrdup(self);
	char *slash = strrchr(dir, '/');

	if (!slash)
		die("cannot find the fakeenv executable: %s is not absolute",
		    self);
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	return dir;
}

static void candidates(const char *self, const char *name, const char *rel,
		       char *out[2])
{
	char *dir = dir_of(self);
	const char *sep = strcmp(dir, "/") ? "/" : "";

	out[0] = xasprintf("%s%s%s", dir, sep, name);
	out[1] = xasprintf("%s%s../%s/%s", dir, sep, rel, name);
	free(dir);
}

static char *usable(const char *path, int amode)
{
	struct stat st;

	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) ||
	    access(path, amode) < 0)
		return NULL;
	/* Canonical, so that LD_PRELOAD and FAKEENV_LIB carry no "..". */
	return realpath(path, NULL);
}

char *fe_loc_find(const char *self, const char *name, const char *rel,
		  int amode)
{
	char *cand[2], *found = NULL;

	candidates(self, name, rel, cand);
	for (size_t i = 0; i < 2 && !found; i++)
		found = usable(cand[i], amode);
	free(cand[0]);
	free(cand[1]);
	return found;
}

char *fe_loc_need(const char *self, const char *name, const char *rel,
		  int amode)
{
	char *found = fe_loc_find(self, name, rel, amode);
	char *cand[2];

	if (found)
		return found;
	candidates(self, name, rel, cand);
	die("cannot find %s (looked in %s, %s)", name, cand[0], cand[1]);
}

char *fe_loc_given(const char *opt, const char *path, int amode)
{
	struct stat st;
	char *found;

	if (stat(path, &st) < 0)
		die_errno("%s %s", opt, path);
	if (!S_ISREG(st.st_mode))
		die("%s %s: not a regular file", opt, path);
	if (access(path, amode) < 0)
		die_errno("%s %s", opt, path);
	/* Absolute, so that CMD finds it after a cd (LD_PRELOAD, and the
	 * daemon restarted by a --state session). */
	found = realpath(path, NULL);
	if (!found)
		die_errno("%s %s", opt, path);
	return found;
}
