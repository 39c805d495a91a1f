/*
 * The reader of the shared table; see mapread.h and fakeenv/map.h.  Every
 * load from the mapping is atomic (relaxed for the fields, acquire for
 * the first seq load, an acquire fence before the second), so a reader
 * racing the daemon's writer is defined behaviour, and a torn copy is
 * always seen as one.
 */
#include "mapread.h"

#include <errno.h>

#include "util.h"

/* Tries before giving up on a slot, or on the root, that keeps changing:
 * the daemon may have been preempted mid-write; its GET answers then. */
#define SLOT_TRIES 64
#define ROOT_TRIES 16

#define LD(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

int fe_map_read_slot(const struct fe_slot *s, struct fe_slot *out)
{
	for (int i = 0; i < SLOT_TRIES; i++) {
		uint32_t s1 = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);

		if (s1 & 1) {
			relax();
			continue;
		}
		out->flags = LD(s->flags);
		out->dev = LD(s->dev);
		out->ino = LD(s->ino);
		out->rdev = LD(s->rdev);
		out->uid = LD(s->uid);
		out->gid = LD(s->gid);
		out->mode = LD(s->mode);
		out->path = LD(s->path);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (LD(s->seq) == s1) {
			out->seq = s1;
			return 0;
		}
	}
	return -EAGAIN;
}

int fe_map_probe(const struct fe_map_arr *a, uint64_t dev, uint64_t ino,
		 struct fe_slot *out)
{
	uint64_t mask = a->mask;
	uint64_t i = fe_hash_key(dev, ino) & mask;

	for (uint64_t n = 0; n <= mask; n++, i = (i + 1) & mask) {
		const struct fe_slot *s = &a->slots[i];
		int r;

		/* Most probes end at an empty slot: a single load says so
		 * (an EMPTY slot never written has seq 0; one being filled
		 * is odd, read in full below). */
		if (LD(s->flags) == 0 &&
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

int fe_map_lookup(const struct fe_map_root *root, fe_map_resolve_fn *resolve,
		  void *ctx, uint64_t dev, uint64_t ino, struct fe_slot *out)
{
	for (int i = 0; i < ROOT_TRIES; i++) {
		uint32_t seq = __atomic_load_n(&root->seq, __ATOMIC_ACQUIRE);
		const struct fe_map_arr *cur, *old = NULL;
		uint64_t cur_id, old_id;
		int r = 0;

		if (seq & 1) {
			relax();
			continue;
		}
		cur_id = LD(root->cur_id);
		old_id = LD(root->old_id);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (LD(root->seq) != seq)
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
		if (r >= 0 && LD(root->seq) == seq)
			return r;
	}
	return -EAGAIN;
}
