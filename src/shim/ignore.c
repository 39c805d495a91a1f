/*
 * FAKEENV_IGNORE_PATHS: prefixes under which the shim neither records nor
 * fakes.  The list is taken at load from the environment's copy and never
 * changes; matching allocates nothing and leaves errno alone, so it may
 * run in any wrapper (signal handlers, vfork children).
 */
#include "shim.h"

#include <string.h>

#include "common/util.h"
#include "fakeenv/env.h"

int fe_ignore_n;

/* Each prefix as it stands in the load-time copy, without trailing
 * slashes: len 0 is "/", which holds every absolute path. */
static struct {
	const char *p; /* into the environment's copy; not NUL-ended */
	size_t len;
} ign[FE_IGNORE_MAX];

void fe_ignore_load(const char *list)
{
	size_t dropped = 0;
	int n = 0;

	while (list && *list) {
		const char *end = strchr(list, ':');
		size_t len = end ? (size_t)(end - list) : strlen(list);

		/* Relative or empty entries mean nothing here. */
		if (len && list[0] == '/') {
			size_t l = len;

			while (l && list[l - 1] == '/')
				l--;
			if (n < FE_IGNORE_MAX) {
				ign[n].p = list;
				ign[n++].len = l;
			} else {
				dropped++;
			}
		}
		list += len;
		if (*list == ':')
			list++;
	}
	if (n)
		fe_ignore_n = n;
	if (dropped)
		fe_log("%s: %lu prefixes past the first %d are not ignored",
		       FE_ENV_IGNORE_PATHS, (unsigned long)dropped,
		       FE_IGNORE_MAX);
}

bool fe_ignored_slow(int dirfd, const char *path)
{
	char buf[FE_PATH_MAX];
	const char *abs;
	size_t len;

	if (!path)
		return false;
	/* An fd's own path: /proc/self/fd says it (one readlink); a pipe
	 * or socket has none and is never ignored. */
	abs = path[0] || dirfd == AT_FDCWD ?
		      fe_abspath(dirfd, path, buf, sizeof(buf)) :
		      fe_fdpath(dirfd, buf, sizeof(buf));
	if (!abs)
		return false;
	len = fe_path_lexical(buf);
	for (int i = 0; i < fe_ignore_n; i++) {
		size_t l = ign[i].len;

		if (len >= l && memcmp(buf, ign[i].p, l) == 0 &&
		    (buf[l] == '/' || buf[l] == '\0'))
			return true;
	}
	return false;
}
