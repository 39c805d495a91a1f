/*
 * A delta's load (journal/delta.h): its segments over the records a
 * journal's load put in a table.  One function for the daemon's start
 * (durable.c), which then cuts what it found torn, and for the commands
 * that show a state without a daemon (export, ls).
 */
#include "load.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "fakeenv/daemon.h"
#include "journal/delta.h"

int fe_load_delta_base(int dirfd, int fd, uint64_t *dev, uint64_t *ino)
{
	struct stat st;

	*dev = *ino = 0;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_uid != getuid())
		return -EPERM;
	if (fstatat(dirfd, FE_DIR_JOURNAL, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	*dev = (uint64_t)st.st_dev;
	*ino = (uint64_t)st.st_ino;
	return 0;
}

/* The whole file at fd into *buf, *len. */
static int read_all(int fd, unsigned char **buf, size_t *len)
{
	struct stat st;
	size_t got = 0;

	if (fstat(fd, &st) < 0)
		return -errno;
	*len = (size_t)st.st_size;
	*buf = malloc(*len ? *len : 1);
	if (!*buf)
		return -ENOMEM;
	while (got < *len) {
		ssize_t n = pread(fd, *buf + got, *len - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		got += (size_t)n;
	}
	return 0;
}

/* The segments of the len bytes at b over t. */
static int apply(struct fe_tab *t, const unsigned char *b, size_t len,
		 const char *path, const char *what, struct fe_delta_load *dl)
{
	struct fe_jnl_view v;
	char why[640];

	dl->good = FE_DELTA_HDR_SIZE;
	for (;;) {
		size_t pos = dl->good;
		enum fe_delta_seg k = fe_delta_next(b, len, &pos, &v, why,
						    sizeof(why));

		if (k == FE_DELTA_SEG) {
			if (fe_load_view(t, path, &v, &dl->st) < 0)
				return -EBADMSG;
			dl->good = pos;
			dl->segs++;
			continue;
		}
		if (k == FE_DELTA_BAD) {
			fe_log("delta %s: %s; %s (the file is left as it is)",
			       path, why, what);
			return -EBADMSG;
		}
		if (k == FE_DELTA_TORN)
			fe_fmt(dl->torn, sizeof(dl->torn), "%s", why);
		return 0;
	}
}

int fe_load_delta(struct fe_tab *t, int dirfd, int fd, const char *path,
		  const char *what, struct fe_delta_load *dl)
{
	uint64_t dev, ino, jdev, jino;
	unsigned char *b = NULL;
	size_t len = 0;
	char why[256];
	int r;

	*dl = (struct fe_delta_load){ 0 };
	r = fe_load_delta_base(dirfd, fd, &jdev, &jino);
	if (r == -EPERM) {
		fe_log("delta %s: not a regular file of uid %u; %s", path,
		       (unsigned)getuid(), what);
		return -EBADMSG;
	}
	if (r == 0)
		r = read_all(fd, &b, &len);
	if (r < 0) {
		fe_log("delta %s: cannot read it: %s; %s", path,
		       fe_strerror(-r), what);
		free(b);
		return -EBADMSG;
	}
	if (!len) {
		free(b);
		return 0;
	}
	if (fe_delta_head(b, len, &dev, &ino, why, sizeof(why)) != FE_JNL_OK) {
		fe_log("delta %s: %s; %s (the file is left as it is)", path,
		       why, what);
		free(b);
		return -EBADMSG;
	}
	/* Another base: a checkpoint renamed its journal in, then stopped
	 * before it emptied the delta, so all of it is in that journal. */
	dl->stale = dev != jdev || ino != jino;
	r = dl->stale ? 0 : apply(t, b, len, path, what, dl);
	free(b);
	return r;
}
