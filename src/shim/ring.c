/*
 * This process's change ring (fakeenv/ring.h): one-way changes written
 * into memory the daemon polls, with no system call, while the daemon is
 * awake.  Whatever cannot go here (no ring yet, the daemon asleep, the
 * ring full or closed, another thread writing, a signal handler that
 * interrupted this thread's own write) goes by the socket, as a message,
 * and the daemon takes the ring before any socket message of ours, so
 * that our changes land in the order we made them.  Another process's change
 * to the same bucket still in flight makes ours wait for its reply: the
 * pending counters order processes, the ring orders ours.
 */
#include "shim.h"

#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "common/mapread.h"
#include "fakeenv/rec.h"
#include "fakeenv/ring.h"

#define RING_BYTES (sizeof(struct fe_ring) + FE_RING_DATA)
#define RING_MASK ((uint64_t)FE_RING_DATA - 1)
/* One-way changes a process sends by the socket before it asks for a
 * ring: a process that makes a change or two (install, a build's chown)
 * pays for no RING round trip and no mapping. */
#define RING_AFTER 8
/* How long a writer that published as the daemon closed its ring waits
 * for the daemon to say whether it took the entry (it does so at once,
 * unless it died right then). */
#define CLOSE_WAIT_TRIES 1000

static _Atomic(struct fe_ring *) ring; /* ours, or NULL */
/* The pending counters of the daemon that made it: a change whose
 * counter is another daemon's (one that died, a restart since) must not
 * go into this ring. */
static _Atomic(uint32_t *) ring_pend;
static atomic_uint sent;        /* one-way changes sent by the socket */
static atomic_int ring_off;     /* RING was refused: no ring, for good */
static atomic_int resync;       /* the next change waits for its reply */
/* This thread is in fe_ring_put(): a signal handler that interrupts it
 * must not write (the entry half-written is its thread's). */
static _Thread_local volatile sig_atomic_t writing;

static uint64_t now_us(void)
{
	struct timespec ts;

	/* The vDSO: no system call. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Whether the daemon's promise (fakeenv/map.h) is at least margin
 * microseconds away. */
static bool awake_for(uint32_t *pend, uint64_t margin)
{
	uint64_t until = __atomic_load_n(&fe_pend_ctl(pend)->awake_until,
					 __ATOMIC_SEQ_CST);

	return until && now_us() + margin < until;
}

bool fe_ring_daemon_awake(uint32_t *pend)
{
	return awake_for(pend, 0);
}

/* install() for RING: map the ring the daemon made for us. */
static int install(const int *fds, int n)
{
	struct stat st;
	struct fe_ring *r;

	if (n != 1 || fe_sys_fstat(fds[0], &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size != (off_t)RING_BYTES)
		return -EINVAL;
	r = mmap(NULL, RING_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0],
		 0);
	if (r == MAP_FAILED)
		return -EINVAL;
	if (r->magic != FE_RING_MAGIC || r->version != FE_RING_VERSION ||
	    r->size != FE_RING_DATA) {
		munmap(r, RING_BYTES);
		return -EINVAL;
	}
	atomic_store(&ring_pend, fe_map_pend_mapped());
	atomic_store_explicit(&ring, r, memory_order_release);
	return 0;
}

void fe_ring_sent(void)
{
	int saved = errno, r;

	if (atomic_fetch_add(&sent, 1) + 1 != RING_AFTER ||
	    atomic_load(&ring_off) || atomic_load(&ring))
		return;
	/* -ESRCH: a vfork child, in its parent's memory; the parent may
	 * still ask. */
	r = fe_conn_fds(FE_OP_RING, install);
	if (r < 0 && r != -ESRCH)
		atomic_store(&ring_off, 1);
	errno = saved;
}

void fe_ring_forget(bool lost)
{
	if (atomic_exchange(&ring, NULL) && lost)
		atomic_store(&resync, 1);
	atomic_store(&sent, 0);
}

bool fe_ring_resync(void)
{
	return atomic_load_explicit(&resync, memory_order_relaxed) &&
	       atomic_exchange(&resync, 0);
}

/* Changes of ours in the ring between from and to (not yet taken) that
 * raised counter c: they land before the one being written. */
static uint32_t own_pending(const struct fe_ring *r, uint64_t from,
			    uint64_t to, uint32_t *pend, const uint32_t *c)
{
	uint32_t n = 0;

	while (from < to) {
		uint64_t off = from & RING_MASK;
		struct fe_ring_frame f;
		struct fe_req q;

		memcpy(&f, r->data + off, sizeof(f));
		if (f.kind != FE_RING_MSG) {
			from += FE_RING_DATA - off;
			continue;
		}
		memcpy(&q, r->data + off + sizeof(f), sizeof(q));
		if (fe_op_pends(q.op) && fe_pend_at(pend, q.dev, q.ino) == c)
			n++;
		from += fe_ring_span(f.len);
	}
	return n;
}

/*
 * Raise c unless another process has a change to its bucket in flight.
 * The counter is read before tail: the daemon moves tail past an entry
 * before it lowers the entry's counter, so what we count as ours can only
 * be too few (and we then wait for a reply), never too many.
 */
static bool raise_own(const struct fe_ring *r, uint64_t head, uint32_t *pend,
		      uint32_t *c)
{
	/* Twice: the daemon may be between an entry's tail and its
	 * counter. */
	for (int i = 0; i < 2; i++) {
		uint32_t v = __atomic_load_n(c, __ATOMIC_ACQUIRE);
		uint64_t t = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);

		if (v && v != own_pending(r, t, head, pend, c)) {
			fe_map_relax();
			continue;
		}
		if (__atomic_compare_exchange_n(c, &v, v + 1, false,
						__ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED))
			return true;
	}
	return false;
}

