/*
 * The event loop; see loop.h.  Level-triggered epoll; every fd is
 * non-blocking, so a client that stops reading or a burst of connections
 * never stalls the others.  Nothing here touches the disk: the journal is
 * loaded before the first client and written by state.c's thread.
 */
#include "loop.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "reap.h"
#include "serve.h"
#include "state.h"

#define MAX_EVENTS 64
/* Messages read from one client per wake-up, so that a busy client cannot
 * starve the others. */
#define MSGS_PER_WAKE 16
/* Old slots moved per idle pass while the table grows. */
#define IDLE_REHASH_STEP 1024
/* How long the listening socket stays out of the epoll set after accept
 * failed for lack of fds or memory. */
#define ACCEPT_PAUSE_MS 100
/* The same accept error is logged at most this often. */
#define ACCEPT_LOG_MS 60000

struct conn {
	int fd;
	pid_t peer;        /* SO_PEERCRED pid, for logs */
	bool mute;         /* the peer has gone: drain its queued messages
			      (one-way notices sent before it exited), reply
			      no more */
	struct fe_sess sess;
	int ckpt_wait;     /* waits for a checkpoint's reply: CKPT_NEXT
			      until one starts, then CKPT_RUNNING; its
			      input is off meanwhile */
	struct conn *prev; /* the loop's list of clients */
	struct conn *next;
};

enum { CKPT_NONE, CKPT_NEXT, CKPT_RUNNING };

struct loop {
	const struct fe_loop_cfg *cfg;
	int ep;                /* the epoll set */
	int lfd;               /* listening socket; its address is the tag of
				  its events */
	int sfd;               /* signalfd; likewise */
	bool lfd_paused;       /* lfd is out of the set until resume_ms, or
				  until a client closes and frees an fd */
	long long resume_ms;   /* CLOCK_MONOTONIC ms */
	bool fd_freed;         /* a client closed in this pass */
	int accept_err;        /* last accept errno logged */
	long long accept_log_ms; /* when it was logged */
	long long deadline_ms; /* exit if no client has come by then */
	bool had_client;       /* a client was accepted once */
	long long linger_ms;   /* exit then if still no client; -1: none */
	struct fe_saver saver; /* its efd's address tags its events */
	uint64_t saved_changes; /* srv.changes as of the last journal */
	uint64_t snap_changes; /* srv.changes as of the snapshot being
				  written */
	bool on_disk;          /* cfg->save holds a journal of ours */
	bool ckpt_again;       /* asked for while one was being written */
	long long ckpt_ms;     /* CLOCK_MONOTONIC of the last checkpoint, or
				  of the start */
	uint64_t checkpoints;  /* journals written */
	uint64_t ckpt_time;    /* unix time of the last one, 0: none */
	uint64_t journal_bytes;
	uint64_t snap_us;      /* the last snapshot's duration */
	uint64_t write_us;     /* the last write's */
	struct fe_load_stats load;
	bool loaded;
	uint64_t started;      /* unix time */
	bool stop;             /* leave the loop */
	uid_t uid;             /* peers must run as this uid */
	struct conn *conns;    /* open clients */
	struct fe_srv srv;
	union {
		struct fe_req req; /* alignment for the header */
		char bytes[FE_REQ_BUF];
	} buf;
	union {
		struct fe_req req;
		char bytes[FE_REQ_BUF];
	} dbuf;                /* drain()'s: buf holds the request that
				  asked for the drain */
};

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static long long now_ms(void)
{
	return now_us() / 1000;
}

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

