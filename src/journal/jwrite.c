/*
 * Writing journals: the streaming writer (header, records, strings,
 * trailer, each checked against what the header promised, CRC'd as the
 * bytes leave the buffer) and the two atomic saves built on it, by path
 * (fe_jnl_save) and in a held directory (fe_jnl_save_at).  What it writes
 * is what journal.c's reader accepts: the bytes are in layout.h.
 */
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "fakeenv/daemon.h"
#include "layout.h"

int fe_jnl_xattr_put(unsigned char *blk, size_t cap, size_t *len,
		     const char *name, const void *value, size_t vlen)
{
	size_t nl = strnlen(name, FE_JNL_NAME_MAX + 1);
	unsigned char *p;

	if (nl < 1 || nl > FE_JNL_NAME_MAX || vlen > FE_JNL_XATTR_MAX)
		return -EINVAL;
	if (*len > cap || cap - *len < 8 + nl + vlen)
		return -ENOSPC;
	p = blk + *len;
	st32(p, (uint32_t)nl);
	st32(p + 4, (uint32_t)vlen);
	memcpy(p + 8, name, nl);
	if (vlen)
		memcpy(p + 8 + nl, value, vlen);
	*len += 8 + nl + vlen;
	return 0;
}

/* The writer.  Bytes are CRC'd as they leave the buffer, so the checksum
 * costs one pass over each MiB while it is still in cache. */

static void write_raw(struct fe_jnl_w *w)
{
	int r;

	if (!w->err && w->len) {
		r = fe_write_full(w->fd, w->buf, w->len);
		if (r)
			w->err = r;
	}
	w->len = 0;
}

static void flush(struct fe_jnl_w *w)
{
	w->crc = fe_crc32c(w->crc, w->buf, w->len);
	write_raw(w);
}

/* The buffer's size: 1 MiB, or the whole journal when it is smaller (a
 * small table should not cost a 1 MiB allocation).  fe_jnl_w_begin()
 * checked that the total fits in 64 bits. */
static size_t buf_cap(const struct fe_jnl_w *w)
{
	uint64_t total = BARE_SIZE + w->nrec * FE_JNL_REC_SIZE + w->str_size;

	return total < WBUF_SIZE ? (size_t)total : WBUF_SIZE;
}

static void put(struct fe_jnl_w *w, const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t cap = buf_cap(w);

	while (n && !w->err) {
		size_t room = cap - w->len, k = n < room ? n : room;

		memcpy(w->buf + w->len, s, k);
		w->len += k;
		s += k;
		n -= k;
		if (w->len == cap)
			flush(w);
	}
}

int fe_jnl_w_begin(struct fe_jnl_w *w, int fd, uint64_t nrec, uint64_t str_size,
		   int64_t written)
{
	uint64_t total;
	unsigned char *h;

	*w = (struct fe_jnl_w){.fd = fd, .nrec = nrec, .str_size = str_size};
	if (!fe_jnl_total_size(nrec, str_size, &total))
		return w->err = -EINVAL;
	w->buf = malloc(buf_cap(w));
	if (!w->buf)
		return w->err = -ENOMEM;
	h = w->buf;
	memset(h, 0, FE_JNL_HDR_SIZE);
	memcpy(h, HDR_MAGIC, 8);
	st32(h + H_VERSION, FE_JNL_VERSION);
	st32(h + H_HDR_SIZE, FE_JNL_HDR_SIZE);
	st32(h + H_REC_SIZE, FE_JNL_REC_SIZE);
	st64(h + H_NREC, nrec);
	st64(h + H_STR_SIZE, str_size);
	st64(h + H_WRITTEN, (uint64_t)written);
	st64(h + H_FILE_SIZE, total);
	w->len = FE_JNL_HDR_SIZE;
	return 0;
}

/* The bytes of r's strings, or false when they cannot be recorded. */
static bool str_len_of(const struct fe_jnl_rec *r, uint32_t *len)
{
	uint64_t n;

	if (r->path_len >= UINT32_MAX || r->xattrs_len >= UINT32_MAX)
		return false;
	n = fe_jnl_str_len(r);
	if (n > UINT32_MAX)
		return false;
	*len = (uint32_t)n;
	return true;
}

void fe_jnl_w_rec(struct fe_jnl_w *w, const struct fe_jnl_rec *r)
{
	unsigned char p[FE_JNL_REC_SIZE];
	uint32_t n;

	if (w->err)
		return;
	if (w->recs_done == w->nrec || !str_len_of(r, &n) ||
	    n > w->str_size - w->str_off ||
	    !fe_jnl_fields_ok(r, w->recs_done, NULL, 0)) {
		w->err = -EINVAL;
		return;
	}
	st64(p + R_DEV, r->dev);
	st64(p + R_INO, r->ino);
	st64(p + R_RDEV, r->rdev);
	st64(p + R_STR_OFF, w->str_off);
	st32(p + R_BTAG, r->btag);
	st32(p + R_RESERVED, (uint32_t)r->reserved);
	st32(p + R_RESERVED + 4, (uint32_t)(r->reserved >> 32));
	st32(p + R_STR_LEN, n);
	st32(p + R_UID, r->uid);
	st32(p + R_GID, r->gid);
	st32(p + R_MODE, r->mode);
	st32(p + R_FLAGS, r->flags);
	w->str_off += n;
	w->recs_done++;
	put(w, p, sizeof(p));
}

