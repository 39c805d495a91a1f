/*
 * The journal's checkpoints: when one is due (asked for, SIGUSR1, the
 * interval), starting one from a snapshot that state.c's thread writes,
 * what its end changes (the counts STATUS shows, DIR/unsaved, the clients
 * waiting for it), and the last write as the daemon leaves.  Nothing here
 * writes a journal itself but that last one.
 */
#include "loop_int.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "common/util.h"
#include "ops.h"
#include "reap.h"

uint64_t fe_ckpt_unsaved(const struct fe_loop *lp)
{
	return lp->srv.changes - lp->saved_changes;
}

/* Answer every client waiting for the checkpoint that just ended. */
static void ckpt_answer(struct fe_loop *lp, int err, uint64_t records,
			uint64_t bytes)
{
	struct fe_rep rep = { .err = err, .count = { records, bytes } };
	struct conn *c, *next;

	for (c = lp->conns; c; c = next) {
		next = c->next;
		if (c->ckpt_wait != CKPT_RUNNING)
			continue;
		c->ckpt_wait = CKPT_NONE;
		if (fe_conn_reply(lp, c, &rep, sizeof(rep)))
			fe_conn_input_on(lp, c, true);
	}
}

void fe_loop_reap(struct fe_loop *lp)
{
	static bool said;
	long r = fe_reap_orphans(&lp->srv);

	if (r < 0 && !said) {
		said = true;
		fe_log("daemon: orphan records kept: %s", r == -EACCES ?
		       "a process of this user cannot be looked into in /proc" :
		       fe_strerror((int)-r));
	}
}

/* A journal write failed (what: FE_FAIL_*): counted, kept for STATUS,
 * logged.  The unsaved changes stay unsaved until a write succeeds. */
static void ckpt_failed(struct fe_loop *lp, uint32_t what, int r)
{
	lp->failures++;
	lp->fail_time = (uint64_t)time(NULL);
	lp->fail_err = r;
	lp->fail_what = what;
	lp->failing = true;
	if (what == FE_FAIL_REPLACED)
		fe_log("daemon: %s is no longer the directory this daemon "
		       "locked (removed, renamed or made again): nothing is "
		       "written there; %llu unsaved change%s lost",
		       lp->dir.path, (unsigned long long)fe_ckpt_unsaved(lp),
		       fe_ckpt_unsaved(lp) == 1 ? " is" : "s are");
	else
		fe_log("daemon: %s to %s: %s; the last journal is intact, "
		       "%llu change%s not on disk (%llu failed write%s)",
		       what == FE_FAIL_EXIT ? "last write" : "checkpoint",
		       lp->cfg->save, fe_strerror(-r),
		       (unsigned long long)fe_ckpt_unsaved(lp),
		       fe_ckpt_unsaved(lp) == 1 ? "" : "s",
		       (unsigned long long)lp->failures,
		       lp->failures == 1 ? "" : "s");
}

bool fe_ckpt_dir_ours(struct fe_loop *lp)
{
	if (!lp->have_dir)
		return true;
	if (!lp->dir_gone && fe_state_dir_check(&lp->dir) == 0)
		return true;
	if (!lp->dir_gone) {
		lp->dir_gone = true;
		ckpt_failed(lp, FE_FAIL_REPLACED, -ESTALE);
	}
	return false;
}

/* Before a journal is written: say once, and again each time their
 * number doubles, that path hints were dropped as too long (the table's
 * new_entry()), so that a record without a birth time that the next load
 * drops for want of its path is not a mystery. */
static void say_long_paths(struct fe_loop *lp)
{
	static uint64_t said;
	struct fe_tab_info info;

	fe_tab_info(&lp->srv.tab, &info);
	if (info.long_paths <= said || (said && info.long_paths < 2 * said))
		return;
	said = info.long_paths;
	fe_log("daemon: %llu path hints of %d bytes or more not kept since "
	       "the start; their records are, without a path",
	       (unsigned long long)said, FE_PATH_MAX);
}

void fe_ckpt_start(struct fe_loop *lp)
{
	struct fe_snap *sn;
	long long t0;
	int r;

	if (!lp->cfg->save)
		return;
	if (lp->saver.busy) {
		lp->ckpt_again = true;
		return;
	}
	lp->ckpt_again = false;
	for (struct conn *c = lp->conns; c; c = c->next)
		if (c->ckpt_wait == CKPT_NEXT)
			c->ckpt_wait = CKPT_RUNNING;
	if (!fe_ckpt_dir_ours(lp)) {
		lp->ckpt_ms = fe_now_ms();
		ckpt_answer(lp, -ESTALE, 0, 0);
		return;
	}
	fe_loop_reap(lp);
	say_long_paths(lp);
	t0 = fe_now_us();
	sn = fe_snap_take(&lp->srv.tab);
	fe_dur_snap(lp);
	lp->snap_us = (uint64_t)(fe_now_us() - t0);
	r = sn ? fe_saver_start(&lp->saver, sn, lp->cfg->save) : -ENOMEM;
	if (r < 0) {
		ckpt_failed(lp, FE_FAIL_CHECKPOINT, r);
		/* The interval tries again in its time, not at once. */
		lp->ckpt_ms = fe_now_ms();
		ckpt_answer(lp, r, 0, 0);
		return;
	}
	lp->snap_changes = lp->srv.changes;
}

