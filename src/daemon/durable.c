/*
 * A --state run's changes on disk when it returns (SYNC), at a cost that
 * grows with what changed, not with the state: the records put since the
 * last write are appended to DIR/delta (journal/delta.h) as one segment,
 * then fdatasync.  A checkpoint folds them into the journal and empties
 * the delta; the next start puts what a killed daemon left there over
 * the journal.  SYNC falls back to a whole journal when the delta cannot
 * serve: a checkpoint is being written (the delta must not outlive the
 * journal its segments follow), too many keys to track, or no delta.
 */
#include "loop_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "fakeenv/daemon.h"
#include "journal/delta.h"
#include "ops.h"
#include "state.h"

/* Keys tracked at most (16 bytes each) before a SYNC writes the journal
 * whole instead. */
#define DIRTY_MAX (1u << 21)

/* Fold keys given twice; true when that made room. */
static bool dirty_compact(struct fe_dirty *d)
{
	size_t n = 0;

	qsort(d->keys, d->n, sizeof(*d->keys), fe_key_cmp);
	for (size_t i = 0; i < d->n; i++)
		if (!n || fe_key_cmp(d->keys[n - 1], d->keys[i]))
			memcpy(d->keys[n++], d->keys[i], sizeof(*d->keys));
	d->n = n;
	return n < d->cap / 2;
}

void fe_dirty_add(struct fe_dirty *d, uint64_t dev, uint64_t ino)
{
	if (!d->on || d->all)
		return;
	if (d->n == d->cap && !(d->cap && dirty_compact(d))) {
		size_t cap = d->cap ? 2 * d->cap : 1024;
		void *k = cap <= DIRTY_MAX ?
				  realloc(d->keys, cap * sizeof(*d->keys)) :
				  NULL;

		if (!k) {
			free(d->keys);
			d->keys = NULL;
			d->n = d->cap = 0;
			d->all = true;
			return;
		}
		d->keys = k;
		d->cap = cap;
	}
	d->keys[d->n][0] = dev;
	d->keys[d->n][1] = ino;
	d->n++;
}

/* Empty the delta and make it follow the journal in place.  0 or
 * -errno. */
static int reset(struct fe_loop *lp)
{
	unsigned char h[FE_DELTA_HDR_SIZE];
	uint64_t dev, ino;
	int r = fe_load_delta_base(lp->dir.fd, lp->delta, &dev, &ino);

	if (r < 0)
		return r;
	fe_delta_head_put(h, dev, ino);
	if (ftruncate(lp->delta, 0) < 0 ||
	    write(lp->delta, h, sizeof(h)) != (ssize_t)sizeof(h) ||
	    fdatasync(lp->delta) < 0)
		return errno ? -errno : -EIO;
	lp->delta_len = sizeof(h);
	return 0;
}

/* What a killed daemon left in the delta, over the table; a torn tail
 * cut, an old delta emptied.  0 or -EBADMSG (said). */
static int take(struct fe_loop *lp, const char *path)
{
	struct fe_delta_load dl;
	int r = fe_load_delta(&lp->srv.tab, lp->dir.fd, lp->delta, path,
			      "refusing to start", &dl);

	if (r < 0)
		return r;
	if (dl.stale || dl.good < FE_DELTA_HDR_SIZE)
		return reset(lp);
	if (*dl.torn) {
		fe_log("delta %s: an append that never finished (%s): cut "
		       "away", path, dl.torn);
		if (ftruncate(lp->delta, (off_t)dl.good) < 0)
			return -errno;
	}
	lp->delta_len = dl.good;
	if (dl.segs) {
		fe_log("delta %s: %llu record%s of %u append%s not yet in the "
		       "journal (its daemon did not leave normally): kept",
		       path, (unsigned long long)dl.st.loaded,
		       dl.st.loaded == 1 ? "" : "s", dl.segs,
		       dl.segs == 1 ? "" : "s");
		lp->on_disk = false;
	}
	return 0;
}

