/*
 * Opening the files a user names: journals (-i, --state, fsck, export),
 * logs and traces.  One opener for all of them, so that one rule holds:
 * a regular file of the real uid, opened without blocking on a FIFO and
 * without following a symbolic link unless the user gave it, and for a
 * journal nothing read past the 64-byte header until the header and the
 * file's size agree.  Every refusal reads "WHAT PATH: REASON".
 */
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"

/* fe_jnl_read_file(): a tool's or a test's look, at any owner's file. */
#define OPEN_ANY_OWNER 0x100u

/* What a file of type (st_mode & S_IFMT) that is not regular is. */
static const char *type_name(mode_t type)
{
	switch (type) {
	case S_IFDIR:
		return "a directory";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	case S_IFLNK:
		return "a symbolic link";
	}
	return "of an unknown type";
}

/* msg = "WHAT PATH: REASON", or "WHAT PATH (a symbolic link to TARGET):
 * REASON" when a link the user gave was followed. */
static void refuse(char *msg, size_t size, const char *what, const char *path,
		   const char *target, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static void refuse(char *msg, size_t size, const char *what, const char *path,
		   const char *target, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!msg || !size)
		return;
	if (target)
		n = snprintf(msg, size, "%s %s (a symbolic link to %s): ", what,
			     path, target);
	else
		n = snprintf(msg, size, "%s %s: ", what, path);
	if (n < 0 || (size_t)n >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(msg + n, size - (size_t)n, fmt, ap);
	va_end(ap);
}

/* The parse's refusal as one reason: "NAME: WHY", without the name twice
 * when why begins with it ("truncated: 4096 bytes, ..."). */
static void refuse_jnl(char *msg, size_t size, const char *path,
		       const char *target, enum fe_jnl_err e, const char *why)
{
	const char *name = fe_jnl_errname(e);
	size_t n = strlen(name);

	if (!strncmp(why, name, n) && why[n] == ':')
		refuse(msg, size, "journal", path, target, "%s", why);
	else
		refuse(msg, size, "journal", path, target, "%s: %s", name, why);
}

/* What open_checked() is opening, for its refusals. */
struct who {
	char *msg;
	size_t size;
	const char *what, *path, *target;
	const char *verb; /* "read" or "write" */
};

/* The open of at failed with errno: -errno, with the refusal said.
 * ELOOP: the last component is a link; ENXIO: a socket, or a FIFO opened
 * to write with no reader. */
static int open_failed(const struct who *w, const char *at)
{
	int r = -errno;
	struct stat lst;

	if ((r == -ELOOP || r == -ENXIO) && !lstat(at, &lst) &&
	    !S_ISREG(lst.st_mode)) {
		if (S_ISLNK(lst.st_mode))
			refuse(w->msg, w->size, w->what, w->path, w->target,
			       "a symbolic link, not followed");
		else
			refuse(w->msg, w->size, w->what, w->path, w->target,
			       "%s, not a regular file",
			       type_name(lst.st_mode & S_IFMT));
		return -EINVAL;
	}
	if (r == -ENOENT)
		refuse(w->msg, w->size, w->what, w->path, w->target,
		       "no such file");
	else
		refuse(w->msg, w->size, w->what, w->path, w->target,
		       "cannot %s it: %s", w->verb, fe_strerror(-r));
	return r;
}

/* What fd opened is a regular file, of ours unless OPEN_ANY_OWNER; then
 * clear O_NONBLOCK.  0, or -errno with the refusal said. */
static int opened_ok(const struct who *w, int fd, unsigned flags,
		     struct stat *st)
{
	int fl;

	if (fstat(fd, st))
		goto sys_error;
	if (!S_ISREG(st->st_mode)) {
		refuse(w->msg, w->size, w->what, w->path, w->target,
		       "%s, not a regular file",
		       type_name(st->st_mode & S_IFMT));
		return -EINVAL;
	}
	/* As ssh with its files: another user's journal would import
	 * that user's records (and a root-owned one, whoever can write it),
	 * another user's log would be written on. */
	if (!(flags & OPEN_ANY_OWNER) && st->st_uid != getuid()) {
		refuse(w->msg, w->size, w->what, w->path, w->target,
		       "owned by uid %u, not by you (uid %u)",
		       (unsigned)st->st_uid, (unsigned)getuid());
		return -EINVAL;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		goto sys_error;
	return 0;
sys_error:
	fl = -errno;
	refuse(w->msg, w->size, w->what, w->path, w->target,
	       "cannot %s it: %s", w->verb, fe_strerror(-fl));
	return fl;
}

/*
 * Open path with oflags | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC
 * (mode 0600 if it creates) and check what was opened: a regular file,
 * owned by the real uid unless OPEN_ANY_OWNER.  With FE_JNL_FOLLOW, path
 * is resolved first and *target gets the resolved path when path itself
 * is a symbolic link (malloc'd; NULL otherwise).  Returns the fd with
 * O_NONBLOCK cleared and *st filled, or -errno with msg filled: -EINVAL
 * for a file that is not a regular file of ours, -ENOENT, or the open's.
 */
static int open_checked(const char *what, const char *path, unsigned flags,
			int oflags, struct stat *st, char **target, char *msg,
			size_t size)
{
	struct who who = {msg, size, what, path, NULL,
			  (oflags & O_ACCMODE) == O_RDONLY ? "read" : "write"};
	const char *at = path;
	char *real = NULL;
	struct stat lst;
	int fd, r;

	*target = NULL;
	if (flags & FE_JNL_FOLLOW) {
		real = realpath(path, NULL);
		if (!real && errno == ENOENT) {
			refuse(msg, size, what, path, NULL, "no such file");
			return -ENOENT;
		}
		/* Any other failure: the open below says why. */
		if (real) {
			at = real;
			if (!lstat(path, &lst) && S_ISLNK(lst.st_mode))
				*target = real;
		}
	}
	who.target = *target;
	fd = open(at, oflags | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
		  0600);
	if (fd < 0)
		r = open_failed(&who, at);
	else
		r = opened_ok(&who, fd, flags, st);
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		free(real);
		*target = NULL;
		return r;
	}
	if (real != *target)
		free(real);
	return fd;
}

/* read(2) until n bytes or the end of the file: the bytes read, or
 * -errno. */
static ssize_t read_upto(int fd, unsigned char *b, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = read(fd, b + got, n - got);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/* Linux 5.14; refused before, which costs nothing. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* The pages of a big buffer about to be read into, made in one call:
 * read(2) faulting them one by one costs twice as much. */
static void populate(void *b, size_t n)
{
	int saved = errno;
	long ps = sysconf(_SC_PAGESIZE);
	uintptr_t page = ps > 0 ? (uintptr_t)ps : 4096;
	uintptr_t lo = ((uintptr_t)b + page - 1) & ~(page - 1);
	uintptr_t hi = ((uintptr_t)b + n) & ~(page - 1);

	if (n >= (1u << 20) && hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
	errno = saved;
}

int fe_jnl_load(const char *path, unsigned flags, unsigned char **buf,
		size_t *len, struct fe_jnl_view *v, char *msg, size_t msg_size)
{
	unsigned char hdr[FE_JNL_HDR_SIZE], *b = NULL;
	char why[256], *target;
	enum fe_jnl_err e;
	struct stat st;
	uint64_t want, size;
	ssize_t got, rest;
	int fd, r;

	flags &= FE_JNL_FOLLOW | FE_JNL_RAW;
	fd = open_checked("journal", path, flags, O_RDONLY, &st, &target, msg,
			  msg_size);
	if (fd < 0)
		return fd;
	/* The header first: a file that is no journal costs 64 bytes. */
	got = read_upto(fd, hdr, sizeof(hdr));
	if (got < 0) {
		r = (int)got;
		goto out_read_error;
	}
	size = (uint64_t)st.st_size;
	e = fe_jnl_head(hdr, (size_t)got, size, flags & FE_JNL_RAW, &want, why,
			sizeof(why));
	if (e)
		goto out_refused;
	if (want > SIZE_MAX / 2) {
		r = -EFBIG;
		goto out_read_error;
	}
	b = malloc(want ? (size_t)want : 1);
	if (!b) {
		r = -ENOMEM;
		goto out_read_error;
	}
	populate(b, (size_t)want);
	memcpy(b, hdr, (size_t)got);
	/* Never past what the header (or, raw, the size) claims: a file
	 * growing meanwhile costs nothing. */
	rest = read_upto(fd, b + got, (size_t)want - (size_t)got);
	if (rest < 0) {
		r = (int)rest;
		goto out_read_error;
	}
	if (flags & FE_JNL_RAW) {
		want = (uint64_t)got + (uint64_t)rest;
	} else {
		/* A file shrunk since the fstat is refused as truncated. */
		e = fe_jnl_parse(b, (size_t)got + (size_t)rest, v, why,
				 sizeof(why));
		if (e)
			goto out_refused;
	}
	close(fd);
	free(target);
	*buf = b;
	*len = (size_t)want;
	return 0;
out_read_error:
	refuse(msg, msg_size, "journal", path, target, "cannot read it: %s",
	       fe_strerror(-r));
	goto out_free;
out_refused:
	refuse_jnl(msg, msg_size, path, target, e, why);
	r = -EBADMSG;
out_free:
	free(b);
	free(target);
	close(fd);
	return r;
}

int fe_jnl_open_log(const char *path, char *msg, size_t msg_size)
{
	struct stat st;
	char *target;

	return open_checked("log", path, 0, O_WRONLY | O_APPEND | O_CREAT, &st,
			    &target, msg, msg_size);
}

int fe_jnl_open_trace(const char *path, char *msg, size_t msg_size)
{
	struct stat st;
	char *target;

	return open_checked("trace", path, 0, O_WRONLY | O_APPEND | O_CREAT,
			    &st, &target, msg, msg_size);
}

int fe_jnl_read_file(const char *path, unsigned char **buf, size_t *len)
{
	unsigned char *b;
	struct stat st;
	char *target;
	ssize_t got;
	int fd;

	fd = open_checked("file", path, OPEN_ANY_OWNER, O_RDONLY, &st, &target,
			  NULL, 0);
	if (fd < 0)
		return fd;
	if ((uint64_t)st.st_size > SIZE_MAX / 2) {
		close(fd);
		return -EFBIG;
	}
	b = malloc((size_t)st.st_size + 1);
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	got = read_upto(fd, b, (size_t)st.st_size);
	close(fd);
	if (got < 0) {
		free(b);
		return (int)got;
	}
	*buf = b;
	*len = (size_t)got;
	return 0;
}
