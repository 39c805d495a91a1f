/*
 * The record table; see table.h for the invariants.  This file owns the
 * slot arrays and the arena; it never logs and never exits.  Growth is
 * incremental: a rehash allocates the new array and then every insert and
 * delete moves FE_TAB_STEP slots of the old one (the daemon's idle loop
 * moves more), so no single operation pays for the whole table.
 *
 * Trust.  The slots, and so every field the daemon reads back from them
 * (flags, keys, path offsets, seq), live in memfds shared with every
 * process of the session.  The memfds readers get are sealed against
 * writing (fe_shm_alloc() in shm.c), so no process but the daemon can change
 * them; all the same, nothing read back from a slot is trusted with
 * memory: a path offset and the lengths it leads to are checked against
 * the arena (fe_arena_entry(), fe_arena_str()), a probe ends after cap slots
 * whatever the flags say, and a count is never taken below 0.  A lie
 * there costs the record its path hint or its xattrs, never a read out
 * of bounds or a loop without end.  The counts of used slots and
 * tombstones and each array's capacity are the daemon's own, in private
 * memory.
 */
#include "table.h"
#include "table_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/mapread.h"
#include "common/util.h"

#define TAB_MIN_CAP 8u
/* Slots an array may have: what a reader's home takes (fe_map_home()),
 * and what memory can hold. */
#define CAP_MAX ((size_t)(FE_MAP_CAP_MAX < SIZE_MAX / 2 / sizeof(struct fe_slot) ? \
			  FE_MAP_CAP_MAX : SIZE_MAX / 2 / sizeof(struct fe_slot)))

#define PEND_SIZE FE_PEND_SIZE

/* The same bracket around a change of the root's cur_id/old_id. */
static void root_publish(struct fe_tab *t)
{
	struct fe_map_root *r = t->root;

	__atomic_store_n(&r->seq, r->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&r->cur_id, t->cur.hdr->id, __ATOMIC_RELAXED);
	__atomic_store_n(&r->old_id, t->old.hdr ? t->old.hdr->id : 0,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&r->seq, r->seq + 1, __ATOMIC_RELEASE);
}

/* Count a USED slot with these flags, mode and btag in or out of root's
 * ndev, nxattr, nsgid and nblind: readers skip device lookups (readdir's
 * d_type) while ndev is 0, xattr lookups while nxattr is, the lookup of a
 * new file's parent while nsgid is, and a new file's look at its inode
 * while nblind is.  Written before the slot, and before the reply that
 * makes it visible. */
static void flag_count(struct fe_tab *t, uint32_t flags, uint32_t mode,
		       uint32_t btag, int delta)
{
	if (!(flags & FE_SLOT_USED))
		return;
	if (!btag)
		__atomic_store_n(&t->root->nblind,
				 t->root->nblind + (uint64_t)(int64_t)delta,
				 __ATOMIC_RELAXED);
	if (flags & FE_REC_DEV_SET)
		__atomic_store_n(&t->root->ndev,
				 t->root->ndev + (uint64_t)(int64_t)delta,
				 __ATOMIC_RELAXED);
	if (flags & FE_REC_XATTR)
		__atomic_store_n(&t->root->nxattr,
				 t->root->nxattr + (uint64_t)(int64_t)delta,
				 __ATOMIC_RELAXED);
	if (fe_rec_sgid_dir(mode, flags))
		__atomic_store_n(&t->root->nsgid,
				 t->root->nsgid + (uint64_t)(int64_t)delta,
				 __ATOMIC_RELAXED);
}

/* Allocate an array of cap slots, all EMPTY.  Returns 0 or -ENOMEM. */
static int arr_alloc(struct fe_tab *t, struct fe_tab_arr *a, size_t cap)
{
	struct fe_map_arr *h;
	int fd;

	h = fe_shm_alloc(fe_map_arr_size(cap), "fakeenv-slots", &fd, false);
	if (!h)
		return -ENOMEM;
	h->magic = FE_MAP_MAGIC_ARR;
	h->id = ++t->next_id;
	h->cap = cap;
	h->version = FE_MAP_VERSION;
	a->hdr = h;
	a->fd = fd;
	a->slots = h->slots;
	a->cap = cap;
	a->used = 0;
	a->tombs = 0;
	return 0;
}

