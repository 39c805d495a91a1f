/*
 * Saving the journal, and the daemon's start from one (load.c does the
 * load itself); see state.h and src/journal/journal.h for the format.  A record's xattrs travel as its journal xattr block,
 * the same bytes the table keeps after its path.
 */
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "journal/journal.h"
#include "serve.h"
#include "table.h"

/* One record of a snapshot: its slot's fields, 36 bytes (the slot's 40
 * less its seq), so that the copy the checkpoint pays in memory is less
 * than half the table's.  Its path and xattrs stay in the table's arena,
 * pinned while the snapshot lives (fe_arena_pin()). */
struct snap_rec {
	uint32_t ino_lo;
	uint32_t ino_hi;
	uint32_t dev;   /* 32 bits, as in the slot */
	uint32_t rdev;  /* with FE_REC_DEV_SET */
	uint32_t uid;
	uint32_t gid;
	uint32_t btag;
	uint32_t path;  /* offset of its entry in the pinned arena, 0: none */
	uint16_t mode;  /* as in the slot */
	uint16_t flags; /* FE_REC_* */
};

_Static_assert(sizeof(struct snap_rec) == 36, "a snapshot record grew");

struct fe_snap {
	struct fe_tab *tab;    /* whose arena is pinned */
	struct snap_rec *recs; /* n records */
	size_t n;
	const char *arena;     /* the pinned arena buffer */
	size_t arena_len;      /* its bytes in use at the snapshot */
};

static uint32_t jnl_flags(uint32_t rec_flags)
{
	return ((rec_flags & FE_REC_MODE_SET) ? FE_JNL_MODE_SET : 0) |
	       ((rec_flags & FE_REC_DEV_SET) ? FE_JNL_DEV_SET : 0) |
	       ((rec_flags & FE_REC_ORPHAN) ? FE_JNL_ORPHAN : 0);
}

/* ---- loading: the daemon's form of load.c's load ---- */

int fe_state_load(struct fe_srv *s, const char *path,
		  struct fe_load_stats *st)
{
	return fe_state_load_flags(s, path, 0, st);
}

int fe_state_load_flags(struct fe_srv *s, const char *path, unsigned flags,
			struct fe_load_stats *st)
{
	int r = fe_load_journal(&s->tab, path, flags, "refusing to start",
				st);

	s->orphans += st->orphans;
	return r;
}

/* ---- snapshots ---- */

/* Record (dev, ino) of rec as the snapshot's next. */
static void snap_put(struct fe_snap *sn, uint64_t dev, uint64_t ino,
		     const struct fe_rec *rec)
{
	sn->recs[sn->n++] = (struct snap_rec){
		.ino_lo = (uint32_t)ino,
		.ino_hi = (uint32_t)(ino >> 32),
		.dev = (uint32_t)dev,
		.rdev = (rec->flags & FE_REC_DEV_SET) ? (uint32_t)rec->rdev : 0,
		.uid = rec->uid,
		.gid = rec->gid,
		.btag = rec->btag,
		.path = rec->path,
		.mode = (uint16_t)rec->mode,
		.flags = (uint16_t)rec->flags,
	};
}

int fe_key_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) :
	       x[1] != y[1] ? (x[1] < y[1] ? -1 : 1) : 0;
}

/* An empty snapshot of t with room for n records, its arena pinned. */
static struct fe_snap *snap_new(struct fe_tab *t, size_t n)
{
	struct fe_snap *sn = calloc(1, sizeof(*sn));

	if (!sn)
		return NULL;
	sn->recs = malloc((n ? n : 1) * sizeof(*sn->recs));
	if (sn->recs)
		sn->arena = fe_tab_pin_paths(t, &sn->arena_len);
	if (!sn->arena) {
		fe_snap_free(sn);
		return NULL;
	}
	sn->tab = t;
	return sn;
}

struct fe_snap *fe_snap_take(struct fe_tab *t)
{
	size_t n = fe_tab_count(t), pos = 0;
	struct fe_snap *sn = snap_new(t, n);
	struct fe_rec rec;
	uint64_t dev, ino;

