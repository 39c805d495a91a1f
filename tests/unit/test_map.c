/*
 * The shared table as readers see it (fakeenv/map.h, common/mapread.c):
 *  - the slot protocol: a writer thread rewrites the same records with
 *    self-consistent values (uid == gid == rdev, permission bits == the
 *    low bits of uid) while reader threads copy them: no torn copy;
 *  - the reader's lookup agrees with fe_tab_find() after every insert and
 *    delete through many incremental rehashes;
 *  - readers in other threads, through their own read-only mappings of
 *    the memfds, never miss a record while the table grows under them;
 *  - the memfds: sealed, read-only fds, root names cur and old.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/mapread.h"
#include "daemon/serve.h"
#include "daemon/table.h"
#include "unit.h"

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --- the slot protocol ------------------------------------------------ */

#define TORN_KEYS    8
#define TORN_READERS 3
#define TORN_SECONDS 0.7
/* At least this many writes and reads however slowly threads run (under
 * valgrind one at a time), within TORN_MAX_SECONDS. */
#define TORN_MIN_OPS     20000
#define TORN_MAX_SECONDS 60.0

static struct fe_tab torn_tab;
static const struct fe_map_arr *torn_arr;
static atomic_int torn_stop;

static struct fe_rec consistent(uint32_t x)
{
	struct fe_rec r = {
	    .uid = x,
	    .gid = x,
	    .mode = S_IFREG | (x & 0777),
	    .flags = FE_REC_MODE_SET | FE_REC_DEV_SET,
	    .rdev = x,
	};

	return r;
}

static void *torn_writer(void *arg)
{
	uint32_t x = 1;
	atomic_long *writes = arg;

	while (!atomic_load(&torn_stop)) {
		for (int k = 0; k < TORN_KEYS; k++) {
			struct fe_rec r = consistent(x++);

			fe_tab_put(&torn_tab, 7, 100 + (uint64_t)k, &r, NULL);
			atomic_fetch_add(writes, 1);
		}
	}
	return NULL;
}

struct torn_res {
	atomic_long reads; /* read by the main thread as it runs */
	long bad;
	long gave_up;
};

static void *torn_reader(void *arg)
{
	struct torn_res *res = arg;
	uint64_t rng = 0x9e3779b97f4a7c15ull ^ (uintptr_t)arg;

	while (!atomic_load(&torn_stop)) {
		uint64_t k = xorshift(&rng) % TORN_KEYS;
		struct fe_slot s;
		int r = fe_map_probe(torn_arr, 7, 100 + k, &s);

		if (r < 0) {
			res->gave_up++;
			continue;
		}
		/* A scheduler that runs one thread at a time (valgrind's)
		 * must get to the writer too. */
		if ((atomic_fetch_add(&res->reads, 1) + 1) % 4096 == 0)
			sched_yield();
		if (r != 1 || s.uid != s.gid || (uint64_t)s.uid != s.rdev ||
		    s.mode != (S_IFREG | (s.uid & 0777)) ||
		    s.flags !=
			(FE_SLOT_USED | FE_REC_MODE_SET | FE_REC_DEV_SET) ||
		    (s.seq & 1))
			res->bad++;
	}
	return NULL;
}

static void test_torn(void)
{
	pthread_t w, rd[TORN_READERS];
	struct torn_res res[TORN_READERS];
	atomic_long writes = 0;
	long reads = 0, bad = 0, gave_up = 0;
	double t0;

	memset(res, 0, sizeof(res));
	CHECK("torn: init", fe_tab_init(&torn_tab, 64) == 0);
	for (int k = 0; k < TORN_KEYS; k++) {
		struct fe_rec r = consistent(0);

		fe_tab_put(&torn_tab, 7, 100 + (uint64_t)k, &r, NULL);
	}
	torn_arr = torn_tab.cur.hdr;
	CHECK("torn: writer starts",
	      pthread_create(&w, NULL, torn_writer, &writes) == 0);
	for (int i = 0; i < TORN_READERS; i++)
		pthread_create(&rd[i], NULL, torn_reader, &res[i]);
	t0 = now();
	while (now() - t0 < TORN_MAX_SECONDS &&
	       (now() - t0 < TORN_SECONDS ||
		atomic_load(&writes) < TORN_MIN_OPS ||
		atomic_load(&res[0].reads) < TORN_MIN_OPS))
		usleep(10000);
	atomic_store(&torn_stop, 1);
	pthread_join(w, NULL);
	for (int i = 0; i < TORN_READERS; i++) {
		pthread_join(rd[i], NULL);
		reads += atomic_load(&res[i].reads);
		bad += res[i].bad;
		gave_up += res[i].gave_up;
	}
	printf("# torn: %ld writes, %ld reads, %ld gave up (slot busy)\n",
	       atomic_load(&writes), reads, gave_up);
	CHECK("torn: the writer wrote and the readers read",
	      atomic_load(&writes) >= TORN_MIN_OPS && reads >= TORN_MIN_OPS);
	CHECK("torn: no reader ever saw a torn record", bad == 0);
	fe_tab_free(&torn_tab);
}