/* Unmap an array; readers that mapped it keep their copy of the memfd. */
static void arr_free(struct fe_tab_arr *a)
{
	if (a->hdr)
		fe_shm_free(a->hdr, fe_map_arr_size(a->cap), a->fd);
	memset(a, 0, sizeof(*a));
	a->fd = -1;
}

/* The slot after i on a probe path. */
static size_t next_slot(const struct fe_tab_arr *a, size_t i)
{
	return i + 1 < a->cap ? i + 1 : 0;
}

/* The USED slot holding (dev, ino) in a, or NULL.  Ends at an EMPTY slot,
 * which every array keeps, and after cap slots all the same. */
static struct fe_slot *arr_find(const struct fe_tab_arr *a, uint64_t dev,
				uint64_t ino, uint64_t h)
{
	size_t i = fe_map_home(h, a->cap);

	for (size_t n = 0; n < a->cap; n++, i = next_slot(a, i)) {
		struct fe_slot *s = &a->slots[i];

		if (!(s->flags & (FE_SLOT_USED | FE_SLOT_TOMB)))
			return NULL;
		if ((s->flags & FE_SLOT_USED) && s->dev == dev && s->ino == ino)
			return s;
	}
	return NULL;
}

/* The first free (TOMB or EMPTY) slot on h's probe path in a, counted as
 * used from now on.  The key must be absent from a and a must have room
 * (by the counts; slots that all claim to be USED give the first one). */
static struct fe_slot *arr_place(struct fe_tab_arr *a, uint64_t h)
{
	size_t home = fe_map_home(h, a->cap), i = home, n = 0;

	while ((a->slots[i].flags & FE_SLOT_USED) && ++n < a->cap)
		i = next_slot(a, i);
	if (a->slots[i].flags & FE_SLOT_USED)
		i = home;
	else if ((a->slots[i].flags & FE_SLOT_TOMB) && a->tombs)
		a->tombs--;
	a->used++;
	return &a->slots[i];
}

/* The slot holding (dev, ino) in old or cur, or NULL; *in_old (if given)
 * says which.  Old first: see the move order in table.h. */
static struct fe_slot *find_both(const struct fe_tab *t, uint64_t dev,
				 uint64_t ino, bool *in_old)
{
	uint64_t h = fe_hash_key(dev, ino);
	struct fe_slot *s = NULL;

	if (t->old.used)
		s = arr_find(&t->old, dev, ino, h);
	if (in_old)
		*in_old = s != NULL;
	return s ? s : arr_find(&t->cur, dev, ino, h);
}

int fe_tab_init(struct fe_tab *t, size_t min_cap)
{
	size_t cap = min_cap > TAB_MIN_CAP ? min_cap : TAB_MIN_CAP;
	int r;

	memset(t, 0, sizeof(*t));
	t->cur.fd = t->old.fd = t->root_fd = t->pend_fd = -1;
	if (cap > CAP_MAX)
		return -ENOMEM;
	r = fe_arena_init(&t->arena);
	if (r < 0)
		return r;
	t->root = fe_shm_alloc(sizeof(*t->root), "fakeenv-root", &t->root_fd,
			       false);
	if (!t->root) {
		r = -ENOMEM;
		goto out_free_arena;
	}
	/* The pending counters, which every reader maps read-write. */
	t->pend = fe_shm_alloc(PEND_SIZE, "fakeenv-pend", &t->pend_fd, true);
	if (!t->pend) {
		r = -ENOMEM;
		goto out_free_root;
	}
	r = arr_alloc(t, &t->cur, cap);
	if (r < 0)
		goto out_free_pend;
	t->root->magic = FE_MAP_MAGIC_ROOT;
	t->root->version = FE_MAP_VERSION;
	root_publish(t);
	return 0;
out_free_pend:
	fe_shm_free(t->pend, PEND_SIZE, t->pend_fd);
out_free_root:
	fe_shm_free(t->root, sizeof(*t->root), t->root_fd);
out_free_arena:
	fe_arena_free(&t->arena);
	return r;
}

