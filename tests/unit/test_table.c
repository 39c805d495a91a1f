/*
 * The record table: insert, find, delete; tombstones reused and reclaimed;
 * growth from a tiny capacity through many incremental rehashes with
 * finds, deletes and inserts in the middle of each, checked against a
 * plain reference array; paths surviving rehash and arena compaction;
 * slots whose shared memory lies (path offsets past the arena, xattr
 * flags without a block, every slot claiming to be used) cost paths,
 * never a crash or a hang; paths past FE_PATH_MAX are not stored.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "daemon/state.h"
#include "daemon/table.h"
#include "unit.h"

#define N_KEYS 100000

/* The reference: what the table must hold for key k. */
static struct {
	int present;
	uint32_t uid;
	int has_path;
	uint32_t path_gen;
} ref[N_KEYS];

/* Keys share inos across devs so that dev must take part in the key. */
static uint64_t key_dev(int k)
{
	return 0x800 + (uint64_t)(k % 3);
}

static uint64_t key_ino(int k)
{
	return 1000 + (uint64_t)(k / 3);
}

static uint64_t rng_state = 0x1234567887654321ull;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 11);
}

static struct fe_rec rec_uid(uint32_t uid)
{
	struct fe_rec r = { .uid = uid, .gid = uid + 1, .mode = 0100644 };

	return r;
}

static void path_of(char *buf, size_t size, int k, uint32_t gen)
{
	snprintf(buf, size,
		 "/a/fairly/long/path/so/that/garbage/piles/up/%d/gen-%u", k,
		 (unsigned)gen);
}

/* Compare key k with the reference; quiet unless wrong. */
static int check_key(const struct fe_tab *t, int k)
{
	struct fe_rec r;
	bool found = fe_tab_find(t, key_dev(k), key_ino(k), &r);
	char want[128];
	const char *p;

	if (found != !!ref[k].present) {
		printf("# key %d: found %d, expected %d\n", k, found,
		       ref[k].present);
		return 0;
	}
	if (!found)
		return 1;
	if (r.uid != ref[k].uid || r.gid != ref[k].uid + 1 ||
	    r.mode != 0100644) {
		printf("# key %d: uid %u, expected %u\n", k, (unsigned)r.uid,
		       (unsigned)ref[k].uid);
		return 0;
	}
	p = fe_tab_path(t, &r);
	if (!ref[k].has_path)
		return p == NULL;
	path_of(want, sizeof(want), k, ref[k].path_gen);
	if (!p || strcmp(p, want)) {
		printf("# key %d: path '%s', expected '%s'\n", k,
		       p ? p : "(none)", want);
		return 0;
	}
	return 1;
}

