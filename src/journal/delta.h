/*
 * The delta: DIR/delta, what a --state daemon appends between two
 * journals so that a run's changes are on disk when it returns, at a
 * cost that grows with the changes and not with the state.
 *
 * Layout (little-endian):
 *   header   64 bytes
 *     0  magic[8]   "FAKEENVD"
 *     8  u32 version  FE_DELTA_VERSION
 *    12  u32 hdr_size 64
 *    16  u64 base_dev  st_dev and st_ino of the DIR/journal the delta
 *    24  u64 base_ino  follows (0 and 0: there was none)
 *    32  u8  reserved[28], 0
 *    60  u32 crc       CRC-32C of bytes 0..59
 *   segments, one per append: each a whole journal (journal.h), magic
 *     to trailer, holding the records changed since the previous one,
 *     as they were when it was appended.
 *
 * The base is the journal's inode: a checkpoint writes a new journal
 * under a temporary name while the old one is still linked, so the new
 * journal never has the old one's inode number, and a delta whose base
 * is not the journal in place was folded into it already.  A segment
 * that does not end within the file, or that fails its checks as the
 * file's last, is an append that never finished (never acknowledged):
 * it is cut away.  A bad segment with more bytes after it cannot come
 * from a crash and refuses the delta whole.  A delta holds no
 * removals: a record dropped since the journal (its inode gone) comes
 * back from the journal as the journal's, for a dead inode, which
 * identity keeps from ever matching a new file (journal.h, btag).
 */
#ifndef FE_JOURNAL_DELTA_H
#define FE_JOURNAL_DELTA_H

#include <stddef.h>
#include <stdint.h>

#include "journal.h"

#define FE_DELTA_VERSION  1
#define FE_DELTA_HDR_SIZE 64

/* Fill the 64 bytes at h for a delta that follows (dev, ino). */
void fe_delta_head_put(unsigned char *h, uint64_t dev, uint64_t ino);

/* Check the header of the len bytes at b; *dev and *ino get its base.
 * FE_JNL_OK, or an error with why filled. */
enum fe_jnl_err fe_delta_head(const unsigned char *b, size_t len,
			      uint64_t *dev, uint64_t *ino, char *why,
			      size_t why_size);

/* What fe_delta_next() found at *pos. */
enum fe_delta_seg {
	FE_DELTA_END,   /* no bytes left */
	FE_DELTA_SEG,   /* a sound segment in *v; *pos moved past it */
	FE_DELTA_TORN,  /* the bytes from *pos on are an unfinished append
			   (why says how) */
	FE_DELTA_BAD,   /* a bad segment with bytes after it (why) */
};

/* The segment of the delta (len bytes at b, header checked) at *pos
 * (FE_DELTA_HDR_SIZE at first). */
enum fe_delta_seg fe_delta_next(const unsigned char *b, size_t len,
				size_t *pos, struct fe_jnl_view *v,
				char *why, size_t why_size);

#endif