void fe_tab_free(struct fe_tab *t)
{
	arr_free(&t->cur);
	arr_free(&t->old);
	fe_shm_free(t->root, sizeof(*t->root), t->root_fd);
	fe_shm_free(t->pend, PEND_SIZE, t->pend_fd);
	fe_arena_free(&t->arena);
	memset(t, 0, sizeof(*t));
	t->cur.fd = t->old.fd = t->root_fd = t->pend_fd = -1;
}

int fe_tab_map_fds(const struct fe_tab *t, int fds[FE_MAP_FDS])
{
	int n = 0;

	if (t->root_fd < 0 || t->pend_fd < 0 || t->cur.fd < 0 ||
	    (t->old.hdr && t->old.fd < 0))
		return -ENOSYS;
	fds[n++] = t->root_fd;
	fds[n++] = t->pend_fd;
	fds[n++] = t->cur.fd;
	if (t->old.hdr)
		fds[n++] = t->old.fd;
	return n;
}

static void slot_to_rec(const struct fe_slot *s, struct fe_rec *rec)
{
	rec->uid = s->uid;
	rec->gid = s->gid;
	rec->mode = s->mode;
	rec->flags = s->flags & FE_REC_FLAGS;
	rec->btag = s->btag;
	rec->rdev = s->rdev;
	rec->path = s->path;
}

bool fe_tab_next(const struct fe_tab *t, size_t *pos, uint64_t *dev,
		 uint64_t *ino, struct fe_rec *rec)
{
	size_t ncur = t->cur.slots ? t->cur.cap : 0;
	size_t nold = t->old.slots ? t->old.cap : 0;

	for (; *pos < ncur + nold; ++*pos) {
		const struct fe_slot *s = *pos < ncur ?
						  &t->cur.slots[*pos] :
						  &t->old.slots[*pos - ncur];

		if (s->flags & FE_SLOT_USED) {
			*dev = s->dev;
			*ino = s->ino;
			slot_to_rec(s, rec);
			++*pos;
			return true;
		}
	}
	return false;
}

bool fe_tab_find(const struct fe_tab *t, uint64_t dev, uint64_t ino,
		 struct fe_rec *rec)
{
	const struct fe_slot *s = find_both(t, dev, ino, NULL);

	if (!s)
		return false;
	slot_to_rec(s, rec);
	return true;
}

bool fe_tab_rehashing(const struct fe_tab *t)
{
	return t->old.slots != NULL;
}

bool fe_tab_rehash_step(struct fe_tab *t, size_t n)
{
	while (n-- > 0 && t->old.slots) {
		struct fe_slot *o = &t->old.slots[t->rehash_idx++];

		if (o->flags & FE_SLOT_USED) {
			struct fe_slot *d =
				arr_place(&t->cur, fe_hash_key(o->dev, o->ino));

			slot_begin(d);
			SET(d, dev, o->dev);
			SET(d, ino, o->ino);
			SET(d, rdev, o->rdev);
			SET(d, uid, o->uid);
			SET(d, gid, o->gid);
			SET(d, mode, o->mode);
			SET(d, btag, o->btag);
			SET(d, path, o->path);
			SET(d, flags, o->flags);
			slot_end(d);
			/* Copied first, tombstoned second: see table.h. */
			slot_begin(o);
			SET(o, flags, (uint16_t)FE_SLOT_TOMB);
			SET(o, path, 0);
			slot_end(o);
			if (t->old.used)
				t->old.used--;
			t->old.tombs++;
		}
		if (t->rehash_idx >= t->old.cap) {
			struct fe_tab_arr gone = t->old;

			/* Readers learn first that old is out, then that it
			 * is superseded; their mappings stay valid. */
			t->old.hdr = NULL;
			root_publish(t);
			__atomic_store_n(&gone.hdr->superseded, 1,
					 __ATOMIC_RELEASE);
			arr_free(&gone);
			memset(&t->old, 0, sizeof(t->old));
			t->old.fd = -1;
			t->rehash_idx = 0;
		}
	}
	return fe_tab_rehashing(t);
}

/*
 * Start a rehash: cur becomes old and a fresh cur of cap slots (a power
 * of two) is allocated.  Only when no rehash is in progress.  Returns 0
 * or -ENOMEM (nothing changed).
 */
