/*
 * The journal codec: the layout is in journal.h.  This file owns every
 * byte of the format; it never trusts a byte it has not checked and never
 * writes one the reader would refuse.  No global state (the CRC tables
 * aside): the daemon, the launcher and the fuzzers call it as they like.
 *
 * The reader's checks, in this order; the first failure is the answer:
 *   1. 8 bytes of magic (ETRUNC, EMAGIC), then a whole header (ETRUNC);
 *   2. version 1..FE_JNL_VERSION, header flags 0, reserved 0 (EVERSION);
 *   3. hdr_size and rec_size 64, file_size == 64 + nrec * 64 + str_size
 *      + 8 computed without overflow (ESIZE);
 *   4. the length: shorter than file_size is ETRUNC, longer is ESIZE;
 *   5. the trailer's magic, then its CRC (ECRC);
 *   6. each record: flags, mode, rdev, btime, then its strings, which
 *      must start where the previous record's end (so they never overlap)
 *      and hold a NUL-terminated path and a well-formed xattr block;
 *      finally the strings must end where the area ends (ERECORD).
 * fe_jnl_load() opens a file for them: a regular file of the real uid,
 * never a FIFO's blocking open nor a symbolic link unasked; then 1-3 on
 * the 64-byte header alone and 4 on the file's size, so that nothing
 * past the header is read (or allocated) for a file that is no journal,
 * and never more than file_size.
 * Integers are read and written a byte at a time: no buffer is assumed
 * aligned, and the host's byte order never leaks into the file.
 */
#include "journal.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"

#define HDR_MAGIC "FAKEENVJ" /* 8 bytes, no NUL in the file */
#define TRL_MAGIC "JEND"     /* 4 bytes */
#define WBUF_SIZE (1u << 20) /* the writer's buffer */

/* Bytes of a journal with no record and no string. */
#define BARE_SIZE (FE_JNL_HDR_SIZE + FE_JNL_TRL_SIZE)

/* Header field offsets. */
enum {
	H_VERSION = 8,
	H_HDR_SIZE = 12,
	H_REC_SIZE = 16,
	H_FLAGS = 20,
	H_NREC = 24,
	H_STR_SIZE = 32,
	H_WRITTEN = 40,
	H_FILE_SIZE = 48,
	H_RESERVED = 56,
};

/* Record field offsets. */
enum {
	R_DEV = 0,
	R_INO = 8,
	R_RDEV = 16,
	R_STR_OFF = 24,
	R_BTAG = 32,
	R_RESERVED = 36, /* 8 bytes */
	R_STR_LEN = 44,
	R_UID = 48,
	R_GID = 52,
	R_MODE = 56,
	R_FLAGS = 60,
};

typedef unsigned long long ull; /* for printf: uint64_t is not %llu */

/* Little-endian loads and stores at any alignment: memcpy and a byte
 * swap on big-endian hosts, one move on x86 (a load decodes every
 * record four times: it showed in perf byte by byte). */
