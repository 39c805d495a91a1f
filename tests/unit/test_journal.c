/*
 * The journal codec: CRC-32C vectors, both implementations alike; round
 * trips through the writer and fe_jnl_save() of every kind of record;
 * every truncation and every flipped byte of a small journal refused;
 * each broken record rule refused under a correct checksum; writer
 * misuse.  The files (saves, salvage, the opener): test_jfile.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/crc32c.h"
#include "journal/journal.h"
#include "jnlset.h"
#include "jnlfix.h"
#include "unit.h"

static void test_crc(void)
{
	unsigned char buf[1031];
	uint32_t one, part;
	int bad = 0;

	srand(1);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)rand();
	CHECK("crc32c(\"123456789\") is 0xe3069283",
	      fe_crc32c(0, "123456789", 9) == 0xe3069283u);
	CHECK("software crc32c(\"123456789\") is 0xe3069283",
	      fe_crc32c_sw(0, "123456789", 9) == 0xe3069283u);
	CHECK("crc32c of nothing is 0", fe_crc32c(0, "", 0) == 0);
	/* RFC 3720 B.4: 32 bytes of zeros. */
	CHECK("crc32c of 32 zero bytes is 0x8a9136aa",
	      fe_crc32c(0, (unsigned char[32]){0}, 32) == 0x8a9136aau);

	one = fe_crc32c(0, buf, sizeof(buf));
	for (size_t cut = 0; cut <= sizeof(buf); cut++) {
		part = fe_crc32c(fe_crc32c(0, buf, cut), buf + cut,
				 sizeof(buf) - cut);
		QUIET_CHECK(part == one, "split at %zu", cut);
		bad += part != one;
	}
	CHECK("incremental equals one-shot at every split", bad == 0);

	bad = 0;
	for (size_t off = 0; off < 8; off++)
		for (size_t len = 0; len + off <= 300; len++)
			bad += fe_crc32c_sw(7, buf + off, len) !=
			       fe_crc32c(7, buf + off, len);
	CHECK("software equals the chosen path at every alignment", bad == 0);
	if (fe_crc32c_hw_ok()) {
		bad = 0;
		for (size_t off = 0; off < 8; off++)
			for (size_t len = 0; len + off <= 300; len++)
				bad += fe_crc32c_sw(7, buf + off, len) !=
				       fe_crc32c_hw(7, buf + off, len);
		CHECK("sse4.2 equals software at every alignment and length",
		      bad == 0 && fe_crc32c_hw(0, buf, sizeof(buf)) ==
				      fe_crc32c_sw(0, buf, sizeof(buf)));
	} else {
		printf("ok - sse4.2 equals software # SKIP no sse4.2\n");
	}
}

/* ---- Round trip ---- */

static char long_path[4096];
static unsigned char xa_one[128], xa_many[512];
static unsigned char xa_big[FE_JNL_XATTR_MAX + 64];
static unsigned char big_val[FE_JNL_XATTR_MAX];
static size_t xa_one_len, xa_many_len, xa_big_len;

/* Every type, every flag, extreme values, odd paths, 0/1/several/huge
 * xattr blocks. */
