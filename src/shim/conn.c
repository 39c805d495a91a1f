/*
 * The connection to the daemon: opened on first need, one per process,
 * above the fds programs use, close-on-exec.  It must never write into a
 * file of the program's: before each use it checks that the fd is still
 * the socket it opened (programs close every fd, or dup2 over ours).
 * Opening the socket, and waiting for a restarted daemon, is sock.c's.
 *
 * Which process the globals belong to is recorded at load time.  A fork
 * child has a copy of them: the lock may be held by a thread that did not
 * come along, and the socket is the parent's conversation, so the child
 * takes them over (claim()) before its first use.  A vfork child or a
 * CLONE_VM clone shares them with their owner: it uses a temporary
 * connection and touches nothing.  The pid cannot tell these two apart; a
 * page the kernel wipes in a fork child and in nothing else
 * (MADV_WIPEONFORK) can, but for a vfork child of a fork child that has
 * not claimed yet, which finds it wiped in the memory the two share and
 * takes the globals over for its parent (fork_child_memory()).  There is
 * no pthread_atfork handler: running one in every fork child makes fork +
 * _exit 7 % slower in CPU time (bench/forkexit, 3 more page faults a
 * fork), in programs that never talk to the daemon as much as in others.
 *
 * The page is made before the process's first connection, not at load:
 * most processes of a build never open one, and a page made, touched and
 * unmapped is two system calls and a fault in each (about 3 faults and
 * 8 us a fork + exec, bench/RESULTS.md).  A process with pid other than
 * the owner's and no page is a child of a process that never connected:
 * there is nothing to take over but the lock, and own_memory() tells
 * whether it should.  With libcs other than glibc the page is made at
 * load (robust_listed()).
 */
#include "shim.h"
#include "sock.h"

#include <linux/kcmp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "common/reply.h"
#include "common/util.h"
#include "fakeenv/env.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int conn_fd = -1;   /* our socket, or -1; guarded by lock */
static dev_t conn_dev;     /* its st_dev and st_ino, to recognise it */
static ino_t conn_ino;
static bool conn_inherited; /* conn_fd is the fork parent's, to close */
/* The process these globals belong to; OWNER_CLAIMING while a child of a
 * process that had no mark takes them over. */
FE_LOAD_DATA static _Atomic pid_t conn_owner;
#define OWNER_CLAIMING ((pid_t)-1)
/* The page's one word: 0 in a fork child that has not claimed yet (the
 * kernel wiped it), CLAIMING while one of its threads does, OWNED once
 * conn_owner is right.  NULL before the first connection, outside a
 * session, or on a kernel without MADV_WIPEONFORK (older than 4.14),
 * where an atfork handler does it (atfork_set). */
enum { MARK_WIPED, MARK_OWNED, MARK_CLAIMING };
FE_LOAD_DATA static _Atomic(_Atomic uint32_t *) fork_mark;
static bool atfork_set; /* guarded by lock */
#ifdef __GLIBC__
#define MARK_AT_LOAD 0
#else
#define MARK_AT_LOAD 1
#endif
static bool plain_io;      /* writev/read, not sendmsg/recv: a seccomp
			      filter is coming or in place; guarded by lock */
static bool conn_was_lost; /* the connection broke: the next one may be
			      to another daemon; guarded by lock */

/* True when fd is still the socket we opened. */
static bool still_ours(int fd)
{
	struct stat st;

	return fe_sys_fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
	       st.st_dev == conn_dev && st.st_ino == conn_ino;
}

/* Take the globals over for fork child pid (this process, or with !here
 * the parent of this vfork child): the lock may have been held by a thread
 * that does not exist there, and the socket is the fork parent's
 * conversation.  Close that copy of it and start afresh. */
