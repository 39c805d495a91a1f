/*
 * libFuzzer target: the journal reader.  Any bytes: fe_jnl_parse(), and
 * when they pass, every record and xattr read back and checked against
 * the rules the parse promised; then fe_jnl_salvage() into /dev/null,
 * which must keep every record of a journal that parsed.  Each input
 * goes in twice: as it is, and with its trailer made right (magic and
 * CRC), since mutations would otherwise almost never get past the
 * checksum to the record checks.  At an odd address: the codec must not
 * assume alignment.  And the same bytes as the segments of a delta
 * (journal/delta.h), after a sound header: the walk moves forward, stays
 * within the bytes, and every segment it gives passes the same checks.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/delta.h"
#include "journal/journal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int null_fd = -1;

static void check_records(const struct fe_jnl_view *v)
{
	for (uint64_t i = 0; i < v->nrec; i++) {
		struct fe_jnl_rec r;
		const unsigned char *val;
		const char *name;
		size_t pos = 0, nl, vl, used = 0;

		fe_jnl_get(v, i, &r);
		if (strlen(r.path) != r.path_len ||
		    (r.flags & ~(FE_JNL_MODE_SET | FE_JNL_DEV_SET |
				 FE_JNL_ORPHAN)) ||
		    r.reserved ||
		    (r.mode & ~(uint32_t)(S_IFMT | 07777)) ||
		    (r.rdev && !(r.flags & FE_JNL_DEV_SET)))
			__builtin_trap();
		while (fe_jnl_xattr_next(r.xattrs, r.xattrs_len, &pos, &name,
					 &nl, &val, &vl)) {
			if (nl < 1 || nl > FE_JNL_NAME_MAX ||
			    memchr(name, 0, nl) || vl > FE_JNL_XATTR_MAX)
				__builtin_trap();
			used += 8 + nl + vl;
		}
		if (used != r.xattrs_len) /* the block parses to its end */
			__builtin_trap();
	}
}

static void one(const unsigned char *b, size_t size)
{
	struct fe_jnl_view v;
	enum fe_jnl_err err;
	uint64_t kept, lost;
	char why[256];
	int r;

	err = fe_jnl_parse(b, size, &v, why, sizeof(why));
	if (err == FE_JNL_OK)
		check_records(&v);
	else if (!memchr(why, 0, sizeof(why)) || !why[0])
		__builtin_trap(); /* a refusal always says why */

	r = fe_jnl_salvage(b, size, null_fd, &kept, &lost, why, sizeof(why));
	if (err == FE_JNL_OK && (r || kept != v.nrec || lost))
		__builtin_trap();
}

static void delta(const unsigned char *b, size_t size)
{
	unsigned char *d = malloc(FE_DELTA_HDR_SIZE + size + 1);
	size_t pos = FE_DELTA_HDR_SIZE, len = FE_DELTA_HDR_SIZE + size;
	struct fe_jnl_view v;
	enum fe_delta_seg k;
	char why[640];

	if (!d)
		return;
	fe_delta_head_put(d, 1, 2);
	memcpy(d + FE_DELTA_HDR_SIZE, b, size);
	while ((k = fe_delta_next(d, len, &pos, &v, why, sizeof(why))) ==
	       FE_DELTA_SEG) {
		if (pos > len || (size_t)(v.buf - d) + v.len != pos)
			__builtin_trap();
		check_records(&v);
	}
	if (k != FE_DELTA_END && (!memchr(why, 0, sizeof(why)) || !why[0]))
		__builtin_trap();
	free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *odd;
	uint32_t crc;

	if (null_fd < 0)
		null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	odd = malloc(size + 1);
	if (!odd)
		return 0;
	if (size)
		memcpy(odd + 1, data, size);
	one(odd + 1, size);
	if (size >= FE_JNL_TRL_SIZE) {
		crc = fe_crc32c(0, odd + 1, size - FE_JNL_TRL_SIZE);
		for (int i = 0; i < 4; i++)
			odd[1 + size - 8 + i] = (unsigned char)(crc >> 8 * i);
		memcpy(odd + 1 + size - 4, "JEND", 4);
		one(odd + 1, size);
		delta(odd + 1, size);
	}
	free(odd);
	return 0;
}