	while (sn && sn->n < n && fe_tab_next(t, &pos, &dev, &ino, &rec))
		snap_put(sn, dev, ino, &rec);
	return sn;
}

struct fe_snap *fe_snap_take_keys(struct fe_tab *t, uint64_t (*keys)[2],
				  size_t n)
{
	struct fe_snap *sn = snap_new(t, n);
	struct fe_rec rec;

	if (!sn)
		return NULL;
	qsort(keys, n, sizeof(*keys), fe_key_cmp);
	for (size_t i = 0; i < n; i++)
		if ((!i || fe_key_cmp(keys[i - 1], keys[i])) &&
		    fe_tab_find(t, keys[i][0], keys[i][1], &rec))
			snap_put(sn, keys[i][0], keys[i][1], &rec);
	return sn;
}

void fe_snap_free(struct fe_snap *sn)
{
	if (!sn)
		return;
	if (sn->arena)
		fe_tab_unpin_paths(sn->tab, sn->arena);
	free(sn->recs);
	free(sn);
}

size_t fe_snap_count(const struct fe_snap *sn)
{
	return sn->n;
}

/*
 * Journal record of s, its strings read from the pinned arena (in the
 * writer's thread: those bytes never change while pinned).  An offset or
 * a length that leads outside the bytes pinned gives no path and no
 * xattrs rather than a read past them: the offsets come from slots in
 * shared memory.
 */
static void to_jrec(const struct fe_snap *sn, const struct snap_rec *s,
		    struct fe_jnl_rec *r)
{
	size_t off = s->path, left, plen;
	const char *p;
	uint32_t bl;

	memset(r, 0, sizeof(*r));
	r->dev = s->dev;
	r->ino = (uint64_t)s->ino_hi << 32 | s->ino_lo;
	r->rdev = s->rdev;
	r->uid = s->uid;
	r->gid = s->gid;
	r->mode = s->mode;
	r->flags = jnl_flags(s->flags);
	r->btag = s->btag;
	r->path = "";
	r->xattrs = (const unsigned char *)"";
	if (!off || off >= sn->arena_len)
		return;
	p = sn->arena + off;
	left = sn->arena_len - off;
	plen = strnlen(p, left);
	if (plen == left)
		return;
	r->path = p;
	r->path_len = plen;
	left -= plen + 1;
	if (!(s->flags & FE_REC_XATTR) || left < sizeof(bl))
		return;
	memcpy(&bl, p + plen + 1, sizeof(bl));
	if (bl > left - sizeof(bl))
		return;
	r->xattrs = (const unsigned char *)p + plen + 1 + sizeof(bl);
	r->xattrs_len = bl;
}

struct emit_ctx {
	const struct fe_snap *sn;
	uint64_t str; /* bytes of the string area, once emit() counted them */
};

static int emit(struct fe_jnl_w *w, int fd, void *ctx)
{
	struct emit_ctx *ec = ctx;
	const struct fe_snap *sn = ec->sn;
	struct fe_jnl_rec r;
	uint64_t str = 0;

	for (size_t i = 0; i < sn->n; i++) {
		to_jrec(sn, &sn->recs[i], &r);
		str += fe_jnl_str_len(&r);
	}
	ec->str = str;
	fe_jnl_w_begin(w, fd, sn->n, str, (int64_t)time(NULL));
	for (size_t i = 0; i < sn->n; i++) {
		to_jrec(sn, &sn->recs[i], &r);
		fe_jnl_w_rec(w, &r);
	}
	for (size_t i = 0; i < sn->n; i++) {
		to_jrec(sn, &sn->recs[i], &r);
		fe_jnl_w_str(w, &r);
	}
	return fe_jnl_w_end(w);
}

int fe_state_dir_init(struct fe_state_dir *d, const char *path, int fd,
		      const char *journal)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	d->path = path;
	d->fd = fd;
	d->journal = journal;
	d->dev = (uint64_t)st.st_dev;
	d->ino = (uint64_t)st.st_ino;
	return 0;
}

