/*
 * DIR/unsaved; see unsaved.h.  Writes only through the directory fd it
 * is given, never a path: the daemon's directory may have been replaced.
 */
#include "unsaved.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LINE_MAX_LEN 128 /* the longest line, and the reserve's size */
#define NEW_NAME FE_UNSAVED_NAME ".new"

size_t fe_unsaved_format(char *buf, size_t size, const struct fe_unsaved *u)
{
	int n = snprintf(buf, size, "time=%llu changes=%llu errno=%d\n",
			 (unsigned long long)u->time,
			 (unsigned long long)u->changes, (int)-u->err);

	return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

int fe_unsaved_read(int dirfd, const char *name, struct fe_unsaved *u)
{
	char buf[LINE_MAX_LEN + 1];
	unsigned long long t, c;
	struct stat st;
	ssize_t n;
	int fd, e;

	memset(u, 0, sizeof(*u));
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) < 0) {
		e = -errno;
		close(fd);
		return e;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		close(fd);
		return -EINVAL;
	}
	u->time = st.st_mtime > 0 ? (uint64_t)st.st_mtime : 0;
	do
		n = read(fd, buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return 1; /* empty, or unreadable: there all the same */
	buf[n] = '\0';
	if (sscanf(buf, "time=%llu changes=%llu errno=%d", &t, &c, &e) == 3 &&
	    e >= 0 && e < 4096) {
		u->time = t;
		u->changes = c;
		u->err = -e;
	}
	return 1;
}

int fe_unsaved_reserve(int dirfd)
{
	char pad[LINE_MAX_LEN];
	int fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	/* The block the line will go in; on a disk already full the inode
	 * alone still serves as an empty marker. */
	memset(pad, '\n', sizeof(pad));
	(void)!write(fd, pad, sizeof(pad));
	return fd;
}

/* Give the reserve fd the name NEW_NAME in dirfd.  Unprivileged, so not
 * linkat(AT_EMPTY_PATH) (CAP_DAC_READ_SEARCH): through /proc. */
static int name_reserve(int dirfd, int fd)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	(void)unlinkat(dirfd, NEW_NAME, 0);
	return linkat(AT_FDCWD, proc, dirfd, NEW_NAME, AT_SYMLINK_FOLLOW) < 0 ?
		       -errno :
		       0;
}

int fe_unsaved_leave(int dirfd, int reserve, const struct fe_unsaved *u)
{
	char line[LINE_MAX_LEN];
	size_t len = fe_unsaved_format(line, sizeof(line), u);
	int fd = reserve, r;

	if (fd >= 0 && name_reserve(dirfd, fd) < 0) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		fd = openat(dirfd, NEW_NAME,
			    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
			    0600);
		if (fd < 0)
			return -errno;
	}
	/* Over the reserved block, then cut to the line: neither needs a
	 * new block.  A failure leaves a shorter line or an empty file,
	 * which still says that changes were lost. */
	if (pwrite(fd, line, len, 0) != (ssize_t)len)
		(void)!ftruncate(fd, 0);
	else
		(void)!ftruncate(fd, (off_t)len);
	(void)fsync(fd);
	close(fd);
	r = renameat(dirfd, NEW_NAME, dirfd, FE_UNSAVED_NAME) < 0 ? -errno : 0;
	if (r < 0)
		(void)unlinkat(dirfd, NEW_NAME, 0);
	else
		(void)fsync(dirfd);
	return r;
}

int fe_unsaved_clear(int dirfd)
{
	if (unlinkat(dirfd, FE_UNSAVED_NAME, 0) < 0 && errno != ENOENT)
		return -errno;
	(void)fsync(dirfd);
	return 0;
}
