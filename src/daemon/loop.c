/*
 * The event loop; see loop.h.  Level-triggered epoll; every fd is
 * non-blocking, so a client that stops reading or a burst of connections
 * never stalls the others.  Nothing here touches the disk.
 */
#include "loop.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "serve.h"

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
	struct conn *prev; /* the loop's list of clients */
	struct conn *next;
};

struct loop {
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
	bool stop;             /* leave the loop */
	uid_t uid;             /* peers must run as this uid */
	struct conn *conns;    /* open clients */
	struct fe_srv srv;
	union {
		struct fe_req req; /* alignment for the header */
		char bytes[FE_REQ_BUF];
	} buf;
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * SIGTERM and SIGUSR1 (reserved for checkpoint) are blocked and read from
 * a signalfd.  The others a terminal, a parent or a careless kill may send
 * are ignored: a Ctrl-C meant for the command must not take the records
 * with it.  SIGTSTP/TTIN/TTOU: when setsid() failed we may still share the
 * terminal's session.  Returns the signalfd or -errno.
 */
static int setup_signals(void)
{
	static const int ignored[] = { SIGPIPE, SIGHUP,  SIGINT,  SIGQUIT,
				       SIGWINCH, SIGUSR2, SIGALRM, SIGTSTP,
				       SIGTTIN,  SIGTTOU };
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

static void read_signals(struct loop *lp)
{
	struct signalfd_siginfo si;

	while (read(lp->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGTERM)
			lp->stop = true;
		/* SIGUSR1 asks for a checkpoint: nothing is journaled yet. */
	}
}

/* Send rep to c; a MAP reply carries the table's memfds (SCM_RIGHTS).
 * Returns what send/sendmsg returned. */
static ssize_t send_reply(struct loop *lp, struct conn *c,
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

	if (lp->buf.req.op != FE_OP_MAP || rep->err != 0)
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

/* Serve the messages waiting on c, up to MSGS_PER_WAKE; may close c. */
static void conn_input(struct loop *lp, struct conn *c)
{
	for (int i = 0; i < MSGS_PER_WAKE; i++) {
		ssize_t n = recv(c->fd, lp->buf.bytes, sizeof(lp->buf.bytes),
				 MSG_TRUNC | MSG_DONTWAIT);
		const char *why;
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
		/* With MSG_TRUNC, n is the real length even past the
		 * buffer: an over-long message fails the length check. */
		if (fe_req_check(lp->buf.bytes, (size_t)n, &why) < 0) {
			fe_log("daemon: pid %d: bad request (%s, %ld bytes): "
			       "closing its connection",
			       (int)c->peer, why, (long)n);
			conn_close(lp, c);
			return;
		}
		fe_serve_req(&lp->srv, &c->sess, &lp->buf.req,
			     lp->buf.req.tail_len ?
				     lp->buf.bytes + sizeof(struct fe_req) :
				     NULL,
			     &rep);
		if (c->mute || send_reply(lp, c, &rep) == (ssize_t)sizeof(rep))
			continue;
		if (errno == EPIPE || errno == ECONNRESET) {
			c->mute = true;
			continue;
		}
		fe_log("daemon: pid %d: reply: %s: closing its connection",
		       (int)c->peer,
		       errno == EAGAIN || errno == EWOULDBLOCK ?
			       "it does not read its replies" :
			       fe_strerror(errno));
		conn_close(lp, c);
		return;
	}
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
	if (lp->lfd_paused && (until < 0 || lp->resume_ms < until))
		until = lp->resume_ms;
	if (until < 0)
		return -1;
	now = now_ms();
	return until <= now ? 0 : (int)(until - now);
}

/* Returns 0 when told to stop, or -errno when epoll fails. */
static int run(struct loop *lp)
{
	struct epoll_event evs[MAX_EVENTS];

	while (!lp->stop) {
		int n = epoll_wait(lp->ep, evs, MAX_EVENTS, next_timeout(lp));

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
			else
				conn_input(lp, tag);
		}
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
			if (!lp->srv.clients)
				lp->stop = true;
		}
		if (!lp->had_client && now_ms() >= lp->deadline_ms) {
			fe_log("daemon: no client within %d s: exiting",
			       FE_LOOP_FIRST_CLIENT_SEC);
			lp->stop = true;
		}
	}
	return 0;
}

int fe_loop_run(int listen_fd, bool unknown_is_real)
{
	struct loop *lp = calloc(1, sizeof(*lp));
	int r;

	if (!lp) {
		r = -ENOMEM;
		goto out_close_lfd;
	}
	lp->lfd = listen_fd;
	lp->uid = getuid();
	lp->deadline_ms = now_ms() + FE_LOOP_FIRST_CLIENT_SEC * 1000LL;
	r = fe_srv_init(&lp->srv, unknown_is_real);
	if (r < 0)
		goto out_free_loop;
	lp->sfd = setup_signals();
	if (lp->sfd < 0) {
		r = lp->sfd;
		goto out_free_srv;
	}
	lp->ep = epoll_create1(EPOLL_CLOEXEC);
	if (lp->ep < 0) {
		r = -errno;
		goto out_close_sfd;
	}
	r = watch(lp, lp->sfd, &lp->sfd);
	if (r < 0)
		goto out_close_ep;
	r = watch(lp, lp->lfd, &lp->lfd);
	if (r < 0)
		goto out_close_ep;
	r = run(lp);
	while (lp->conns) {
		/* Leaving on SIGTERM is not the launcher dying. */
		lp->conns->sess.attached = false;
		conn_close(lp, lp->conns);
	}
out_close_ep:
	close(lp->ep);
out_close_sfd:
	close(lp->sfd);
out_free_srv:
	fe_srv_free(&lp->srv);
out_free_loop:
	free(lp);
out_close_lfd:
	close(listen_fd);
	return r;
}