static size_t full_set(struct fe_jnl_rec *r)
{
	size_t n = 0;

	memset(long_path, 'a', sizeof(long_path) - 1);
	for (size_t i = 0; i < sizeof(long_path) - 1; i += 100)
		long_path[i] = '/';
	for (size_t i = 0; i < sizeof(big_val); i++)
		big_val[i] = (unsigned char)(i * 7 + 3);
	xa_one_len = xa_many_len = xa_big_len = 0;
	fe_jnl_xattr_put(xa_one, sizeof(xa_one), &xa_one_len,
			 "security.selinux", "system_u:object_r:bin_t:s0", 27);
	fe_jnl_xattr_put(xa_many, sizeof(xa_many), &xa_many_len,
			 "security.capability", "\x01\x00\x00\x02", 4);
	fe_jnl_xattr_put(xa_many, sizeof(xa_many), &xa_many_len,
			 "trusted.empty", "", 0);
	fe_jnl_xattr_put(xa_many, sizeof(xa_many), &xa_many_len,
			 "system.posix_acl_access", "\0\1\2\3\0\0", 6);
	fe_jnl_xattr_put(xa_big, sizeof(xa_big), &xa_big_len, "user.big",
			 big_val, sizeof(big_val));

	r[n] = (struct fe_jnl_rec){
	    .dev = 0x803, .ino = 2, .mode = 0104755, .flags = FE_JNL_MODE_SET};
	set_path(&r[n++], "/usr/bin/su");
	r[n] = (struct fe_jnl_rec){.dev = UINT64_MAX,
				   .ino = UINT64_MAX,
				   .uid = UINT32_MAX,
				   .gid = UINT32_MAX - 1,
				   .mode = 040755,
				   .btag = UINT32_MAX};
	set_path(&r[n], "/a dir/with spaces\nand a newline\t");
	r[n].xattrs = xa_one;
	r[n++].xattrs_len = xa_one_len;
	r[n] = (struct fe_jnl_rec){.dev = 1,
				   .ino = 3,
				   .rdev = 0x103,
				   .mode = 020666,
				   .uid = 0,
				   .gid = 5,
				   .flags = FE_JNL_MODE_SET | FE_JNL_DEV_SET,
				   .btag = 123};
	set_path(&r[n], "");
	r[n].xattrs = xa_many;
	r[n++].xattrs_len = xa_many_len;
	r[n] = (struct fe_jnl_rec){.dev = 1,
				   .ino = 4,
				   .rdev = 0x800,
				   .mode = 060660,
				   .gid = 6,
				   .flags = FE_JNL_DEV_SET};
	set_path(&r[n++], "/dev/sda");
	r[n] = (struct fe_jnl_rec){.dev = 1, .ino = 5, .mode = 0120777};
	set_path(&r[n], long_path);
	r[n].xattrs = xa_big;
	r[n++].xattrs_len = xa_big_len;
	r[n] = (struct fe_jnl_rec){.dev = 1,
				   .ino = 6,
				   .mode = 010600,
				   .flags = FE_JNL_MODE_SET,
				   .uid = 1000};
	set_path(&r[n++], "/run/fifo");
	r[n] = (struct fe_jnl_rec){.dev = 1, .ino = 7, .mode = 0140755};
	set_path(&r[n++], "/run/s\xff\x01ck");
	r[n] = (struct fe_jnl_rec){
	    .dev = 1, .ino = 8, .mode = 0020000, .flags = FE_JNL_DEV_SET};
	set_path(&r[n++], "/dev/rdev-zero");
	return n;
}

/* More than the writer's 1 MiB buffer: records and strings both cross
 * its flushes. */
#define N_BIG 20000
static void test_big(void)
{
	static struct fe_jnl_rec recs[N_BIG];
	static char paths[N_BIG][24];
	struct jnl_set s = {recs, N_BIG, 7};
	struct fe_jnl_view v;
	struct fe_jnl_rec got;
	unsigned char *b;
	size_t len;
	char why[256];
	int bad = 0;

	for (size_t i = 0; i < N_BIG; i++) {
		snprintf(paths[i], sizeof(paths[i]), "/tree/file-%zu", i);
		recs[i] = (struct fe_jnl_rec){.dev = 1,
					      .ino = i + 10,
					      .uid = (uint32_t)i,
					      .mode = 0100600};
		set_path(&recs[i], paths[i]);
	}
	b = build(&s, "big", &len);
	CHECK("a journal past 1 MiB parses",
	      b && len > (1u << 20) &&
		  fe_jnl_parse(b, len, &v, why, sizeof(why)) == FE_JNL_OK &&
		  v.nrec == N_BIG);
	for (size_t i = 0; b && i < N_BIG; i++) {
		fe_jnl_get(&v, i, &got);
		bad += !rec_eq(&got, &recs[i]);
	}
	CHECK("every record of a journal past 1 MiB comes back", b && bad == 0);
	free(b);
}

