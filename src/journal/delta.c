/*
 * The delta's codec (delta.h): its header, and its segments, each read
 * by the journal's own parser.
 */
#include "delta.h"

#include <stdio.h>
#include <string.h>

#include "layout.h"

#define DELTA_MAGIC "FAKEENVD"

enum { D_VERSION = 8, D_HDR_SIZE = 12, D_DEV = 16, D_INO = 24, D_CRC = 60 };

void fe_delta_head_put(unsigned char *h, uint64_t dev, uint64_t ino)
{
	memset(h, 0, FE_DELTA_HDR_SIZE);
	memcpy(h, DELTA_MAGIC, 8);
	st32(h + D_VERSION, FE_DELTA_VERSION);
	st32(h + D_HDR_SIZE, FE_DELTA_HDR_SIZE);
	st64(h + D_DEV, dev);
	st64(h + D_INO, ino);
	st32(h + D_CRC, fe_crc32c(0, h, D_CRC));
}

enum fe_jnl_err fe_delta_head(const unsigned char *b, size_t len,
			      uint64_t *dev, uint64_t *ino, char *why,
			      size_t why_size)
{
	static const unsigned char zero[28];

	if (len < FE_DELTA_HDR_SIZE) {
		snprintf(why, why_size, "truncated: %zu bytes, shorter than "
			 "a %d-byte header", len, FE_DELTA_HDR_SIZE);
		return FE_JNL_ETRUNC;
	}
	if (memcmp(b, DELTA_MAGIC, 8)) {
		snprintf(why, why_size,
			 "the first 8 bytes are not \"" DELTA_MAGIC "\"");
		return FE_JNL_EMAGIC;
	}
	if (ld32(b + D_CRC) != fe_crc32c(0, b, D_CRC)) {
		snprintf(why, why_size, "bad header checksum");
		return FE_JNL_ECRC;
	}
	if (ld32(b + D_VERSION) != FE_DELTA_VERSION ||
	    ld32(b + D_HDR_SIZE) != FE_DELTA_HDR_SIZE ||
	    memcmp(b + 32, zero, sizeof(zero))) {
		snprintf(why, why_size, "version %u, header size %u: this "
			 "reader knows %d and %d, reserved bytes 0",
			 ld32(b + D_VERSION), ld32(b + D_HDR_SIZE),
			 FE_DELTA_VERSION, FE_DELTA_HDR_SIZE);
		return FE_JNL_EVERSION;
	}
	*dev = ld64(b + D_DEV);
	*ino = ld64(b + D_INO);
	return FE_JNL_OK;
}

enum fe_delta_seg fe_delta_next(const unsigned char *b, size_t len,
				size_t *pos, struct fe_jnl_view *v,
				char *why, size_t why_size)
{
	size_t left = len - *pos;
	uint64_t want;
	char sub[512];

	if (!left)
		return FE_DELTA_END;
	if (fe_jnl_head(b + *pos, left, left, true, &want, sub,
			sizeof(sub)) == FE_JNL_OK &&
	    left >= FE_JNL_HDR_SIZE) {
		/* The size the segment's header claims, checked below by
		 * the parse itself. */
		want = ld64(b + *pos + H_FILE_SIZE);
		if (want > left) {
			snprintf(why, why_size, "%zu bytes at offset %zu, of "
				 "a segment of %llu", left, *pos, (ull)want);
			return FE_DELTA_TORN;
		}
	} else {
		want = left;
	}
	if (fe_jnl_parse(b + *pos, (size_t)want, v, sub, sizeof(sub)) ==
	    FE_JNL_OK) {
		*pos += (size_t)want;
		return FE_DELTA_SEG;
	}
	snprintf(why, why_size, "segment at offset %zu: %s", *pos, sub);
	return want == left ? FE_DELTA_TORN : FE_DELTA_BAD;
}