static void test_basics(void)
{
	struct fe_tab t;
	struct fe_rec r, w = { .uid = 5, .gid = 6, .mode = 020600,
			       .flags = FE_REC_MODE_SET | FE_REC_DEV_SET,
			       .rdev = 0x0103 };

	CHECK("init", fe_tab_init(&t, 1) == 0);
	CHECK("empty: not found", !fe_tab_find(&t, 1, 2, &r));
	CHECK("insert", fe_tab_put(&t, 1, 2, &w, NULL) == 0);
	CHECK("find after insert",
	      fe_tab_find(&t, 1, 2, &r) && r.uid == 5 && r.gid == 6 &&
		      r.mode == 020600 && r.rdev == 0x0103 &&
		      r.flags == (FE_REC_MODE_SET | FE_REC_DEV_SET) && !r.path);
	CHECK("count 1", fe_tab_count(&t) == 1);
	CHECK("same ino, other dev: not found", !fe_tab_find(&t, 9, 2, &r));
	w.uid = 7;
	CHECK("insert same ino on other dev", fe_tab_put(&t, 9, 2, &w, NULL) == 0);
	CHECK("dev distinguishes equal inos",
	      fe_tab_find(&t, 1, 2, &r) && r.uid == 5 &&
		      fe_tab_find(&t, 9, 2, &r) && r.uid == 7);
	w.uid = 8;
	CHECK("replace", fe_tab_put(&t, 1, 2, &w, "/x") == 0 &&
				 fe_tab_find(&t, 1, 2, &r) && r.uid == 8 &&
				 !strcmp(fe_tab_path(&t, &r), "/x"));
	CHECK("replace keeps count", fe_tab_count(&t) == 2);
	CHECK("replace without path keeps the path",
	      fe_tab_put(&t, 1, 2, &w, NULL) == 0 &&
		      fe_tab_find(&t, 1, 2, &r) &&
		      !strcmp(fe_tab_path(&t, &r), "/x"));
	CHECK("slot flags never leak into records", !(r.flags & ~FE_REC_FLAGS));
	CHECK("delete", fe_tab_del(&t, 1, 2));
	CHECK("deleted: not found", !fe_tab_find(&t, 1, 2, &r));
	CHECK("delete twice: false", !fe_tab_del(&t, 1, 2));
	CHECK("other dev kept", fe_tab_find(&t, 9, 2, &r) && r.uid == 7);
	CHECK("count 1 after delete", fe_tab_count(&t) == 1);
	CHECK("dev past 32 bits: -EINVAL",
	      fe_tab_put(&t, 1ull << 32, 2, &w, NULL) == -EINVAL);
	w.rdev = 1ull << 32;
	CHECK("rdev past 32 bits: -EINVAL", fe_tab_put(&t, 1, 3, &w, NULL) == -EINVAL);
	CHECK("... and nothing stored", fe_tab_count(&t) == 1);
	w.rdev = 0xffffffffu;
	CHECK("the largest dev and rdev kept whole",
	      fe_tab_put(&t, 0xffffffffu, UINT64_MAX, &w, NULL) == 0 &&
		      fe_tab_find(&t, 0xffffffffu, UINT64_MAX, &r) &&
		      r.rdev == 0xffffffffu);
	fe_tab_free(&t);
}

static void test_tombstones(void)
{
	struct fe_tab t;
	struct fe_tab_info info;
	struct fe_rec w = rec_uid(1), r;
	uint64_t ino = 1;
	int rounds = 0, reclaimed = 0;

	CHECK("tomb: init 8", fe_tab_init(&t, 8) == 0);
	fe_tab_info(&t, &info);
	CHECK("tomb: capacity 8", info.cap == 8 && info.old_cap == 0);
	fe_tab_put(&t, 0, 100, &w, NULL);
	fe_tab_del(&t, 0, 100);
	fe_tab_info(&t, &info);
	CHECK("tomb: delete leaves a tombstone", info.tombs == 1);
	fe_tab_put(&t, 0, 100, &w, NULL);
	fe_tab_info(&t, &info);
	CHECK("tomb: reinsert reuses it", info.tombs == 0 && info.records == 1);

	/* Insert-delete churn with 2 records live: tombstones pile up until
	 * they are most of the load, then a rehash at the same size (a
	 * small table finishes it within one op) leaves them all behind. */
	fe_tab_put(&t, 0, 101, &w, NULL);
	for (; rounds < 200; rounds++) {
		size_t before;

		fe_tab_info(&t, &info);
		before = info.tombs;
		fe_tab_put(&t, 1, ino, &w, NULL);
		fe_tab_del(&t, 1, ino);
		ino++;
		fe_tab_info(&t, &info);
		if (before >= 3 && info.tombs < before)
			reclaimed++;
	}
	CHECK("tomb: churn rehashes at the same size", info.cap == 8);
	CHECK("tomb: the rehashes reclaim the tombstones", reclaimed > 0);
	CHECK("tomb: load stays within 3/4",
	      info.records == 2 && (info.records + info.tombs) * 4 <= 8 * 3);
	CHECK("tomb: records kept", fe_tab_find(&t, 0, 100, &r) &&
					    fe_tab_find(&t, 0, 101, &r));
	fe_tab_free(&t);
}

