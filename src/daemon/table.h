/*
 * The record table: open addressing with linear probing over fixed-size
 * slots keyed by (st_dev, st_ino), with tombstone deletion and incremental
 * growth in the manner of redis's dictRehash.  Paths live in an arena
 * owned by the table, each followed, for a record with FE_REC_XATTR, by
 * its xattrs: a u32 length (host order, unaligned) and a block in the
 * journal's format (src/journal/journal.h), so that a record's path and
 * xattrs are one arena entry, owned by its slot, and move with it.  Single-threaded; allocation happens only at init,
 * on growth and on arena compaction, and its failure is -ENOMEM, never an
 * exit.
 *
 * Invariants:
 *  - a key is held by at most one USED slot, in cur or in old;
 *  - every array keeps at least one EMPTY slot (used + tombs <= 3/4 of the
 *    capacity in cur; old receives no insert), so every probe ends;
 *  - while old is set (a rehash is in progress), old's slots below
 *    rehash_idx are all moved (not USED) and every insert goes into cur;
 *  - a slot is copied into cur before it is tombstoned in old, so a reader
 *    that probes old first and then cur never misses a record being moved;
 *    slots are never moved within an array (no backward shift), so a probe
 *    never misses a record that another write displaced;
 *  - each non-zero path offset is owned by exactly one USED slot;
 *  - a slot has FE_REC_XATTR exactly when its entry holds a non-empty
 *    xattr block (its path offset is then never 0: a record without a
 *    path has the empty path "");
 *  - the root (fakeenv/map.h) names cur and old as they are; it changes
 *    only when a rehash starts or ends, and every slot write is bracketed
 *    by its seq, so lock-free readers in other processes see a consistent
 *    table (the protocol is in fakeenv/map.h).
 */
#ifndef FE_DAEMON_TABLE_H
#define FE_DAEMON_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "shm.h"
#include "fakeenv/map.h"
#include "fakeenv/proto.h"

/* Slot states, record flags and struct fe_slot are in fakeenv/map.h: the
 * slot arrays are shared read-only with every process of the session. */

/* Old slots moved by each insert or delete while a rehash runs. */
#define FE_TAB_STEP 128

/* A record's value, as callers read and write it. */
struct fe_rec {
	uint32_t uid;   /* fake owner */
	uint32_t gid;   /* fake group */
	uint32_t mode;  /* type and permission bits, as in the slot */
	uint32_t flags; /* FE_REC_* only */
	uint32_t btag;  /* birth-time tag, 0: unknown (fakeenv/map.h) */
	uint64_t rdev;  /* with FE_REC_DEV_SET */
	uint32_t path;  /* arena offset (fe_tab_path()), 0: none; read-only */
};

/* One slot array, in its own memfd (fakeenv/map.h) when the system has
 * memfd_create, else in private memory that is not shared. */
struct fe_tab_arr {
	struct fe_slot *slots; /* cap slots, or NULL */
	size_t cap;            /* slots, at most FE_MAP_CAP_MAX */
	size_t used;           /* USED slots */
	size_t tombs;          /* TOMB slots */
	struct fe_map_arr *hdr; /* the mapping: header, then the slots */
	int fd;                /* read-only fd of the memfd for readers, or -1
				  (not shared) */
};

struct fe_tab {
	struct fe_tab_arr cur; /* takes every insert */
	struct fe_tab_arr old; /* being drained into cur; slots NULL when no
				  rehash is in progress */
	size_t rehash_idx;     /* next slot of old to move */
	struct fe_arena arena; /* the paths */
	struct fe_map_root *root; /* names cur and old for readers */
	int root_fd;           /* read-only fd of root's memfd, or -1 */
	uint32_t *pend;        /* FE_PEND_BUCKETS pending counters
				  (fakeenv/map.h), shared read-write */
	int pend_fd;           /* their memfd, read-write, or -1 */
	uint64_t next_id;      /* id of the next array */
	uint64_t long_paths;   /* path hints not stored: FE_PATH_MAX bytes or
				  more (the record kept, without a path) */
};

/* A snapshot of the table's shape, for tests and logs. */
struct fe_tab_info {
	size_t records;   /* records held */
	size_t cap;       /* slots in cur */
	size_t tombs;     /* tombstones in cur */
	size_t old_cap;   /* slots in old, 0 when no rehash is in progress */
	size_t old_used;  /* records still in old */
	uint64_t long_paths; /* path hints dropped as too long, ever */
};

/* Make an empty table of min_cap slots, at least 8.  Returns 0 or
 * -ENOMEM (nothing to free). */