static int watch(struct loop *lp, int fd, void *tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };

	return epoll_ctl(lp->ep, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/* A client's input on or off (off while it waits for a checkpoint: one
 * request at a time, replies in order).  Hang-ups still wake us. */
static void conn_input_on(struct loop *lp, struct conn *c, bool on)
{
	struct epoll_event ev = { .events = on ? EPOLLIN : 0, .data.ptr = c };

	(void)epoll_ctl(lp->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Close a client.  A launcher that leaves without DETACH has died: its
 * command would run on without it, so the command's group and pid are
 * killed. */
static void conn_close(struct loop *lp, struct conn *c)
{
	if (c->sess.attached) {
		fe_log("daemon: launcher (pid %d) left without detaching: "
		       "killing its command (pid %d, group %d)",
		       (int)c->peer, (int)c->sess.pid, (int)c->sess.pgid);
		/* 1 would mean init, and kill(-1) every process we may
		 * signal. */
		if (c->sess.pgid > 1)
			kill(-c->sess.pgid, SIGKILL);
		if (c->sess.pid > 1)
			kill(c->sess.pid, SIGKILL);
	}
	close(c->fd); /* also leaves the epoll set: the fd is not shared */
	if (c->prev)
		c->prev->next = c->next;
	else
		lp->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c);
	lp->srv.clients--;
	lp->fd_freed = true;
}

/* Take the listening socket out of the set for a while: level-triggered,
 * a pending connection we cannot accept would wake us in a loop. */
static void pause_accept(struct loop *lp, int err)
{
	long long now = now_ms();

	if (err != lp->accept_err || now - lp->accept_log_ms >= ACCEPT_LOG_MS) {
		fe_log("daemon: accept: %s; pausing new connections",
		       fe_strerror(err));
		lp->accept_err = err;
		lp->accept_log_ms = now;
	}
	/* Already paused when the last look at the backlog failed too. */
	if (!lp->lfd_paused &&
	    epoll_ctl(lp->ep, EPOLL_CTL_DEL, lp->lfd, NULL) < 0)
		return;
	lp->lfd_paused = true;
	lp->resume_ms = now + ACCEPT_PAUSE_MS;
}

static void resume_accept(struct loop *lp)
{
	int r = watch(lp, lp->lfd, &lp->lfd);

	if (r < 0) {
		lp->resume_ms = now_ms() + ACCEPT_PAUSE_MS;
		return;
	}
	lp->lfd_paused = false;
}

/* Admit one accepted socket: the peer must be our own user. */
static void admit(struct loop *lp, int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct conn *c;
	int r;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		fe_log("daemon: SO_PEERCRED: %s", fe_strerror(errno));
		close(fd);
		return;
	}
	if (cred.uid != lp->uid) {
		fe_log("daemon: refusing pid %d: uid %u is not ours (%u)",
		       (int)cred.pid, (unsigned)cred.uid, (unsigned)lp->uid);
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		fe_log("daemon: refusing pid %d: %s", (int)cred.pid,
		       fe_strerror(ENOMEM));
		close(fd);
		return;
	}
	c->fd = fd;
	c->peer = cred.pid;
	r = watch(lp, fd, c);
	if (r < 0) {
		fe_log("daemon: refusing pid %d: epoll: %s", (int)cred.pid,
		       fe_strerror(-r));
		free(c);
		close(fd);
		return;
	}
	c->next = lp->conns;
	if (c->next)
		c->next->prev = c;
	lp->conns = c;
	lp->srv.clients++;
	lp->had_client = true;
}

static void accept_all(struct loop *lp)
{
	for (;;) {
		int fd = accept4(lp->lfd, NULL, NULL,
				 SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd >= 0) {
			admit(lp, fd);
			continue;
		}
		switch (errno) {
		case EAGAIN:
#if EWOULDBLOCK != EAGAIN
		case EWOULDBLOCK:
#endif
			return;
		case EINTR:
		case ECONNABORTED:
			continue;
		default:
			/* EMFILE, ENFILE, ENOBUFS, ENOMEM: retrying at once
			 * would spin. */
			pause_accept(lp, errno);
			return;
		}
	}
}

/* Send the reply to a MAP request, with the table's memfds (SCM_RIGHTS)
 * when it succeeded.  Returns what send/sendmsg returned. */
static ssize_t send_map_reply(struct loop *lp, struct conn *c,
			      const struct fe_rep *rep)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * FE_MAP_FDS)];
	} ctl;
	struct iovec iov = { (void *)rep, sizeof(*rep) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	int fds[FE_MAP_FDS];
	int n;

	if (rep->err != 0)
		return send(c->fd, rep, sizeof(*rep),
			    MSG_NOSIGNAL | MSG_DONTWAIT);
	n = fe_tab_map_fds(&lp->srv.tab, fds);
	memset(&ctl, 0, sizeof(ctl));
	mh.msg_control = ctl.buf;
	mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)n);
	return sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Send a reply followed by dlen bytes at data, in one message. */
