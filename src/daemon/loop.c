/*
 * The event loop; see loop.h.  Level-triggered epoll; every fd is
 * non-blocking, so a client that stops reading or a burst of connections
 * never stalls the others.  This file owns the events and the requests'
 * path (check, drain, handler, reply) and the daemon's start and end;
 * conn.c the connections, ckpt.c the checkpoints, and the ops' handlers
 * what each request does (ops.h).  Nothing here touches the disk: the
 * journal is loaded before the first client and written by state.c's
 * thread.
 */
#include "loop_int.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
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
/* File descriptors kept free of clients: the journal, its temporary file
 * and directory, the log, the table's memfds, the look into /proc. */
#define FD_RESERVE 64

/*
 * SIGTERM and SIGINT (checkpoint and exit) and SIGUSR1 (checkpoint) are
 * blocked and read from a signalfd.  The others a terminal, a parent or a
 * careless kill may send are ignored.  The daemon has its own session, so
 * a Ctrl-C at the terminal never reaches it; a SIGINT is sent on purpose.
 * SIGTSTP/TTIN/TTOU: when setsid() failed we may still share the
 * terminal's session.  Returns the signalfd or -errno.
 */
static int setup_signals(void)
{
	static const int ignored[] = { SIGPIPE,  SIGHUP,  SIGQUIT, SIGWINCH,
				       SIGUSR2,  SIGALRM, SIGTSTP, SIGTTIN,
				       SIGTTOU };
	struct sigaction sa;
	sigset_t set;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < FE_ARRAY_LEN(ignored); i++)
		if (sigaction(ignored[i], &sa, NULL) < 0)
			return -errno;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

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

/* Returns 0 when told to stop, or -errno when epoll fails. */
static int run(struct fe_loop *lp)
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
	return 0;
}

/* A daemon that outlives its launcher must not hold the launcher's
 * stderr: `x=$(fakeenv --state D -- cmd 2>&1)` would wait for us.  What
 * the user must see at start (a refused journal, what the load dropped)
 * has been said by now. */
static void redirect_stderr(const char *path, int fd)
{
	if (dup2(fd, STDERR_FILENO) < 0)
		fe_log("daemon: cannot log to %s: %s", path,
		       fe_strerror(errno));
	close(fd);
}

/* Leave: no new client may reach us (the path goes first, so that a
 * launcher arriving now starts a new daemon instead of joining one that
 * is leaving), then the last journal, then the clients. */
static int leave(struct fe_loop *lp)
{
	int r;

	/* Through DIR's fd: the path may lead to a new DIR by now, whose
	 * socket is another daemon's. */
	if ((lp->have_dir ? unlinkat(lp->dir.fd, FE_DIR_SOCK, 0) :
			    unlink(lp->cfg->sock)) < 0 &&
	    errno != ENOENT)
		fe_log("daemon: cannot remove %s: %s", lp->cfg->sock,
		       fe_strerror(errno));
	close(lp->lfd);
	lp->lfd = -1;
	/* Writers to the socket from now on, which fails once we are gone;
	 * what the rings hold goes into the last journal. */
	(void)fe_ring_sleep(lp);
	r = fe_ckpt_final(lp);
	while (lp->conns) {
		/* Leaving on SIGTERM is not the launcher dying. */
		lp->conns->sess.attached = false;
		fe_conn_close(lp, lp->conns);
	}
	fe_conn_free_dead(lp);
	return r;
}

/* PATH made absolute against the working directory and folded lexically
 * (fe_path_lexical(): no symlink is followed, PATH need not exist), into
 * out.  False when it does not fit. */
static bool abs_lexical(const char *path, char *out, size_t size)
{
	char cwd[PATH_MAX];
	int n;

	if (path[0] == '/')
		n = snprintf(out, size, "%s", path);
	else if (getcwd(cwd, sizeof(cwd)))
		n = snprintf(out, size, "%s/%s", cwd, path);
	else
		return false;
	if (n < 0 || (size_t)n >= size)
		return false;
	fe_path_lexical(out);
	return true;
}

/*
 * fakeroot's idiom for a persistent build, `-i F -s F`: whether the
 * journal LOAD, found missing, is the file SAVE names, so that the first
 * run starts empty and writes it.  Compared as absolute paths, lexically
 * (F does not exist, there is nothing to resolve); a path ending in '/'
 * could never be saved to.  Decided here, on the open's ENOENT, so that
 * no other check can disagree with what the load saw.
 */
static bool first_run(const char *load, const char *save)
{
	char a[PATH_MAX], b[PATH_MAX];
	size_t la = strlen(load), ls = strlen(save);

	if (!la || !ls || load[la - 1] == '/' || save[ls - 1] == '/')
		return false;
	return abs_lexical(load, a, sizeof(a)) &&
	       abs_lexical(save, b, sizeof(b)) && !strcmp(a, b);
}

/*
 * Every process of the session that made a faked call holds a connection:
 * a big parallel build has thousands.  The soft limit (often 1,024) goes
 * up to the hard one; the clients beyond what it leaves are made room for
 * by evict().
 */
static void raise_nofile(struct fe_loop *lp)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		rl.rlim_cur = rl.rlim_max = 1024;
	} else if (rl.rlim_cur < rl.rlim_max) {
		rlim_t was = rl.rlim_cur;

		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			rl.rlim_cur = was;
	}
	lp->nofile = (unsigned long long)rl.rlim_cur;
	if (rl.rlim_cur > UINT_MAX)
		rl.rlim_cur = UINT_MAX;
	lp->max_clients = rl.rlim_cur > 2 * FD_RESERVE ?
				  (unsigned)rl.rlim_cur - FD_RESERVE :
				  (unsigned)rl.rlim_cur / 2;
}