int fe_state_dir_check(const struct fe_state_dir *d)
{
	struct stat st;

	/* The path first, then the fd: a directory removed and made again
	 * may even get the old inode number back on some filesystems,
	 * but then the old one has no link left. */
	if (stat(d->path, &st) < 0 || (uint64_t)st.st_dev != d->dev ||
	    (uint64_t)st.st_ino != d->ino)
		return -ESTALE;
	if (fstat(d->fd, &st) < 0 || st.st_nlink == 0)
		return -ESTALE;
	return 0;
}

static int dir_check(void *ctx)
{
	return fe_state_dir_check(ctx);
}

/* *bytes for a save of sn that returned r. */
static void saved_bytes(const struct emit_ctx *ec, int r, uint64_t *bytes)
{
	*bytes = 0;
	if (r == 0)
		*bytes = FE_JNL_HDR_SIZE +
			 (uint64_t)ec->sn->n * FE_JNL_REC_SIZE + ec->str +
			 FE_JNL_TRL_SIZE;
}

int fe_snap_save_dir(const struct fe_snap *sn, const struct fe_state_dir *dir,
		     uint64_t *bytes)
{
	struct emit_ctx ec = { .sn = sn };
	int r = fe_jnl_save_at(dir->fd, dir->journal, dir_check, (void *)dir,
			       emit, &ec);

	saved_bytes(&ec, r, bytes);
	return r;
}

int fe_snap_append(const struct fe_snap *sn, int fd, uint64_t *bytes)
{
	struct emit_ctx ec = { .sn = sn };
	struct fe_jnl_w w;
	int r = emit(&w, fd, &ec);

	saved_bytes(&ec, r, bytes);
	return r;
}

int fe_snap_save(const struct fe_snap *sn, const char *path,
		 uint64_t *bytes)
{
	struct emit_ctx ec = { .sn = sn };
	int r = fe_jnl_save(path, emit, &ec);

	saved_bytes(&ec, r, bytes);
	return r;
}

/* ---- the background writer ---- */

int fe_saver_init(struct fe_saver *sv)
{
	memset(sv, 0, sizeof(*sv));
	sv->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return sv->efd < 0 ? -errno : 0;
}

static void *saver_main(void *arg)
{
	struct fe_saver *sv = arg;
	uint64_t one = 1;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	sv->result = sv->dir ? fe_snap_save_dir(sv->snap, sv->dir, &sv->bytes) :
			     fe_snap_save(sv->snap, sv->path, &sv->bytes);
	clock_gettime(CLOCK_MONOTONIC, &b);
	sv->write_us = (uint64_t)((b.tv_sec - a.tv_sec) * 1000000LL +
				  (b.tv_nsec - a.tv_nsec) / 1000);
	sv->records = fe_snap_count(sv->snap);
	/* Cannot fail short of a counter overflow; the join does not
	 * depend on it anyway. */
	(void)!write(sv->efd, &one, sizeof(one));
	return NULL;
}

int fe_saver_start(struct fe_saver *sv, struct fe_snap *snap,
		   const char *path)
{
	sigset_t all, old;
	int r;

	if (sv->busy) {
		fe_snap_free(snap);
		return -EBUSY;
	}
	sv->snap = snap;
	sv->path = path;
	sv->result = 0;
	/* The thread must take no signal: the loop reads them from its
	 * signalfd. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&sv->thread, NULL, saver_main, sv);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		fe_snap_free(snap);
		sv->snap = NULL;
		return r;
	}
	sv->busy = true;
	return 0;
}

int fe_saver_finish(struct fe_saver *sv, uint64_t *bytes, uint64_t *records)
{
	uint64_t v;

	if (!sv->busy)
		return -EINVAL;
	pthread_join(sv->thread, NULL);
	(void)!read(sv->efd, &v, sizeof(v));
	sv->busy = false;
	fe_snap_free(sv->snap);
	sv->snap = NULL;
	*bytes = sv->bytes;
	*records = sv->records;
	return sv->result;
}

void fe_saver_free(struct fe_saver *sv)
{
	uint64_t b, n;

	if (sv->busy)
		(void)fe_saver_finish(sv, &b, &n);
	if (sv->efd >= 0)
		close(sv->efd);
	sv->efd = -1;
}
