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
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "journal/unsaved.h"
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
/* File descriptors kept free of clients: the journal, its temporary file
 * and directory, the log, the table's memfds, the look into /proc. */
#define FD_RESERVE 64

/* Refused connections and bad requests cost their sender nothing: the
 * first NOISE_FIRST of each are logged one by one, the rest are counted
 * and summed up in one line at most every NOISE_EVERY_MS, and at exit. */
#define NOISE_FIRST    5
#define NOISE_EVERY_MS 10000

struct noise {
	const char *what;  /* "refused connections", "bad requests" */
	uint64_t total;    /* since the start */
	uint64_t unsaid;   /* counted, not yet in a summary */
	long long said_ms; /* CLOCK_MONOTONIC ms of the last summary */
};

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
	bool evicting;     /* shut for reading to make room (evict()):
			      what it queued before is served, then it
			      closes */
	bool spoke;        /* a message came: a connection is never shut
			      before its first, which its sender made it
			      for */
	bool closed;       /* conn_close() ran: its fd is closed, it is off
			      the list and on the loop's dead list, freed
			      after the batch of events that may name it */
	struct conn *prev; /* the loop's list of clients, the most
			      recently active first (closed: the next of
			      the dead list) */
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
	uint64_t failures;     /* journal writes that failed */
	uint64_t fail_time;    /* unix time of the last failure */
	int fail_err;          /* its -errno */
	uint32_t fail_what;    /* FE_FAIL_* */
	bool failing;          /* the last write failed, none since worked */
	bool have_dir;         /* dir is set: a --state session */
	struct fe_state_dir dir;
	bool dir_gone;         /* dir is no longer ours: nothing is written,
				  and we leave once no client is left */
	int reserve;           /* fe_unsaved_reserve()'s fd, or -1 */
	bool have_prev;        /* DIR/unsaved was there at the start (or we
				  left one): prev says what it holds */
	struct fe_unsaved prev;
	struct fe_load_stats load;
	bool loaded;
	uint64_t started;      /* unix time */
	bool stop;             /* leave the loop */
	uid_t uid;             /* peers must run as this uid */
	struct noise refused;  /* connections of other users */
	struct noise bad;      /* malformed requests */
	struct conn *conns;    /* open clients, the most recently active
				  first */
	struct conn *tail;     /* the least recently active */
	struct conn *dead;     /* closed, not yet freed (conn_close()) */
	unsigned max_clients;  /* clients kept open at most: RLIMIT_NOFILE
				  less FD_RESERVE */
	unsigned long long nofile; /* RLIMIT_NOFILE, raised to the hard one */
	unsigned evicting;     /* clients with evicting set */
	uint64_t evicted;      /* connections closed to make room */
	long long evict_log_ms; /* when that was last logged, 0: never */
	struct fe_srv srv;
	struct fe_trace trace; /* with cfg->trace: srv.trace points here */
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

static void unlink_conn(struct loop *lp, struct conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		lp->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		lp->tail = c->prev;
	c->prev = c->next = NULL;
}

static void push_conn(struct loop *lp, struct conn *c)
{
	c->prev = NULL;
	c->next = lp->conns;
	if (c->next)
		c->next->prev = c;
	else
		lp->tail = c;
	lp->conns = c;
}

/* Close a client.  A launcher that leaves without DETACH has died: its
 * command would run on without it, so the command's group and pid are
 * killed.  c is not freed here: a drain or a checkpoint's answer closes
 * connections whose events may come later in the batch that epoll_wait
 * returned, so it waits on the dead list for free_dead(). */
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
	unlink_conn(lp, c);
	if (c->evicting)
		lp->evicting--;
	c->closed = true;
	c->next = lp->dead;
	lp->dead = c;
	lp->srv.clients--;
	lp->fd_freed = true;
}

/* Free the closed connections, once no event can name them. */
static void free_dead(struct loop *lp)
{
	while (lp->dead) {
		struct conn *c = lp->dead;

		lp->dead = c->next;
		free(c);
	}
}