static void test_round_trip(void)
{
	struct fe_jnl_rec recs[16], got;
	struct jnl_set s = {recs, 0, 1764762000};
	struct fe_jnl_view v;
	unsigned char *b;
	size_t len, pos, nl, vl, count;
	const char *name;
	const unsigned char *val;
	char why[256];
	int bad = 0;

	s.n = full_set(recs);
	CHECK("long path is 4095 bytes", recs[4].path_len == 4095);
	b = build(&s, "full", &len);
	CHECK("save and read back", b != NULL);
	if (!b)
		return;
	CHECK("parses",
	      fe_jnl_parse(b, len, &v, why, sizeof(why)) == FE_JNL_OK);
	CHECK("view: counts and time",
	      v.nrec == s.n && v.written == s.written && v.version == FE_JNL_VERSION &&
		  v.len == len && v.buf == b);
	for (size_t i = 0; i < s.n; i++) {
		fe_jnl_get(&v, i, &got);
		QUIET_CHECK(rec_eq(&got, &recs[i]), "record %zu differs", i);
		bad += !rec_eq(&got, &recs[i]);
	}
	CHECK("every field of every record comes back", bad == 0);

	fe_jnl_get(&v, 2, &got);
	pos = count = 0;
	bad = 0;
	while (fe_jnl_xattr_next(got.xattrs, got.xattrs_len, &pos, &name, &nl,
				 &val, &vl)) {
		static const char *names[] = {"security.capability",
					      "trusted.empty",
					      "system.posix_acl_access"};
		static const size_t vlens[] = {4, 0, 6};

		bad += count >= 3 || nl != strlen(names[count]) ||
		       memcmp(name, names[count], nl) || vl != vlens[count];
		count++;
	}
	CHECK("several xattrs iterate in order", count == 3 && !bad);
	fe_jnl_get(&v, 4, &got);
	pos = 0;
	CHECK("a 64 KiB value iterates whole",
	      fe_jnl_xattr_next(got.xattrs, got.xattrs_len, &pos, &name, &nl,
				&val, &vl) &&
		  vl == FE_JNL_XATTR_MAX && !memcmp(val, big_val, vl) &&
		  !fe_jnl_xattr_next(got.xattrs, got.xattrs_len, &pos, &name,
				     &nl, &val, &vl));
	fe_jnl_get(&v, 0, &got);
	pos = 0;
	CHECK("no xattrs: nothing to iterate",
	      got.xattrs_len == 0 &&
		  !fe_jnl_xattr_next(got.xattrs, got.xattrs_len, &pos, &name,
				     &nl, &val, &vl));
	free(b);

	s.n = 0;
	b = build(&s, "empty", &len);
	CHECK("no records: 72 bytes that parse",
	      b && len == 72 &&
		  fe_jnl_parse(b, len, &v, why, sizeof(why)) == FE_JNL_OK &&
		  v.nrec == 0 && v.str_size == 0);
	free(b);
}

/* ---- Damage ---- */


/* What a flip of header byte i must be refused as. */
static enum fe_jnl_err header_flip_err(size_t i)
{
	if (i < 8)
		return FE_JNL_EMAGIC;
	if (i < 12 || (i >= 20 && i < 24) || i >= 56)
		return FE_JNL_EVERSION;
	if (i >= 40 && i < 48)
		return FE_JNL_ECRC; /* written: informational, checksummed */
	return FE_JNL_ESIZE;
}

static void damage_header(const unsigned char *b, unsigned char *c,
			  size_t len);