int fe_dur_open(struct fe_loop *lp)
{
	char path[4096];
	struct stat st;
	int r;

	lp->delta = -1;
	if (!lp->have_dir)
		return 0;
	fe_fmt(path, sizeof(path), "%s/%s", lp->dir.path, FE_DIR_DELTA);
	lp->delta = openat(lp->dir.fd, FE_DIR_DELTA,
			   O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW |
				   O_NONBLOCK | O_CLOEXEC, 0600);
	if (lp->delta < 0 && errno == ELOOP) {
		fe_log("delta %s: a symbolic link; refusing to start", path);
		return -EBADMSG;
	}
	if (lp->delta < 0 && (errno == EACCES || errno == EPERM)) {
		fe_log("delta %s: %s (not a file of yours?); refusing to start",
		       path, fe_strerror(errno));
		return -EBADMSG;
	}
	if (lp->delta < 0) {
		fe_log("delta %s: %s: each run's changes go to disk as a "
		       "whole journal", path, fe_strerror(errno));
		return 0;
	}
	if (fstat(lp->delta, &st) < 0)
		st.st_size = 0;
	r = take(lp, path);
	if (r == 0 && !st.st_size && fsync(lp->dir.fd) < 0)
		r = -errno;
	if (r < 0 && r != -EBADMSG) {
		fe_log("delta %s: %s: each run's changes go to disk as a "
		       "whole journal", path, fe_strerror(-r));
		close(lp->delta);
		lp->delta = -1;
		return 0;
	}
	lp->srv.dirty.on = r == 0;
	return r;
}

void fe_dur_snap(struct fe_loop *lp)
{
	lp->snap_keys = lp->srv.dirty.n;
	lp->snap_all = lp->srv.dirty.all;
}

void fe_dur_folded(struct fe_loop *lp)
{
	struct fe_dirty *d = &lp->srv.dirty;
	int r;

	if (lp->snap_keys && lp->snap_keys <= d->n) {
		memmove(d->keys, d->keys + lp->snap_keys,
			(d->n - lp->snap_keys) * sizeof(*d->keys));
		d->n -= lp->snap_keys;
	}
	lp->snap_keys = 0;
	if (lp->snap_all && lp->srv.changes == lp->snap_changes)
		d->all = false;
	if (lp->delta < 0)
		return;
	r = reset(lp);
	if (r < 0) {
		/* Its segments, if any are left, follow the journal replaced:
		 * the next start drops them, rightly. */
		fe_log("daemon: cannot empty %s/%s: %s", lp->dir.path,
		       FE_DIR_DELTA, fe_strerror(-r));
		d->on = false;
		close(lp->delta);
		lp->delta = -1;
	}
}

/* Append the records put since the last append as one segment.  0 or
 * -errno, with the delta as it was. */
static int append(struct fe_loop *lp, uint64_t *records, uint64_t *bytes)
{
	struct fe_dirty *d = &lp->srv.dirty;
	struct fe_snap *sn;
	int r;

	*records = *bytes = 0;
	if (!d->n)
		return 0;
	sn = fe_snap_take_keys(&lp->srv.tab, d->keys, d->n);
	if (!sn)
		return -ENOMEM;
	r = fe_snap_append(sn, lp->delta, bytes);
	*records = fe_snap_count(sn);
	fe_snap_free(sn);
	if (r == 0 && fdatasync(lp->delta) < 0)
		r = -errno;
	if (r < 0) {
		if (ftruncate(lp->delta, (off_t)lp->delta_len) < 0)
			fe_log("daemon: cannot cut a failed append from "
			       "%s/%s: %s", lp->dir.path, FE_DIR_DELTA,
			       fe_strerror(errno));
		return r;
	}
	lp->delta_len += *bytes;
	lp->appends++;
	d->n = 0;
	return 0;
}

/* SYNC: see proto.h. */
void fe_op_SYNC(struct fe_srv *s, struct fe_call *call)
{
	struct fe_loop *lp;
	int r;

	if (!call->conn) {
		call->rep.err = -ENOSYS;
		return;
	}
	lp = fe_loop_of(s);
	if (lp->delta < 0 || lp->saver.busy || s->dirty.all ||
	    !lp->srv.dirty.on) {
		fe_op_CHECKPOINT(s, call);
		return;
	}
	if (!fe_ckpt_dir_ours(lp)) {
		call->rep.err = -ESTALE;
		return;
	}
	r = append(lp, &call->rep.count[0], &call->rep.count[1]);
	if (r < 0)
		fe_log("daemon: cannot append to %s/%s: %s; %llu change%s "
		       "not on disk", lp->dir.path, FE_DIR_DELTA,
		       fe_strerror(-r), (unsigned long long)s->dirty.n,
		       s->dirty.n == 1 ? "" : "s");
	call->rep.err = r;
}