static void take_over(pid_t pid, bool here)
{
	pthread_mutex_init(&lock, NULL);
	if (here) {
		if (conn_fd >= 0 && still_ours(conn_fd))
			close(conn_fd);
		conn_fd = -1;
		conn_inherited = false;
	} else {
		/* In a vfork child: the copy is in the parent's fds. */
		conn_inherited = conn_fd >= 0;
	}
	/* The parent's ring: its entries are the parent's changes. */
	fe_ring_forget(false);
	atomic_store(&conn_owner, pid);
}

/* The fallback where the kernel has no MADV_WIPEONFORK. */
static void child_after_fork(void)
{
	take_over(getpid(), true);
}

/* The mark page, made by the owner before its first connection (lock
 * held) or, where MARK_AT_LOAD, at load, before the program has threads.
 * A fork copies one more mapping and none of its pages. */
static void mark_make(void)
{
	const char *atfork;
	/* One byte is one page to mmap, madvise and munmap, which round
	 * lengths up: no sysconf(), whose code and data were two page
	 * faults in every process of a session. */
	size_t page = 1;
	void *p;

	if (atomic_load(&fork_mark) || atfork_set)
		return;
	atfork = fe_env_initial(FE_ENV_ATFORK);
	p = atfork && atfork[0] == '1' ?
		    MAP_FAILED :
		    mmap(NULL, page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED && madvise(p, page, MADV_WIPEONFORK) == 0) {
		*(_Atomic uint32_t *)p = MARK_OWNED;
		atomic_store(&fork_mark, p);
	} else {
		if (p != MAP_FAILED)
			munmap(p, page);
		pthread_atfork(NULL, NULL, child_after_fork);
		atfork_set = true;
	}
}

/*
 * Whether this task was made by glibc's fork (or pthread_create, or is a
 * process's first): those have a robust futex list, which the kernel gives
 * a new task empty and glibc's fork registers again in the child; vfork,
 * posix_spawn and raw clones start without one.  Other libcs register it
 * only for robust mutexes: there it says nothing.
 */
static bool robust_listed(void)
{
	void *head = NULL;
	size_t len = 0;

	return !MARK_AT_LOAD &&
	       fe_syscall(SYS_get_robust_list, 0, &head, &len) == 0 && head;
}

/*
 * Whether this process's memory is its own, not owner's.  A task without
 * a robust list asks kcmp whether owner has its memory: a vfork or
 * posix_spawn parent has, the parent of a raw fork (syscall(SYS_fork),
 * clone without CLONE_VM) has not, and its child, whose lock may be held
 * by a thread that did not come along, must take the globals over rather
 * than wait.  An owner gone (a vfork parent killed) leaves the memory to
 * its children.  Where kcmp is refused they are taken for vfork children;
 * a process whose seccomp filter is coming (plain_io) does not ask, since
 * the filter may kill what it does not know.
 */
static bool own_memory(pid_t owner)
{
	long r;

	if (robust_listed())
		return true;
	if (__atomic_load_n(&plain_io, __ATOMIC_RELAXED))
		return false;
	r = fe_syscall(SYS_kcmp, getpid(), owner, KCMP_VM, 0, 0);
	return r > 0 || (r < 0 && errno == ESRCH);
}

/*
 * Whether a process that found the mark wiped is the fork child it was
 * wiped for, and not a vfork or posix_spawn child of that fork child,
 * made before the fork child's first call: such a child shares the fork
 * child's memory, and takes the globals over for it.  A task without a
 * robust list asks kcmp whether its parent has its memory; where kcmp is
 * refused, or may not be asked (plain_io), the wiped mark is taken at its
 * word.
 */
static bool fork_child_memory(void)
{
	if (robust_listed() || __atomic_load_n(&plain_io, __ATOMIC_RELAXED))
		return true;
	return fe_syscall(SYS_kcmp, getpid(), getppid(), KCMP_VM, 0, 0) != 0;
}

/* claim() where the owner has no mark: it never connected, or the page
 * could not be made (atfork_set, and then only a raw fork child or a
 * process that shares the owner's memory gets here, fork children
 * having taken over). */