void fe_jnl_w_str(struct fe_jnl_w *w, const struct fe_jnl_rec *r)
{
	uint32_t n;

	if (w->err)
		return;
	/* Strings come after every record, and the records' lengths must
	 * already add up to the area announced in the header. */
	if (w->recs_done != w->nrec || w->str_off != w->str_size ||
	    !str_len_of(r, &n) || n > w->str_size - w->str_done ||
	    (r->path_len && memchr(r->path, 0, r->path_len)) ||
	    !fe_jnl_xattrs_ok(r->xattrs, r->xattrs_len, 0, NULL, 0)) {
		w->err = -EINVAL;
		return;
	}
	put(w, r->path, r->path_len);
	put(w, "", 1);
	put(w, r->xattrs, r->xattrs_len);
	w->str_done += n;
}

int fe_jnl_w_end(struct fe_jnl_w *w)
{
	if (!w->err && (w->recs_done != w->nrec || w->str_off != w->str_size ||
			w->str_done != w->str_size))
		w->err = -EINVAL;
	if (!w->err) {
		w->crc = fe_crc32c(w->crc, w->buf, w->len);
		if (buf_cap(w) - w->len < FE_JNL_TRL_SIZE)
			write_raw(w);
		st32(w->buf + w->len, w->crc);
		memcpy(w->buf + w->len + 4, TRL_MAGIC, 4);
		w->len += FE_JNL_TRL_SIZE;
		write_raw(w);
	}
	free(w->buf);
	w->buf = NULL;
	w->len = 0;
	return w->err;
}

/* fsync the directory holding path, so that a rename into it lasts. */
static int sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd, r = 0;

	if (!slash)
		dir = strdup(".");
	else
		dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));
	if (!dir)
		return -ENOMEM;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		r = -errno;
	else if (fsync(fd))
		r = -errno;
	if (fd >= 0)
		close(fd);
	free(dir);
	return r;
}

/* emit() into the temporary file fd, then fsync and close it: 0 or
 * -errno.  Both saves' one way to write. */
static int write_all(int fd, int (*emit)(struct fe_jnl_w *w, int fd, void *ctx),
		     void *ctx)
{
	/* err stays -EINVAL unless emit() begins the writer it is given. */
	struct fe_jnl_w w = {.fd = -1, .err = -EINVAL};
	int r = emit(&w, fd, ctx);

	if (w.buf) { /* emit() never ended the writer */
		free(w.buf);
		if (!r)
			r = -EINVAL;
	}
	if (!r)
		r = w.err;
	if (!r && fsync(fd))
		r = -errno;
	/* Linux closes the fd even when close() says EINTR. */
	if (close(fd) && errno != EINTR && !r)
		r = -errno;
	return r;
}

/*
 * As rdbSave: the temporary file is complete and on disk before it takes
 * the name, so a crash leaves either journal whole.  The one failure that
 * comes after the rename is the directory's fsync: path then already holds
 * the new journal, which may not survive a crash, and -errno says so.
 */
int fe_jnl_save(const char *path,
		int (*emit)(struct fe_jnl_w *w, int fd, void *ctx), void *ctx)
{
	char *tmp;
	int fd, r;

	if (asprintf(&tmp, "%s" FE_JNL_TMP "XXXXXX", path) < 0)
		return -ENOMEM;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		goto out_free;
	}
	r = write_all(fd, emit, ctx);
	if (!r && rename(tmp, path))
		r = -errno;
	if (r) {
		unlink(tmp);
		goto out_free;
	}
	r = sync_dir(path);
out_free:
	free(tmp);
	return r;
}

/* A temporary name beside name in dirfd, made with O_EXCL (mkostemp has
 * no *at form); the suffix is the pid, a counter and the clock. */
static int tmp_at(int dirfd, const char *name, char *tmp, size_t size)
{
	static unsigned seq;

	for (int i = 0; i < 100; i++) {
		struct timespec ts;
		int fd;

		clock_gettime(CLOCK_REALTIME, &ts);
		if ((size_t)snprintf(tmp, size, "%s" FE_JNL_TMP "%ld%u%06ld", name,
				     (long)getpid(),
				     __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED),
				     ts.tv_nsec / 1000 % 1000000) >= size)
			return -ENAMETOOLONG;
		fd = openat(dirfd, tmp,
			    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
			    0600);
		if (fd >= 0 || errno != EEXIST)
			return fd < 0 ? -errno : fd;
	}
	return -EEXIST;
}

int fe_jnl_save_at(int dirfd, const char *name, int (*check)(void *ctx),
		   void *check_ctx,
		   int (*emit)(struct fe_jnl_w *w, int fd, void *ctx), void *ctx)
{
	char tmp[512];
	int fd, r;

	r = check ? check(check_ctx) : 0;
	if (r < 0)
		return r;
	fd = tmp_at(dirfd, name, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	r = write_all(fd, emit, ctx);
	/* The last look before the name changes: the rename itself stays
	 * in dirfd, so a directory made since at the same path never gets
	 * the journal, whatever happens between the two. */
	if (!r && check)
		r = check(check_ctx);
	if (!r && renameat(dirfd, tmp, dirfd, name))
		r = -errno;
	if (r) {
		unlinkat(dirfd, tmp, 0);
		return r;
	}
	return fsync(dirfd) ? -errno : 0;
}