static void test_damage(void)
{
	static const unsigned char pats[] = {0x01, 0x80, 0xff};
	struct fe_jnl_view v;
	unsigned char *b, *c;
	size_t len;
	char why[256];
	int bad = 0;

	b = small_journal(&len);
	CHECK("small journal", b && parse(b, len) == FE_JNL_OK);
	if (!b)
		return;
	printf("# small journal: %zu bytes\n", len);
	c = malloc(len + 1);

	for (size_t n = 0; n < len; n++) {
		enum fe_jnl_err e = parse(b, n);

		QUIET_CHECK(e == FE_JNL_ETRUNC, "length %zu: %s", n,
			    fe_jnl_errname(e));
		bad += e != FE_JNL_ETRUNC;
	}
	CHECK("every truncation is refused as truncated", bad == 0);
	CHECK("truncation names both sizes",
	      fe_jnl_parse(b, 100, &v, why, sizeof(why)) == FE_JNL_ETRUNC &&
		  !strncmp(why, "truncated: 100 bytes, the header says ", 38));
	memcpy(c, b, len);
	c[len] = 0;
	CHECK("a byte after the trailer is refused as a size",
	      parse(c, len + 1) == FE_JNL_ESIZE);

	bad = 0;
	for (size_t i = 0; i < len; i++) {
		for (size_t k = 0; k < sizeof(pats); k++) {
			enum fe_jnl_err want =
			    i < HDR ? header_flip_err(i) : FE_JNL_ECRC;
			enum fe_jnl_err e;

			memcpy(c, b, len);
			c[i] ^= pats[k];
			e = parse(c, len);
			QUIET_CHECK(e == want, "byte %zu ^ 0x%02x: %s, want %s",
				    i, pats[k], fe_jnl_errname(e),
				    fe_jnl_errname(want));
			bad += e != want;
		}
	}
	CHECK("every flipped byte is refused, for the right reason", bad == 0);
	memcpy(c, b, len);
	c[len - 20] ^= 1;
	CHECK("a flip in the strings names both checksums",
	      fe_jnl_parse(c, len, &v, why, sizeof(why)) == FE_JNL_ECRC &&
		  !strncmp(why, "bad checksum: stored 0x", 23));

	damage_header(b, c, len);
	free(c);
	free(b);
}

/* Header fields that parse with a good checksum: each answered for what
 * it is (c: len bytes of scratch). */
static void damage_header(const unsigned char *b, unsigned char *c,
			  size_t len)
{
	struct fe_jnl_view v;
	char why[256];

	memcpy(c, b, len);
	put32(c + 8, FE_JNL_VERSION + 1);
	recrc(c, len);
	CHECK("the next version with a good checksum: newer version",
	      fe_jnl_parse(c, len, &v, why, sizeof(why)) == FE_JNL_EVERSION &&
		  strstr(why, "version 3"));
	memcpy(c, b, len);
	put32(c + 8, 1);
	recrc(c, len);
	CHECK("version 1 (no birth times) is read",
	      fe_jnl_parse(c, len, &v, why, sizeof(why)) == FE_JNL_OK &&
		  v.version == 1);
	memcpy(c, b, len);
	put32(c + 20, 0x10);
	recrc(c, len);
	CHECK("unknown header flag: newer version",
	      parse(c, len) == FE_JNL_EVERSION);
	memcpy(c, b, len);
	put64(c + 24, UINT64_MAX / 32);
	recrc(c, len);
	CHECK("record count that overflows: sizes",
	      parse(c, len) == FE_JNL_ESIZE);
	CHECK("garbage is not a journal",
	      parse((const unsigned char *)"#!/bin/sh\necho hello world, not "
					   "a journal at all, really\n",
		    50) == FE_JNL_EMAGIC);
}

/* Edit a copy of the small journal, fix the checksum, parse. */
struct edit {
	const char *name;
	size_t off;	 /* where */
	int width;	 /* 1, 4 or 8 bytes */
	uint64_t val;	 /* what */
	const char *why; /* a word the message must hold */
};

