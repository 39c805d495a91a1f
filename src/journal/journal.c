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

#include "layout.h"

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
bool fe_jnl_fields_ok(const struct fe_jnl_rec *r, uint64_t i, char *why,
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
bool fe_jnl_xattrs_ok(const unsigned char *b, size_t len, uint64_t i,
		      char *why, size_t size)
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
	return fe_jnl_xattrs_ok(nul + 1, len - *path_len - 1, i, why, size);
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
bool fe_jnl_total_size(uint64_t nrec, uint64_t str_size, uint64_t *total)
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
	if (!fe_jnl_total_size(nrec, str_size, &want)) {
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

enum fe_jnl_err fe_jnl_head(const unsigned char *hdr, size_t got,
			    uint64_t size, bool raw, uint64_t *want, char *why,
			    size_t why_size)
{
	enum fe_jnl_err e = header_check(hdr, got, why, why_size);

	if (e)
		return e;
	if (raw) {
		*want = size > (uint64_t)got ? size : (uint64_t)got;
		return FE_JNL_OK;
	}
	e = sizes_check(hdr, want, why, why_size);
	if (!e)
		e = length_check(size, *want, why, why_size);
	return e;
}

/* Check 5: the trailer's magic, then the CRC of everything before it. */
static enum fe_jnl_err trailer_check(const unsigned char *b, size_t len,
				     char *why, size_t why_size)
{
	const unsigned char *trl = b + len - FE_JNL_TRL_SIZE;
	uint32_t stored, computed;

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
	return FE_JNL_OK;
}

/* Check 6: every record of a journal that passed checks 1-5. */
static enum fe_jnl_err records_check(const unsigned char *b, char *why,
				     size_t why_size)
{
	uint64_t nrec = ld64(b + H_NREC), str_size = ld64(b + H_STR_SIZE);
	const unsigned char *recs = b + FE_JNL_HDR_SIZE;
	const unsigned char *strs = recs + nrec * FE_JNL_REC_SIZE;
	uint64_t sum = 0;

	for (uint64_t i = 0; i < nrec; i++) {
		struct fe_jnl_rec r;
		uint64_t str_off;
		uint32_t str_len;
		size_t path_len;

		rec_decode(recs + i * FE_JNL_REC_SIZE, &r, &str_off, &str_len);
		if (!fe_jnl_fields_ok(&r, i, why, why_size))
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
	return FE_JNL_OK;
}

enum fe_jnl_err fe_jnl_parse(const void *buf, size_t len, struct fe_jnl_view *v,
			     char *why, size_t why_size)
{
	const unsigned char *b = buf;
	uint64_t file_size;
	enum fe_jnl_err err;

	err = header_check(b, len, why, why_size);
	if (!err)
		err = sizes_check(b, &file_size, why, why_size);
	if (!err)
		err = length_check(len, file_size, why, why_size);
	if (!err)
		err = trailer_check(b, len, why, why_size);
	if (!err)
		err = records_check(b, why, why_size);
	if (err)
		return err;
	*v = (struct fe_jnl_view){
	    .buf = b,
	    .len = len,
	    .nrec = ld64(b + H_NREC),
	    .str_size = ld64(b + H_STR_SIZE),
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
	if (!fe_jnl_fields_ok(r, i, NULL, 0) || !k->strs ||
	    str_off > k->area || str_len > k->area - str_off ||
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