/* 100,000 keys from capacity 8, with random inserts, updates, deletes and
 * path changes; whenever a rehash is in progress, extra finds, deletes and
 * inserts land in its middle. */
/* What test_growth counts as it goes. */
struct growth {
	size_t n_ref;
	int mid_ops, bad, failed_puts;
};

/* Churn on the keys before k: update, rename, delete, revive. */
static void growth_churn(struct fe_tab *t, int k, struct growth *g)
{
	char path[128];

	for (int j = 0; j < 2 && k > 0; j++) {
		int o = (int)(rnd() % (uint32_t)k);
		uint32_t what = rnd() % 4;

		g->mid_ops += fe_tab_rehashing(t);
		if (what == 0 && ref[o].present) {
			fe_tab_del(t, key_dev(o), key_ino(o));
			ref[o].present = 0;
			g->n_ref--;
		} else if (what == 1) {
			struct fe_rec w = rec_uid((uint32_t)o + 7);

			path_of(path, sizeof(path), o, ref[o].path_gen + 1);
			if (fe_tab_put(t, key_dev(o), key_ino(o), &w, path) < 0)
				g->failed_puts++;
			if (!ref[o].present)
				g->n_ref++;
			ref[o].present = 1;
			ref[o].uid = (uint32_t)o + 7;
			ref[o].has_path = 1;
			ref[o].path_gen++;
		} else if (!check_key(t, o)) {
			g->bad++;
		}
	}
}

static void test_growth(void)
{
	struct fe_tab t;
	struct fe_tab_info info;
	char path[128];
	struct growth g = { 0 };
	int rehashes = 0, in_rehash = 0;

	memset(ref, 0, sizeof(ref));
	CHECK("growth: init 8", fe_tab_init(&t, 8) == 0);
	for (int k = 0; k < N_KEYS; k++) {
		struct fe_rec w = rec_uid((uint32_t)k);

		path_of(path, sizeof(path), k, 0);
		if (fe_tab_put(&t, key_dev(k), key_ino(k), &w,
			       k % 2 ? path : NULL) < 0)
			g.failed_puts++;
		ref[k].present = 1;
		ref[k].uid = (uint32_t)k;
		ref[k].has_path = k % 2;
		ref[k].path_gen = 0;
		g.n_ref++;

		growth_churn(&t, k, &g);
		fe_tab_info(&t, &info);
		if (info.old_cap && !in_rehash) {
			rehashes++;
			/* At the start of a big rehash: every key. */
			for (int o = 0; info.old_cap >= 16384 && o <= k; o++)
				if (!check_key(&t, o))
					g.bad++;
		}
		in_rehash = info.old_cap != 0;
		if (info.old_cap) {
			/* Mid-rehash: every key seen so far is where the
			 * reference says, for a sample. */
			int o = (int)(rnd() % (uint32_t)(k + 1));

			if (!check_key(&t, o))
				g.bad++;
		}
	}
	CHECK("growth: no put failed", g.failed_puts == 0);
	CHECK("growth: went through many rehashes", rehashes >= 10);
	CHECK("growth: many ops in the middle of rehashes", g.mid_ops > 1000);
	CHECK("growth: every sampled key right during the run", g.bad == 0);
	CHECK("growth: count matches the reference", fe_tab_count(&t) == g.n_ref);
	for (int k = 0; k < N_KEYS; k++)
		if (!check_key(&t, k))
			g.bad++;
	CHECK("growth: every key right at the end", g.bad == 0);
	while (fe_tab_rehash_step(&t, 1000))
		;
	for (int k = 0; k < N_KEYS; k++)
		if (!check_key(&t, k))
			g.bad++;
	CHECK("growth: every key right after the last rehash", g.bad == 0);
	fe_tab_info(&t, &info);
	CHECK("growth: load within 3/4",
	      (info.records + info.tombs) * 4 <= info.cap * 3);
	fe_tab_free(&t);
}

