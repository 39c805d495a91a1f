/*
 * The record table: open addressing with linear probing over fixed-size
 * slots keyed by (st_dev, st_ino), with tombstone deletion and incremental
 * growth in the manner of redis's dictRehash.  Paths live in an arena
 * owned by the table.  Single-threaded; allocation happens only at init,
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
 *  - each non-zero path offset is owned by exactly one USED slot.
 */
#ifndef FE_DAEMON_TABLE_H
#define FE_DAEMON_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"

/* Slot state. */
#define FE_SLOT_USED 0x1u /* holds a record */
#define FE_SLOT_TOMB 0x2u /* held one: probes go past it, inserts reuse it */
/* Record flags, kept in the same word. */
#define FE_REC_MODE_SET 0x4u /* permission bits are faked */
#define FE_REC_DEV_SET  0x8u /* type and rdev are faked (a device whose real
				file is a regular file) */
#define FE_REC_FLAGS (FE_REC_MODE_SET | FE_REC_DEV_SET)

/* Old slots moved by each insert or delete while a rehash runs. */
#define FE_TAB_STEP 128

/*
 * One slot, 48 bytes.  The layout is meant to be published later in a
 * shared read-only mapping: seq is odd while the slot is being written and
 * grows by 2 with every write, so a lock-free reader can retry a torn read.
 */
struct fe_slot {
	uint64_t dev;   /* key: st_dev */
	uint64_t ino;   /* key: st_ino */
	uint64_t rdev;  /* faked st_rdev, meaningful with FE_REC_DEV_SET */
	uint32_t uid;   /* fake owner */
	uint32_t gid;   /* fake group */
	uint32_t mode;  /* type bits (the faked type with DEV_SET, else the
			   real type when recorded) and permission bits
			   (meaningful with MODE_SET) */
	uint32_t path;  /* arena offset of the last known path, 0: none */
	uint32_t seq;   /* write sequence: odd while a write is in progress */
	uint32_t flags; /* FE_SLOT_* | FE_REC_* */
};
_Static_assert(sizeof(struct fe_slot) == 48, "slot layout");

/* A record's value, as callers read and write it. */
struct fe_rec {
	uint32_t uid;   /* fake owner */
	uint32_t gid;   /* fake group */
	uint32_t mode;  /* type and permission bits, as in the slot */
	uint32_t flags; /* FE_REC_* only */
	uint64_t rdev;  /* with FE_REC_DEV_SET */
	uint32_t path;  /* arena offset (fe_tab_path()), 0: none; read-only */
};

/* One slot array. */
struct fe_tab_arr {
	struct fe_slot *slots; /* cap slots, or NULL */
	size_t mask;           /* cap - 1; cap is a power of two */
	size_t used;           /* USED slots */
	size_t tombs;          /* TOMB slots */
};

struct fe_tab {
	struct fe_tab_arr cur; /* takes every insert */
	struct fe_tab_arr old; /* being drained into cur; slots NULL when no
				  rehash is in progress */
	size_t rehash_idx;     /* next slot of old to move */
	struct fe_arena arena; /* the paths */
};

/* A snapshot of the table's shape, for tests and logs. */
struct fe_tab_info {
	size_t records;   /* records held */
	size_t cap;       /* slots in cur */
	size_t tombs;     /* tombstones in cur */
	size_t old_cap;   /* slots in old, 0 when no rehash is in progress */
	size_t old_used;  /* records still in old */
};

/* Make an empty table of at least min_cap slots (rounded up to a power of
 * two, at least 8).  Returns 0 or -ENOMEM (nothing to free). */
int fe_tab_init(struct fe_tab *t, size_t min_cap);

/* Free everything the table holds. */
void fe_tab_free(struct fe_tab *t);

/* Copy the record at (dev, ino) into *rec and return true, or return false.
 * Changes nothing. */
bool fe_tab_find(const struct fe_tab *t, uint64_t dev, uint64_t ino,
		 struct fe_rec *rec);

/* Insert or replace the record at (dev, ino) with rec (rec->path is
 * ignored).  path: NULL keeps the record's path (none for a new record),
 * else replaces it with a copy.  Returns 0, or -ENOMEM with the record
 * unchanged (absent if it was). */
int fe_tab_put(struct fe_tab *t, uint64_t dev, uint64_t ino,
	       const struct fe_rec *rec, const char *path);

/* Delete the record at (dev, ino).  Returns true if there was one. */
bool fe_tab_del(struct fe_tab *t, uint64_t dev, uint64_t ino);

/* Visit every record: *pos starts at 0; each call fills the next record
 * (cur's slots, then old's) and returns true, or returns false at the end.
 * A put or delete may move records: change nothing while iterating. */
bool fe_tab_next(const struct fe_tab *t, size_t *pos, uint64_t *dev,
		 uint64_t *ino, struct fe_rec *rec);

/* Records held. */
size_t fe_tab_count(const struct fe_tab *t);

/* The path of a record read by fe_tab_find(), or NULL.  Valid until the
 * next fe_tab_put() or fe_tab_del(). */
const char *fe_tab_path(const struct fe_tab *t, const struct fe_rec *rec);

/* Move up to n slots of a rehash in progress (for the idle loop).  Returns
 * true while a rehash is still in progress afterwards. */
bool fe_tab_rehash_step(struct fe_tab *t, size_t n);

/* True while a rehash is in progress. */
bool fe_tab_rehashing(const struct fe_tab *t);

/* Fill *info with the table's shape. */
void fe_tab_info(const struct fe_tab *t, struct fe_tab_info *info);

#endif