static int rehash_into(struct fe_tab *t, size_t cap)
{
	struct fe_tab_arr fresh;
	int r;

	r = arr_alloc(t, &fresh, cap);
	if (r < 0)
		return r;
	t->old = t->cur;
	t->cur = fresh;
	t->rehash_idx = 0;
	root_publish(t);
	return 0;
}

/*
 * Start a rehash into an array twice the size, or the same size when
 * tombstones are most of the load (they are all left behind).  Returns 0
 * or -ENOMEM (nothing changed).
 */
static int rehash_start(struct fe_tab *t)
{
	size_t cap = t->cur.cap;

	if (t->cur.tombs <= t->cur.used) {
		if (cap > CAP_MAX / 2)
			return -ENOMEM;
		cap *= 2;
	}
	return rehash_into(t, cap);
}

/*
 * Make room in cur for one more record.  The load counts the records still
 * in old, which will all land in cur: cur.used + cur.tombs + old.used stays
 * at most 3/4 of cur's capacity, so finishing a rehash can never overfill
 * cur.  Returns 0 or -ENOMEM (no room, nothing else changed).
 */
static int make_room(struct fe_tab *t)
{
	for (;;) {
		size_t load = t->cur.used + t->cur.tombs + t->old.used;
		int r;

		if ((load + 1) * 4 <= t->cur.cap * 3)
			return 0;
		if (fe_tab_rehashing(t)) {
			/* Only a small table or many inserts between steps
			 * get here: finish, then grow again. */
			fe_tab_rehash_step(t, SIZE_MAX);
			continue;
		}
		r = rehash_start(t);
		if (r < 0)
			return r;
	}
}

/*
 * Growth by doubling while records arrive in the order of a bigger
 * table's slots (a journal is written in that order) is quadratic: the
 * records that come first are those whose homes are low in any table
 * (fe_map_home()), and so they all fall into the first slots of each
 * smaller one, which linear probing then walks as one cluster (grown
 * so, a 3,000,000-record journal took 22 s to load, against 0.9 s for
 * 750,000).  Linear probing's total work for a set of keys does not
 * depend on the order in which they are inserted into an array that does
 * not grow, so a load makes room for every record first; and it sizes
 * the array to its records, 2/3 full, not to the next power of two, so
 * that a loaded table holds 60 bytes of slots a record, and has room for
 * an eighth more before it grows.
 */
int fe_tab_reserve(struct fe_tab *t, size_t n)
{
	size_t cap = t->cur.cap, live;
	int r;

	fe_tab_rehash_step(t, SIZE_MAX);
	if (n > CAP_MAX - t->cur.used - t->cur.tombs)
		return -ENOMEM;
	if ((t->cur.used + t->cur.tombs + n) * 4 <= cap * 3)
		return 0;
	/* The tombstones stay behind. */
	live = t->cur.used + n;
	if (live > CAP_MAX / 3 * 2)
		return -ENOMEM;
	if (live + (live + 1) / 2 > cap)
		cap = live + (live + 1) / 2;
	r = rehash_into(t, cap);
	if (r < 0)
		return r;
	fe_tab_rehash_step(t, SIZE_MAX);
	return 0;
}

