/*
 * The chown-then-stat step the process and hostile-program helpers share:
 * files live in one directory (dir, set from the command line).  Included
 * by those helpers only; not built alone.
 */
#ifndef FE_TESTS_CHOWN_STAT_H
#define FE_TESTS_CHOWN_STAT_H

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[2048];

static void path(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", dir, name);
}

/* chown NAME to u:g (creating it first), then stat: 0 when it shows u:g,
 * 1 when it shows something else, -1 when a call failed. */
static int cs(const char *name, uid_t u, gid_t g)
{
	char p[4096];
	struct stat st;
	int fd;

	path(p, sizeof(p), name);
	fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	close(fd);
	if (chown(p, u, g) != 0 || stat(p, &st) != 0)
		return -1;
	return st.st_uid == u && st.st_gid == g ? 0 : 1;
}

/* The fd of the shim's socket (the helpers open none), or -1.  No
 * malloc: it runs in vfork children. */
static inline int shim_fd(void)
{
	char p[64], l[64];
	int found = -1;

	for (int fd = 3; fd < 1024; fd++) {
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(p, l, sizeof(l) - 1);

		if (n > 7 && !strncmp(l, "socket:", 7))
			found = fd;
	}
	return found;
}

#endif