/* Take the listening socket out of the set for a while: level-triggered,
 * a pending connection we cannot accept would wake us in a loop. */
static void pause_accept(struct loop *lp, int err)
{
	long long now = now_ms();

	if (err != lp->accept_err || now - lp->accept_log_ms >= ACCEPT_LOG_MS) {
		fe_log("daemon: accept: %s (%lu clients, RLIMIT_NOFILE %llu); "
		       "new connections wait until one closes",
		       fe_strerror(err), (unsigned long)lp->srv.clients,
		       lp->nofile);
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

/* Log the summary of what n counted and did not log, if there is any and
 * the last was long enough ago (or now is true). */
static void noise_sum(struct noise *n, bool now)
{
	long long t = now_ms();

	if (!n->unsaid || (!now && t - n->said_ms < NOISE_EVERY_MS))
		return;
	fe_log("daemon: %llu more %s, not logged one by one (%llu since "
	       "the start)",
	       (unsigned long long)n->unsaid, n->what,
	       (unsigned long long)n->total);
	n->unsaid = 0;
	n->said_ms = t;
}

/* Count one event of n: true when its own line is to be logged. */
static bool noise_count(struct noise *n)
{
	if (++n->total <= NOISE_FIRST) {
		if (n->total == NOISE_FIRST) {
			fe_log("daemon: %d %s: from now on they are counted, "
			       "with one line at most every %d s",
			       NOISE_FIRST, n->what, NOISE_EVERY_MS / 1000);
			n->said_ms = now_ms();
		}
		return true;
	}
	n->unsaid++;
	noise_sum(n, false);
	return false;
}

/*
 * Make room for a new client at the fd limit: the least recently active
 * clients are shut for reading, so that nothing more can be sent to us on
 * them (the sender gets EPIPE at once; the shim then reconnects, or a
 * one-way change is made again as a round trip), while everything they
 * queued before is still served and answered; each closes at its end of
 * stream.  So every process gets its answers, however many there are,
 * and no change is lost.  Never the launcher's connection (closing it
 * kills the command) nor one waiting for a checkpoint.
 */
static void evict(struct loop *lp)
{
	long long now;

	for (struct conn *c = lp->tail;
	     c && lp->srv.clients - lp->evicting > lp->max_clients;
	     c = c->prev) {
		if (c->evicting || c->mute || c->ckpt_wait ||
		    c->sess.attached || !c->spoke)
			continue;
		if (shutdown(c->fd, SHUT_RD) < 0)
			continue;
		c->evicting = true;
		lp->evicting++;
		lp->evicted++;
	}
	now = now_ms();
	if (!lp->evict_log_ms || now - lp->evict_log_ms >= ACCEPT_LOG_MS) {
		fe_log("daemon: %lu clients at once, %u at most with %llu open "
		       "files (RLIMIT_NOFILE): closing the "
		       "connections of the least recently active ones, which "
		       "reconnect at their next call (%llu so far)",
		       (unsigned long)lp->srv.clients, lp->max_clients, lp->nofile,
		       (unsigned long long)lp->evicted);
		lp->evict_log_ms = now;
	}
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
		if (noise_count(&lp->refused))
			fe_log("daemon: refusing pid %d: uid %u is not ours "
			       "(%u)",
			       (int)cred.pid, (unsigned)cred.uid,
			       (unsigned)lp->uid);
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
	c->sess.peer = cred.pid;
	/* Now, while the peer surely runs: its first change may come as it
	 * exits. */
	if (lp->srv.trace)
		fe_trace_comm(cred.pid, c->sess.comm);
	r = watch(lp, fd, c);
	if (r < 0) {
		fe_log("daemon: refusing pid %d: epoll: %s", (int)cred.pid,
		       fe_strerror(-r));
		free(c);
		close(fd);
		return;
	}
	push_conn(lp, c);
	lp->srv.clients++;
	lp->had_client = true;
	if (lp->srv.clients - lp->evicting > lp->max_clients)
		evict(lp);
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
	if (sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) ==
	    (ssize_t)sizeof(*rep))
		return (ssize_t)sizeof(*rep);
	if (errno == ETOOMANYREFS) {
		/* More fds in flight to clients that have not read them yet
		 * than our RLIMIT_NOFILE (thousands of processes mapping at
		 * once): this one goes without the table and asks us. */
		struct fe_rep no = *rep;

		no.err = -ETOOMANYREFS;
		return send(c->fd, &no, sizeof(no), MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	return -1;
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
	/* A change that returned, or that a read saw, is in the trace
	 * before its caller goes on. */
	if (lp->srv.trace)
		fe_trace_flush(lp->srv.trace);
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

/* A journal write failed (what: FE_FAIL_*): counted, kept for STATUS,
 * logged.  The unsaved changes stay unsaved until a write succeeds. */
static void ckpt_failed(struct loop *lp, uint32_t what, int r)
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
		       lp->dir.path, (unsigned long long)unsaved(lp),
		       unsaved(lp) == 1 ? " is" : "s are");
	else
		fe_log("daemon: %s to %s: %s; the last journal is intact, "
		       "%llu change%s not on disk (%llu failed write%s)",
		       what == FE_FAIL_EXIT ? "last write" : "checkpoint",
		       lp->cfg->save, fe_strerror(-r),
		       (unsigned long long)unsaved(lp),
		       unsaved(lp) == 1 ? "" : "s",
		       (unsigned long long)lp->failures,
		       lp->failures == 1 ? "" : "s");
}

/* Whether DIR may be written to: false (and the failure counted, once
 * noticed) when it is no longer the directory we locked. */
static bool dir_ours(struct loop *lp)
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
static void say_long_paths(struct loop *lp)
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
	if (!dir_ours(lp)) {
		lp->ckpt_ms = now_ms();
		ckpt_answer(lp, -ESTALE, 0, 0);
		return;
	}
	reap(lp);
	say_long_paths(lp);
	t0 = now_us();
	sn = fe_snap_take(&lp->srv.tab);
	lp->snap_us = (uint64_t)(now_us() - t0);
	r = sn ? fe_saver_start(&lp->saver, sn, lp->cfg->save) : -ENOMEM;
	if (r < 0) {
		ckpt_failed(lp, FE_FAIL_CHECKPOINT, r);
		/* The interval tries again in its time, not at once. */
		lp->ckpt_ms = now_ms();
		ckpt_answer(lp, r, 0, 0);
		return;
	}
	lp->snap_changes = lp->srv.changes;
}

static void ckpt_written(struct loop *lp, int r, uint64_t bytes,
			 uint64_t changes, uint32_t what)
{
	lp->ckpt_ms = now_ms();
	if (r < 0) {
		/* -ESTALE from the writer's own look at DIR. */
		if (lp->have_dir && !lp->dir_gone &&
		    fe_state_dir_check(&lp->dir) < 0)
			(void)dir_ours(lp);
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
	ckpt_written(lp, r, bytes, lp->snap_changes, FE_FAIL_CHECKPOINT);
	ckpt_answer(lp, r, records, bytes);
	if (lp->ckpt_again)
		ckpt_start(lp);
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
static void leave_unsaved(struct loop *lp)
{
	struct fe_unsaved u = {
		.time = (uint64_t)time(NULL),
		.changes = unsaved(lp),
		.err = lp->fail_err,
	};
	int r;

	if (!lp->have_dir || !dir_ours(lp))
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
	if (!dir_ours(lp)) {
		ckpt_answer(lp, -ESTALE, 0, 0);
		return -ESTALE;
	}
	reap(lp);
	say_long_paths(lp);
	sn = fe_snap_take(&lp->srv.tab);
	r = !sn ? -ENOMEM :
	    lp->have_dir ? fe_snap_save_dir(sn, &lp->dir, &bytes) :
			   fe_snap_save(sn, lp->cfg->save, &bytes);
	if (sn)
		records = fe_snap_count(sn);
	fe_snap_free(sn);
	ckpt_written(lp, r, bytes, lp->srv.changes, FE_FAIL_EXIT);
	ckpt_answer(lp, r, records, bytes);
	if (r < 0 && unsaved(lp))
		leave_unsaved(lp);
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
		.failures = lp->failures,
		.fail_time = lp->fail_time,
		.fail_err = lp->fail_err,
		.fail_what = lp->fail_what,
	};

	if (lp->cfg->save)
		st.flags |= FE_S_JOURNAL;
	if (lp->saver.busy)
		st.flags |= FE_S_SAVING;
	if (lp->loaded)
		st.flags |= FE_S_LOADED;
	if (lp->failing)
		st.flags |= FE_S_FAILING;
	if (lp->have_prev) {
		st.flags |= FE_S_PREV_LOST;
		st.prev_time = lp->prev.time;
		st.prev_changes = lp->prev.changes;
		st.prev_err = lp->prev.err;
	}
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
	if (noise_count(&lp->bad))
		fe_log("daemon: pid %d: bad request (%s, %ld bytes): closing "
		       "its connection",
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
		c->spoke = true;
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
	if (c->closed)
		return; /* by an event earlier in this batch */
	if (c->ckpt_wait) {
		/* Its input is off: only a hang-up wakes us. */
		if (events & (EPOLLHUP | EPOLLERR))
			conn_close(lp, c);
		return;
	}
	if (c != lp->conns) {
		/* The most recently active first: evict() takes the last. */
		unlink_conn(lp, c);
		push_conn(lp, c);
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
		c->spoke = true;
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
		free_dead(lp);
		if (n > 0) {
			long long t = now_us();

			/* The second of two within SPIN_US: a burst. */
			if (t - last_us < SPIN_US)
				spin_until = t + SPIN_US;
			last_us = t;
		} else if (spin)
			continue; /* still looking: nothing else is due yet */
		if (lp->srv.trace)
			fe_trace_flush(lp->srv.trace);
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
			/* A directory that is no longer ours can be given
			 * nothing more: no lingering for it. */
			lp->linger_ms = now_ms() + (dir_ours(lp) ?
				lp->cfg->linger * 1000LL : 0);
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

	/* Through DIR's fd: the path may lead to a new DIR by now, whose
	 * socket is another daemon's. */
	if ((lp->have_dir ? unlinkat(lp->dir.fd, "sock", 0) :
			    unlink(lp->cfg->sock)) < 0 &&
	    errno != ENOENT)
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
	free_dead(lp);
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

/*
 * Every process of the session that made a faked call holds a connection:
 * a big parallel build has thousands.  The soft limit (often 1,024) goes
 * up to the hard one; the clients beyond what it leaves are made room for
 * by evict().
 */
static void raise_nofile(struct loop *lp)
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
	lp->refused.what = "refused connections";
	lp->bad.what = "bad requests";
	lp->linger_ms = -1;
	lp->started = (uint64_t)time(NULL);
	raise_nofile(lp);
	lp->reserve = -1;
	if (cfg->state && cfg->state_fd >= 0) {
		r = fe_state_dir_init(&lp->dir, cfg->state, cfg->state_fd,
				      "journal");
		if (r < 0)
			goto out_free_loop;
		lp->have_dir = true;
		r = fe_unsaved_read(cfg->state_fd, FE_UNSAVED_NAME, &lp->prev);
		if (r < 0)
			fe_log("daemon: %s/%s: %s", cfg->state,
			       FE_UNSAVED_NAME, fe_strerror(-r));
		lp->have_prev = r > 0;
		lp->reserve = fe_unsaved_reserve(cfg->state_fd);
	}
	r = fe_srv_init(&lp->srv, cfg->unknown_is_real);
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
		noise_sum(&lp->refused, true);
		noise_sum(&lp->bad, true);
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
	free(lp);
	return r;
out_close_lfd:
	unlink(cfg->sock);
	close(cfg->listen_fd);
	return r;
}