int fe_tab_init(struct fe_tab *t, size_t min_cap);

/* Free everything the table holds. */
void fe_tab_free(struct fe_tab *t);

/* Copy the record at (dev, ino) into *rec and return true, or return false.
 * Changes nothing. */
bool fe_tab_find(const struct fe_tab *t, uint64_t dev, uint64_t ino,
		 struct fe_rec *rec);

/* Insert or replace the record at (dev, ino) with rec (rec->path and
 * FE_REC_XATTR in rec->flags are ignored: the record keeps its xattrs).
 * path: NULL keeps the record's path (none for a new record), else
 * replaces it with a copy; one of FE_PATH_MAX bytes or more, NUL
 * included, is not stored: the record then has no path (counted in
 * long_paths).  Returns 0, -EINVAL when dev or rec->rdev is
 * past FE_DEV_MAX, or -ENOMEM with the record unchanged (absent if it
 * was). */
int fe_tab_put(struct fe_tab *t, uint64_t dev, uint64_t ino,
	       const struct fe_rec *rec, const char *path);

/* fe_tab_put(), and the record's xattrs become the len bytes at blk (a
 * block in the journal's format; len 0: none, and FE_REC_XATTR goes).
 * blk must not point into the table's arena.  Returns 0, or -ENOMEM
 * (len past 4 GiB too) with nothing changed. */
int fe_tab_put_xattrs(struct fe_tab *t, uint64_t dev, uint64_t ino,
		      const struct fe_rec *rec, const char *path,
		      const void *blk, size_t len);

/* The xattr block of a record read by fe_tab_find() or fe_tab_next():
 * *blk and *len, or NULL and 0 without FE_REC_XATTR.  Valid until the
 * next fe_tab_put*() or fe_tab_del(). */
void fe_tab_xattrs(const struct fe_tab *t, const struct fe_rec *rec,
		   const unsigned char **blk, size_t *len);

/* Delete the record at (dev, ino).  Returns true if there was one. */
bool fe_tab_del(struct fe_tab *t, uint64_t dev, uint64_t ino);

/* Visit every record: *pos starts at 0; each call fills the next record
 * (cur's slots, then old's) and returns true, or returns false at the end.
 * A put or delete may move records: change nothing while iterating. */
bool fe_tab_next(const struct fe_tab *t, size_t *pos, uint64_t *dev,
		 uint64_t *ino, struct fe_rec *rec);

/* Make room for n more records, so that inserting them grows nothing:
 * finishes a rehash in progress and, when needed, moves every record to
 * a bigger array at once (for a load, before any client).  Returns 0 or
 * -ENOMEM (the table as it was). */
int fe_tab_reserve(struct fe_tab *t, size_t n);

/* The arena's buffer, pinned (fe_arena_pin()): the path offsets of the
 * records as they are now stay readable there, unchanged, from any
 * thread until fe_tab_unpin_paths().  *len gets its bytes in use.
 * NULL when another pin of a buffer since moved is held. */
const char *fe_tab_pin_paths(struct fe_tab *t, size_t *len);
void fe_tab_unpin_paths(struct fe_tab *t, const char *buf);

/* Records held. */
size_t fe_tab_count(const struct fe_tab *t);

/* The path of a record read by fe_tab_find(), or NULL ("" for a record
 * with xattrs and no path).  Valid until the
 * next fe_tab_put() or fe_tab_del(). */
const char *fe_tab_path(const struct fe_tab *t, const struct fe_rec *rec);

/* Move up to n slots of a rehash in progress (for the idle loop).  Returns
 * true while a rehash is still in progress afterwards. */
bool fe_tab_rehash_step(struct fe_tab *t, size_t n);

/* True while a rehash is in progress. */
bool fe_tab_rehashing(const struct fe_tab *t);

/* The fds a reader maps (root, the pending counters, cur, then old while
 * a rehash is in progress) into fds[], still owned by the table.
 * Returns how many, or -ENOSYS when the arrays are not shared (no
 * memfd_create). */
int fe_tab_map_fds(const struct fe_tab *t, int fds[FE_MAP_FDS]);

/* A one-way change to (dev, ino) is in the table: lower its bucket's
 * pending counter (fakeenv/map.h), after the slot's writes. */
static inline void fe_tab_pend_done(struct fe_tab *t, uint64_t dev,
				    uint64_t ino)
{
	fe_shm_pend_done(t->pend, dev, ino);
}

/* Fill *info with the table's shape. */
void fe_tab_info(const struct fe_tab *t, struct fe_tab_info *info);

#endif
