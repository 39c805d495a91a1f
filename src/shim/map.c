/*
 * The shared table, read in place: a stat asks no one when the mapping
 * can tell (fakeenv/map.h has the layout and the seq protocol).  The
 * memfds come from the daemon on first need (MAP); they are mapped
 * read-only and never unmapped, so a pointer read here stays valid in
 * every thread and signal handler, and after fork.  Mappings are only
 * ever added, under conn.c's lock, by the process that owns the globals;
 * a vfork child reads what its parent published and adds nothing.
 */
#include "shim.h"

#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "common/mapread.h"
#include "fakeenv/env.h"

/* Arrays one process maps at most.  The table doubles as it grows, so
 * this is reached only by a long-lived process in a session that also
 * rebuilt its table many times (tombstone clean-ups); it then asks the
 * daemon, as without a mapping. */
#define MAP_MAX 24

struct marr {
	uint64_t id;		    /* the array's id */
	const struct fe_map_arr *a; /* its mapping */
};

static struct marr marrs[MAP_MAX]; /* [0, marr_n) are published */
static atomic_int marr_n;
static _Atomic(const struct fe_map_root *) mroot;
static _Atomic(uint32_t *) mpend; /* the pending counters, read-write */
static atomic_int map_off; /* 1: this process asks the daemon instead */

static const struct fe_map_arr *resolve(uint64_t id, void *ctx)
{
	int n = atomic_load_explicit(&marr_n, memory_order_acquire);

	(void)ctx;
	/* Newest first: cur is usually the last one mapped. */
	while (n-- > 0)
		if (marrs[n].id == id)
			return marrs[n].a;
	return NULL;
}

/* Map fd (read-write when rw) if it is a sealed memfd of at least min
 * bytes.  Returns the mapping and its size in *size, or NULL. */
static void *map_fd_as(int fd, size_t min, size_t *size, bool rw)
{
	struct stat st;
	void *p;
	int seals;

	if (fe_sys_fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size < 0 || (size_t)st.st_size < min)
		return NULL;
	/* Without these seals the file could shrink under the mapping and
	 * a stat would die of SIGBUS. */
	seals = (int)fe_syscall(SYS_fcntl, fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK))
		return NULL;
	p = mmap(NULL, (size_t)st.st_size,
		 rw ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	*size = (size_t)st.st_size;
	return p;
}

static const void *map_fd(int fd, size_t min, size_t *size)
{
	return map_fd_as(fd, min, size, false);
}

/* fe_conn_map()'s install: map what the daemon sent.  Runs under the
 * connection's lock with signals blocked.  Returns 0 or -EINVAL. */
static int install(const int *fds, int n)
{
	const struct fe_map_root *root = atomic_load(&mroot);
	uint32_t *pend = atomic_load(&mpend);
	size_t size;
	int i = 0, k;

	if (n < 3)
		return -EINVAL;
	if (!root) {
		root = map_fd(fds[0], sizeof(*root), &size);
		if (!root)
			return -EINVAL;
		if (root->magic != FE_MAP_MAGIC_ROOT ||
		    root->version != FE_MAP_VERSION) {
			munmap((void *)root, size);
			return -EINVAL;
		}
	}
	if (!pend) {
		/* Without them this process cannot go one-way, nor read a
		 * table that others' one-way changes race: none of it. */
		pend = map_fd_as(fds[1], FE_PEND_SIZE,
				 &size, true);
		if (!pend)
			return -EINVAL;
	}
	for (i = 2; i < n; i++) {
		const struct fe_map_arr *a = map_fd(fds[i], sizeof(*a), &size);
		uint64_t cap, id;
		bool ok;

		if (!a)
			return -EINVAL;
		id = a->id;
		cap = a->cap;
		ok = a->magic == FE_MAP_MAGIC_ARR &&
		     a->version == FE_MAP_VERSION && cap >= 1 &&
		     cap <= FE_MAP_CAP_MAX &&
		     cap <= size / sizeof(struct fe_slot) &&
		     fe_map_arr_size(cap) <= size;
		if (!ok || resolve(id, NULL)) {
			/* Mapped already (old during a rehash), or bad. */
			munmap((void *)a, size);
			if (ok)
				continue;
			return -EINVAL;
		}
		k = atomic_load(&marr_n);
		if (k == MAP_MAX) {
			munmap((void *)a, size);
			return -EINVAL;
		}
		marrs[k].id = a->id;
		marrs[k].a = a;
		atomic_store_explicit(&marr_n, k + 1, memory_order_release);
	}
	atomic_store_explicit(&mpend, pend, memory_order_release);
	atomic_store_explicit(&mroot, root, memory_order_release);
	return 0;
}