/* Arena compaction while a rehash is in progress rewrites the paths in
 * both arrays. */
static void test_compaction_mid_rehash(void)
{
	enum { K = 4000 };
	struct fe_tab t;
	struct fe_rec w, r;
	char path[400];
	uint64_t extra = 0;
	int k = 0, bad = 0, compacted = 0, rehashing_then = 0;

	memset(ref, 0, sizeof(ref));
	CHECK("compact: init", fe_tab_init(&t, 8) == 0);
	/* Paths of about 300 bytes: 1.2 MB live. */
	memset(path, 'x', 280);
	for (k = 0; k < K; k++) {
		w = rec_uid((uint32_t)k);
		snprintf(path + 280, sizeof(path) - 280, "/%d/gen-0", k);
		if (fe_tab_put(&t, 0, (uint64_t)k, &w, path) < 0)
			bad++;
		ref[k].path_gen = 0;
	}
	/* Renames until compaction is one or two renames away. */
	for (k = 0; t.arena.garbage + 1000 < (t.arena.len + 1000) / 2 ||
		    t.arena.garbage + 1000 < (1u << 20);
	     k = (k + 1) % K) {
		w = rec_uid((uint32_t)k);
		snprintf(path + 280, sizeof(path) - 280, "/%d/gen-%u", k,
			 (unsigned)++ref[k].path_gen);
		if (fe_tab_put(&t, 0, (uint64_t)k, &w, path) < 0)
			bad++;
	}
	CHECK("compact: no compaction yet", t.arena.garbage > (1u << 20));
	/* Records without paths until a rehash starts. */
	w = rec_uid(0);
	while (!fe_tab_rehashing(&t))
		if (fe_tab_put(&t, 1, extra++, &w, NULL) < 0)
			bad++;
	/* Now renames until the arena compacts. */
	for (int i = 0; i < 10 && !compacted; i++, k = (k + 1) % K) {
		rehashing_then = fe_tab_rehashing(&t);
		w = rec_uid((uint32_t)k);
		snprintf(path + 280, sizeof(path) - 280, "/%d/gen-%u", k,
			 (unsigned)++ref[k].path_gen);
		if (fe_tab_put(&t, 0, (uint64_t)k, &w, path) < 0)
			bad++;
		compacted = t.arena.garbage == 0;
	}
	CHECK("compact: the arena compacted", compacted);
	CHECK("compact: during a rehash", rehashing_then &&
						  fe_tab_rehashing(&t));
	for (int pass = 0; pass < 2; pass++) {
		for (k = 0; k < K; k++) {
			const char *p;

			snprintf(path + 280, sizeof(path) - 280, "/%d/gen-%u",
				 k, (unsigned)ref[k].path_gen);
			if (!fe_tab_find(&t, 0, (uint64_t)k, &r) ||
			    !(p = fe_tab_path(&t, &r)) || strcmp(p, path))
				bad++;
		}
		/* Again once the rehash has finished. */
		while (fe_tab_rehash_step(&t, 100))
			;
	}
	CHECK("compact: every path right, before and after the rehash",
	      bad == 0);
	fe_tab_free(&t);
}

/* A load reserves room for the journal's records: inserting them then
 * grows nothing, also when they come in the order of a bigger table's
 * slots (a journal's), and a rehash in progress is finished first. */