static ssize_t send_data_reply(struct conn *c, const void *rep, size_t len,
			       const void *data, size_t dlen)
{
	struct iovec iov[2] = { { (void *)rep, len }, { (void *)data, dlen } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	ssize_t n = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);

	/* One message: all of it, or nothing. */
	return n == (ssize_t)(len + dlen) ? (ssize_t)len : n < 0 ? n : -1;
}

/* Send one reply (with the table's fds for MAP, with the bytes the last
 * request left in srv.rep_data for XGET and XLIST).  Returns false when
 * c was closed. */
static bool reply_to(struct loop *lp, struct conn *c, const void *rep,
		     size_t len, bool map)
{
	if (c->mute ||
	    (map ? send_map_reply(lp, c, rep) :
	     lp->srv.rep_len ?
		   send_data_reply(c, rep, len, lp->srv.rep_data,
				   lp->srv.rep_len) :
		   send(c->fd, rep, len, MSG_NOSIGNAL | MSG_DONTWAIT)) ==
		    (ssize_t)len)
		return true;
	if (errno == EPIPE || errno == ECONNRESET) {
		c->mute = true;
		return true;
	}
	fe_log("daemon: pid %d: reply: %s: closing its connection",
	       (int)c->peer,
	       errno == EAGAIN || errno == EWOULDBLOCK ?
		       "it does not read its replies" :
		       fe_strerror(errno));
	conn_close(lp, c);
	return false;
}

static bool reply(struct loop *lp, struct conn *c, const void *rep,
		  size_t len)
{
	lp->srv.rep_len = 0;
	return reply_to(lp, c, rep, len, false);
}

static uint64_t unsaved(const struct loop *lp)
{
	return lp->srv.changes - lp->saved_changes;
}

/* Answer every client waiting for the checkpoint that just ended. */
static void ckpt_answer(struct loop *lp, int err, uint64_t records,
			uint64_t bytes)
{
	struct fe_rep rep = { .err = err, .count = { records, bytes } };
	struct conn *c, *next;

	for (c = lp->conns; c; c = next) {
		next = c->next;
		if (c->ckpt_wait != CKPT_RUNNING)
			continue;
		c->ckpt_wait = CKPT_NONE;
		if (reply(lp, c, &rep, sizeof(rep)))
			conn_input_on(lp, c, true);
	}
}

/* Drop the orphans no process has open; a failure keeps them all, and is
 * said once. */
static void reap(struct loop *lp)
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

/* Start writing the journal from a snapshot, or note that another is
 * wanted when one is being written. */
static void ckpt_start(struct loop *lp)
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
	reap(lp);
	t0 = now_us();
	sn = fe_snap_take(&lp->srv.tab);
	lp->snap_us = (uint64_t)(now_us() - t0);
	r = sn ? fe_saver_start(&lp->saver, sn, lp->cfg->save) : -ENOMEM;
	if (r < 0) {
		fe_log("daemon: checkpoint to %s: %s; the last journal is "
		       "intact", lp->cfg->save, fe_strerror(-r));
		/* The interval tries again in its time, not at once. */
		lp->ckpt_ms = now_ms();
		ckpt_answer(lp, r, 0, 0);
		return;
	}
	lp->snap_changes = lp->srv.changes;
}

static void ckpt_written(struct loop *lp, int r, uint64_t bytes,
			 uint64_t changes)
{
	lp->ckpt_ms = now_ms();
	if (r < 0) {
		fe_log("daemon: checkpoint to %s: %s; the last journal is "
		       "intact", lp->cfg->save, fe_strerror(-r));
		return;
	}
	lp->saved_changes = changes;
	lp->on_disk = true;
	lp->checkpoints++;
	lp->ckpt_time = (uint64_t)time(NULL);
	lp->journal_bytes = bytes;
}