/* --- the lookup against fe_tab_find, single-threaded ----------------- */

static const struct fe_map_arr *resolve_tab(uint64_t id, void *ctx)
{
	const struct fe_tab *t = ctx;

	if (t->cur.hdr && t->cur.hdr->id == id)
		return t->cur.hdr;
	if (t->old.hdr && t->old.hdr->id == id)
		return t->old.hdr;
	return NULL;
}

/* The reader's answer for (dev, ino) equals fe_tab_find's.  Quiet. */
static int agrees(struct fe_tab *t, uint64_t dev, uint64_t ino)
{
	struct fe_rec rec;
	struct fe_slot s;
	bool found = fe_tab_find(t, dev, ino, &rec);
	int r = fe_map_lookup(t->root, resolve_tab, t, dev, ino, &s);

	if (r < 0 || r != (int)found) {
		printf("# %llu:%llu: reader %d, table %d\n",
		       (unsigned long long)dev, (unsigned long long)ino, r,
		       found);
		return 0;
	}
	if (found &&
	    (s.uid != rec.uid || s.gid != rec.gid || s.mode != rec.mode ||
	     s.rdev != rec.rdev || (s.flags & FE_REC_FLAGS) != rec.flags)) {
		printf("# %llu:%llu: values differ\n", (unsigned long long)dev,
		       (unsigned long long)ino);
		return 0;
	}
	return 1;
}

#define AGREE_KEYS 30000

/* From a table of init slots (a capacity not a power of two too: homes
 * are scaled, probes wrap at cap). */
static void test_agree(size_t init)
{
	static unsigned char present[AGREE_KEYS];
	struct fe_tab t;
	uint64_t rng = 42;
	long checks = 0, bad = 0, mid_rehash = 0, rehashes = 0;
	bool was = false;

	memset(present, 0, sizeof(present));
	printf("# agree: from %zu slots\n", init);
	CHECK("agree: init", fe_tab_init(&t, init) == 0);
	for (int i = 0; i < 4 * AGREE_KEYS; i++) {
		int k = (int)(xorshift(&rng) % AGREE_KEYS);
		struct fe_rec r = consistent((uint32_t)k);

		if (present[k] && xorshift(&rng) % 3 == 0) {
			fe_tab_del(&t, 9, (uint64_t)k);
			present[k] = 0;
		} else {
			fe_tab_put(&t, 9, (uint64_t)k, &r, NULL);
			present[k] = 1;
		}
		if (fe_tab_rehashing(&t)) {
			/* Every key, at the start of each rehash and every
			 * 32 ops during it. */
			if (!was || mid_rehash % 32 == 0)
				for (int q = 0; q < AGREE_KEYS; q++) {
					checks++;
					bad += !agrees(&t, 9, (uint64_t)q);
				}
			mid_rehash++;
			if (!was)
				rehashes++;
		}
		was = fe_tab_rehashing(&t);
		/* The key touched, and a few others. */
		for (int j = 0; j < 4; j++) {
			int q = j ? (int)(xorshift(&rng) % AGREE_KEYS) : k;

			checks++;
			bad += !agrees(&t, 9, (uint64_t)q);
		}
	}
	for (int k = 0; k < AGREE_KEYS; k++) {
		checks++;
		bad += !agrees(&t, 9, (uint64_t)k);
	}
	printf("# agree: %ld checks, %ld during a rehash, %ld rehashes\n",
	       checks, mid_rehash, rehashes);
	CHECK("agree: rehashes happened and lookups ran during them",
	      rehashes >= 5 && mid_rehash > 200);
	CHECK("agree: the reader agrees with fe_tab_find after every op",
	      bad == 0);
	fe_tab_free(&t);
}

