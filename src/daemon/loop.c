/*
 * The event loop; see loop.h.  Level-triggered epoll; every fd is
 * non-blocking, so a client that stops reading or a burst of connections
 * never stalls the others.  This file owns the events and the requests'
 * path (check, drain, handler, reply); start.c the daemon's start and
 * end, conn.c the connections, ckpt.c the checkpoints, and the ops'
 * handlers what each request does (ops.h).  Nothing here touches the disk: the
 * journal is loaded before the first client and written by state.c's
 * thread.
 */
#include "loop_int.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "fakeenv/daemon.h"
#include "reap.h"

#define MAX_EVENTS 64
/* Messages read from one client per wake-up, so that a busy client cannot
 * starve the others. */
#define MSGS_PER_WAKE 16
/* Old slots moved per idle pass while the table grows. */
#define IDLE_REHASH_STEP 1024

static void read_signals(struct fe_loop *lp)
{
	struct signalfd_siginfo si;

	while (read(lp->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
			lp->stop = true;
		else if (si.ssi_signo == SIGUSR1)
			fe_ckpt_start(lp);
	}
}

/* Whether the n bytes at buf, from c, are a valid request; a bad one
 * closes c. */
static bool req_ok(struct fe_loop *lp, struct conn *c, const void *buf,
		   ssize_t n)
{
	const char *why;

	/* With MSG_TRUNC, n is the real length even past the buffer: an
	 * over-long message fails the length check. */
	if (fe_req_check(buf, (size_t)n, &why) == 0)
		return true;
	if (fe_noise_count(&lp->bad))
		fe_log("daemon: pid %d: bad request (%s, %ld bytes): closing "
		       "its connection",
		       (int)c->peer, why, (long)n);
	fe_conn_close(lp, c);
	return false;
}

/* Messages one drain takes from a connection at most: far more than its
 * receive buffer holds when the drain starts (a few hundred), so that
 * everything queued then is taken, and a sender that keeps sending
 * cannot keep a drain, and so a reader, waiting for ever. */
#define DRAIN_MAX 65536

static bool serve(struct fe_loop *lp, struct conn *c, const struct fe_req *req,
		  const char *bytes);

/* serve() of a message that came by c's socket, after what c's ring
 * holds: whatever way each of a process's changes went, they land in the
 * order it made them.  False as serve(). */
static bool serve_msg(struct fe_loop *lp, struct conn *c,
		      const struct fe_req *req, const char *bytes)
{
	if (fe_loop_take_ring(lp, c) < 0)
		return false;
	if ((req->flags & FE_F_ONEWAY) && req->op != FE_OP_WAKE)
		lp->by_socket++;
	return serve(lp, c, req, bytes);
}

/* Carry out every one-way change queued on c, up to the first message
 * that is not one (left for conn_input(), which checks it as usual). */
static void drain_conn(struct fe_loop *lp, struct conn *c)
{
	for (int k = 0; k < DRAIN_MAX; k++) {
		struct fe_req h;
		ssize_t n = recv(c->fd, &h, sizeof(h), MSG_PEEK | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(h) || !(h.flags & FE_F_ONEWAY))
			return;
		n = recv(c->fd, lp->dbuf.bytes, sizeof(lp->dbuf.bytes),
			 MSG_TRUNC | MSG_DONTWAIT);
		if (n <= 0)
			return;
		c->spoke = true;
		if (!req_ok(lp, c, lp->dbuf.bytes, n))
			return;
		(void)serve_msg(lp, c, &lp->dbuf.req, lp->dbuf.bytes);
		if (c->closed)
			return; /* a bad entry of its ring */
	}
}

/*
 * Before a request of an FE_OPK_DRAIN op that waits for its reply: every
 * one-way change already queued anywhere goes into the table first, so
 * that a change that returned before the request was sent is in the
 * answer, whichever connection it came by.  Connections still in the
 * listen queue (a vfork child's, sent and closed at once) are taken
 * first.  O(clients) peeks.  May close other connections (a bad
 * message), never self.
 */
static void drain(struct fe_loop *lp, struct conn *self)
{
	struct conn *c, *next;

	fe_accept_all(lp);
	for (c = lp->conns; c; c = next) {
		next = c->next;
		if (c != self && !c->ckpt_wait)
			drain_conn(lp, c);
	}
	(void)fe_rings_poll(lp);
}

/*
 * Serve one request from c that passed req_ok(), bytes its whole message:
 * the drain its op's kind asks for, its handler, its reply unless it was
 * sent one-way or the handler keeps it for later.  Returns false when c
 * is to be read no more now: closed, or waiting for a checkpoint.
 */
static bool serve(struct fe_loop *lp, struct conn *c, const struct fe_req *req,
		  const char *bytes)
{
	struct fe_call call = {
		.req = req,
		.tail = req->tail_len ? bytes + sizeof(*req) : NULL,
		.sess = &c->sess,
		.conn = c,
	};
	bool oneway = req->flags & FE_F_ONEWAY;
	bool ok;

	if (!oneway && (fe_op_kind(req->op) & FE_OPK_DRAIN))
		drain(lp, c);
	fe_serve_call(&lp->srv, &call);
	if (lp->srv.orphans >= fe_reap_next(&lp->srv))
		fe_loop_reap(lp);
	if (call.later)
		return false;
	ok = oneway || fe_conn_send(lp, c, &call);
	if (call.close_fds)
		for (int i = 0; i < call.nfds; i++)
			close(call.fds[i]);
	return ok;
}

/* A ring entry found bad: said, and its connection closed with nothing
 * more of the ring taken.  Returns -1. */
static int ring_bad(struct fe_loop *lp, struct conn *c, const char *why)
{
	if (fe_noise_count(&lp->bad))
		fe_log("daemon: pid %d: bad ring entry (%s): closing its "
		       "connection",
		       (int)c->peer, why);
	c->ring_bad = true;
	fe_conn_close(lp, c);
	return -1;
}

/* The next entry of c's ring at t (before head): its request copied into
 * lp->rbuf, *t past it.  Returns the request's bytes, 0 for a WRAP
 * frame, or -1 (c closed). */
static ssize_t ring_entry(struct fe_loop *lp, struct conn *c, uint64_t *t,
			  uint64_t head)
{
	const unsigned char *data = c->ring->data;
	uint64_t off = *t & (FE_RING_DATA - 1), span;
	struct fe_ring_frame f;

	/* The process may write anything there at any time: one copy,
	 * then only the copy is read. */
	memcpy(&f, data + off, sizeof(f));
	if (f.kind == FE_RING_WRAP) {
		if (off == 0 || *t + (FE_RING_DATA - off) > head)
			return ring_bad(lp, c, "bad wrap");
		*t += FE_RING_DATA - off;
		return 0;
	}
	span = fe_ring_span(f.len);
	if (f.kind != FE_RING_MSG || f.len < sizeof(struct fe_req) ||
	    f.len >= sizeof(lp->rbuf.bytes) || off + span > FE_RING_DATA ||
	    *t + span > head)
		return ring_bad(lp, c, "bad frame");
	memcpy(lp->rbuf.bytes, data + off + sizeof(f), f.len);
	*t += span;
	return (ssize_t)f.len;
}

int fe_loop_take_ring(struct fe_loop *lp, struct conn *c)
{
	uint64_t t = c->ring_tail, head;
	int n = 0;

	if (!c->ring || c->ring_bad)
		return 0;
	head = __atomic_load_n(&c->ring->head, __ATOMIC_ACQUIRE);
	if (head == t)
		return 0;
	if (head < t || head - t > FE_RING_DATA)
		return ring_bad(lp, c, "head out of range");
	while (t < head) {
		ssize_t len = ring_entry(lp, c, &t, head);
		const char *why;

		if (len < 0)
			return -1;
		/* tail first: a writer that counts its own entries from it
		 * may count too few (and ask the daemon), never too many
		 * (fakeenv/ring.h). */
		c->ring_tail = t;
		__atomic_store_n(&c->ring->tail, t, __ATOMIC_RELEASE);
		if (len == 0)
			continue;
		if (fe_req_check(lp->rbuf.bytes, (size_t)len, &why) < 0)
			return ring_bad(lp, c, why);
		if (!(lp->rbuf.req.flags & FE_F_ONEWAY))
			return ring_bad(lp, c, "not one-way");
		c->spoke = true;
		lp->by_ring++;
		(void)serve(lp, c, &lp->rbuf.req, lp->rbuf.bytes);
		n++;
	}
	return n;
}

/* Serve the messages waiting on c, up to MSGS_PER_WAKE; may close c. */
static void conn_input(struct fe_loop *lp, struct conn *c, uint32_t events)
{
	if (c->closed)
		return; /* by an event earlier in this batch */
	if (c->ckpt_wait) {
		/* Its input is off: only a hang-up wakes us. */
		if (events & (EPOLLHUP | EPOLLERR))
			fe_conn_close(lp, c);
		return;
	}
	fe_conn_touch(lp, c);
	for (int i = 0; i < MSGS_PER_WAKE; i++) {
		ssize_t n = recv(c->fd, lp->buf.bytes, sizeof(lp->buf.bytes),
				 MSG_TRUNC | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0 && errno == ECONNRESET) {
			/* The peer closed with our replies unread: the
			 * kernel reports that once, before the messages it
			 * sent first, which still count. */
			c->mute = true;
			continue;
		}
		if (n <= 0) {
			/* End of stream (or an empty message, which no
			 * request is), or an error. */
			fe_conn_close(lp, c);
			return;
		}
		c->spoke = true;
		if (!req_ok(lp, c, lp->buf.bytes, n) ||
		    !serve_msg(lp, c, &lp->buf.req, lp->buf.bytes))
			return;
	}
}

static void sooner(long long *until, long long t)
{
	if (t >= 0 && (*until < 0 || t < *until))
		*until = t;
}

/* The epoll timeout: 0 while the table grows (idle passes move it on),
 * else until the next deadline, or forever. */
static int next_timeout(const struct fe_loop *lp)
{
	long long now, until = -1;

	if (fe_tab_rehashing(&lp->srv.tab))
		return 0;
	if (!lp->had_client)
		until = lp->deadline_ms;
	if (lp->lfd_paused)
		sooner(&until, lp->resume_ms);
	sooner(&until, lp->linger_ms);
	sooner(&until, fe_ckpt_due(lp));
	if (until < 0)
		return -1;
	now = fe_now_ms();
	return until <= now ? 0 : (int)(until - now);
}

/*
 * How long the loop keeps polling (the sockets and the rings) without
 * sleeping after a one-way change.  Changes come in bursts (chown -R, tar
 * x), one every few microseconds: while we poll, writers put them in
 * their rings with no system call; asleep, we must be woken by a message
 * for each, a cross-CPU wake-up (tens of microseconds here) that the
 * sender pays.  The first change of a burst wakes us, and polling from
 * then on keeps the rest in the rings.  The promise to writers
 * (fe_ring_awake()) runs as far: a pass slower than it (a loaded
 * machine, valgrind) sends them to the socket.  Napping, the polling
 * costs a wake-up a nap: a lone change (a build's occasional chown)
 * costs ten.
 */
#define SPIN_US 1000

/*
 * While it polls, the loop naps this long between two looks instead of
 * yielding the CPU: writers fill their rings meanwhile, the daemon takes
 * a batch a look, and the CPU goes to the session's own processes.  On
 * two CPUs, 8 processes chowning their own 10,000 files each: 0.44-0.53 s
 * and 0.25-0.38 s of the daemon's CPU yielding, 0.34-0.38 s and 0.10-0.12
 * s napping 100 us (50 us: 0.37-0.42 s; 20 us: 0.42-0.55 s; 200 us:
 * 0.41-0.48 s).  A reader that cannot wait asks by the socket, which
 * ends the nap.  The timer slack is set to match (main.c).
 */
#define NAP_US 100

/* The nap: a ppoll of the epoll fd, which any event ends (a reader's
 * GET among them), then the events.  (epoll_pwait2 would be one call,
 * but Linux before 5.11 and valgrind 3.19 lack it.) */
static int wait_events(struct fe_loop *lp, struct epoll_event *evs,
		       bool spin, int timeout)
{
	if (spin) {
		struct pollfd p = { .fd = lp->ep, .events = POLLIN };
		struct timespec ts = { 0, NAP_US * 1000 };
		int k = ppoll(&p, 1, &ts, NULL);

		if (k <= 0)
			return k;
		timeout = 0;
	}
	return epoll_wait(lp->ep, evs, MAX_EVENTS, timeout);
}

/* One-way changes served so far, by either way. */
static uint64_t changes_in(const struct fe_loop *lp)
{
	return lp->by_ring + lp->by_socket;
}

/* What is due after a pass, events or none: the listening socket back,
 * lingering once the last client left, the checkpoint, the deadline for
 * a first client. */
static void after_pass(struct fe_loop *lp)
{
	if (lp->lfd_paused &&
	    (lp->fd_freed || fe_now_ms() >= lp->resume_ms))
		fe_accept_resume(lp);
	lp->fd_freed = false;
	if (lp->had_client && !lp->srv.clients) {
		/* One last look: a client may be waiting in the
		 * backlog right now (accept works whether or not the
		 * socket is in the set). */
		fe_accept_all(lp);
	}
	if (lp->srv.clients || !lp->had_client)
		lp->linger_ms = -1;
	else if (lp->linger_ms < 0)
		/* A directory that is no longer ours can be given
		 * nothing more: no lingering for it. */
		lp->linger_ms = fe_now_ms() + (fe_ckpt_dir_ours(lp) ?
			lp->cfg->linger * 1000LL : 0);
	if (lp->linger_ms >= 0 && fe_now_ms() >= lp->linger_ms)
		lp->stop = true;
	if (fe_ckpt_due(lp) >= 0 && fe_now_ms() >= fe_ckpt_due(lp))
		fe_ckpt_start(lp);
	if (!lp->had_client && fe_now_ms() >= lp->deadline_ms) {
		fe_log("daemon: no client within %d s: exiting",
		       FE_LOOP_FIRST_CLIENT_SEC);
		lp->stop = true;
	}
}

int fe_loop_events(struct fe_loop *lp)
{
	struct epoll_event evs[MAX_EVENTS];
	long long spin_until = 0;
	uint64_t seen = changes_in(lp);

	while (!lp->stop) {
		bool spin = spin_until && fe_now_us() < spin_until;
		int timeout = spin ? 0 : next_timeout(lp);
		int n;

		/* About to sleep: from now on a writer wakes us by the
		 * socket; what came meanwhile is a burst going on. */
		if (timeout != 0 && fe_ring_sleep(lp) > 0) {
			seen = changes_in(lp);
			spin_until = fe_now_us() + SPIN_US;
			fe_ring_awake(lp, spin_until);
			continue;
		}
		n = wait_events(lp, evs, spin, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fe_log("daemon: epoll_wait: %s", fe_strerror(errno));
			return -errno;
		}
		for (int i = 0; i < n; i++) {
			void *tag = evs[i].data.ptr;

			if (tag == &lp->lfd)
				fe_accept_all(lp);
			else if (tag == &lp->sfd)
				read_signals(lp);
			else if (tag == &lp->saver)
				fe_ckpt_done(lp);
			else
				conn_input(lp, tag, evs[i].events);
		}
		(void)fe_rings_poll(lp);
		fe_conn_free_dead(lp);
		if (changes_in(lp) != seen) {
			seen = changes_in(lp);
			spin_until = fe_now_us() + SPIN_US;
			/* The promise never outruns the spin: the loop
			 * sleeps only once both are past. */
			fe_ring_awake(lp, spin_until);
		} else if (spin && !n) {
			/* Still looking, nothing else due yet: the nap gave
			 * the CPU to whoever wanted it meanwhile. */
			continue;
		}
		if (lp->srv.trace)
			fe_trace_flush(lp->srv.trace);
		fe_tab_rehash_step(&lp->srv.tab,
				   n ? FE_TAB_STEP : IDLE_REHASH_STEP);
		after_pass(lp);
	}
	return 0;
}