/* The writer thread is done. */
static void ckpt_done(struct loop *lp)
{
	uint64_t bytes, records;
	int r = fe_saver_finish(&lp->saver, &bytes, &records);

	lp->write_us = lp->saver.write_us;
	ckpt_written(lp, r, bytes, lp->snap_changes);
	ckpt_answer(lp, r, records, bytes);
	if (lp->ckpt_again)
		ckpt_start(lp);
}

/* The last write, in this thread: nothing else runs any more. */
static int ckpt_final(struct loop *lp)
{
	uint64_t bytes = 0, records = 0;
	struct fe_snap *sn;
	int r;

	if (lp->saver.busy)
		ckpt_done(lp);
	if (!lp->cfg->save || (lp->on_disk && !unsaved(lp))) {
		ckpt_answer(lp, 0, fe_tab_count(&lp->srv.tab),
			    lp->journal_bytes);
		return 0;
	}
	for (struct conn *c = lp->conns; c; c = c->next)
		if (c->ckpt_wait)
			c->ckpt_wait = CKPT_RUNNING;
	reap(lp);
	sn = fe_snap_take(&lp->srv.tab);
	r = sn ? fe_snap_save(sn, lp->cfg->save, &bytes) : -ENOMEM;
	if (sn)
		records = fe_snap_count(sn);
	fe_snap_free(sn);
	ckpt_written(lp, r, bytes, lp->srv.changes);
	ckpt_answer(lp, r, records, bytes);
	return r;
}

static void status(struct loop *lp, struct conn *c)
{
	struct fe_status st = {
		.records = fe_tab_count(&lp->srv.tab),
		.clients = lp->srv.clients,
		.unsaved = unsaved(lp),
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
	};

	if (lp->cfg->save)
		st.flags |= FE_S_JOURNAL;
	if (lp->saver.busy)
		st.flags |= FE_S_SAVING;
	if (lp->loaded)
		st.flags |= FE_S_LOADED;
	(void)reply(lp, c, &st, sizeof(st));
}