static bool claim_unmarked(pid_t owner, pid_t pid)
{
	if (owner != OWNER_CLAIMING) {
		if (!own_memory(owner))
			return false;
		if (atomic_compare_exchange_strong(&conn_owner, &owner,
						   OWNER_CLAIMING)) {
			take_over(pid, true);
			return true;
		}
	}
	/* Another thread of this fork child is taking over: a few calls. */
	while ((owner = atomic_load(&conn_owner)) == OWNER_CLAIMING)
		sched_yield();
	return owner == pid;
}

/* Whether the globals belong to the calling process pid, taking them over
 * first in a fork child that has not yet.  Called before the lock. */
static bool claim(pid_t pid)
{
	pid_t owner = atomic_load(&conn_owner);
	_Atomic uint32_t *m = fork_mark;
	uint32_t v = MARK_WIPED;

	if (owner == pid)
		return true;
	if (owner == 0) {
		/* Before our constructor (another library's constructor
		 * calling in): a lone thread, nothing to take over. */
		pid_t none = 0;

		return atomic_compare_exchange_strong(&conn_owner, &none, pid) ||
		       none == pid;
	}
	if (!m)
		return claim_unmarked(owner, pid);
	if (atomic_compare_exchange_strong(m, &v, MARK_CLAIMING)) {
		/* A vfork child of the fork child takes the globals over
		 * for its parent: the lock may be held by a thread that did
		 * not come along at the fork. */
		bool mine = fork_child_memory();

		take_over(mine ? pid : getppid(), mine);
		atomic_store(m, MARK_OWNED);
		return mine;
	}
	/* Another thread of this fork child is taking over: a few calls. */
	while (v == MARK_CLAIMING) {
		sched_yield();
		v = atomic_load(m);
	}
	return atomic_load(&conn_owner) == pid;
}

/* What enter() saved, for leave(). */
struct guard {
	sigset_t old;  /* the thread's signal mask */
	int saved;     /* errno */
};

/*
 * The one way into the globals: no signal runs until leave() (a handler
 * that stats while this thread holds the lock, or takes the globals over,
 * would deadlock, and one that writes to the socket mid-message would
 * interleave), the shim's own calls meanwhile pass through, and leave()
 * gives errno back as it was.  Returns whether the globals are this
 * process's (claim()); the lock is held either way.
 */
static bool enter(struct guard *g)
{
	sigset_t all;
	bool own;

	g->saved = errno;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &g->old);
	fe_depth++;
	own = claim(getpid());
	pthread_mutex_lock(&lock);
	return own;
}

static void leave(struct guard *g)
{
	pthread_mutex_unlock(&lock);
	fe_depth--;
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
	errno = g->saved;
}

/* One round trip's messages: the request (iov[0] the header, then its
 * tail), and where the reply goes: rep, then up to size bytes into buf
 * (*got: how many came). */
struct xchg {
	const struct iovec *out; /* request: header, then tail parts */
	int nout;
	size_t want;             /* bytes of the request */
	struct fe_rep *rep;
	void *buf;               /* bytes after the reply, or NULL */
	size_t size;             /* room in buf */
	size_t got;              /* bytes received into buf */
};

/*
 * One message each way.  sendmsg and recv fail with ENOTSOCK on anything
 * but a socket: should another thread of the program dup2 a file over our
 * fd between still_ours() and here, nothing is written to it or read from
 * it.  A process that is about to sandbox itself with seccomp (plain_io,
 * set by fe_conn_prepare) uses writev and readv instead, which such a
 * filter is far more likely to allow (and readv for a reply with bytes
 * after it, XGET and XLIST only).  writev has no MSG_NOSIGNAL and
 * needs none: a SOCK_SEQPACKET send takes the kernel's datagram path,
 * which fails with EPIPE on a dead peer without raising SIGPIPE
 * (t-daemon-killed checks it).  The daemon never sends more bytes after
 * the reply than the request said the caller has room for.
 */
