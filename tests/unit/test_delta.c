/*
 * The delta's codec (journal/delta.h): its header, and the walk over its
 * segments that tells a sound one from an unfinished append at the end
 * and from a bad one with more after it.
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

#include "journal/delta.h"
#include "jnlset.h"
#include "jnlfix.h"
#include "unit.h"

/* A delta of the header and two copies of the small journal. */
static unsigned char *two(size_t *len, size_t *seg)
{
	unsigned char *j = small_journal(seg), *d;

	if (!j)
		exit(1);
	*len = FE_DELTA_HDR_SIZE + 2 * *seg;
	d = malloc(*len);
	fe_delta_head_put(d, 0x801, 4242);
	memcpy(d + FE_DELTA_HDR_SIZE, j, *seg);
	memcpy(d + FE_DELTA_HDR_SIZE + *seg, j, *seg);
	free(j);
	return d;
}

static void test_head(void)
{
	unsigned char h[FE_DELTA_HDR_SIZE];
	uint64_t dev = 0, ino = 0;
	char why[256];

	fe_delta_head_put(h, 0x801, 4242);
	CHECK("a header reads back its base",
	      fe_delta_head(h, sizeof(h), &dev, &ino, why, sizeof(why)) ==
			      FE_JNL_OK &&
		      dev == 0x801 && ino == 4242);
	CHECK("a short one is truncated",
	      fe_delta_head(h, 63, &dev, &ino, why, sizeof(why)) ==
		      FE_JNL_ETRUNC);
	h[20] ^= 1;
	CHECK("a changed base fails its checksum",
	      fe_delta_head(h, sizeof(h), &dev, &ino, why, sizeof(why)) ==
			      FE_JNL_ECRC &&
		      strstr(why, "checksum"));
	fe_delta_head_put(h, 1, 2);
	memcpy(h, "FAKEENVJ", 8);
	CHECK("a journal is not a delta",
	      fe_delta_head(h, sizeof(h), &dev, &ino, why, sizeof(why)) ==
		      FE_JNL_EMAGIC);
}

static void test_walk(void)
{
	size_t len, seg, pos = FE_DELTA_HDR_SIZE;
	unsigned char *d = two(&len, &seg);
	struct fe_jnl_view v;
	char why[640];

	CHECK("segment 1", fe_delta_next(d, len, &pos, &v, why, sizeof(why)) ==
				   FE_DELTA_SEG &&
			   v.nrec == n_small &&
			   pos == FE_DELTA_HDR_SIZE + seg);
	CHECK("segment 2", fe_delta_next(d, len, &pos, &v, why, sizeof(why)) ==
				   FE_DELTA_SEG &&
			   pos == len);
	CHECK("then the end", fe_delta_next(d, len, &pos, &v, why,
					    sizeof(why)) == FE_DELTA_END);
	pos = FE_DELTA_HDR_SIZE + seg;
	CHECK("a second segment cut short is torn",
	      fe_delta_next(d, len - 10, &pos, &v, why, sizeof(why)) ==
			      FE_DELTA_TORN &&
		      pos == FE_DELTA_HDR_SIZE + seg && strstr(why, "of a segment"));
	pos = FE_DELTA_HDR_SIZE + seg;
	CHECK("so is a few bytes of a header",
	      fe_delta_next(d, FE_DELTA_HDR_SIZE + seg + 5, &pos, &v, why,
			    sizeof(why)) == FE_DELTA_TORN);
	d[len - 20] ^= 0xff;
	pos = FE_DELTA_HDR_SIZE + seg;
	CHECK("a whole last segment that fails its checks is torn",
	      fe_delta_next(d, len, &pos, &v, why, sizeof(why)) ==
		      FE_DELTA_TORN);
	d[len - 20] ^= 0xff;
	d[FE_DELTA_HDR_SIZE + seg - 20] ^= 0xff;
	pos = FE_DELTA_HDR_SIZE;
	CHECK("a bad segment with another after it is bad",
	      fe_delta_next(d, len, &pos, &v, why, sizeof(why)) ==
			      FE_DELTA_BAD &&
		      pos == FE_DELTA_HDR_SIZE &&
		      strstr(why, "segment at offset 64: bad checksum"));
	free(d);
}

int main(void)
{
	if (make_dir() < 0)
		return 1;
	test_head();
	test_walk();
	unlink(file_in_dir("small"));
	rmdir(dir);
	UNIT_EXIT();
}
