/*
 * STATUS: the figures of the daemon's life (records, clients, the
 * checkpoints and their failures, the load, what a daemon before us left
 * unsaved), read from the loop's state, in one struct fe_status.
 */
#include "loop_int.h"

#include <errno.h>
#include <unistd.h>

#include "ops.h"

void fe_op_STATUS(struct fe_srv *s, struct fe_call *call)
{
	struct fe_status *st = &call->status;
	const struct fe_loop *lp;

	if (!call->conn) {
		call->rep.err = -ENOSYS;
		return;
	}
	lp = fe_loop_of(s);
	*st = (struct fe_status){
		.records = fe_tab_count(&lp->srv.tab),
		.clients = lp->srv.clients,
		.unsaved = fe_ckpt_unsaved(lp),
		.checkpoints = lp->checkpoints,
		.last_checkpoint = lp->ckpt_time,
		.journal_bytes = lp->journal_bytes,
		.loaded = lp->load.loaded,
		.rekeyed = lp->load.rekeyed,
		.dropped = lp->load.dropped,
		.started = lp->started,
		.pid = (uint64_t)getpid(),
		.linger = lp->cfg->linger,
		.interval = lp->cfg->interval,
		.snap_us = lp->snap_us,
		.write_us = lp->write_us,
		.stale = lp->srv.stale,
		.orphans = lp->srv.orphans,
		.reaped = lp->srv.reaped,
		.lost = lp->srv.lost,
		.by_ring = lp->by_ring,
		.by_socket = lp->by_socket,
		.failures = lp->failures,
		.fail_time = lp->fail_time,
		.fail_err = lp->fail_err,
		.fail_what = lp->fail_what,
	};

	if (lp->cfg->save)
		st->flags |= FE_S_JOURNAL;
	if (lp->saver.busy)
		st->flags |= FE_S_SAVING;
	if (lp->loaded)
		st->flags |= FE_S_LOADED;
	if (lp->failing)
		st->flags |= FE_S_FAILING;
	if (lp->have_prev) {
		st->flags |= FE_S_PREV_LOST;
		st->prev_time = lp->prev.time;
		st->prev_changes = lp->prev.changes;
		st->prev_err = lp->prev.err;
	}
	call->reply = st;
	call->reply_len = sizeof(*st);
}