/* --- readers with their own mappings while the table grows ------------ */

#define GROW_KEYS    200000
#define GROW_READERS 2
#define GROW_MAPS    64

static struct fe_tab grow_tab;
static const struct fe_map_root *grow_root;
static struct {
	uint64_t id;
	const struct fe_map_arr *a;
	size_t size;
} grow_maps[GROW_MAPS];
static atomic_int grow_nmaps;
static atomic_long grow_done; /* keys [0, grow_done) are in the table */
static atomic_int grow_stop;

static const struct fe_map_arr *resolve_grow(uint64_t id, void *ctx)
{
	int n = atomic_load_explicit(&grow_nmaps, memory_order_acquire);

	(void)ctx;
	while (n-- > 0)
		if (grow_maps[n].id == id)
			return grow_maps[n].a;
	return NULL;
}

/* Map, read-only, every array fe_tab_map_fds() gives that is new. */
static int map_new_arrays(void)
{
	int fds[FE_MAP_FDS];
	int n = fe_tab_map_fds(&grow_tab, fds);

	if (n < 3)
		return -1;
	/* root, the pending counters, then the arrays */
	for (int i = 2; i < n; i++) {
		struct stat st;
		const struct fe_map_arr *a;
		int k = atomic_load(&grow_nmaps);

		if (fstat(fds[i], &st) < 0 || k == GROW_MAPS)
			return -1;
		a = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED,
			 fds[i], 0);
		if (a == MAP_FAILED)
			return -1;
		if (resolve_grow(a->id, NULL)) {
			munmap((void *)a, (size_t)st.st_size);
			continue;
		}
		grow_maps[k].id = a->id;
		grow_maps[k].a = a;
		grow_maps[k].size = (size_t)st.st_size;
		atomic_store_explicit(&grow_nmaps, k + 1, memory_order_release);
	}
	return 0;
}

struct grow_res {
	atomic_long reads;
	long missed;
	long wrong;
	long retried;
};

static void *grow_reader(void *arg)
{
	struct grow_res *res = arg;
	uint64_t rng = 77 + (uintptr_t)arg;

	while (!atomic_load(&grow_stop)) {
		long done = atomic_load(&grow_done);
		uint64_t k;
		struct fe_slot s;
		int r;

		if (done == 0)
			continue;
		k = xorshift(&rng) % (uint64_t)done;
		r = fe_map_lookup(grow_root, resolve_grow, NULL, 5, k, &s);
		if (r == -ENOENT || r == -EAGAIN) {
			/* A new array not mapped here yet, or busy: the shim
			 * asks again or asks the daemon. */
			res->retried++;
			continue;
		}
		/* A scheduler that runs one thread at a time (valgrind's)
		 * must get to the writer too. */
		if ((atomic_fetch_add(&res->reads, 1) + 1) % 4096 == 0)
			sched_yield();
		if (r != 1)
			res->missed++;
		else if (s.uid != k || s.gid != k)
			res->wrong++;
	}
	return NULL;
}