static void ckpt_written(struct fe_loop *lp, int r, uint64_t bytes,
			 uint64_t changes, uint32_t what)
{
	lp->ckpt_ms = fe_now_ms();
	if (r < 0) {
		/* -ESTALE from the writer's own look at DIR. */
		if (lp->have_dir && !lp->dir_gone &&
		    fe_state_dir_check(&lp->dir) < 0)
			(void)fe_ckpt_dir_ours(lp);
		else
			ckpt_failed(lp, what, r);
		return;
	}
	lp->failing = false;
	if (lp->have_prev) {
		/* The journal is whole again: what the marker said has been
		 * reported by whoever looked, and is no longer news. */
		int e = fe_unsaved_clear(lp->dir.fd);

		if (e < 0)
			fe_log("daemon: cannot remove %s/%s: %s", lp->dir.path,
			       FE_UNSAVED_NAME, fe_strerror(-e));
		else
			lp->have_prev = false;
	}
	lp->saved_changes = changes;
	lp->on_disk = true;
	fe_dur_folded(lp);
	lp->checkpoints++;
	lp->ckpt_time = (uint64_t)time(NULL);
	lp->journal_bytes = bytes;
}

void fe_ckpt_done(struct fe_loop *lp)
{
	uint64_t bytes, records;
	int r = fe_saver_finish(&lp->saver, &bytes, &records);

	lp->write_us = lp->saver.write_us;
	ckpt_written(lp, r, bytes, lp->snap_changes, FE_FAIL_CHECKPOINT);
	ckpt_answer(lp, r, records, bytes);
	if (lp->ckpt_again)
		fe_ckpt_start(lp);
}

/*
 * Leaving with changes that are not on disk: say so in DIR/unsaved,
 * where the next launcher and `fakeenv status` look.  The disk may be
 * full, so the marker is made from the reserve taken at the start (an
 * unnamed inode with its block written, fe_unsaved_reserve()): naming it
 * needs a directory entry only.  When even that fails (no O_TMPFILE
 * and no free inode, or the directory itself cannot grow), what is left
 * is this log line, in DIR/log if it can still be appended to, or on the
 * stderr we were given.  Never into a directory that is no longer ours.
 */
static void leave_unsaved(struct fe_loop *lp)
{
	struct fe_unsaved u = {
		.time = (uint64_t)time(NULL),
		.changes = fe_ckpt_unsaved(lp),
		.err = lp->fail_err,
	};
	int r;

	if (!lp->have_dir || !fe_ckpt_dir_ours(lp))
		return;
	if (lp->have_prev)
		u.changes += lp->prev.changes;
	r = fe_unsaved_leave(lp->dir.fd, lp->reserve, &u);
	lp->reserve = -1; /* taken over */
	if (r < 0) {
		fe_log("daemon: cannot leave %s/%s to say that %llu changes "
		       "are lost: %s",
		       lp->dir.path, FE_UNSAVED_NAME,
		       (unsigned long long)u.changes, fe_strerror(-r));
		return;
	}
	lp->have_prev = true;
	lp->prev = u;
}

/* In this thread: nothing else runs any more. */
int fe_ckpt_final(struct fe_loop *lp)
{
	uint64_t bytes = 0, records = 0;
	struct fe_snap *sn;
	int r;

	if (lp->saver.busy)
		fe_ckpt_done(lp);
	if (!lp->cfg->save || (lp->on_disk && !fe_ckpt_unsaved(lp))) {
		ckpt_answer(lp, 0, fe_tab_count(&lp->srv.tab),
			    lp->journal_bytes);
		return 0;
	}
	for (struct conn *c = lp->conns; c; c = c->next)
		if (c->ckpt_wait)
			c->ckpt_wait = CKPT_RUNNING;
	if (!fe_ckpt_dir_ours(lp)) {
		ckpt_answer(lp, -ESTALE, 0, 0);
		return -ESTALE;
	}
	fe_loop_reap(lp);
	say_long_paths(lp);
	sn = fe_snap_take(&lp->srv.tab);
	fe_dur_snap(lp);
	lp->snap_changes = lp->srv.changes;
	r = !sn ? -ENOMEM :
	    lp->have_dir ? fe_snap_save_dir(sn, &lp->dir, &bytes) :
			   fe_snap_save(sn, lp->cfg->save, &bytes);
	if (sn)
		records = fe_snap_count(sn);
	fe_snap_free(sn);
	ckpt_written(lp, r, bytes, lp->srv.changes, FE_FAIL_EXIT);
	ckpt_answer(lp, r, records, bytes);
	if (r < 0 && fe_ckpt_unsaved(lp))
		leave_unsaved(lp);
	return r;
}

long long fe_ckpt_due(const struct fe_loop *lp)
{
	if (!lp->cfg->interval || !lp->cfg->save || lp->saver.busy ||
	    !fe_ckpt_unsaved(lp))
		return -1;
	return lp->ckpt_ms + lp->cfg->interval * 1000LL;
}

/* CHECKPOINT: the connection waits, its input off, for the next journal
 * written (answered by ckpt_answer()); -ENOENT at once when the session
 * has no journal file. */
void fe_op_CHECKPOINT(struct fe_srv *s, struct fe_call *call)
{
	struct conn *c = call->conn;
	struct fe_loop *lp;

	if (!c) {
		call->rep.err = -ENOSYS;
		return;
	}
	lp = fe_loop_of(s);
	if (!lp->cfg->save || c->mute) {
		call->rep.err = -ENOENT;
		return;
	}
	c->ckpt_wait = CKPT_NEXT;
	fe_conn_input_on(lp, c, false);
	fe_ckpt_start(lp);
	call->later = true;
}