static void read_signals(struct loop *lp)
{
	struct signalfd_siginfo si;

	while (read(lp->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
			lp->stop = true;
		else if (si.ssi_signo == SIGUSR1)
			ckpt_start(lp);
	}
}

/* Whether the n bytes at buf, from c, are a valid request; a bad one
 * closes c. */
static bool req_ok(struct loop *lp, struct conn *c, const void *buf,
		   ssize_t n)
{
	const char *why;

	/* With MSG_TRUNC, n is the real length even past the buffer: an
	 * over-long message fails the length check. */
	if (fe_req_check(buf, (size_t)n, &why) == 0)
		return true;
	fe_log("daemon: pid %d: bad request (%s, %ld bytes): closing its "
	       "connection",
	       (int)c->peer, why, (long)n);
	conn_close(lp, c);
	return false;
}

/* Messages one drain takes from a connection at most: far more than its
 * receive buffer holds when the drain starts (a few hundred), so that
 * everything queued then is taken, and a sender that keeps sending
 * cannot keep a drain, and so a reader, waiting for ever. */
#define DRAIN_MAX 65536

/* Carry out every one-way change queued on c, up to the first message
 * that is not one (left for conn_input(), which checks it as usual). */
static void drain_conn(struct loop *lp, struct conn *c)
{
	for (int k = 0; k < DRAIN_MAX; k++) {
		struct fe_req h;
		struct fe_rep rep;
		ssize_t n = recv(c->fd, &h, sizeof(h), MSG_PEEK | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(h) || !(h.flags & FE_F_ONEWAY))
			return;
		n = recv(c->fd, lp->dbuf.bytes, sizeof(lp->dbuf.bytes),
			 MSG_TRUNC | MSG_DONTWAIT);
		if (n <= 0)
			return;
		if (!req_ok(lp, c, lp->dbuf.bytes, n))
			return;
		fe_serve_req(&lp->srv, &c->sess, &lp->dbuf.req,
			     lp->dbuf.req.tail_len ?
				     lp->dbuf.bytes + sizeof(struct fe_req) :
				     NULL,
			     &rep);
	}
}

/*
 * Before a request that reads or changes records in reply (GET, the
 * xattr ops, MKNOD, STATS, STATUS, CHECKPOINT): every one-way change
 * already queued anywhere goes into the table first, so that a change
 * that returned before the request was sent is in the answer, whichever
 * connection it came by.  Connections still in the listen queue (a vfork
 * child's, sent and closed at once) are taken first.  O(clients) peeks.
 */
static void drain(struct loop *lp, struct conn *self)
{
	struct conn *c, *next;

	accept_all(lp);
	for (c = lp->conns; c; c = next) {
		next = c->next;
		if (c != self && !c->ckpt_wait)
			drain_conn(lp, c);
	}
	if (lp->srv.orphans >= fe_reap_next(&lp->srv))
		reap(lp);
}

/* The requests that go without a drain: one-way changes themselves
 * (each connection is applied in order) and the session's own
 * bookkeeping.  A change waiting for its reply drains: it must land
 * after every change that returned before it was made. */
static bool needs_drain(const struct fe_req *req)
{
	return !(req->flags & FE_F_ONEWAY) && req->op != FE_OP_MAP &&
	       req->op != FE_OP_SESSION && req->op != FE_OP_DETACH;
}

/* Serve the messages waiting on c, up to MSGS_PER_WAKE; may close c. */
static void conn_input(struct loop *lp, struct conn *c, uint32_t events)
{
	if (c->ckpt_wait) {
		/* Its input is off: only a hang-up wakes us. */
		if (events & (EPOLLHUP | EPOLLERR))
			conn_close(lp, c);
		return;
	}
	for (int i = 0; i < MSGS_PER_WAKE; i++) {
		ssize_t n = recv(c->fd, lp->buf.bytes, sizeof(lp->buf.bytes),
				 MSG_TRUNC | MSG_DONTWAIT);
		struct fe_rep rep;

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
			conn_close(lp, c);
			return;
		}
		if (!req_ok(lp, c, lp->buf.bytes, n))
			return;
		if (needs_drain(&lp->buf.req))
			drain(lp, c);
		if (lp->buf.req.op == FE_OP_STATUS) {
			status(lp, c);
			return; /* c may be gone */
		}
		if (lp->buf.req.op == FE_OP_CHECKPOINT && lp->cfg->save &&
		    !c->mute) {
			c->ckpt_wait = CKPT_NEXT;
			conn_input_on(lp, c, false);
			ckpt_start(lp);
			return;
		}
		lp->srv.rep_len = 0;
		if (lp->buf.req.op == FE_OP_CHECKPOINT) {
			memset(&rep, 0, sizeof(rep));
			rep.err = -ENOENT; /* no journal file */
		} else {
			fe_serve_req(&lp->srv, &c->sess, &lp->buf.req,
				     lp->buf.req.tail_len ?
					     lp->buf.bytes +
						     sizeof(struct fe_req) :
					     NULL,
				     &rep);
			if (lp->srv.orphans >= fe_reap_next(&lp->srv))
				reap(lp);
		}
		if (lp->buf.req.flags & FE_F_ONEWAY)
			continue; /* no reply: the sender is not waiting */
		if (!reply_to(lp, c, &rep, sizeof(rep),
			      lp->buf.req.op == FE_OP_MAP))
			return;
	}
}

/* When the interval asks for the next checkpoint, or -1. */
static long long ckpt_due(const struct loop *lp)
{
	if (!lp->cfg->interval || !lp->cfg->save || lp->saver.busy ||
	    !unsaved(lp))
		return -1;
	return lp->ckpt_ms + lp->cfg->interval * 1000LL;
}

static void sooner(long long *until, long long t)
{
	if (t >= 0 && (*until < 0 || t < *until))
		*until = t;
}

/* The epoll timeout: 0 while the table grows (idle passes move it on),
 * else until the next deadline, or forever. */
static int next_timeout(const struct loop *lp)
{
	long long now, until = -1;

	if (fe_tab_rehashing(&lp->srv.tab))
		return 0;
	if (!lp->had_client)
		until = lp->deadline_ms;
	if (lp->lfd_paused)
		sooner(&until, lp->resume_ms);
	sooner(&until, lp->linger_ms);
	sooner(&until, ckpt_due(lp));
	if (until < 0)
		return -1;
	now = now_ms();
	return until <= now ? 0 : (int)(until - now);
}