/* Each edit of b (len bytes) into c, with a good checksum: refused as
 * a bad record, for the reason it names. */
static void check_edits(const unsigned char *b, unsigned char *c, size_t len,
			const struct edit *edits, size_t n)
{
	struct fe_jnl_view v;
	char why[256];

	for (size_t i = 0; i < n; i++) {
		const struct edit *e = &edits[i];
		enum fe_jnl_err err;
		char name[128];

		memcpy(c, b, len);
		if (e->width == 1)
			c[e->off] = (unsigned char)e->val;
		else if (e->width == 4)
			put32(c + e->off, (uint32_t)e->val);
		else
			put64(c + e->off, e->val);
		recrc(c, len);
		why[0] = 0;
		err = fe_jnl_parse(c, len, &v, why, sizeof(why));
		snprintf(name, sizeof(name), "bad record: %s", e->name);
		if (err != FE_JNL_ERECORD || !strstr(why, e->why))
			printf("# %s: %s\n", fe_jnl_errname(err), why);
		CHECK(name, err == FE_JNL_ERECORD && strstr(why, e->why));
	}
}

/* The string area's bytes: one that no record owns, then the same byte
 * claimed by the last record's xattrs (c: len + 1 bytes of scratch). */
static void bad_area(const unsigned char *b, unsigned char *c, size_t len)
{
	struct fe_jnl_view v;
	char why[256];

	memcpy(c, b, len - 8);
	c[len - 8] = 0;
	memcpy(c + len - 7, b + len - 8, 8);
	put64(c + 32, get64(b + 32) + 1);
	put64(c + 48, len + 1);
	recrc(c, len + 1);
	CHECK("bad record: area bytes nobody owns",
	      fe_jnl_parse(c, len + 1, &v, why, sizeof(why)) ==
		      FE_JNL_ERECORD &&
		  strstr(why, "strings end at byte"));
	/* ... and the same byte claimed by the last record's xattrs. */
	put32(c + REC(n_small - 1) + R_STR_LEN,
	      (uint32_t)fe_jnl_str_len(&small[n_small - 1]) + 1);
	recrc(c, len + 1);
	CHECK("bad record: an xattr block of 1 byte",
	      fe_jnl_parse(c, len + 1, &v, why, sizeof(why)) ==
		      FE_JNL_ERECORD &&
		  strstr(why, "needs 8"));
}