static void test_grow_concurrent(void)
{
	pthread_t rd[GROW_READERS];
	struct grow_res res[GROW_READERS];
	long reads = 0, missed = 0, wrong = 0, retried = 0;
	uint64_t cur_id;
	int fds[FE_MAP_FDS], seals;

	memset(res, 0, sizeof(res));
	CHECK("grow: init 8", fe_tab_init(&grow_tab, 8) == 0);
	CHECK("grow: root, the counters and cur have fds",
	      fe_tab_map_fds(&grow_tab, fds) == 3);
	CHECK("grow: the counters' fd is read-write",
	      (fcntl(fds[1], F_GETFL) & O_ACCMODE) == O_RDWR);
	fds[1] = fds[2];
	seals = fcntl(fds[1], F_GET_SEALS);
	CHECK("grow: the array memfd is sealed against shrink and grow",
	      seals >= 0 && (seals & F_SEAL_SHRINK) && (seals & F_SEAL_GROW));
	CHECK("grow: the fd readers get is read-only",
	      (fcntl(fds[1], F_GETFL) & O_ACCMODE) == O_RDONLY &&
		  mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fds[1],
		       0) == MAP_FAILED);
	grow_root =
	    mmap(NULL, sizeof(*grow_root), PROT_READ, MAP_SHARED, fds[0], 0);
	CHECK("grow: root maps",
	      grow_root != MAP_FAILED && grow_root->magic == FE_MAP_MAGIC_ROOT);
	CHECK("grow: cur maps", map_new_arrays() == 0);
	for (int i = 0; i < GROW_READERS; i++)
		pthread_create(&rd[i], NULL, grow_reader, &res[i]);
	cur_id = grow_tab.cur.hdr->id;
	for (long k = 0; k < GROW_KEYS; k++) {
		struct fe_rec r = {
		    .uid = (uint32_t)k, .gid = (uint32_t)k, .mode = S_IFREG};

		if (fe_tab_put(&grow_tab, 5, (uint64_t)k, &r, NULL) < 0)
			break;
		if (grow_tab.cur.hdr->id != cur_id) {
			cur_id = grow_tab.cur.hdr->id;
			if (map_new_arrays() < 0)
				break;
		}
		atomic_store(&grow_done, k + 1);
		/* Under valgrind, which runs one thread at a time, the
		 * readers get a turn only when the writer gives one. */
		if (k % 256 == 255)
			sched_yield();
	}
	atomic_store(&grow_stop, 1);
	for (int i = 0; i < GROW_READERS; i++) {
		pthread_join(rd[i], NULL);
		reads += atomic_load(&res[i].reads);
		missed += res[i].missed;
		wrong += res[i].wrong;
		retried += res[i].retried;
	}
	printf("# grow: %d arrays, %ld reads, %ld retried\n",
	       atomic_load(&grow_nmaps), reads, retried);
	CHECK("grow: all keys went in", atomic_load(&grow_done) == GROW_KEYS);
	CHECK("grow: the table grew many times under the readers",
	      atomic_load(&grow_nmaps) >= 10 && reads > 1000);
	CHECK("grow: no reader missed a record during growth", missed == 0);
	CHECK("grow: no reader saw a wrong value", wrong == 0);
	CHECK("grow: superseded arrays say so",
	      grow_maps[0].a->superseded == 1);
	for (int i = 0; i < atomic_load(&grow_nmaps); i++)
		munmap((void *)grow_maps[i].a, grow_maps[i].size);
	munmap((void *)grow_root, sizeof(*grow_root));
	fe_tab_free(&grow_tab);
}

/* --- the rule both sides apply ---------------------------------------- */

static void test_rules(void)
{
	struct fe_slot dev = {.uid = 1,
			      .gid = 2,
			      .mode = S_IFCHR | 0620,
			      .rdev = 0x501,
			      .flags = FE_SLOT_USED | FE_REC_MODE_SET |
				       FE_REC_DEV_SET};
	struct fe_slot own = {
	    .uid = 7, .gid = 8, .mode = S_IFREG, .flags = FE_SLOT_USED};
	struct fe_view v;

	CHECK("rules: a faked device over a regular file is live",
	      !fe_rec_stale(dev.mode, dev.flags, 0, S_IFREG | 0644, 0));
	CHECK("rules: a faked device seen with its faked type is live",
	      !fe_rec_stale(dev.mode, dev.flags, 0, S_IFCHR | 0644, 0));
	CHECK("rules: a faked device over a directory is stale",
	      fe_rec_stale(dev.mode, dev.flags, 0, S_IFDIR | 0755, 0));
	CHECK("rules: a file record over a directory is stale",
	      fe_rec_stale(own.mode, own.flags, 0, S_IFDIR | 0755, 0));
	CHECK("rules: another birth time is stale",
	      fe_rec_stale(own.mode, own.flags, 5, S_IFREG | 0644, 6));
	CHECK("rules: the same birth time is live",
	      !fe_rec_stale(own.mode, own.flags, 5, S_IFREG | 0644, 5));
	CHECK("rules: an unknown birth time on either side is the type check",
	      !fe_rec_stale(own.mode, own.flags, 0, S_IFREG | 0644, 6) &&
		  !fe_rec_stale(own.mode, own.flags, 5, S_IFREG | 0644, 0) &&
		  fe_rec_stale(own.mode, own.flags, 5, S_IFDIR | 0755, 0));
	CHECK("rules: a birth-time tag is never 0 and tells nanoseconds apart",
	      fe_btag(0, 0) != 0 && fe_btag(1700000000, 1) !=
					    fe_btag(1700000000, 2));
	fe_rec_view(&dev, S_IFREG | 0600, 1000, 1000, false, &v);
	CHECK("rules: a device shows its type, mode and rdev",
	      v.uid == 1 && v.gid == 2 && v.mode == (S_IFCHR | 0620) && v.dev &&
		  v.rdev == 0x501);
	fe_rec_view(&own, S_IFREG | 0640, 1000, 1000, false, &v);
	CHECK("rules: an owner record keeps the real mode",
	      v.uid == 7 && v.gid == 8 && v.mode == (S_IFREG | 0640) &&
		  !v.dev && v.rdev == 0);
	fe_rec_view(NULL, S_IFREG | 0640, 1000, 1001, false, &v);
	CHECK("rules: no record is 0:0",
	      v.uid == 0 && v.gid == 0 && v.mode == (S_IFREG | 0640));
	fe_rec_view(NULL, S_IFREG | 0640, 1000, 1001, true, &v);
	CHECK("rules: no record under -u is the real owner",
	      v.uid == 1000 && v.gid == 1001);
}

