/*
 * What table.c and table_path.c share, and nothing else includes: the
 * bracket around every write of a slot, and the records' arena entries
 * (a path, then xattrs) as table_path.c makes and drops them.
 */
#ifndef FE_DAEMON_TABLE_INT_H
#define FE_DAEMON_TABLE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "table.h"

/*
 * Bracket every write of a slot (the seq protocol of fakeenv/map.h): seq
 * odd, a release fence, the fields as relaxed atomic stores (SET), then
 * seq even with a release store.  A reader in another process that saw
 * any of the new fields sees the odd seq when it reads seq again.
 */
static inline void slot_begin(struct fe_slot *s)
{
	/* Odd whatever it was: the seq word is read back from shared
	 * memory (so is every slot field: see "Trust" in table.c). */
	__atomic_store_n(&s->seq, (s->seq + 1) | 1u, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void slot_end(struct fe_slot *s)
{
	__atomic_store_n(&s->seq, (s->seq | 1u) + 1, __ATOMIC_RELEASE);
}

#define SET(s, field, v) __atomic_store_n(&(s)->field, (v), __ATOMIC_RELAXED)

/* The entry at off, of a slot that had these flags, is no longer
 * referenced: count it as garbage and compact the arena when garbage
 * dominates.  A failed compaction leaves the garbage in place; the next
 * drop tries again. */
void fe_tab_drop_path(struct fe_tab *t, uint32_t off, uint32_t flags);

/*
 * Write a new arena entry for a record whose slot (NULL: none yet) has
 * its entry at old_off with old_flags (checked: fe_arena_entry()): the path
 * (path, else the old one, else "" when xattrs need an entry), then the
 * xattrs (blk/len when set_x, else the old ones).  *off gets the entry
 * (0: none needed), *has_x whether it holds xattrs.
 *
 * A path of FE_PATH_MAX bytes or more (NUL included) is not stored: the
 * record keeps its owner, mode and xattrs but loses its path hint, the
 * old one included (it is wrong now), and t->long_paths counts it.  No
 * such path comes over the wire; a RENAMEDIR that moves a deep tree
 * under a long prefix makes them, and without the bound each one grew
 * every path below by the prefix: 25 requests of 4 KiB made 100 MB of
 * paths of 1,001 records.  Paths are hints: a record with a birth time
 * needs none, one without is dropped at the next load as if its file
 * were gone.  Returns 0 or -ENOMEM (nothing changed).
 */
int fe_tab_new_entry(struct fe_tab *t, uint32_t old_off, uint32_t old_flags,
		     const char *path, bool set_x, const void *blk, size_t len,
		     uint32_t *off, bool *has_x);

/* Whether the entry at off holds path as its path. */
bool fe_tab_same_path(const struct fe_tab *t, uint32_t off, uint32_t flags,
		       const char *path);

#endif
