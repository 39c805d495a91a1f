/*
 * The supervisor's loop (sup.h): armed processes admitted, each
 * listener's notifications served, fakeenv_supervise() for the launcher.
 */
#include "sup.h"

#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/secarm.h"

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

/* ---- listeners ---- */

/* A free listener slot (grown as needed): its index, or -1. */
static int lst_slot(struct sup *sp)
{
	for (size_t i = 0; i < sp->nlst; i++)
		if (sp->pfd[1 + i].fd < 0)
			return (int)i;
	if (sp->nlst == sp->cap) {
		size_t cap = sp->cap ? 2 * sp->cap : 8;
		void *p = realloc(sp->pfd, (1 + cap) * sizeof(*sp->pfd));
		void *h;

		if (!p)
			return -1;
		sp->pfd = p;
		h = realloc(sp->lst, cap * sizeof(*sp->lst));
		if (!h)
			return -1;
		sp->lst = h;
		sp->cap = cap;
	}
	sp->pfd[1 + sp->nlst].fd = -1;
	return (int)sp->nlst++;
}

/* The listener fd and hello an armed process sends on conn. */
static int recv_hello(int conn, struct fe_sec_hello *h)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { h, sizeof(*h) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	ssize_t n;
	int fd = -1;

	do
		n = recvmsg(conn, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	cm = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	if (n != (ssize_t)sizeof(*h) || h->magic != FE_SEC_MAGIC ||
	    h->ngroups > FE_GROUPS_MAX) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static bool is_listener(int fd)
{
	uint64_t id = 0;

	return ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0 &&
	       errno == ENOENT;
}

/* One armed process: take its listener, then let it run. */
static void admit(struct sup *sp)
{
	struct timeval tv = { 2, 0 };
	struct fe_sec_hello h;
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int conn = accept4(sp->sock, NULL, NULL, SOCK_CLOEXEC);
	int fd, k;

	if (conn < 0)
		return;
	/* Another user's process may connect: it gets nothing. */
	if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 ||
	    cr.uid != (uid_t)getauxval(AT_UID)) {
		close(conn);
		return;
	}
	/* Serving: only now does the peer install its filter. */
	if (write(conn, "", 1) != 1) {
		close(conn);
		return;
	}
	/* Bounded: a peer that never sends must not stop the supervisor. */
	setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	fd = recv_hello(conn, &h);
	/* A listener answers ENOENT for an id it never issued; any other
	 * fd (ENOTTY, EINVAL) would only keep the loop busy. */
	if (fd >= 0 && !is_listener(fd)) {
		close(fd);
		fd = -1;
	}
	k = fd >= 0 ? lst_slot(sp) : -1;
	if (k < 0) {
		if (fd >= 0)
			close(fd);
		close(conn);
		return;
	}
	/* Linux 6.6: the target and the supervisor hand the CPU to each
	 * other instead of waking one another across CPUs, which is most of
	 * what a trapped call costs (it halved bb-stat's time here). */
	(void)ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS,
		    SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	sp->pfd[1 + k] = (struct pollfd){ .fd = fd, .events = POLLIN };
	sp->lst[k] = (struct lst){ .hello = h };
	fe_sup_proc_add(sp, h.pid, k, &h);
	(void)!write(conn, "", 1);
	close(conn);
}

static void lst_close(struct sup *sp, int k)
{
	close(sp->pfd[1 + k].fd);
	sp->pfd[1 + k].fd = -1;
	fe_sup_procs_drop(sp, k);
}

static void serve(struct sup *sp, int k)
{
	int fd = sp->pfd[1 + k].fd;

	memset(sp->n, 0, sp->sizes.seccomp_notif);
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, sp->n) < 0) {
		/* ENOENT: the target went before we looked; EINTR: again.
		 * Anything else will not get better: let the listener go
		 * rather than poll it for ever. */
		if (errno != ENOENT && errno != EINTR)
			lst_close(sp, k);
		return;
	}
	memset(sp->resp, 0, sp->sizes.seccomp_notif_resp);
	sp->resp->id = sp->n->id;
	if (fe_sup_answer(sp, k, sp->n, sp->resp))
		(void)ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, sp->resp);
}

/* Exported: the launcher's supervisor thread (fakeenv/seccomp.h).  Never
 * returns but on an error before the first target: -errno. */
__attribute__((visibility("default"))) int fakeenv_supervise(int sock);

int fakeenv_supervise(int sock)
{
	static struct sup sp;

#ifndef FE_SEC_ARCH
	(void)sock;
	return -ENOSYS; /* no filter for this architecture: nothing to do */
#endif

	if (fe_sup_sys(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, (long)&sp.sizes, 0,
		0) < 0)
		return -errno;
	sp.n = calloc(1, sp.sizes.seccomp_notif);
	sp.resp = calloc(1, sp.sizes.seccomp_notif_resp);
	sp.pfd = calloc(1, sizeof(*sp.pfd));
	if (!sp.n || !sp.resp || !sp.pfd)
		return -ENOMEM;
	sp.sock = sock;
	sp.pfd[0] = (struct pollfd){ .fd = sock, .events = POLLIN };
	for (;;) {
		if (poll(sp.pfd, 1 + sp.nlst, -1) < 0)
			continue;
		if (sp.pfd[0].revents & POLLIN)
			admit(&sp);
		for (size_t k = 0; k < sp.nlst; k++) {
			short ev = sp.pfd[1 + k].revents;

			if (sp.pfd[1 + k].fd < 0)
				continue;
			if (ev & POLLIN)
				serve(&sp, (int)k);
			else if (ev & (POLLHUP | POLLERR | POLLNVAL))
				lst_close(&sp, (int)k);
		}
	}
}