/* root->ndev counts the records with DEV_SET, through replace and
 * delete. */
static void test_ndev(void)
{
	struct fe_tab t;
	struct fe_rec dev = {.mode = S_IFCHR | 0600,
			     .flags = FE_REC_DEV_SET | FE_REC_MODE_SET};
	struct fe_rec own = {.uid = 1, .mode = S_IFREG};

	CHECK("ndev: init", fe_tab_init(&t, 8) == 0 && t.root->ndev == 0);
	fe_tab_put(&t, 1, 1, &dev, NULL);
	fe_tab_put(&t, 1, 2, &dev, NULL);
	fe_tab_put(&t, 1, 3, &own, NULL);
	CHECK("ndev: two devices", t.root->ndev == 2);
	fe_tab_put(&t, 1, 2, &dev, NULL);
	CHECK("ndev: replacing a device with a device", t.root->ndev == 2);
	fe_tab_put(&t, 1, 2, &own, NULL);
	CHECK("ndev: replacing a device with a file", t.root->ndev == 1);
	fe_tab_del(&t, 1, 3);
	CHECK("ndev: deleting a file", t.root->ndev == 1);
	fe_tab_del(&t, 1, 1);
	CHECK("ndev: deleting the last device", t.root->ndev == 0);
	for (uint64_t i = 10; i < 5000; i++)
		fe_tab_put(&t, 1, i, &dev, NULL);
	while (fe_tab_rehash_step(&t, 64))
		;
	CHECK("ndev: growth moves records, not the count",
	      t.root->ndev == 4990);
	fe_tab_free(&t);
}

/* root->nsgid counts the directory records whose faked mode is
 * set-gid: not a set-gid file, not a real mode, through replace, delete
 * and growth. */
static void test_nsgid(void)
{
	struct fe_tab t;
	struct fe_rec sgid = {
	    .gid = 50, .mode = S_IFDIR | 02775, .flags = FE_REC_MODE_SET};
	struct fe_rec plain = {
	    .gid = 50, .mode = S_IFDIR | 0775, .flags = FE_REC_MODE_SET};
	struct fe_rec file = {.mode = S_IFREG | 02755,
			      .flags = FE_REC_MODE_SET};
	struct fe_rec owner = {.gid = 50, .mode = S_IFDIR | 02775};

	CHECK("nsgid: init", fe_tab_init(&t, 8) == 0 && t.root->nsgid == 0);
	fe_tab_put(&t, 1, 1, &sgid, NULL);
	fe_tab_put(&t, 1, 2, &file, NULL);
	fe_tab_put(&t, 1, 3, &owner, NULL);
	CHECK("nsgid: a set-gid file and a mode not faked are not counted",
	      t.root->nsgid == 1);
	fe_tab_put(&t, 1, 1, &sgid, NULL);
	CHECK("nsgid: replacing it with itself", t.root->nsgid == 1);
	fe_tab_put(&t, 1, 1, &plain, NULL);
	CHECK("nsgid: chmod g-s", t.root->nsgid == 0);
	fe_tab_put(&t, 1, 1, &sgid, NULL);
	fe_tab_del(&t, 1, 1);
	CHECK("nsgid: deleting it", t.root->nsgid == 0);
	for (uint64_t i = 10; i < 5000; i++)
		fe_tab_put(&t, 1, i, &sgid, NULL);
	while (fe_tab_rehash_step(&t, 64))
		;
	CHECK("nsgid: growth moves records, not the count",
	      t.root->nsgid == 4990);
	fe_tab_free(&t);
}

