/*
 * The string arena: an append-only buffer of NUL-terminated strings (the
 * paths of records) and of byte entries whose length their owner knows
 * (a path followed by its record's xattrs), addressed by uint32 offsets
 * so that a table slot stays small and position-independent.  Offset 0 is never a string: it means
 * "none".  The arena owns no record; whoever stores an offset owns that
 * string and must drop it when done.
 */
#ifndef FE_DAEMON_ARENA_H
#define FE_DAEMON_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Compaction is worth a pass only past this much garbage. */
#define FE_ARENA_COMPACT_MIN (1u << 20)

struct fe_arena {
	char *buf;      /* cap bytes; buf[0] is the reserved "none" byte */
	size_t cap;     /* bytes allocated: a power of two, <= 2^32 */
	size_t len;     /* bytes in use, offset 0 included; <= cap */
	size_t garbage; /* bytes of dropped strings within len */
	char *next;       /* compaction in progress: the new buffer, else NULL */
	size_t next_cap;  /* bytes allocated for next */
	size_t next_len;  /* bytes in use in next; <= next_cap */
	char *pinned;     /* the buffer snapshots read, kept (never moved,
			     written or freed) while pins > 0, else NULL */
	size_t pins;      /* snapshots holding pinned */
};

/* Called by fe_arena_compact(): must call fe_arena_move() once for every
 * live offset and store the result in place of the old offset. */
typedef void fe_arena_walk_fn(struct fe_arena *a, void *ctx);

/* Make an empty arena (allocates a first small buffer).
 * Returns 0 or -ENOMEM. */
int fe_arena_init(struct fe_arena *a);

/* Free the arena's memory; every offset becomes invalid. */
void fe_arena_free(struct fe_arena *a);

/* Append a copy of the NUL-terminated s and set *off to its offset (never
 * 0).  Returns 0, or -ENOMEM (arena unchanged) when the buffer cannot grow
 * or would pass 4 GiB. */
int fe_arena_add(struct fe_arena *a, const char *s, uint32_t *off);

/* Room for n bytes (n >= 1, contents undefined): *off gets their offset
 * (never 0).  Earlier offsets stay valid, pointers into the arena do not.
 * Returns 0, or -ENOMEM (arena unchanged). */
int fe_arena_alloc(struct fe_arena *a, size_t n, uint32_t *off);

/* The bytes at off (from fe_arena_alloc() or fe_arena_add()), writable;
 * valid until the next alloc or compaction. */
char *fe_arena_ptr(const struct fe_arena *a, uint32_t off);

/* The string at off, or NULL for off 0.  off must come from fe_arena_add()
 * (or fe_arena_move()) and not have been dropped; an offset that is not
 * within the arena, or whose string has no NUL before its end, is NULL
 * too: the table's offsets sit in memory shared with other processes,
 * and a lie there must cost a path hint, never a read past the buffer. */
const char *fe_arena_str(const struct fe_arena *a, uint32_t off);

/* Whether the n bytes at off (not 0) lie within the arena. */
bool fe_arena_span(const struct fe_arena *a, uint32_t off, size_t n);

/* Count the string at off (0: nothing) as garbage: its owner is done.
 * Garbage never passes the arena's length, whatever is dropped. */
void fe_arena_drop(struct fe_arena *a, uint32_t off);

/* The same for an entry of n bytes. */
void fe_arena_drop_n(struct fe_arena *a, uint32_t off, size_t n);

/* True when garbage is more than half the arena and more than
 * FE_ARENA_COMPACT_MIN bytes: time for fe_arena_compact(). */
bool fe_arena_wants_compact(const struct fe_arena *a);

/* Copy the live strings into a fresh buffer: walk(a, ctx) must hand every
 * live offset to fe_arena_move() and store the new one.  Returns 0, or
 * -ENOMEM with the arena and every offset unchanged (walk not called). */
int fe_arena_compact(struct fe_arena *a, fe_arena_walk_fn *walk, void *ctx);

/* During fe_arena_compact() only: copy the string at off into the new
 * buffer and return its new offset (0 stays 0).  A walk that hands the
 * same offset twice could overflow the new buffer: past its end the string
 * is lost (0 is returned) rather than memory overwritten. */
uint32_t fe_arena_move(struct fe_arena *a, uint32_t off);

/* The same for an entry of n bytes (0, and nothing copied, when they are
 * not within the arena). */
uint32_t fe_arena_move_n(struct fe_arena *a, uint32_t off, size_t n);

/* Keep the bytes now in the buffer where they are, unchanged, for a
 * reader in another thread (a checkpoint's writer) until
 * fe_arena_unpin(): growth copies instead of moving, compaction keeps the
 * old buffer.  *len gets the bytes in use.  Returns the buffer, or NULL
 * when another buffer is pinned already (one moved since). */
const char *fe_arena_pin(struct fe_arena *a, size_t *len);

/* Drop a pin of buf (from fe_arena_pin()); the last one frees a buffer
 * the arena no longer uses.  In the arena's own thread only. */
void fe_arena_unpin(struct fe_arena *a, const char *buf);

/*
 * The table's entry at off: a path and its NUL (*plen bytes), then with
 * xattrs (the slot's FE_REC_XATTR) a u32 length and the block (*blk,
 * *blen; NULL and 0 without).  Returns the entry's bytes, or 0 when off
 * is 0 or the entry does not lie whole within the arena (then *plen, *blk
 * and *blen say none): the slot's offset and flags are read back from
 * shared memory, and a lie there must not read past the buffer.
 */
size_t fe_arena_entry(const struct fe_arena *a, uint32_t off, bool xattrs,
		      size_t *plen, const unsigned char **blk, size_t *blen);

/* The bytes of that entry alone, 0: none. */
size_t fe_arena_entry_len(const struct fe_arena *a, uint32_t off,
			  bool xattrs);

#endif
