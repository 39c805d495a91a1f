/*
 * The reader's side of the shared table (fakeenv/map.h): lock-free,
 * read-only, async-signal-safe, no allocation, errno untouched.  Used by
 * the shim and by the unit tests, which check it against the daemon's
 * own lookup.
 */
#ifndef FE_COMMON_MAPREAD_H
#define FE_COMMON_MAPREAD_H

#include <stdint.h>

#include "fakeenv/map.h"

/* The array with this id as the caller has it mapped (header checked,
 * mask within the mapping), or NULL when it has not. */
typedef const struct fe_map_arr *fe_map_resolve_fn(uint64_t id, void *ctx);

/*
 * Copy the slot at s into *out with the seq protocol.  Returns 0, or
 * -EAGAIN when the slot was being written on every try.
 */
int fe_map_read_slot(const struct fe_slot *s, struct fe_slot *out);

/*
 * Probe one array for (dev, ino): 1 and the slot in *out, 0 when absent,
 * -EAGAIN (a slot kept changing) or -EIO (no empty slot ends the probe:
 * not a table the daemon would write).
 */
int fe_map_probe(const struct fe_map_arr *a, uint64_t dev, uint64_t ino,
		 struct fe_slot *out);

/*
 * Look (dev, ino) up in the table that root names: old then cur, under
 * root's seq, retried when the arrays changed during the probe.  Returns
 * 1 (found, the slot in *out: a USED slot, possibly stale), 0 (absent),
 * -ENOENT (resolve has no mapping for an array root names: fetch them
 * again), -EAGAIN (the table kept changing: ask the daemon instead) or
 * -EIO.
 */
int fe_map_lookup(const struct fe_map_root *root, fe_map_resolve_fn *resolve,
		  void *ctx, uint64_t dev, uint64_t ino, struct fe_slot *out);

#endif