/* Write req and its tail at head (room checked); returns the new head. */
static uint64_t write_entry(struct fe_ring *r, uint64_t head,
			    const struct fe_req *req, const char *tail,
			    size_t len)
{
	uint64_t off = head & RING_MASK;
	size_t msg = sizeof(*req) + len;
	struct fe_ring_frame f = { .len = (uint32_t)msg, .kind = FE_RING_MSG };

	if (off + fe_ring_span(msg) > FE_RING_DATA) {
		struct fe_ring_frame w = { .kind = FE_RING_WRAP };

		memcpy(r->data + off, &w, sizeof(w));
		head += FE_RING_DATA - off;
		off = 0;
	}
	memcpy(r->data + off, &f, sizeof(f));
	memcpy(r->data + off + sizeof(f), req, sizeof(*req));
	if (len)
		memcpy(r->data + off + sizeof(f) + sizeof(*req), tail, len);
	return head + fe_ring_span(msg);
}

/* Bytes the entry of msg bytes takes at head, a WRAP frame included. */
static uint64_t room_needed(uint64_t head, size_t msg)
{
	uint64_t off = head & RING_MASK, span = fe_ring_span(msg);

	return off + span > FE_RING_DATA ? FE_RING_DATA - off + span : span;
}

/*
 * The daemon closed the ring as we published up to end: wait for it to
 * say it took all it will, then whether that is ours.  True when it
 * was taken.
 */
static bool taken_at_close(const struct fe_ring *r, uint64_t end)
{
	for (int i = 0; i < CLOSE_WAIT_TRIES; i++) {
		if (__atomic_load_n(&r->closed, __ATOMIC_ACQUIRE) ==
		    FE_RING_CLOSED)
			return __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) >=
			       end;
		sched_yield();
	}
	return false;
}

/* The part of fe_ring_put() under the ring's lock.  Returns the new head,
 * 0 when not written (*res says why). */
static uint64_t put_locked(struct fe_ring *r, struct fe_req *req,
			   const char *tail, size_t len, uint32_t *pend,
			   uint32_t *c, int *res)
{
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
	uint64_t t = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	size_t msg = sizeof(*req) + len;

	*res = 1;
	if (__atomic_load_n(&r->closed, __ATOMIC_ACQUIRE)) {
		fe_ring_forget(false);
		return 0;
	}
	/* Full: by the socket, whose message makes the daemon take all
	 * this first. */
	if (head - t > FE_RING_DATA ||
	    head - t + room_needed(head, msg) > FE_RING_DATA)
		return 0;
	if (c && !raise_own(r, head, pend, c)) {
		*res = -EAGAIN;
		return 0;
	}
	req->version = FE_PROTO_VERSION;
	req->flags |= FE_F_ONEWAY;
	req->tail_len = (uint32_t)len;
	head = write_entry(r, head, req, tail, len);
	/* No fence: fe_ring_put() has one where the promise is near. */
	__atomic_store_n(&r->head, head, __ATOMIC_RELEASE);
	return head;
}

