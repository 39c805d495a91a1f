/*
 * The connections' change rings (fakeenv/ring.h): making one for a
 * connection that asks (RING), polling them, closing one with its
 * connection, and telling writers whether the daemon is awake
 * (fakeenv/map.h, struct fe_pend_ctl).  What an entry does is the
 * loop's (fe_loop_take_ring()): it is served as the one-way message it
 * would have been.
 */
#include "loop_int.h"

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/util.h"
#include "fakeenv/map.h"
#include "ops.h"

#define RING_BYTES (sizeof(struct fe_ring) + FE_RING_DATA)

/* The promise is moved on only when it gains this much: each store takes
 * the line from every writer that reads it. */
#define AWAKE_STEP_US 50

static struct fe_pend_ctl *ctl(struct fe_loop *lp)
{
	return lp->srv.tab.pend ? fe_pend_ctl(lp->srv.tab.pend) : NULL;
}

void fe_ring_awake(struct fe_loop *lp, long long until_us)
{
	struct fe_pend_ctl *k = ctl(lp);
	uint64_t until = (uint64_t)until_us;

	if (!k || (lp->awake_until && until < lp->awake_until + AWAKE_STEP_US))
		return;
	lp->awake_until = until;
	__atomic_store_n(&k->awake_until, until, __ATOMIC_RELEASE);
}

int fe_ring_sleep(struct fe_loop *lp)
{
	struct fe_pend_ctl *k = ctl(lp);

	if (!k)
		return 0;
	/* Not before the promise is kept. */
	while (lp->awake_until && (uint64_t)fe_now_us() < lp->awake_until)
		sched_yield();
	/* A writer near the promise stores head, fences, then reads
	 * awake_until; we store 0, fence, then read the heads: one of the
	 * two sees the other's store, so no entry waits for a wake-up that
	 * nobody sends. */
	lp->awake_until = 0;
	__atomic_store_n(&k->awake_until, 0, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return fe_rings_poll(lp);
}

int fe_rings_poll(struct fe_loop *lp)
{
	struct conn *c, *next;
	int n = 0;

	for (c = lp->rings; c; c = next) {
		int k;

		next = c->ring_next;
		k = fe_loop_take_ring(lp, c);
		if (k > 0)
			n += k;
	}
	return n;
}

static void unlink_ring(struct fe_loop *lp, struct conn *c)
{
	if (c->ring_prev)
		c->ring_prev->ring_next = c->ring_next;
	else
		lp->rings = c->ring_next;
	if (c->ring_next)
		c->ring_next->ring_prev = c->ring_prev;
	c->ring_prev = c->ring_next = NULL;
	lp->nrings--;
}

void fe_ring_close(struct fe_loop *lp, struct conn *c)
{
	struct fe_ring *r = c->ring;
	long long end;

	if (!r)
		return;
	/* What the process published before its connection went still
	 * counts, as the messages it queued do; then CLOSING, and one more
	 * look for an entry published as we set it.  A writer that saw
	 * CLOSING waits for CLOSED, then learns from tail whether its
	 * entry was taken. */
	(void)fe_loop_take_ring(lp, c);
	__atomic_store_n(&r->closed, FE_RING_CLOSING, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* A writer that read 0 here without a fence published before
	 * (fakeenv/map.h): its entry is seen within the margin. */
	end = fe_now_us() + FE_RING_MARGIN_US;
	while (fe_now_us() < end)
		sched_yield();
	(void)fe_loop_take_ring(lp, c);
	__atomic_store_n(&r->closed, FE_RING_CLOSED, __ATOMIC_RELEASE);
	unlink_ring(lp, c);
	c->ring = NULL;
	munmap(r, RING_BYTES);
}

/* A sealed memfd of one ring, mapped here; its fd, or -errno. */
static int ring_make(struct fe_ring **out)
{
	struct fe_ring *r;
	int fd, r2;

	fd = memfd_create("fakeenv-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)RING_BYTES) < 0)
		goto fail;
	/* Sized for good: a process cannot shrink it under our mapping. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) <
	    0)
		goto fail;
	r = mmap(NULL, RING_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r == MAP_FAILED)
		goto fail;
	r->magic = FE_RING_MAGIC;
	r->version = FE_RING_VERSION;
	r->size = FE_RING_DATA;
	*out = r;
	return fd;
fail:
	r2 = -errno;
	close(fd);
	return r2;
}

void fe_op_RING(struct fe_srv *s, struct fe_call *call)
{
	struct conn *c = call->conn;
	struct fe_loop *lp;
	struct fe_ring *r = NULL;
	int fd;

	if (!c || s->tab.pend_fd < 0) {
		call->rep.err = -ENOSYS;
		return;
	}
	lp = fe_loop_of(s);
	if (c->ring || lp->nrings >= FE_RINGS_MAX) {
		call->rep.err = -EBUSY;
		return;
	}
	fd = ring_make(&r);
	if (fd < 0) {
		call->rep.err = fd;
		return;
	}
	c->ring = r;
	c->ring_tail = 0;
	c->ring_bad = false;
	c->ring_prev = NULL;
	c->ring_next = lp->rings;
	if (lp->rings)
		lp->rings->ring_prev = c;
	lp->rings = c;
	lp->nrings++;
	call->fds[0] = fd;
	call->nfds = 1;
	call->close_fds = true;
	call->rep.count[0] = 1;
}

void fe_op_WAKE(struct fe_srv *s, struct fe_call *call)
{
	/* The loop took the sender's ring before serving this. */
	(void)s;
	(void)call;
}