/* root->nblind counts the records without a birth time, through
 * replace (either way), delete and growth. */
static void test_nblind(void)
{
	struct fe_tab t;
	struct fe_rec blind = {.uid = 5, .mode = S_IFREG | 0644};
	struct fe_rec born = {.uid = 5, .mode = S_IFREG | 0644, .btag = 77};

	CHECK("nblind: init", fe_tab_init(&t, 8) == 0 && t.root->nblind == 0);
	fe_tab_put(&t, 1, 1, &blind, NULL);
	fe_tab_put(&t, 1, 2, &born, NULL);
	CHECK("nblind: a record with a birth time is not counted",
	      t.root->nblind == 1);
	fe_tab_put(&t, 1, 1, &blind, NULL);
	CHECK("nblind: replacing it with itself", t.root->nblind == 1);
	fe_tab_put(&t, 1, 1, &born, NULL);
	CHECK("nblind: given a birth time", t.root->nblind == 0);
	fe_tab_put(&t, 1, 2, &blind, NULL);
	CHECK("nblind: losing one", t.root->nblind == 1);
	fe_tab_del(&t, 1, 2);
	CHECK("nblind: deleting it", t.root->nblind == 0);
	for (uint64_t i = 10; i < 5000; i++)
		fe_tab_put(&t, 1, i, &blind, NULL);
	while (fe_tab_rehash_step(&t, 64))
		;
	CHECK("nblind: growth moves records, not the count",
	      t.root->nblind == 4990);
	fe_tab_free(&t);
}

/* The MAP request: checked like any other, answered with the fds'
 * count; the root says whether files without a record show their real
 * owner. */
static void test_map_op(void)
{
	struct fe_req req = {.op = FE_OP_MAP, .version = FE_PROTO_VERSION};
	struct fe_sess sess = {0};
	struct fe_srv srv;
	struct fe_rep rep;
	char buf[sizeof(req) + 8];

	CHECK("map op: a bare MAP is valid",
	      fe_req_check(&req, sizeof(req), NULL) == 0);
	req.flags = FE_F_UID;
	CHECK("map op: MAP takes no flags",
	      fe_req_check(&req, sizeof(req), NULL) < 0);
	req.flags = 0;
	req.tail_len = 3;
	memcpy(buf, &req, sizeof(req));
	memcpy(buf + sizeof(req), "/a", 3);
	CHECK("map op: MAP takes no tail",
	      fe_req_check(buf, sizeof(req) + 3, NULL) < 0);
	req.tail_len = 0;
	CHECK("map op: srv init", fe_srv_init(&srv, false) == 0);
	CHECK("map op: root shows 0:0 for files without a record",
	      !(srv.tab.root->flags & FE_MAP_UNKNOWN_REAL));
	fe_serve_req(&srv, &sess, &req, NULL, &rep);
	CHECK("map op: root, the counters and cur",
	      rep.err == 0 && rep.count[0] == 3);
	fe_srv_free(&srv);
	CHECK("map op: srv init -u", fe_srv_init(&srv, true) == 0);
	CHECK("map op: root says -u",
	      srv.tab.root->flags & FE_MAP_UNKNOWN_REAL);
	fe_srv_free(&srv);
}

int main(void)
{
	test_rules();
	test_map_op();
	test_ndev();
	test_nsgid();
	test_nblind();
	test_agree(8);
	test_agree(9);
	test_torn();
	test_grow_concurrent();
	UNIT_EXIT();
}