static int exchange(int fd, struct xchg *x)
{
	struct iovec in[2] = { { x->rep, sizeof(*x->rep) },
			       { x->buf, x->size } };
	struct msghdr mh = { .msg_iov = (struct iovec *)x->out,
			     .msg_iovlen = (size_t)x->nout };
	struct msghdr mr = { .msg_iov = in, .msg_iovlen = x->buf ? 2 : 1 };
	ssize_t n;

	do
		n = plain_io ? writev(fd, x->out, x->nout) :
			       sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n != x->want)
		return -EPROTO;
	if (!x->rep)
		return 0; /* one-way: in the daemon's queue, nothing comes back */
	do
		n = !plain_io ? recvmsg(fd, &mr, 0) :
		    x->buf    ? readv(fd, in, 2) :
				read(fd, x->rep, sizeof(*x->rep));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ECONNRESET;
	if (fe_rep_check(((const struct fe_req *)x->out[0].iov_base)->op,
			 x->rep, (size_t)n) < 0)
		return -EPROTO;
	x->got = (size_t)n - sizeof(*x->rep);
	return 0;
}

static bool conn_lost(int r)
{
	return r == -EPIPE || r == -ECONNRESET || r == -ENOTCONN ||
	       r == -EBADF || r == -ENOTSOCK || r == -EPROTO;
}

/* The owning process's connection, opened if it has none (or lost it
 * to the program, which may have closed or dup2'd over it: never close
 * an fd that is no longer ours, it is the program's now).  *fresh (if
 * given): whether it was opened now.  After a lost connection the next
 * one may be to a restarted daemon, whose table is not the one mapped.
 * Called with the lock held.  Returns 0 or -errno. */
static int conn_ensure(bool *fresh)
{
	struct stat st;
	int fd, r;

	if (fresh)
		*fresh = false;
	if (conn_inherited) {
		conn_inherited = false;
		if (conn_fd >= 0 && still_ours(conn_fd))
			close(conn_fd);
		conn_fd = -1;
	}
	if (conn_fd >= 0 && !still_ours(conn_fd))
		conn_fd = -1;
	if (conn_fd >= 0)
		return 0;
	mark_make();
	r = fe_sock_open(&fd, &st);
	if (r < 0)
		return r;
	/* A ring belongs to the connection it was made for: the daemon
	 * closes it with that one, and takes what it holds then, maybe
	 * after this connection's first messages. */
	fe_ring_forget(true);
	conn_fd = fd;
	conn_dev = st.st_dev;
	conn_ino = st.st_ino;
	if (conn_was_lost)
		fe_map_forget();
	conn_was_lost = false;
	if (fresh)
		*fresh = true;
	return 0;
}

static int call_locked(bool own, struct xchg *x)
{
	struct stat st;
	int fd, r;

	if (!own) {
		/* Someone else's memory: connect, ask, hang up. */
		r = fe_sock_open(&fd, &st);
		if (r == 0) {
			r = exchange(fd, x);
			close(fd);
		}
		return r;
	}
	if (!x->rep) {
		/* One-way: once, on the connection of the daemon whose
		 * counters the sender raised.  A lost connection may come
		 * back to another daemon (a --state restart), which must not
		 * lower a counter nobody raised there: not sent (-ESTALE),
		 * the sender undoes and waits for a reply instead. */
		if (conn_fd < 0 && conn_was_lost)
			return -ESTALE;
		r = conn_ensure(NULL);
		if (r < 0)
			return r;
		r = exchange(conn_fd, x);
		if (conn_lost(r)) {
			close(conn_fd);
			conn_fd = -1;
			conn_was_lost = true;
		}
		return r;
	}
	/* Twice: a connection found lost is opened again once.  A dying
	 * daemon may still take a connection into its backlog and then
	 * drop it, so a session whose daemon is restarted tries on, a
	 * bounded while. */
	for (int attempt = 0;
	     attempt < 2 ||
	     (fe_sock_may_wait() && attempt < FE_RESTART_WAIT_MS / FE_RESTART_STEP_MS);
	     attempt++) {
		if (attempt >= 2)
			fe_sock_pause();
		r = conn_ensure(NULL);
		if (r < 0)
			return r;
		r = exchange(conn_fd, x);
		if (!conn_lost(r))
			return r;
		close(conn_fd);
		conn_fd = -1;
		conn_was_lost = true;
	}
	return r == -EPROTO ? r : -EHOSTDOWN;
}

