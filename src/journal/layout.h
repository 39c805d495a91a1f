/*
 * The journal's bytes, private to src/journal: magics, field offsets and
 * the little-endian loads and stores.  The reader (journal.c) and the
 * writer (jwrite.c) both include it, so that the two can only disagree
 * about the format by changing this one file.  journal.h has the layout
 * in prose.
 */
#ifndef FE_JOURNAL_LAYOUT_H
#define FE_JOURNAL_LAYOUT_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

#include "journal.h"

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

/* The reader's checks that the writer applies too, so that it never
 * writes what the reader would refuse (journal.c). */
bool fe_jnl_fields_ok(const struct fe_jnl_rec *r, uint64_t i, char *why,
		      size_t size);
bool fe_jnl_xattrs_ok(const unsigned char *b, size_t len, uint64_t i,
		      char *why, size_t size);
bool fe_jnl_total_size(uint64_t nrec, uint64_t str_size, uint64_t *total);

#endif