/* Tries at the ring's lock: another thread holds it for the few hundred
 * instructions of a write, unless it was preempted there; then we send
 * by the socket rather than wait for it. */
#define LOCK_TRIES 64

static bool take_lock(struct fe_ring *r)
{
	for (int i = 0; i < LOCK_TRIES; i++) {
		uint32_t unlocked = 0;

		if (__atomic_load_n(&r->lock, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&r->lock, &unlocked, 1, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return true;
		fe_map_relax();
	}
	return false;
}

int fe_ring_put(struct fe_req *req, const char *tail, size_t len,
		uint32_t *pend, uint32_t *c)
{
	struct fe_ring *r = atomic_load_explicit(&ring, memory_order_acquire);
	uint64_t end;
	int res;

	if (!r || writing || !fe_conn_owned() ||
	    pend != atomic_load_explicit(&ring_pend, memory_order_relaxed) ||
	    !fe_ring_daemon_awake(pend))
		return 1;
	writing = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!take_lock(r)) {
		writing = 0;
		return 1;
	}
	end = put_locked(r, req, tail, len, pend, c, &res);
	__atomic_store_n(&r->lock, 0, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	writing = 0;
	if (!end)
		return res;
	/* Published, and the daemon will look again past the margin. */
	if (!__atomic_load_n(&r->closed, __ATOMIC_ACQUIRE) &&
	    awake_for(pend, FE_RING_MARGIN_US))
		return 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&r->closed, __ATOMIC_SEQ_CST)) {
		/* Our connection went (the program closed it) as we wrote. */
		if (taken_at_close(r, end))
			return 0;
		if (c)
			fe_map_pend_undo(c);
		fe_ring_forget(true);
		return -EAGAIN;
	}
	/* The daemon went to sleep as we wrote, or died: a WAKE has it
	 * take the ring, or tells that it is gone, and then the change is
	 * made again with a reply, by whoever serves the session now. */
	if (!fe_ring_daemon_awake(pend) && fe_conn_wake() < 0)
		return -EAGAIN;
	return 0;
}

/*
 * Lay what own_pending() counts as ours and (dev, ino)'s over rec, in the
 * order written.  They are all there is in flight in c's bucket when
 * they are as many as c says: c before tail, as in raise_own().  The
 * table is read after tail and tail again after it: the daemon moves
 * tail past an entry before it applies it, so an unmoved tail says that
 * what the table showed holds none of them, and then the view is exact
 * (no entry applied twice, none missed).
 */
static int overlay_locked(const struct fe_ring *r, uint32_t *pend,
			  uint64_t dev, uint64_t ino, bool unknown_is_real,
			  fe_ring_look_fn *look, void *ctx, struct fe_slot *rec)
{
	const uint32_t *c = fe_pend_at(pend, dev, ino);
	uint32_t v = __atomic_load_n(c, __ATOMIC_ACQUIRE);
	uint64_t t = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);

	if (head - t > FE_RING_DATA || v != own_pending(r, t, head, pend, c))
		return -1;
	if (look(ctx, rec) < 0)
		return -1;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) != t)
		return -1;
	while (t < head) {
		uint64_t off = t & RING_MASK;
		struct fe_ring_frame f;
		struct fe_req q;

		memcpy(&f, r->data + off, sizeof(f));
		if (f.kind != FE_RING_MSG) {
			t += FE_RING_DATA - off;
			continue;
		}
		memcpy(&q, r->data + off + sizeof(f), sizeof(q));
		if (fe_op_pends(q.op) && q.dev == dev && q.ino == ino)
			fe_rec_apply(rec, &q, unknown_is_real);
		t += fe_ring_span(f.len);
	}
	return (rec->flags & FE_SLOT_USED) ? 1 : 0;
}

int fe_ring_overlay(uint32_t *pend, uint64_t dev, uint64_t ino,
		    bool unknown_is_real, fe_ring_look_fn *look, void *ctx,
		    struct fe_slot *rec)
{
	struct fe_ring *r = atomic_load_explicit(&ring, memory_order_acquire);
	int res;

	if (!r || writing || !fe_conn_owned() ||
	    pend != atomic_load_explicit(&ring_pend, memory_order_relaxed))
		return -1;
	writing = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!take_lock(r)) {
		writing = 0;
		return -1;
	}
	res = overlay_locked(r, pend, dev, ino, unknown_is_real, look, ctx,
			     rec);
	__atomic_store_n(&r->lock, 0, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	writing = 0;
	return res;
}