static void test_reserve(void)
{
	struct fe_tab t, big;
	struct fe_tab_info info;
	struct fe_rec r, w = rec_uid(5);
	uint64_t dev, ino;
	size_t pos = 0, cap, grew = 0, bad = 0;
	const int K = 20000;

	CHECK("reserve: init", fe_tab_init(&t, 8) == 0 &&
				       fe_tab_init(&big, 1 << 17) == 0);
	for (int k = 0; k < K; k++)
		(void)fe_tab_put(&big, key_dev(k), key_ino(k), &w, NULL);
	/* A rehash in progress, which the reserve must finish. */
	for (int k = 0; k < 7; k++)
		(void)fe_tab_put(&t, 0, 1000000 + (uint64_t)k, &w, NULL);
	CHECK("reserve: a rehash in progress", fe_tab_rehashing(&t));
	CHECK("reserve: K records", fe_tab_reserve(&t, (size_t)K) == 0);
	fe_tab_info(&t, &info);
	cap = info.cap;
	CHECK("reserve: rehash finished, room for them",
	      !fe_tab_rehashing(&t) && info.old_cap == 0 &&
		      (info.records + (size_t)K) * 4 <= cap * 3 &&
		      info.records == 7);
	CHECK("reserve: sized to the records, 2/3 full",
	      cap == (size_t)(K + 7) * 3 / 2 + 1 && cap & (cap - 1));
	while (fe_tab_next(&big, &pos, &dev, &ino, &r)) {
		(void)fe_tab_put(&t, dev, ino, &r, NULL);
		fe_tab_info(&t, &info);
		grew += info.cap != cap || fe_tab_rehashing(&t);
	}
	CHECK("reserve: the inserts grew nothing", grew == 0);
	for (int k = 0; k < K; k++)
		bad += !fe_tab_find(&t, key_dev(k), key_ino(k), &r) ||
		       r.uid != 5;
	CHECK("reserve: every record found", bad == 0 &&
						     fe_tab_count(&t) ==
							     (size_t)K + 7);
	CHECK("reserve: none needed, nothing changes",
	      fe_tab_reserve(&t, 1) == 0 &&
		      (fe_tab_info(&t, &info), info.cap == cap));
	CHECK("reserve: too many: -ENOMEM, table kept",
	      fe_tab_reserve(&t, SIZE_MAX / 2) == -ENOMEM &&
		      fe_tab_count(&t) == (size_t)K + 7);
	fe_tab_free(&t);
	fe_tab_free(&big);
}

/* Write lies into the table's slots, as a process could if it could
 * write the shared memory, and use the table: every read is checked. */