static void test_bad_records(void)
{
	struct fe_jnl_view v;
	struct fe_jnl_rec r0, r1;
	unsigned char *b, *c;
	size_t len, p0, x1;
	char why[256];

	b = small_journal(&len);
	if (!b || fe_jnl_parse(b, len, &v, why, sizeof(why)))
		return;
	fe_jnl_get(&v, 0, &r0);
	fe_jnl_get(&v, 1, &r1);
	p0 = (size_t)((const unsigned char *)r0.path - b) + r0.path_len;
	x1 = (size_t)(r1.xattrs - b);

	const struct edit edits[] = {
	    {"unknown record flag", REC(0) + R_FLAGS, 4, 0x9, "flags 0x9"},
	    {"no file type", REC(1) + R_MODE, 4, 0170644,
	     "record 1: mode 0170644 has no valid file type"},
	    {"type 0", REC(1) + R_MODE, 4, 0755, "no valid file type"},
	    {"mode bits outside S_IFMT|07777", REC(0) + R_MODE, 4, 01100644,
	     "bits outside"},
	    {"device flag on a regular file", REC(0) + R_FLAGS, 4,
	     FE_JNL_DEV_SET, "device flag"},
	    {"device flag on a fifo", REC(4) + R_FLAGS, 4, FE_JNL_DEV_SET,
	     "device flag"},
	    {"rdev without the device flag", REC(0) + R_RDEV, 8, 0x103,
	     "rdev 0x103"},
	    {"reserved bytes after the birth-time tag", REC(2) + R_RESERVED, 4,
	     1, "reserved bytes"},
	    {"the last reserved bytes", REC(2) + R_RESERVED + 4, 4, 1,
	     "reserved bytes"},
	    {"strings overlap the previous record's", REC(1) + R_STR_OFF, 8, 0,
	     "record 1: strings at offset 0"},
	    {"strings offset past the area", REC(0) + R_STR_OFF, 8,
	     UINT64_MAX - 3, "record 0"},
	    {"strings length past the area", REC(4) + R_STR_LEN, 4, UINT32_MAX,
	     "run past"},
	    {"no strings at all", REC(3) + R_STR_LEN, 4, 0,
	     "no NUL ends the path"},
	    {"path without its NUL", p0, 1, 'x', "no NUL ends the path"},
	    {"xattr name_len 0", x1, 4, 0, "name_len 0"},
	    {"xattr name_len 256", x1, 4, 256, "name_len 256"},
	    {"xattr value_len over the maximum", x1 + 4, 4,
	     FE_JNL_XATTR_MAX + 1, "value_len 65537"},
	    {"xattr value past the block", x1 + 4, 4, 100, "left in the block"},
	    {"xattr name with a NUL", x1 + 10, 1, 0, "a NUL in the name"},
	};
	c = malloc(len + 1);
	if (c) {
		check_edits(b, c, len, edits, sizeof(edits) / sizeof(edits[0]));
		bad_area(b, c, len);
	}
	free(c);
	free(b);
}

/* ---- The writer's rules ---- */

static int dev_null = -1;

/* Begin with the counts of small[0..n) (plus extra string bytes), write
 * nrec records and nstr strings, end. */
static int write_some(uint64_t nrec_hdr, int64_t extra, size_t nrec,
		      size_t nstr)
{
	struct fe_jnl_w w;
	uint64_t str = 0;

	for (size_t i = 0; i < nrec_hdr && i < n_small; i++)
		str += fe_jnl_str_len(&small[i]);
	fe_jnl_w_begin(&w, dev_null, nrec_hdr, str + (uint64_t)extra, 0);
	for (size_t i = 0; i < nrec; i++)
		fe_jnl_w_rec(&w, &small[i % n_small]);
	for (size_t i = 0; i < nstr; i++)
		fe_jnl_w_str(&w, &small[i % n_small]);
	return fe_jnl_w_end(&w);
}

/* Write the one record r (with its own counts), whatever it holds. */
static int write_one(const struct fe_jnl_rec *r)
{
	struct fe_jnl_w w;

	fe_jnl_w_begin(&w, dev_null, 1, fe_jnl_str_len(r), 0);
	fe_jnl_w_rec(&w, r);
	fe_jnl_w_str(&w, r);
	return fe_jnl_w_end(&w);
}