int fe_conn_call(struct fe_req *req, const char *tail, struct fe_rep *rep)
{
	size_t n = tail ? strlen(tail) + 1 : 0;

	/* The path is a hint: too long, go without. */
	return n && n <= FE_PATH_MAX ? fe_conn_call_tail(req, tail, n, rep) :
				       fe_conn_call_tail(req, NULL, 0, rep);
}

/* The round trip of every call variant. */
static int call(struct fe_req *req, struct xchg *x)
{
	struct guard g;
	int r;

	req->version = FE_PROTO_VERSION;
	if (x->rep)
		memset(x->rep, 0, sizeof(*x->rep));
	x->got = 0;
	r = call_locked(enter(&g), x);
	leave(&g);
	/* A one-way send that failed is made again as a round trip
	 * (fe_change()), which reconnects or reports. */
	if (r < 0 && x->rep)
		fe_sock_report(r);
	return r;
}

int fe_conn_call_tail(struct fe_req *req, const char *tail, size_t len,
		      struct fe_rep *rep)
{
	struct iovec out[2] = { { req, sizeof(*req) },
				{ (void *)tail, len } };
	struct xchg x = { .out = out, .nout = len ? 2 : 1,
			  .want = sizeof(*req) + len, .rep = rep };

	req->tail_len = (uint32_t)len;
	return call(req, &x);
}

int fe_conn_send(struct fe_req *req, const char *tail, size_t len)
{
	struct iovec out[2] = { { req, sizeof(*req) },
				{ (void *)tail, len } };
	struct xchg x = { .out = out, .nout = len ? 2 : 1,
			  .want = sizeof(*req) + len, .rep = NULL };

	req->flags |= FE_F_ONEWAY;
	req->tail_len = (uint32_t)len;
	return call(req, &x);
}

int fe_conn_xcall(struct fe_req *req, const struct iovec *tail, int ntail,
		  struct fe_rep *rep, void *buf, size_t size, size_t *got)
{
	struct iovec out[1 + FE_CONN_TAIL_PARTS];
	struct xchg x = { .out = out, .nout = 1, .want = sizeof(*req),
			  .rep = rep, .buf = size ? buf : NULL,
			  .size = size };
	int r;

	if (ntail > FE_CONN_TAIL_PARTS)
		return -EINVAL;
	out[0] = (struct iovec){ req, sizeof(*req) };
	for (int i = 0; i < ntail; i++) {
		if (!tail[i].iov_len)
			continue;
		out[x.nout++] = tail[i];
		x.want += tail[i].iov_len;
	}
	req->tail_len = (uint32_t)(x.want - sizeof(*req));
	r = call(req, &x);
	if (got)
		*got = x.got;
	return r;
}

void fe_conn_prepare(void)
{
	struct guard g;
	bool own;

	/* The shared table too, while mmap and recvmsg are still allowed:
	 * stats stay free of round trips under the filter. */
	fe_map_prefetch();

	own = enter(&g);
	plain_io = true;
	if (own)
		(void)conn_ensure(NULL);
	leave(&g);
}

bool fe_conn_filtered(void)
{
	return __atomic_load_n(&plain_io, __ATOMIC_RELAXED);
}

/* Receive a MAP reply and its fds (at most max, the rest closed) on fd.
 * Returns 0 or -errno; *n fds are then ours. */