/* Make the loop's state, with the table empty and nothing loaded. */
static int loop_init(struct fe_loop *lp, const struct fe_loop_cfg *cfg)
{
	int r;

	lp->cfg = cfg;
	lp->lfd = cfg->listen_fd;
	lp->uid = getuid();
	lp->refused.what = "refused connections";
	lp->bad.what = "bad requests";
	lp->linger_ms = -1;
	lp->started = (uint64_t)time(NULL);
	raise_nofile(lp);
	lp->reserve = -1;
	lp->sfd = -1;
	lp->delta = -1;
	if (cfg->state && cfg->state_fd >= 0) {
		r = fe_state_dir_init(&lp->dir, cfg->state, cfg->state_fd,
				      FE_DIR_JOURNAL);
		if (r < 0)
			return r;
		lp->have_dir = true;
		r = fe_unsaved_read(cfg->state_fd, FE_UNSAVED_NAME, &lp->prev);
		if (r < 0)
			fe_log("daemon: %s/%s: %s", cfg->state,
			       FE_UNSAVED_NAME, fe_strerror(-r));
		lp->have_prev = r > 0;
		lp->reserve = fe_unsaved_reserve(cfg->state_fd);
	}
	return fe_srv_init(&lp->srv, cfg->unknown_is_real);
}

/* Load cfg->load into the table: 0, or -EBADMSG (said) when it could
 * not be. */
static int load_journal(struct fe_loop *lp, const struct fe_loop_cfg *cfg)
{
	int r = fe_state_load_flags(&lp->srv, cfg->load, cfg->load_flags,
				    &lp->load);

	if (r == -ENOENT && cfg->load_optional)
		return 0;
	if (r == -ENOENT && cfg->save && first_run(cfg->load, cfg->save)) {
		fe_log("journal %s: no such file; starting with an empty "
		       "state, it will be saved there",
		       cfg->load);
		return 0;
	}
	if (r < 0) {
		/* Said already (state.c), but for a plain missing file; the
		 * caller exits with the refusal status. */
		if (r == -ENOENT)
			fe_log("journal %s: no such file", cfg->load);
		return -EBADMSG;
	}
	lp->loaded = true;
	lp->journal_bytes = lp->load.bytes;
	/* The file holds what we hold, unless the check dropped or moved
	 * records. */
	lp->on_disk = cfg->save && !strcmp(cfg->save, cfg->load) &&
		      !lp->load.dropped && !lp->load.rekeyed;
	return 0;
}

/* The epoll set, then the loop until it stops, then leave(). */
static int serve_all(struct fe_loop *lp)
{
	int r, left;

	lp->saved_changes = lp->srv.changes;
	lp->ckpt_ms = fe_now_ms();
	lp->deadline_ms = fe_now_ms() + FE_LOOP_FIRST_CLIENT_SEC * 1000LL;
	lp->ep = epoll_create1(EPOLL_CLOEXEC);
	if (lp->ep < 0)
		return -errno;
	r = fe_loop_watch(lp, lp->sfd, &lp->sfd);
	if (r == 0)
		r = fe_loop_watch(lp, lp->saver.efd, &lp->saver);
	if (r == 0)
		r = fe_loop_watch(lp, lp->lfd, &lp->lfd);
	if (r == 0) {
		r = run(lp);
		fe_noise_sum(&lp->refused, true);
		fe_noise_sum(&lp->bad, true);
		left = leave(lp);
		if (r == 0)
			r = left;
	}
	close(lp->ep);
	return r;
}

int fe_loop_run(const struct fe_loop_cfg *cfg)
{
	struct fe_loop *lp = calloc(1, sizeof(*lp));
	int r;

	if (!lp) {
		unlink(cfg->sock);
		close(cfg->listen_fd);
		return -ENOMEM;
	}
	r = loop_init(lp, cfg);
	if (r < 0)
		goto out_free_loop;
	if (cfg->trace_fd >= 0) {
		r = fe_trace_init(&lp->trace, cfg->trace, cfg->trace_fd);
		if (r < 0) {
			fe_log("trace %s: %s", cfg->trace, fe_strerror(-r));
			goto out_free_srv;
		}
		lp->srv.trace = &lp->trace;
	}
	r = fe_saver_init(&lp->saver);
	if (r < 0)
		goto out_free_srv;
	lp->saver.dir = lp->have_dir ? &lp->dir : NULL;
	/* Signals first: a SIGTERM during a long load must not kill us
	 * before it has been read. */
	lp->sfd = setup_signals();
	if (lp->sfd < 0) {
		r = lp->sfd;
		goto out_free_saver;
	}
	r = cfg->load ? load_journal(lp, cfg) : 0;
	if (r == 0)
		r = fe_dur_open(lp);
	if (r < 0)
		goto out_close_sfd;
	if (cfg->log && cfg->log_fd >= 0)
		redirect_stderr(cfg->log, cfg->log_fd);
	r = serve_all(lp);
out_close_sfd:
	close(lp->sfd);
out_free_saver:
	fe_saver_free(&lp->saver);
out_free_srv:
	if (lp->srv.trace)
		fe_trace_free(lp->srv.trace);
	fe_srv_free(&lp->srv);
out_free_loop:
	if (lp->lfd >= 0) {
		/* Never served: nobody must try to join us. */
		unlink(cfg->sock);
		close(lp->lfd);
	}
	if (lp->reserve >= 0)
		close(lp->reserve);
	if (lp->delta >= 0)
		close(lp->delta);
	free(lp);
	return r;
}