static inline uint32_t ld32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline uint64_t ld64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static inline void st32(unsigned char *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void st64(unsigned char *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

/* Fill why (if any) with one line. */
static void say(char *why, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (!why || !size)
		return;
	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
}

const char *fe_jnl_errname(enum fe_jnl_err err)
{
	switch (err) {
	case FE_JNL_OK:
		return "ok";
	case FE_JNL_ETRUNC:
		return "truncated";
	case FE_JNL_EMAGIC:
		return "not a journal";
	case FE_JNL_EVERSION:
		return "newer version";
	case FE_JNL_ESIZE:
		return "impossible sizes";
	case FE_JNL_ECRC:
		return "bad checksum";
	case FE_JNL_ERECORD:
		return "bad record";
	}
	return "unknown error";
}

/* The fixed fields of record i obey the rules of journal.h.  Shared by the
 * reader, salvage and the writer, so that what is written is readable. */
static bool fields_ok(const struct fe_jnl_rec *r, uint64_t i, char *why,
		      size_t size)
{
	uint32_t type = r->mode & S_IFMT;

	if (r->flags & ~(FE_JNL_MODE_SET | FE_JNL_DEV_SET | FE_JNL_ORPHAN)) {
		say(why, size, "record %llu: flags 0x%x has unknown bits",
		    (ull)i, r->flags);
		return false;
	}
	if (r->mode & ~(uint32_t)(S_IFMT | 07777)) {
		say(why, size, "record %llu: mode 0%o has bits outside 0%o",
		    (ull)i, r->mode, (unsigned)(S_IFMT | 07777));
		return false;
	}
	if (!fe_type_valid(type)) {
		say(why, size, "record %llu: mode 0%o has no valid file type",
		    (ull)i, r->mode);
		return false;
	}
	if ((r->flags & FE_JNL_DEV_SET) && type != S_IFCHR && type != S_IFBLK) {
		say(why, size,
		    "record %llu: device flag on mode 0%o, which is not a "
		    "char or block device",
		    (ull)i, r->mode);
		return false;
	}
	if (!(r->flags & FE_JNL_DEV_SET) && r->rdev) {
		say(why, size,
		    "record %llu: rdev 0x%llx without the device flag", (ull)i,
		    (ull)r->rdev);
		return false;
	}
	if (r->reserved) {
		say(why, size, "record %llu: reserved bytes are not zero",
		    (ull)i);
		return false;
	}
	return true;
}

/* The xattr block of record i parses exactly to its end. */
static bool xattrs_ok(const unsigned char *b, size_t len, uint64_t i, char *why,
		      size_t size)
{
	size_t pos = 0;

	while (pos < len) {
		size_t left = len - pos;
		uint32_t nl, vl;

		if (left < 8) {
			say(why, size,
			    "record %llu: xattr at byte %zu: %zu bytes left, "
			    "an entry header needs 8",
			    (ull)i, pos, left);
			return false;
		}
		nl = ld32(b + pos);
		vl = ld32(b + pos + 4);
		if (nl < 1 || nl > FE_JNL_NAME_MAX) {
			say(why, size,
			    "record %llu: xattr at byte %zu: name_len %u, "
			    "not 1..%d",
			    (ull)i, pos, nl, FE_JNL_NAME_MAX);
			return false;
		}
		if (vl > FE_JNL_XATTR_MAX) {
			say(why, size,
			    "record %llu: xattr at byte %zu: value_len %u, "
			    "more than %d",
			    (ull)i, pos, vl, FE_JNL_XATTR_MAX);
			return false;
		}
		if ((uint64_t)nl + vl > left - 8) {
			say(why, size,
			    "record %llu: xattr at byte %zu: name %u + value "
			    "%u bytes, but %zu left in the block",
			    (ull)i, pos, nl, vl, left - 8);
			return false;
		}
		if (memchr(b + pos + 8, 0, nl)) {
			say(why, size,
			    "record %llu: xattr at byte %zu: a NUL in the name",
			    (ull)i, pos);
			return false;
		}
		pos += 8 + (size_t)nl + vl;
	}
	return true;
}

/* The len bytes of strings of record i: a NUL-terminated path, then an
 * xattr block.  Sets *path_len. */
static bool strings_ok(const unsigned char *s, size_t len, uint64_t i,
		       size_t *path_len, char *why, size_t size)
{
	const unsigned char *nul = len ? memchr(s, 0, len) : NULL;

	if (!nul) {
		say(why, size,
		    "record %llu: no NUL ends the path in its %zu bytes of "
		    "strings",
		    (ull)i, len);
		return false;
	}
	*path_len = (size_t)(nul - s);
	return xattrs_ok(nul + 1, len - *path_len - 1, i, why, size);
}

/* Decode the fixed fields of the record at p (strings left unset). */
static void rec_decode(const unsigned char *p, struct fe_jnl_rec *r,
		       uint64_t *str_off, uint32_t *str_len)
{
	*r = (struct fe_jnl_rec){
	    .dev = ld64(p + R_DEV),
	    .ino = ld64(p + R_INO),
	    .rdev = ld64(p + R_RDEV),
	    .btag = ld32(p + R_BTAG),
	    .reserved = ld32(p + R_RESERVED) |
			(uint64_t)ld32(p + R_RESERVED + 4) << 32,
	    .uid = ld32(p + R_UID),
	    .gid = ld32(p + R_GID),
	    .mode = ld32(p + R_MODE),
	    .flags = ld32(p + R_FLAGS),
	};
	*str_off = ld64(p + R_STR_OFF);
	*str_len = ld32(p + R_STR_LEN);
}

/* Steps 1 and 2 and the fixed sizes of step 3: what salvage trusts too. */
static enum fe_jnl_err header_check(const unsigned char *b, size_t len,
				    char *why, size_t size)
{
	uint32_t version, flags, hdr_size, rec_size;
	uint64_t reserved;

	if (len < 8) {
		say(why, size, "truncated: %zu bytes, not even a magic", len);
		return FE_JNL_ETRUNC;
	}
	if (memcmp(b, HDR_MAGIC, 8)) {
		say(why, size, "the first 8 bytes are not \"" HDR_MAGIC "\"");
		return FE_JNL_EMAGIC;
	}
	if (len < FE_JNL_HDR_SIZE) {
		say(why, size,
		    "truncated: %zu bytes, shorter than a %d-byte "
		    "header",
		    len, FE_JNL_HDR_SIZE);
		return FE_JNL_ETRUNC;
	}
	version = ld32(b + H_VERSION);
	flags = ld32(b + H_FLAGS);
	reserved = ld64(b + H_RESERVED);
	hdr_size = ld32(b + H_HDR_SIZE);
	rec_size = ld32(b + H_REC_SIZE);
	if (version == 0 || version > FE_JNL_VERSION) {
		say(why, size, "version %u, this reader knows 1..%d", version,
		    FE_JNL_VERSION);
		return FE_JNL_EVERSION;
	}
	if (flags) {
		say(why, size, "unknown header flags 0x%x (a newer writer?)",
		    flags);
		return FE_JNL_EVERSION;
	}
	if (reserved) {
		say(why, size,
		    "reserved header field is 0x%llx, not 0 (a "
		    "newer writer?)",
		    (ull)reserved);
		return FE_JNL_EVERSION;
	}
	if (hdr_size != FE_JNL_HDR_SIZE || rec_size != FE_JNL_REC_SIZE) {
		say(why, size,
		    "hdr_size %u and rec_size %u, expected %d and %d", hdr_size,
		    rec_size, FE_JNL_HDR_SIZE, FE_JNL_REC_SIZE);
		return FE_JNL_ESIZE;
	}
	return FE_JNL_OK;
}

/* The size of a journal of nrec records and str_size bytes of strings,
 * or false when it does not fit in 64 bits. */
static bool total_size(uint64_t nrec, uint64_t str_size, uint64_t *total)
{
	if (nrec > (UINT64_MAX - BARE_SIZE) / FE_JNL_REC_SIZE)
		return false;
	*total = BARE_SIZE + nrec * FE_JNL_REC_SIZE;
	if (str_size > UINT64_MAX - *total)
		return false;
	*total += str_size;
	return true;
}

/* The sizes of a header that passed header_check() agree with each
 * other; *file_size gets the total they make. */
static enum fe_jnl_err sizes_check(const unsigned char *b, uint64_t *file_size,
				   char *why, size_t size)
{
	uint64_t nrec = ld64(b + H_NREC), str_size = ld64(b + H_STR_SIZE);
	uint64_t want;

	*file_size = ld64(b + H_FILE_SIZE);
	if (!total_size(nrec, str_size, &want)) {
		say(why, size,
		    "%llu records and %llu bytes of strings "
		    "overflow 64 bits",
		    (ull)nrec, (ull)str_size);
		return FE_JNL_ESIZE;
	}
	if (*file_size != want) {
		say(why, size,
		    "file_size %llu, but %llu records and %llu "
		    "bytes of strings make %llu",
		    (ull)*file_size, (ull)nrec, (ull)str_size, (ull)want);
		return FE_JNL_ESIZE;
	}
	return FE_JNL_OK;
}

/* A file of len bytes holds exactly the file_size its header claims. */
static enum fe_jnl_err length_check(uint64_t len, uint64_t file_size, char *why,
				    size_t size)
{
	if (len < file_size) {
		say(why, size, "truncated: %llu bytes, the header says %llu",
		    (ull)len, (ull)file_size);
		return FE_JNL_ETRUNC;
	}
	if (len > file_size) {
		say(why, size,
		    "%llu bytes, the header says %llu: %llu bytes "
		    "after the trailer",
		    (ull)len, (ull)file_size, (ull)(len - file_size));
		return FE_JNL_ESIZE;
	}
	return FE_JNL_OK;
}

enum fe_jnl_err fe_jnl_parse(const void *buf, size_t len, struct fe_jnl_view *v,
			     char *why, size_t why_size)
{
	const unsigned char *b = buf, *recs, *strs, *trl;
	uint64_t nrec, str_size, file_size, sum = 0;
	uint32_t stored, computed;
	enum fe_jnl_err err;

	err = header_check(b, len, why, why_size);
	if (!err)
		err = sizes_check(b, &file_size, why, why_size);
	if (!err)
		err = length_check(len, file_size, why, why_size);
	if (err)
		return err;
	nrec = ld64(b + H_NREC);
	str_size = ld64(b + H_STR_SIZE);

	trl = b + len - FE_JNL_TRL_SIZE;
	if (memcmp(trl + 4, TRL_MAGIC, 4)) {
		say(why, why_size,
		    "trailer magic 0x%08x is not \"" TRL_MAGIC "\"",
		    ld32(trl + 4));
		return FE_JNL_ECRC;
	}
	stored = ld32(trl);
	computed = fe_crc32c(0, b, len - FE_JNL_TRL_SIZE);
	if (stored != computed) {
		say(why, why_size,
		    "bad checksum: stored 0x%08x, computed "
		    "0x%08x",
		    stored, computed);
		return FE_JNL_ECRC;
	}

	recs = b + FE_JNL_HDR_SIZE;
	strs = recs + nrec * FE_JNL_REC_SIZE;
	for (uint64_t i = 0; i < nrec; i++) {
		struct fe_jnl_rec r;
		uint64_t str_off;
		uint32_t str_len;
		size_t path_len;

		rec_decode(recs + i * FE_JNL_REC_SIZE, &r, &str_off, &str_len);
		if (!fields_ok(&r, i, why, why_size))
			return FE_JNL_ERECORD;
		/* Contiguous in record order: no overlap, and no gap is
		 * left for bytes that belong to nobody. */
		if (str_off != sum) {
			say(why, why_size,
			    "record %llu: strings at offset "
			    "%llu, expected %llu (%s)",
			    (ull)i, (ull)str_off, (ull)sum,
			    i ? "where the previous record's end"
			      : "the area's start");
			return FE_JNL_ERECORD;
		}
		if (str_len > str_size - sum) {
			say(why, why_size,
			    "record %llu: %u bytes of strings "
			    "at offset %llu run past the %llu-byte area",
			    (ull)i, str_len, (ull)str_off, (ull)str_size);
			return FE_JNL_ERECORD;
		}
		if (!strings_ok(strs + str_off, str_len, i, &path_len, why,
				why_size))
			return FE_JNL_ERECORD;
		sum += str_len;
	}
	if (sum != str_size) {
		say(why, why_size,
		    "the records' strings end at byte %llu of "
		    "the %llu-byte string area",
		    (ull)sum, (ull)str_size);
		return FE_JNL_ERECORD;
	}

	*v = (struct fe_jnl_view){
	    .buf = b,
	    .len = len,
	    .nrec = nrec,
	    .str_size = str_size,
	    .written = (int64_t)ld64(b + H_WRITTEN),
	    .version = ld32(b + H_VERSION),
	};
	return FE_JNL_OK;
}

/* Point r's strings at the len bytes at s (already checked). */
static void set_strings(struct fe_jnl_rec *r, const unsigned char *s,
			size_t len)
{
	r->path = (const char *)s;
	r->path_len = strlen(r->path);
	r->xattrs = s + r->path_len + 1;
	r->xattrs_len = len - r->path_len - 1;
}

void fe_jnl_get(const struct fe_jnl_view *v, uint64_t i, struct fe_jnl_rec *r)
{
	const unsigned char *recs = v->buf + FE_JNL_HDR_SIZE;
	const unsigned char *strs = recs + v->nrec * FE_JNL_REC_SIZE;
	uint64_t str_off;
	uint32_t str_len;

	rec_decode(recs + i * FE_JNL_REC_SIZE, r, &str_off, &str_len);
	set_strings(r, strs + str_off, str_len);
}

bool fe_jnl_xattr_next(const unsigned char *blk, size_t len, size_t *pos,
		       const char **name, size_t *name_len,
		       const unsigned char **val, size_t *val_len)
{
	size_t p = *pos, nl, vl;

	/* Bounds again, cheaply: a block that was never checked ends the
	 * walk early instead of reading past its end. */
	if (p >= len || len - p < 8)
		return false;
	nl = ld32(blk + p);
	vl = ld32(blk + p + 4);
	if (nl + vl > len - p - 8)
		return false;
	*name = (const char *)blk + p + 8;
	*name_len = nl;
	*val = blk + p + 8 + nl;
	*val_len = vl;
	*pos = p + 8 + nl + vl;
	return true;
}

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
	if (!total_size(nrec, str_size, &total))
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
	    !fields_ok(r, w->recs_done, NULL, 0)) {
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
	    !xattrs_ok(r->xattrs, r->xattrs_len, 0, NULL, 0)) {
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

	if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0)
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
		if ((size_t)snprintf(tmp, size, "%s.tmp.%ld%u%06ld", name,
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

/* ---- opening ---- */

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
	const char *verb = (oflags & O_ACCMODE) == O_RDONLY ? "read" : "write";
	const char *at = path;
	char *real = NULL;
	struct stat lst;
	int fd, fl, r;

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
	fd = open(at, oflags | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		r = -errno;
		/* ELOOP: the last component is a link; ENXIO: a socket, or
		 * a FIFO opened to write with no reader. */
		if ((r == -ELOOP || r == -ENXIO) && !lstat(at, &lst) &&
		    !S_ISREG(lst.st_mode)) {
			if (S_ISLNK(lst.st_mode))
				refuse(msg, size, what, path, *target,
				       "a symbolic link, not followed");
			else
				refuse(msg, size, what, path, *target,
				       "%s, not a regular file",
				       type_name(lst.st_mode & S_IFMT));
			r = -EINVAL;
		} else if (r == -ENOENT) {
			refuse(msg, size, what, path, *target, "no such file");
		} else {
			refuse(msg, size, what, path, *target,
			       "cannot %s it: %s", verb, fe_strerror(-r));
		}
		goto out_free;
	}
	if (fstat(fd, st)) {
		r = -errno;
		refuse(msg, size, what, path, *target, "cannot %s it: %s", verb,
		       fe_strerror(-r));
		goto out_close;
	}
	if (!S_ISREG(st->st_mode)) {
		refuse(msg, size, what, path, *target, "%s, not a regular file",
		       type_name(st->st_mode & S_IFMT));
		r = -EINVAL;
		goto out_close;
	}
	/* As ssh with its files: another user's journal would import
	 * that user's records (and a root-owned one, whoever can write it),
	 * another user's log would be written on. */
	if (!(flags & OPEN_ANY_OWNER) && st->st_uid != getuid()) {
		refuse(msg, size, what, path, *target,
		       "owned by uid %u, not by you (uid %u)",
		       (unsigned)st->st_uid, (unsigned)getuid());
		r = -EINVAL;
		goto out_close;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		r = -errno;
		refuse(msg, size, what, path, *target, "cannot %s it: %s", verb,
		       fe_strerror(-r));
		goto out_close;
	}
	if (real != *target)
		free(real);
	return fd;
out_close:
	close(fd);
out_free:
	free(real);
	*target = NULL;
	return r;
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
	e = header_check(hdr, (size_t)got, why, sizeof(why));
	if (!e && (flags & FE_JNL_RAW))
		want = size > (uint64_t)got ? size : (uint64_t)got;
	else if (!e)
		e = sizes_check(hdr, &want, why, sizeof(why));
	if (!e && !(flags & FE_JNL_RAW))
		e = length_check(size, want, why, sizeof(why));
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
		/* Shrunk since the fstat. */
		e = length_check((uint64_t)got + (uint64_t)rest, want, why,
				 sizeof(why));
		if (!e)
			e = fe_jnl_parse(b, (size_t)want, v, why, sizeof(why));
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

/* Salvage's view of a damaged journal: the records present and the part
 * of the string area present. */
struct wreck {
	const unsigned char *recs; /* the first record */
	uint64_t nrec;		   /* whole records present and claimed */
	const unsigned char *strs; /* the string area, or NULL: not present */
	uint64_t area;		   /* bytes of it present and claimed */
};

/* Record i of the wreck, if it can be trusted on its own: its strings
 * are not required to follow its neighbours'. */
static bool salvage_rec(const struct wreck *k, uint64_t i, struct fe_jnl_rec *r)
{
	uint64_t str_off;
	uint32_t str_len;
	size_t path_len;

	rec_decode(k->recs + i * FE_JNL_REC_SIZE, r, &str_off, &str_len);
	if (!fields_ok(r, i, NULL, 0) || !k->strs || str_off > k->area ||
	    str_len > k->area - str_off ||
	    !strings_ok(k->strs + str_off, str_len, i, &path_len, NULL, 0))
		return false;
	set_strings(r, k->strs + str_off, str_len);
	return true;
}

int fe_jnl_salvage(const void *buf, size_t len, int fd, uint64_t *kept,
		   uint64_t *lost, char *why, size_t why_size)
{
	const unsigned char *b = buf;
	struct wreck k = {.recs = b + FE_JNL_HDR_SIZE};
	struct fe_jnl_w w;
	struct fe_jnl_rec r;
	uint64_t claimed, present, nkeep = 0, skeep = 0;

	*kept = *lost = 0;
	if (header_check(b, len, why, why_size) != FE_JNL_OK)
		return -EINVAL;
	claimed = ld64(b + H_NREC);
	present = (len - FE_JNL_HDR_SIZE) / FE_JNL_REC_SIZE;
	k.nrec = claimed < present ? claimed : present;
	/* The strings start after every record claimed: found only when
	 * all of those records are present. */
	if (claimed <= present) {
		uint64_t at = FE_JNL_HDR_SIZE + claimed * FE_JNL_REC_SIZE;
		uint64_t str_size = ld64(b + H_STR_SIZE);

		k.strs = b + at;
		k.area = len - at < str_size ? len - at : str_size;
	}

	for (uint64_t i = 0; i < k.nrec; i++) {
		if (salvage_rec(&k, i, &r)) {
			nkeep++;
			skeep += fe_jnl_str_len(&r);
		}
	}
	fe_jnl_w_begin(&w, fd, nkeep, skeep, time(NULL));
	for (uint64_t i = 0; i < k.nrec; i++)
		if (salvage_rec(&k, i, &r))
			fe_jnl_w_rec(&w, &r);
	for (uint64_t i = 0; i < k.nrec; i++)
		if (salvage_rec(&k, i, &r))
			fe_jnl_w_str(&w, &r);
	*kept = nkeep;
	*lost = claimed - nkeep;
	return fe_jnl_w_end(&w);
}