static int recv_fds(int fd, uint16_t op, struct fe_rep *rep, int *fds,
		    int max, int *n)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * FE_MAP_FDS)];
	} ctl;
	struct iovec iov = { rep, sizeof(*rep) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	ssize_t got;

	*n = 0;
	do
		got = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return -errno;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm;
	     cm = CMSG_NXTHDR(&mh, cm)) {
		size_t k;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int f;

			memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(f));
			if (*n < max)
				fds[(*n)++] = f;
			else
				close(f);
		}
	}
	if (got == 0)
		return -ECONNRESET;
	return fe_rep_check(op, rep, (size_t)got);
}

/* Send op (MAP, RING) on our connection (opened if need be) and receive
 * the reply and its fds.  Called with the lock held by the owning
 * process. */
static int map_once(uint16_t op, struct fe_rep *rep, int *fds, int *n,
		    bool *fresh)
{
	struct fe_req req = { .op = op, .version = FE_PROTO_VERSION };
	ssize_t sent;
	int r;

	*n = 0;
	r = conn_ensure(fresh);
	if (r < 0)
		return r;
	memset(rep, 0, sizeof(*rep));
	do
		sent = send(conn_fd, &req, sizeof(req), MSG_NOSIGNAL);
	while (sent < 0 && errno == EINTR);
	if (sent < 0)
		return -errno;
	if ((size_t)sent != sizeof(req))
		return -EPROTO;
	return recv_fds(conn_fd, op, rep, fds, FE_MAP_FDS, n);
}

/* fe_conn_fds() in the owning process, with the lock held. */
static int map_locked(uint16_t op, int (*install)(const int *fds, int n))
{
	struct fe_rep rep;
	int fds[FE_MAP_FDS];
	int n = 0, r;

	/* Under a seccomp filter: sendmsg, recvmsg and mmap may kill us.
	 * Stats ask with GET from now on. */
	if (plain_io)
		return -ENOSYS;
	for (int attempt = 0; attempt < 2; attempt++) {
		bool fresh;

		r = map_once(op, &rep, fds, &n, &fresh);
		if (r == 0)
			r = rep.err;
		if (r == 0)
			r = install(fds, n);
		for (int i = 0; i < n; i++)
			close(fds[i]);
		n = 0;
		if (!conn_lost(r))
			break;
		/* Never close an fd that is no longer ours (see
		 * call_locked). */
		if (conn_fd >= 0 && still_ours(conn_fd))
			close(conn_fd);
		conn_fd = -1;
		conn_was_lost = true;
		/* A connection opened for this request and closed at once:
		 * a daemon that does not know MAP.  Once is enough. */
		if (fresh)
			break;
	}
	return r;
}

int fe_conn_fds(uint16_t op, int (*install)(const int *fds, int n))
{
	struct guard g;
	int r;

	/* A vfork child or a CLONE_VM clone: the globals are not ours. */
	r = enter(&g) ? map_locked(op, install) : -ESRCH;
	leave(&g);
	return r;
}

bool fe_conn_owned(void)
{
	_Atomic uint32_t *m = fork_mark;

	/* A fork child that has not claimed the globals reads MARK_WIPED;
	 * a vfork child reads its parent's mark and is, for this, one
	 * more thread of it. */
	if (m)
		return atomic_load_explicit(m, memory_order_relaxed) ==
		       MARK_OWNED;
	return atomic_load(&conn_owner) == getpid();
}

int fe_conn_wake(void)
{
	struct fe_req req = { .op = FE_OP_WAKE };

	return fe_conn_send(&req, NULL, 0);
}

__attribute__((constructor)) static void conn_load(void)
{
	int saved = errno;
	pid_t none = 0;

	atomic_compare_exchange_strong(&conn_owner, &none, getpid());
	if (MARK_AT_LOAD && fe_session_init() == FE_SESSION_ON)
		mark_make();
	errno = saved;
}