/* Ask the daemon for its memfds.  Returns 0, or -1 when this process
 * goes without the mapping (for good, unless it is a vfork child). */
static int fetch(void)
{
	const char *off = fe_env_initial(FE_ENV_NO_MAP);
	int r;

	if (off && off[0] == '1')
		r = -EINVAL;
	else
		r = fe_conn_fds(FE_OP_MAP, install);
	if (r == 0)
		return 0;
	if (r != -ESRCH)
		atomic_store(&map_off, 1);
	return -1;
}

void fe_map_forget(void)
{
	/* The old mappings stay mapped (a reader may be in them); they are
	 * only no longer found.  The next lookup asks for the new ones. */
	atomic_store(&mroot, NULL);
	atomic_store(&mpend, NULL);
	atomic_store(&marr_n, 0);
}

void fe_map_prefetch(void)
{
	if (!atomic_load(&map_off) && !atomic_load(&mroot))
		(void)fetch();
}

/* Passes of pend_settled() at most: a few microseconds while the daemon
 * takes what the rings hold, and what a counter that a killed writer
 * left raised costs each read of its bucket before the read asks. */
#define SETTLE_TRIES 64

/*
 * Whether counter c is 0, or becomes 0 soon: while the daemon polls the
 * rings (fakeenv/map.h) a change in flight lands within microseconds,
 * sooner than a GET would come back.  False: ask the daemon.
 */
static bool pend_settled(uint32_t *pend, const uint32_t *c)
{
	for (int i = 0; i < SETTLE_TRIES; i++) {
		if (!__atomic_load_n(c, __ATOMIC_ACQUIRE))
			return true;
		if (!fe_ring_daemon_awake(pend))
			return false;
		if (i < 8)
			fe_map_relax();
		else
			sched_yield();
	}
	return false;
}

struct look {
	const struct fe_map_root *root;
	uint64_t dev, ino;
};

static int look_up(void *ctx, struct fe_slot *rec)
{
	const struct look *l = ctx;
	int r = fe_map_lookup(l->root, resolve, NULL, l->dev, l->ino, rec);

	if (r == 0)
		rec->flags = 0;
	return r < 0 ? -1 : r;
}

/*
 * The record at (dev, ino) as the table shows it (1, 0: none), or as it
 * will once the changes in flight in its bucket are in: this process's
 * own laid over it (fe_ring_overlay()), or (wait) none left once the
 * daemon took what it had.  -ENOENT: an array root names is not mapped
 * here; -1: ask the daemon.
 */
static int lookup(const struct fe_map_root *root, uint32_t *pend,
		  uint64_t dev, uint64_t ino, bool wait, struct fe_slot *rec)
{
	struct look l = { root, dev, ino };
	uint32_t *c = pend ? fe_pend_at(pend, dev, ino) : NULL;
	int r;

	/* A change to this bucket is on its way to the table: the daemon
	 * answers once it is in (fakeenv/map.h). */
	if (c && __atomic_load_n(c, __ATOMIC_ACQUIRE)) {
		r = fe_ring_overlay(pend, dev, ino,
				    (root->flags & FE_MAP_UNKNOWN_REAL) != 0,
				    look_up, &l, rec);
		if (r >= 0)
			return r;
		if (!wait || !pend_settled(pend, c))
			return -1;
	}
	return fe_map_lookup(root, resolve, NULL, dev, ino, rec);
}

