/*
 * The reader's side of the shared table (fakeenv/map.h): lock-free,
 * read-only, async-signal-safe, no allocation, errno untouched.  Used by
 * the shim and by the unit tests, which check it against the daemon's
 * own lookup.  Inline, so that the caller's resolver is too: this runs on
 * every stat.
 *
 * Every load from the mapping is atomic (relaxed for the fields, acquire
 * for the first seq load, an acquire fence before the second), so a
 * reader racing the daemon's writer is defined behaviour, and a torn copy
 * is always seen as one.
 */
#ifndef FE_COMMON_MAPREAD_H
#define FE_COMMON_MAPREAD_H

#include <errno.h>
#include <stdint.h>

#include "common/util.h"
#include "fakeenv/map.h"

/* The array with this id as the caller has it mapped (header checked,
 * cap within the mapping), or NULL when it has not. */
typedef const struct fe_map_arr *fe_map_resolve_fn(uint64_t id, void *ctx);

/* Tries before giving up on a slot, or on the root, that keeps changing:
 * the daemon may have been preempted mid-write; its GET answers then. */
#define FE_MAP_SLOT_TRIES 64
#define FE_MAP_ROOT_TRIES 16

#define FE_MAP_LD(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)

static inline void fe_map_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* The pending counter of (dev, ino) in the FE_PEND_BUCKETS counters at
 * pend (fakeenv/map.h): high bits of the key's hash, so that a bucket is
 * not one run of table slots. */
static inline uint32_t *fe_pend_at(uint32_t *pend, uint64_t dev, uint64_t ino)
{
	return &pend[(fe_hash_key(dev, ino) >> 40) & (FE_PEND_BUCKETS - 1)];
}

/*
 * Copy the slot at s into *out with the seq protocol.  Returns 0, or
 * -EAGAIN when the slot was being written on every try.
 */
static inline int fe_map_read_slot(const struct fe_slot *s, struct fe_slot *out)
{
	for (int i = 0; i < FE_MAP_SLOT_TRIES; i++) {
		uint32_t s1 = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);

		if (s1 & 1) {
			fe_map_relax();
			continue;
		}
		out->flags = FE_MAP_LD(s->flags);
		out->dev = FE_MAP_LD(s->dev);
		out->ino = FE_MAP_LD(s->ino);
		out->rdev = FE_MAP_LD(s->rdev);
		out->uid = FE_MAP_LD(s->uid);
		out->gid = FE_MAP_LD(s->gid);
		out->mode = FE_MAP_LD(s->mode);
		out->btag = FE_MAP_LD(s->btag);
		out->path = FE_MAP_LD(s->path);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (FE_MAP_LD(s->seq) == s1) {
			out->seq = s1;
			return 0;
		}
	}
	return -EAGAIN;
}

/*
 * Probe one array for (dev, ino): 1 and the slot in *out, 0 when absent,
 * -EAGAIN (a slot kept changing) or -EIO (no empty slot ends the probe:
 * not a table the daemon would write).
 */
static inline int fe_map_probe(const struct fe_map_arr *a, uint64_t dev,
			       uint64_t ino, struct fe_slot *out)
{
	uint64_t cap = a->cap;
	uint64_t i = fe_map_home(fe_hash_key(dev, ino), cap);

	for (uint64_t n = 0; n < cap; n++, i = i + 1 < cap ? i + 1 : 0) {
		const struct fe_slot *s = &a->slots[i];
		int r;

		/* Most probes end at an empty slot: a single load says so
		 * (an EMPTY slot never written has seq 0; one being filled
		 * is odd, read in full below). */
		if (FE_MAP_LD(s->flags) == 0 &&
		    __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) == 0)
			return 0;
		r = fe_map_read_slot(s, out);
		if (r < 0)
			return r;
		if (!(out->flags & (FE_SLOT_USED | FE_SLOT_TOMB)))
			return 0;
		if ((out->flags & FE_SLOT_USED) && out->dev == dev &&
		    out->ino == ino)
			return 1;
	}
	return -EIO;
}

/*
 * Look (dev, ino) up in the table that root names: old then cur, under
 * root's seq, retried when the arrays changed during the probe.  Returns
 * 1 (found, the slot in *out: a USED slot, possibly stale), 0 (absent),
 * -ENOENT (resolve has no mapping for an array root names: fetch them
 * again), -EAGAIN (the table kept changing: ask the daemon instead) or
 * -EIO.
 */
static inline int fe_map_lookup(const struct fe_map_root *root,
				fe_map_resolve_fn *resolve, void *ctx,
				uint64_t dev, uint64_t ino, struct fe_slot *out)
{
	for (int i = 0; i < FE_MAP_ROOT_TRIES; i++) {
		uint32_t seq = __atomic_load_n(&root->seq, __ATOMIC_ACQUIRE);
		const struct fe_map_arr *cur, *old = NULL;
		uint64_t cur_id, old_id;
		int r = 0;

		if (seq & 1) {
			fe_map_relax();
			continue;
		}
		cur_id = FE_MAP_LD(root->cur_id);
		old_id = FE_MAP_LD(root->old_id);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (FE_MAP_LD(root->seq) != seq)
			continue;
		cur = resolve(cur_id, ctx);
		if (old_id)
			old = resolve(old_id, ctx);
		if (!cur || (old_id && !old))
			return -ENOENT;
		/* Old first: a record is copied into cur before it is
		 * tombstoned in old. */
		if (old)
			r = fe_map_probe(old, dev, ino, out);
		if (r == 0)
			r = fe_map_probe(cur, dev, ino, out);
		if (r == -EIO)
			return r;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (r >= 0 && FE_MAP_LD(root->seq) == seq)
			return r;
	}
	return -EAGAIN;
}

#endif