/* Returns 0 when told to stop, or -errno when epoll fails. */
/*
 * How long the loop keeps looking for messages without sleeping after it
 * served some.  One-way changes come in bursts (chown -R, tar x), one
 * every few microseconds, and a daemon asleep in epoll_wait must be woken
 * for each: a cross-CPU wake-up (tens of microseconds here) that the
 * sender pays, and whose latency then backs the queue up.  Polling a
 * short while costs a little CPU at the end of a burst; a message that
 * comes alone (a build's occasional chown) starts no polling, so that
 * the daemon takes no CPU from the work between them.
 */
#define SPIN_US 200

static int run(struct loop *lp)
{
	struct epoll_event evs[MAX_EVENTS];
	long long spin_until = 0, last_us = 0;

	while (!lp->stop) {
		bool spin = spin_until && now_us() < spin_until;
		int n = epoll_wait(lp->ep, evs, MAX_EVENTS,
				   spin ? 0 : next_timeout(lp));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			fe_log("daemon: epoll_wait: %s", fe_strerror(errno));
			return -errno;
		}
		for (int i = 0; i < n; i++) {
			void *tag = evs[i].data.ptr;

			if (tag == &lp->lfd)
				accept_all(lp);
			else if (tag == &lp->sfd)
				read_signals(lp);
			else if (tag == &lp->saver)
				ckpt_done(lp);
			else
				conn_input(lp, tag, evs[i].events);
		}
		if (n > 0) {
			long long t = now_us();

			/* The second of two within SPIN_US: a burst. */
			if (t - last_us < SPIN_US)
				spin_until = t + SPIN_US;
			last_us = t;
		} else if (spin)
			continue; /* still looking: nothing else is due yet */
		fe_tab_rehash_step(&lp->srv.tab,
				   n ? FE_TAB_STEP : IDLE_REHASH_STEP);
		if (lp->lfd_paused &&
		    (lp->fd_freed || now_ms() >= lp->resume_ms))
			resume_accept(lp);
		lp->fd_freed = false;
		if (lp->had_client && !lp->srv.clients) {
			/* One last look: a client may be waiting in the
			 * backlog right now (accept works whether or not the
			 * socket is in the set). */
			accept_all(lp);
		}
		if (lp->srv.clients || !lp->had_client)
			lp->linger_ms = -1;
		else if (lp->linger_ms < 0)
			lp->linger_ms = now_ms() + lp->cfg->linger * 1000LL;
		if (lp->linger_ms >= 0 && now_ms() >= lp->linger_ms)
			lp->stop = true;
		if (ckpt_due(lp) >= 0 && now_ms() >= ckpt_due(lp))
			ckpt_start(lp);
		if (!lp->had_client && now_ms() >= lp->deadline_ms) {
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
static int leave(struct loop *lp)
{
	int r;

	if (unlink(lp->cfg->sock) < 0 && errno != ENOENT)
		fe_log("daemon: cannot remove %s: %s", lp->cfg->sock,
		       fe_strerror(errno));
	close(lp->lfd);
	lp->lfd = -1;
	r = ckpt_final(lp);
	while (lp->conns) {
		/* Leaving on SIGTERM is not the launcher dying. */
		lp->conns->sess.attached = false;
		conn_close(lp, lp->conns);
	}
	return r;
}

/* PATH made absolute against the working directory, its empty, "." and
 * ".." components folded away lexically (no symlink is followed: PATH
 * need not exist), into out.  False when it does not fit. */
static bool lexical_abs(const char *path, char *out, size_t size)
{
	char cwd[PATH_MAX];
	const char *parts[2] = { NULL, path };
	size_t n = 0;

	if (path[0] != '/') {
		if (!getcwd(cwd, sizeof(cwd)))
			return false;
		parts[0] = cwd;
	}
	for (int k = 0; k < 2; k++) {
		for (const char *p = parts[k]; p && *p;) {
			const char *e;
			size_t len;

			while (*p == '/')
				p++;
			for (e = p; *e && *e != '/'; e++)
				;
			len = (size_t)(e - p);
			if (len == 2 && p[0] == '.' && p[1] == '.') {
				while (n > 0 && out[n - 1] != '/')
					n--;
				if (n > 0)
					n--;
			} else if (len && !(len == 1 && p[0] == '.')) {
				if (n + 1 + len >= size)
					return false;
				out[n++] = '/';
				memcpy(out + n, p, len);
				n += len;
			}
			p = e;
		}
	}
	if (n == 0)
		out[n++] = '/';
	out[n] = '\0';
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
	return lexical_abs(load, a, sizeof(a)) &&
	       lexical_abs(save, b, sizeof(b)) && !strcmp(a, b);
}

int fe_loop_run(const struct fe_loop_cfg *cfg)
{
	struct loop *lp = calloc(1, sizeof(*lp));
	int r;

	if (!lp) {
		r = -ENOMEM;
		goto out_close_lfd;
	}
	lp->cfg = cfg;
	lp->lfd = cfg->listen_fd;
	lp->uid = getuid();
	lp->linger_ms = -1;
	lp->started = (uint64_t)time(NULL);
	r = fe_srv_init(&lp->srv, cfg->unknown_is_real);
	if (r < 0)
		goto out_free_loop;
	r = fe_saver_init(&lp->saver);
	if (r < 0)
		goto out_free_srv;
	/* Signals first: a SIGTERM during a long load must not kill us
	 * before it has been read. */
	lp->sfd = setup_signals();
	if (lp->sfd < 0) {
		r = lp->sfd;
		goto out_free_saver;
	}
	if (cfg->load) {
		r = fe_state_load_flags(&lp->srv, cfg->load, cfg->load_flags,
					&lp->load);
		if (r == -ENOENT && cfg->load_optional) {
			r = 0;
		} else if (r == -ENOENT && cfg->save &&
			   first_run(cfg->load, cfg->save)) {
			fe_log("journal %s: no such file; starting with an "
			       "empty state, it will be saved there",
			       cfg->load);
			r = 0;
		} else if (r < 0) {
			/* Said already (state.c), but for a plain missing
			 * file; the caller exits with the refusal status. */
			if (r == -ENOENT)
				fe_log("journal %s: no such file", cfg->load);
			r = -EBADMSG;
			goto out_close_sfd;
		} else {
			lp->loaded = true;
			lp->journal_bytes = lp->load.bytes;
			/* The file holds what we hold, unless the check
			 * dropped or moved records. */
			lp->on_disk = cfg->save && !strcmp(cfg->save, cfg->load) &&
				      !lp->load.dropped && !lp->load.rekeyed;
		}
	}
	if (cfg->log && cfg->log_fd >= 0)
		redirect_stderr(cfg->log, cfg->log_fd);
	lp->saved_changes = lp->srv.changes;
	lp->ckpt_ms = now_ms();
	lp->deadline_ms = now_ms() + FE_LOOP_FIRST_CLIENT_SEC * 1000LL;
	lp->ep = epoll_create1(EPOLL_CLOEXEC);
	if (lp->ep < 0) {
		r = -errno;
		goto out_close_sfd;
	}
	r = watch(lp, lp->sfd, &lp->sfd);
	if (r == 0)
		r = watch(lp, lp->saver.efd, &lp->saver);
	if (r == 0)
		r = watch(lp, lp->lfd, &lp->lfd);
	if (r == 0) {
		int left;

		r = run(lp);
		left = leave(lp);
		if (r == 0)
			r = left;
	}
	close(lp->ep);
out_close_sfd:
	close(lp->sfd);
out_free_saver:
	fe_saver_free(&lp->saver);
out_free_srv:
	fe_srv_free(&lp->srv);
out_free_loop:
	if (lp->lfd >= 0) {
		/* Never served: nobody must try to join us. */
		unlink(cfg->sock);
		close(lp->lfd);
	}
	free(lp);
	return r;
out_close_lfd:
	unlink(cfg->sock);
	close(cfg->listen_fd);
	return r;
}