static int view(uint64_t dev, uint64_t ino, uint32_t btag, uint32_t real_mode,
		uint32_t real_uid, uint32_t real_gid, bool wait,
		struct fe_view *v)
{
	const struct fe_map_root *root;
	struct fe_slot rec;
	int r = -ENOENT;

	if (atomic_load_explicit(&map_off, memory_order_relaxed))
		return -1;
	root = atomic_load_explicit(&mroot, memory_order_acquire);
	for (int attempt = 0; attempt < 2 && r == -ENOENT; attempt++) {
		if ((!root || attempt > 0) && fetch() < 0)
			return -1;
		root = atomic_load_explicit(&mroot, memory_order_acquire);
		r = lookup(root,
			   atomic_load_explicit(&mpend, memory_order_acquire),
			   dev, ino, wait, &rec);
	}
	if (r < 0)
		return -1;
	if (r == 1 &&
	    fe_rec_stale(rec.mode, rec.flags, rec.btag, real_mode, btag))
		return -1;
	fe_rec_view(r ? &rec : NULL, real_mode, real_uid, real_gid,
		    (root->flags & FE_MAP_UNKNOWN_REAL) != 0, v);
	return r;
}

int fe_map_view(uint64_t dev, uint64_t ino, uint32_t btag, uint32_t real_mode,
		uint32_t real_uid, uint32_t real_gid, struct fe_view *v)
{
	return view(dev, ino, btag, real_mode, real_uid, real_gid, true, v);
}

int fe_map_view_now(const struct stat *st, uint32_t btag, struct fe_view *v)
{
	return view(st->st_dev, st->st_ino, btag, st->st_mode, st->st_uid,
		    st->st_gid, false, v);
}

uint32_t *fe_map_pend(void)
{
	uint32_t *pend;

	if (atomic_load_explicit(&map_off, memory_order_relaxed))
		return NULL;
	pend = atomic_load_explicit(&mpend, memory_order_acquire);
	if (!pend && fetch() == 0)
		pend = atomic_load_explicit(&mpend, memory_order_acquire);
	return pend;
}

uint32_t *fe_map_pend_mapped(void)
{
	return atomic_load_explicit(&mpend, memory_order_acquire);
}

uint32_t *fe_map_pend_raise(uint64_t dev, uint64_t ino)
{
	uint32_t *pend = fe_map_pend(), *c, zero = 0;

	if (!pend)
		return NULL;
	c = fe_pend_at(pend, dev, ino);
	return __atomic_compare_exchange_n(c, &zero, 1, false, __ATOMIC_SEQ_CST,
					   __ATOMIC_RELAXED) ?
		       c :
		       NULL;
}

void fe_map_pend_undo(uint32_t *c)
{
	__atomic_fetch_sub(c, 1, __ATOMIC_RELEASE);
}

/* The root of the table, mapped now if it was not yet, or NULL without
 * the mapping. */
static const struct fe_map_root *root_now(void)
{
	const struct fe_map_root *root;

	if (atomic_load_explicit(&map_off, memory_order_relaxed))
		return NULL;
	root = atomic_load_explicit(&mroot, memory_order_acquire);
	if (!root && fetch() == 0)
		root = atomic_load_explicit(&mroot, memory_order_acquire);
	return root;
}

bool fe_map_has_dev(void)
{
	const struct fe_map_root *root = root_now();

	return root && __atomic_load_n(&root->ndev, __ATOMIC_RELAXED) != 0;
}

int fe_map_xattrs(void)
{
	const struct fe_map_root *root = root_now();

	if (!root)
		return -1;
	return __atomic_load_n(&root->nxattr, __ATOMIC_RELAXED) != 0;
}

int fe_map_sgid_dirs(void)
{
	const struct fe_map_root *root = root_now();

	if (!root)
		return -1;
	return __atomic_load_n(&root->nsgid, __ATOMIC_RELAXED) != 0;
}

int fe_map_blind(void)
{
	const struct fe_map_root *root = root_now();

	if (!root)
		return -1;
	return __atomic_load_n(&root->nblind, __ATOMIC_RELAXED) != 0;
}