static void test_lying_slots(void)
{
	static const unsigned char blk[] = { 1, 0, 0, 0, 1, 0, 0, 0, 'x', 'v' };
	struct fe_tab t;
	struct fe_rec r = rec_uid(5), got;
	const unsigned char *x;
	struct fe_snap *sn;
	size_t pos = 0, n = 0, xlen, bad = 0;
	uint64_t dev, ino;
	char path[64];
	int k;

	CHECK("lies: init", fe_tab_init(&t, 64) == 0);
	for (k = 0; k < 20; k++) {
		snprintf(path, sizeof(path), "/lie/%d", k);
		if (k % 2 ? fe_tab_put(&t, 1, (uint64_t)k, &r, path) :
			    fe_tab_put_xattrs(&t, 1, (uint64_t)k, &r, path,
					      blk, sizeof(blk)))
			bad++;
	}
	CHECK("lies: 20 records", bad == 0 && fe_tab_count(&t) == 20);
	for (size_t i = 0; i < t.cur.cap; i++) {
		struct fe_slot *s = &t.cur.slots[i];

		if (!(s->flags & FE_SLOT_USED))
			continue;
		switch (n++ % 4) {
		case 0: s->path = 0xfffffff0u; break;
		case 1: s->path = (uint32_t)t.arena.len - 1; break;
		case 2: s->flags |= FE_REC_XATTR; s->path = (uint32_t)t.arena.len - 2; break;
		case 3: s->seq |= 1; s->flags |= FE_REC_XATTR; break;
		}
	}
	/* A NUL-less tail: the last bytes of the arena are not a string. */
	t.arena.buf[t.arena.len - 1] = 'z';
	t.arena.buf[t.arena.len - 2] = 'z';
	n = 0;
	while (fe_tab_next(&t, &pos, &dev, &ino, &got)) {
		const char *p = fe_tab_path(&t, &got);

		fe_tab_xattrs(&t, &got, &x, &xlen);
		if (p && strncmp(p, "/lie/", 5))
			bad++;
		n++;
	}
	CHECK("lies: every record read, each path its own or none",
	      n == 20 && bad == 0);
	sn = fe_snap_take(&t);
	CHECK("lies: a snapshot is taken", sn != NULL);
	fe_snap_free(sn);
	for (k = 0; k < 20; k++) {
		snprintf(path, sizeof(path), "/moved/%d", k);
		if (fe_tab_put(&t, 1, (uint64_t)k, &r, k % 3 ? path : NULL))
			bad++;
	}
	CHECK("lies: records rewritten", bad == 0);
	for (k = 0; k < 20; k++)
		if (!fe_tab_find(&t, 1, (uint64_t)k, &got) ||
		    (k % 3 && (!fe_tab_path(&t, &got) ||
			       strncmp(fe_tab_path(&t, &got), "/moved/", 7))))
			bad++;
	CHECK("lies: rewritten paths are right", bad == 0);
	for (k = 0; k < 10; k++)
		fe_tab_del(&t, 1, (uint64_t)k);
	CHECK("lies: deletes", fe_tab_count(&t) == 10);
	/* Every slot claims a record: finds and inserts still end. */
	for (size_t i = 0; i < t.cur.cap; i++)
		t.cur.slots[i].flags = FE_SLOT_USED;
	CHECK("lies: a find in a full array ends",
	      !fe_tab_find(&t, 7, 7, &got));
	CHECK("lies: an insert in a full array ends",
	      fe_tab_put(&t, 7, 7, &r, "/x") == 0);
	fe_tab_free(&t);
}

static void test_long_paths(void)
{
	static char big[FE_PATH_MAX + 8];
	struct fe_tab t;
	struct fe_rec r = rec_uid(9), got;
	struct fe_tab_info info;

	memset(big, 'a', sizeof(big) - 1);
	big[0] = '/';
	CHECK("long: init", fe_tab_init(&t, 8) == 0);
	big[FE_PATH_MAX - 1] = '\0'; /* FE_PATH_MAX bytes with the NUL */
	CHECK("long: the longest path is stored",
	      fe_tab_put(&t, 1, 1, &r, big) == 0 &&
		      fe_tab_find(&t, 1, 1, &got) && fe_tab_path(&t, &got) &&
		      strlen(fe_tab_path(&t, &got)) == FE_PATH_MAX - 1);
	big[FE_PATH_MAX - 1] = 'a';
	big[FE_PATH_MAX] = '\0';
	CHECK("long: one byte more: the record kept, its path dropped",
	      fe_tab_put(&t, 1, 1, &r, big) == 0 &&
		      fe_tab_find(&t, 1, 1, &got) && got.uid == 9 &&
		      !fe_tab_path(&t, &got));
	CHECK("long: with xattrs, they stay",
	      fe_tab_put_xattrs(&t, 1, 2, &r, "/x", "\1\0\0\0\1\0\0\0nv",
				10) == 0 &&
		      fe_tab_put(&t, 1, 2, &r, big) == 0 &&
		      fe_tab_find(&t, 1, 2, &got) &&
		      (got.flags & FE_REC_XATTR) &&
		      !strcmp(fe_tab_path(&t, &got), ""));
	fe_tab_info(&t, &info);
	CHECK("long: counted", info.long_paths == 2);
	fe_tab_free(&t);
}

int main(void)
{
	test_basics();
	test_tombstones();
	test_growth();
	test_compaction_mid_rehash();
	test_reserve();
	test_lying_slots();
	test_long_paths();
	UNIT_EXIT();
}