static int put_core(struct fe_tab *t, uint64_t dev, uint64_t ino,
		    const struct fe_rec *rec, const char *path, bool set_x,
		    const void *blk, size_t len)
{
	struct fe_slot *s;
	uint32_t off = 0, old_off = 0, old_flags = 0, flags;
	bool rewrite = path || set_x, has_x;
	int r;

	/* The slots keep 32 bits of dev and rdev (fakeenv/map.h). */
	if (dev > FE_DEV_MAX || rec->rdev > FE_DEV_MAX)
		return -EINVAL;
	fe_tab_rehash_step(t, FE_TAB_STEP);
	s = find_both(t, dev, ino, NULL);
	if (!s) {
		r = make_room(t);
		if (r < 0)
			return r;
	} else {
		old_off = s->path;
		old_flags = s->flags;
		if (old_off && !fe_arena_entry_len(&t->arena, old_off,
						old_flags & FE_REC_XATTR)) {
			/* Not an entry of ours (see "Trust"): rewrite the
			 * slot's offset, to none. */
			old_off = 0;
			old_flags &= ~FE_REC_XATTR;
			rewrite = true;
		}
	}
	has_x = old_flags & FE_REC_XATTR;
	/* The path the record has already (a chown -R of a tree known):
	 * the entry stays, and the arena does not grow by a copy. */
	if (rewrite && !set_x && path && fe_tab_same_path(t, old_off, old_flags, path))
		rewrite = false;
	if (rewrite) {
		r = fe_tab_new_entry(t, old_off, old_flags, path, set_x, blk, len,
			      &off, &has_x);
		if (r < 0)
			return r;
	}
	if (!s) {
		s = arr_place(&t->cur, fe_hash_key(dev, ino));
		slot_begin(s);
		SET(s, dev, dev);
		SET(s, ino, ino);
		SET(s, path, 0);
	} else {
		slot_begin(s);
	}
	flags = FE_SLOT_USED | (rec->flags & FE_REC_FLAGS & ~FE_REC_XATTR) |
		(has_x ? FE_REC_XATTR : 0);
	flag_count(t, s->flags, s->mode, s->btag, -1);
	flag_count(t, flags, rec->mode, rec->btag, +1);
	SET(s, uid, rec->uid);
	SET(s, gid, rec->gid);
	SET(s, mode, (uint16_t)rec->mode);
	SET(s, btag, rec->btag);
	SET(s, rdev, rec->rdev);
	SET(s, flags, (uint16_t)flags);
	if (rewrite)
		SET(s, path, off);
	slot_end(s);
	if (rewrite)
		fe_tab_drop_path(t, old_off, old_flags);
	return 0;
}

int fe_tab_put(struct fe_tab *t, uint64_t dev, uint64_t ino,
	       const struct fe_rec *rec, const char *path)
{
	return put_core(t, dev, ino, rec, path, false, NULL, 0);
}

int fe_tab_put_xattrs(struct fe_tab *t, uint64_t dev, uint64_t ino,
		      const struct fe_rec *rec, const char *path,
		      const void *blk, size_t len)
{
	return put_core(t, dev, ino, rec, path, true, blk, len);
}

void fe_tab_xattrs(const struct fe_tab *t, const struct fe_rec *rec,
		   const unsigned char **blk, size_t *len)
{
	size_t plen;

	fe_arena_entry(&t->arena, rec->path, rec->flags & FE_REC_XATTR, &plen, blk,
		       len);
}

bool fe_tab_del(struct fe_tab *t, uint64_t dev, uint64_t ino)
{
	struct fe_tab_arr *arr;
	struct fe_slot *s;
	bool in_old;
	uint32_t off, flags;

	fe_tab_rehash_step(t, FE_TAB_STEP);
	s = find_both(t, dev, ino, &in_old);
	if (!s)
		return false;
	arr = in_old ? &t->old : &t->cur;
	off = s->path;
	flags = s->flags;
	flag_count(t, flags, s->mode, s->btag, -1);
	slot_begin(s);
	SET(s, flags, (uint16_t)FE_SLOT_TOMB);
	SET(s, path, 0);
	slot_end(s);
	if (arr->used)
		arr->used--;
	arr->tombs++;
	fe_tab_drop_path(t, off, flags);
	return true;
}

const char *fe_tab_pin_paths(struct fe_tab *t, size_t *len)
{
	return fe_arena_pin(&t->arena, len);
}

void fe_tab_unpin_paths(struct fe_tab *t, const char *buf)
{
	fe_arena_unpin(&t->arena, buf);
}

size_t fe_tab_count(const struct fe_tab *t)
{
	return t->cur.used + t->old.used;
}

const char *fe_tab_path(const struct fe_tab *t, const struct fe_rec *rec)
{
	return fe_arena_str(&t->arena, rec->path);
}

void fe_tab_info(const struct fe_tab *t, struct fe_tab_info *info)
{
	info->records = fe_tab_count(t);
	info->cap = t->cur.cap;
	info->tombs = t->cur.tombs;
	info->old_cap = t->old.slots ? t->old.cap : 0;
	info->old_used = t->old.used;
	info->long_paths = t->long_paths;
}