static void test_writer(void)
{
	struct fe_jnl_w w;
	struct fe_jnl_rec r;
	unsigned char bad_xa[16] = {0};
	size_t n = n_small;

	dev_null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHECK("writer: all calls adding up", write_some(n, 0, n, n) == 0);
	CHECK("writer misuse: a record too many",
	      write_some(n - 1, 0, n, n - 1) == -EINVAL);
	CHECK("writer misuse: a record too few",
	      write_some(n, 0, n - 1, n - 1) == -EINVAL);
	CHECK("writer misuse: a string too few",
	      write_some(n, 0, n, n - 1) == -EINVAL);
	CHECK("writer misuse: a string too many",
	      write_some(n, 0, n, n + 1) == -EINVAL);
	CHECK("writer misuse: area announced too big",
	      write_some(n, 1, n, n) == -EINVAL);
	CHECK("writer misuse: area announced too small",
	      write_some(n, -1, n, n) == -EINVAL);

	fe_jnl_w_begin(&w, dev_null, 1, fe_jnl_str_len(&small[0]), 0);
	fe_jnl_w_str(&w, &small[0]);
	fe_jnl_w_rec(&w, &small[0]);
	CHECK("writer misuse: strings before records",
	      fe_jnl_w_end(&w) == -EINVAL);
	fe_jnl_w_begin(&w, dev_null, 2,
		       fe_jnl_str_len(&small[0]) + fe_jnl_str_len(&small[2]),
		       0);
	fe_jnl_w_rec(&w, &small[0]);
	fe_jnl_w_rec(&w, &small[2]);
	fe_jnl_w_str(&w, &small[0]);
	fe_jnl_w_str(&w, &small[1]);
	CHECK("writer misuse: strings of another record",
	      fe_jnl_w_end(&w) == -EINVAL);
	CHECK("writer misuse: counts that overflow",
	      fe_jnl_w_begin(&w, dev_null, UINT64_MAX / 64, 0, 0) == -EINVAL &&
		  fe_jnl_w_end(&w) == -EINVAL);

	r = small[0];
	r.mode = 0170644;
	CHECK("writer refuses a mode without a type", write_one(&r) == -EINVAL);
	r = small[0];
	r.rdev = 5;
	CHECK("writer refuses rdev without the device flag",
	      write_one(&r) == -EINVAL);
	r = small[0];
	r.path = "/a\0b";
	r.path_len = 3;
	CHECK("writer refuses a NUL inside the path", write_one(&r) == -EINVAL);
	r = small[0];
	r.xattrs = bad_xa; /* name_len 0 */
	r.xattrs_len = sizeof(bad_xa);
	CHECK("writer refuses a bad xattr block", write_one(&r) == -EINVAL);
	r = small[0];
	r.path_len = UINT32_MAX;
	CHECK("writer refuses strings longer than 32 bits",
	      write_one(&r) == -EINVAL);

	fe_jnl_w_begin(&w, -1, 1, fe_jnl_str_len(&small[0]), 0);
	fe_jnl_w_rec(&w, &small[0]);
	fe_jnl_w_str(&w, &small[0]);
	CHECK("writer: a write error comes back from end",
	      fe_jnl_w_end(&w) == -EBADF && w.buf == NULL);
	close(dev_null);
}

static void test_xattr_put(void)
{
	unsigned char blk[64];
	char name[300];
	size_t len = 0;

	memset(name, 'n', sizeof(name));
	name[256] = 0;
	CHECK("xattr_put refuses a 256-byte name",
	      fe_jnl_xattr_put(blk, sizeof(blk), &len, name, "", 0) == -EINVAL);
	CHECK("xattr_put refuses an empty name",
	      fe_jnl_xattr_put(blk, sizeof(blk), &len, "", "", 0) == -EINVAL);
	CHECK("xattr_put refuses a value over the maximum",
	      fe_jnl_xattr_put(blk, sizeof(blk), &len, "a", big_val,
			       FE_JNL_XATTR_MAX + 1) == -EINVAL);
	CHECK("xattr_put: an entry that fits",
	      fe_jnl_xattr_put(blk, sizeof(blk), &len, "user.a", "xyz", 3) ==
		      0 &&
		  len == 8 + 6 + 3);
	CHECK("xattr_put: no room, nothing changed",
	      fe_jnl_xattr_put(blk, sizeof(blk), &len, "user.b", big_val, 40) ==
		      -ENOSPC &&
		  len == 17);
}

/* ---- Saving ---- */

int main(void)
{
	if (make_dir() < 0)
		return 1;
	test_crc();
	test_round_trip();
	test_big();
	test_damage();
	test_bad_records();
	test_writer();
	test_xattr_put();
	for (const char *const *f =
		 (const char *const[]){"full", "big", "empty", "small", NULL};
	     *f; f++)
		unlink(file_in_dir(*f));
	CHECK("the test leaves no file behind", dir_entries() == 0);
	rmdir(dir);
	UNIT_EXIT();
}
