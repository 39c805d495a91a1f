/*
 * The loop's connections: admitting our own user's, the list of clients
 * by recent activity, making room at the fd limit, closing (and freeing
 * once no event can name them), and sending replies whole or not at all.
 * Every socket is non-blocking: a client that stops reading is closed,
 * never waited for.
 */
#include "loop_int.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/util.h"

/* How long the listening socket stays out of the epoll set after accept
 * failed for lack of fds or memory. */
#define ACCEPT_PAUSE_MS 100
/* The same accept error is logged at most this often. */
#define ACCEPT_LOG_MS 60000

int fe_loop_watch(struct fe_loop *lp, int fd, void *tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };

	return epoll_ctl(lp->ep, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

void fe_conn_input_on(struct fe_loop *lp, struct conn *c, bool on)
{
	struct epoll_event ev = { .events = on ? EPOLLIN : 0, .data.ptr = c };

	(void)epoll_ctl(lp->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

static void unlink_conn(struct fe_loop *lp, struct conn *c)
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

static void push_conn(struct fe_loop *lp, struct conn *c)
{
	c->prev = NULL;
	c->next = lp->conns;
	if (c->next)
		c->next->prev = c;
	else
		lp->tail = c;
	lp->conns = c;
}

void fe_conn_touch(struct fe_loop *lp, struct conn *c)
{
	if (c != lp->conns) {
		unlink_conn(lp, c);
		push_conn(lp, c);
	}
}

/* Close a client.  A launcher that leaves without DETACH has died: its
 * command would run on without it, so the command's group and pid are
 * killed.  c is not freed here: a drain or a checkpoint's answer closes
 * connections whose events may come later in the batch that epoll_wait
 * returned, so it waits on the dead list for fe_conn_free_dead(). */
void fe_conn_close(struct fe_loop *lp, struct conn *c)
{
	/* Once: taking the rest of its ring may meet a bad entry, which
	 * closes it again. */
	if (c->closed)
		return;
	c->closed = true;
	fe_ring_close(lp, c);
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
	c->next = lp->dead;
	lp->dead = c;
	lp->srv.clients--;
	lp->fd_freed = true;
}

void fe_conn_free_dead(struct fe_loop *lp)
{
	while (lp->dead) {
		struct conn *c = lp->dead;

		lp->dead = c->next;
		free(c);
	}
}

/* Take the listening socket out of the set for a while: level-triggered,
 * a pending connection we cannot accept would wake us in a loop. */
static void pause_accept(struct fe_loop *lp, int err)
{
	long long now = fe_now_ms();

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

void fe_accept_resume(struct fe_loop *lp)
{
	int r = fe_loop_watch(lp, lp->lfd, &lp->lfd);

	if (r < 0) {
		lp->resume_ms = fe_now_ms() + ACCEPT_PAUSE_MS;
		return;
	}
	lp->lfd_paused = false;
}

void fe_noise_sum(struct noise *n, bool now)
{
	long long t = fe_now_ms();

	if (!n->unsaid || (!now && t - n->said_ms < NOISE_EVERY_MS))
		return;
	fe_log("daemon: %llu more %s, not logged one by one (%llu since "
	       "the start)",
	       (unsigned long long)n->unsaid, n->what,
	       (unsigned long long)n->total);
	n->unsaid = 0;
	n->said_ms = t;
}

bool fe_noise_count(struct noise *n)
{
	if (++n->total <= NOISE_FIRST) {
		if (n->total == NOISE_FIRST) {
			fe_log("daemon: %d %s: from now on they are counted, "
			       "with one line at most every %d s",
			       NOISE_FIRST, n->what, NOISE_EVERY_MS / 1000);
			n->said_ms = fe_now_ms();
		}
		return true;
	}
	n->unsaid++;
	fe_noise_sum(n, false);
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
static void evict(struct fe_loop *lp)
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
	now = fe_now_ms();
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
static void admit(struct fe_loop *lp, int fd)
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
		if (fe_noise_count(&lp->refused))
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
	r = fe_loop_watch(lp, fd, c);
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

void fe_accept_all(struct fe_loop *lp)
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

/* Send the reply at rep (len bytes) with the n fds (SCM_RIGHTS).  Returns
 * what sendmsg returned, or what send did for the reply without them. */
static ssize_t send_fds_reply(struct conn *c, const void *rep, size_t len,
			      const int *fds, int n)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * FE_MAP_FDS)];
	} ctl;
	struct iovec iov = { (void *)rep, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	memset(&ctl, 0, sizeof(ctl));
	mh.msg_control = ctl.buf;
	mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)n);
	if (sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)len)
		return (ssize_t)len;
	if (errno == ETOOMANYREFS && len == sizeof(struct fe_rep)) {
		/* More fds in flight to clients that have not read them yet
		 * than our RLIMIT_NOFILE (thousands of processes mapping at
		 * once): this one goes without the table and asks us. */
		struct fe_rep no;

		memcpy(&no, rep, sizeof(no));
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

/* Send one reply (with n fds, with the bytes the last request left in
 * srv.rep_data).  Returns false when c was closed. */
static bool send_reply(struct fe_loop *lp, struct conn *c, const void *rep,
		       size_t len, const int *fds, int n)
{
	/* A change that returned, or that a read saw, is in the trace
	 * before its caller goes on. */
	if (lp->srv.trace)
		fe_trace_flush(lp->srv.trace);
	if (c->mute ||
	    (n ? send_fds_reply(c, rep, len, fds, n) :
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
	fe_conn_close(lp, c);
	return false;
}

bool fe_conn_send(struct fe_loop *lp, struct conn *c,
		  const struct fe_call *call)
{
	return send_reply(lp, c, call->reply, call->reply_len, call->fds,
			  call->nfds);
}

bool fe_conn_reply(struct fe_loop *lp, struct conn *c, const void *msg,
		   size_t len)
{
	lp->srv.rep_len = 0;
	return send_reply(lp, c, msg, len, NULL, 0);
}
