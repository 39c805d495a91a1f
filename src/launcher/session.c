/*
 * Starting the session daemon and talking to it; see session.h.  Startup
 * never depends on the fd limit: every fd we make is close-on-exec and the
 * daemon child closes strays with close_range(2), never with a loop up to
 * RLIMIT_NOFILE.
 */
#include "session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/reply.h"
#include "fakeenv/daemon.h"
#include "sockdir.h"
#include "utils.h"

/* The daemon's listening socket, as fakeenvd --listen-fd expects it. */
#define DAEMON_LISTEN_FD 3

/* The daemon's environment: ours without LD_PRELOAD and FAKEENV_*, so it
 * never runs under our own shim, not even when we were started from inside
 * a session whose daemon is gone. */
static char **daemon_env(void)
{
	extern char **environ;
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = xmalloc((n + 1) * sizeof(*env));
	for (size_t i = 0; i < n; i++) {
		const char *v = environ[i];

		if (!strncmp(v, "LD_PRELOAD=", 11) ||
		    !strncmp(v, "FAKEENV_", 8))
			continue;
		env[k++] = environ[i];
	}
	env[k] = NULL;
	return env;
}

__attribute__((noreturn))
static void child_fail(int err, const char *what, const char *path)
{
	fe_msg(err, "cannot start the daemon %s: %s", path, what);
	_exit(FE_EXIT_FAIL);
}

/* Close every fd from 4 up without depending on RLIMIT_NOFILE: inherited
 * fds (a make jobserver pipe, a pipe to tee) must not be held open by a
 * daemon that may outlive us.  /proc/self/fd covers kernels before 5.9. */
static void close_from_4(void)
{
	DIR *d;
	struct dirent *e;

	if (syscall(SYS_close_range, 4U, ~0U, 0U) == 0)
		return;
	d = opendir("/proc/self/fd");
	if (!d)
		return;
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (fd >= 4 && fd != dirfd(d))
			close(fd);
	}
	closedir(d);
}

/*
 * In the forked child: become fakeenvd.  Its own session (setsid) keeps
 * terminal signals meant for CMD away from it; it is told to stop through
 * the protocol, never by signal.  stdout and stdin are /dev/null so it
 * holds no pipe of our caller's open; stderr stays for its messages.
 */
__attribute__((noreturn))
static void exec_daemon(int lfd, const char *path, char *const argv[],
			char *const envp[])
{
	int nul;

	if (setsid() < 0)
		child_fail(errno, "setsid", path);
	if (lfd != DAEMON_LISTEN_FD && dup2(lfd, DAEMON_LISTEN_FD) < 0)
		child_fail(errno, "dup2", path);
	/* dup2 onto itself keeps CLOEXEC: clear it explicitly. */
	if (fcntl(DAEMON_LISTEN_FD, F_SETFD, 0) < 0)
		child_fail(errno, "fcntl", path);
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nul < 0)
		child_fail(errno, "/dev/null", path);
	if (dup2(nul, STDIN_FILENO) < 0 || dup2(nul, STDOUT_FILENO) < 0)
		child_fail(errno, "dup2", path);
	close_from_4();
	/* The raw syscall: a shim preloaded into this launcher would wrap
	 * execve and put LD_PRELOAD back. */
	syscall(SYS_execve, path, argv, envp);
	child_fail(errno, "exec", path);
}

static void describe_status(char *buf, size_t size, int st)
{
	if (WIFEXITED(st))
		snprintf(buf, size, "exit status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, size, "killed by signal %d", WTERMSIG(st));
	else
		snprintf(buf, size, "wait status %#x", (unsigned)st);
}

/* Only ever called when our own daemon is gone (or never ran): the
 * socket is a leftover.  A --state directory stays. */
static void remove_dir(struct fe_sess *s)
{
	if (unlink(s->sock) < 0 && errno != ENOENT)
		fe_msg(errno, "cannot remove %s", s->sock);
	if (!s->keep_dir && rmdir(s->dir) < 0 && errno != ENOENT)
		fe_msg(errno, "cannot remove %s", s->dir);
}

/* Kill and reap the daemon; its wait status, or -1 when there was none. */
static int stop_daemon(struct fe_sess *s)
{
	int st;

	if (s->ctl >= 0) {
		close(s->ctl);
		s->ctl = -1;
	}
	if (s->daemon <= 0)
		return -1;
	kill(s->daemon, SIGKILL);
	while (waitpid(s->daemon, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	s->daemon = 0;
	return st;
}

/* How long a daemon that reset our connection may take to exit: it is
 * leaving by itself (valgrind's leak check alone can take seconds). */
#define LEAVE_WAIT_MS 10000

/* Reap our daemon if it exits within max_ms: its wait status, or -1 when
 * it did not (or there is none). */
static int reap_soon(struct fe_sess *s, int max_ms)
{
	int st;

	for (int ms = 0; s->daemon > 0 && ms < max_ms; ms += 10) {
		pid_t p = waitpid(s->daemon, &st, WNOHANG);

		if (p == s->daemon) {
			s->daemon = 0;
			return st;
		}
		if (p < 0 && errno != EINTR)
			break;
		usleep(10000);
	}
	return -1;
}

void fe_sess_fail(struct fe_sess *s, const char *daemon, int err)
{
	/* A reset connection is a daemon leaving by itself, which closes
	 * its socket a moment before it can be reaped: wait for that,
	 * rather than kill it and report our reset for its reason. */
	int st = err == ECONNRESET ? reap_soon(s, LEAVE_WAIT_MS) : -1;
	bool by_itself = st != -1;
	int killed = stop_daemon(s);
	bool ended;

	if (!by_itself)
		st = killed;
	ended = st != -1;

	/* Say why once: a daemon that exited 125 has said it already, one
	 * that ended by itself tells more than our broken connection. */
	if (ended && WIFEXITED(st) && WEXITSTATUS(st) != FE_EXIT_FAIL)
		fe_msg(0, "cannot start the daemon %s: exit status %d", daemon,
		       WEXITSTATUS(st));
	else if (ended && WIFSIGNALED(st) &&
		 (by_itself || WTERMSIG(st) != SIGKILL))
		fe_msg(0, "cannot start the daemon %s: killed by signal %d",
		       daemon, WTERMSIG(st));
	else if ((!ended || !WIFEXITED(st)) && err == ECONNRESET)
		fe_msg(0, "cannot start the daemon %s: it closed our "
			  "connection and had not exited %d s later",
		       daemon, LEAVE_WAIT_MS / 1000);
	else if (!ended || !WIFEXITED(st))
		fe_msg(err, "cannot start the daemon %s", daemon);
	remove_dir(s);
	exit(FE_EXIT_FAIL);
}

/* A failure before the daemon runs: say what, undo, exit 125. */
__attribute__((noreturn, format(printf, 3, 4)))
static void start_fail(struct fe_sess *s, int err, const char *fmt, ...)
{
	char what[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	fe_msg(err, "%s", what);
	stop_daemon(s);
	remove_dir(s);
	exit(FE_EXIT_FAIL);
}

/* A listening socket bound at s->sock (0600, whatever the umask). */
static int listen_sock(struct fe_sess *s, const struct sockaddr_un *sa)
{
	int lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	mode_t old_mask;
	int r;

	if (lfd < 0)
		start_fail(s, errno, "cannot create a socket");
	/* In a --state directory others may search, no other user may
	 * connect (they would only be refused, and fill the daemon's
	 * log). */
	old_mask = umask(0177);
	r = bind(lfd, (const struct sockaddr *)sa, sizeof(*sa));
	umask(old_mask);
	if (r < 0)
		start_fail(s, errno, "cannot bind %s", s->sock);
	if (listen(lfd, 128) < 0)
		start_fail(s, errno, "cannot listen on %s", s->sock);
	return lfd;
}

/* fakeenvd's command line for s and o, and the strings it points to. */
struct daemon_cmd {
	char fd[16], linger[16], interval[16];
	char *argv[20];
};

static void daemon_argv(struct daemon_cmd *c, const struct fe_sess *s,
			const char *daemon, const struct fe_sess_opts *o)
{
	int argc = 0;

	snprintf(c->fd, sizeof(c->fd), "%d", DAEMON_LISTEN_FD);
	snprintf(c->linger, sizeof(c->linger), "%u", o->linger);
	snprintf(c->interval, sizeof(c->interval), "%u", o->interval);
	c->argv[argc++] = (char *)daemon;
	c->argv[argc++] = FE_DARG_LISTEN_FD;
	c->argv[argc++] = c->fd;
	c->argv[argc++] = o->state ? FE_DARG_STATE : FE_DARG_DIR;
	c->argv[argc++] = s->dir;
	if (o->load) {
		c->argv[argc++] = FE_DARG_LOAD;
		c->argv[argc++] = (char *)o->load;
	}
	if (o->save) {
		c->argv[argc++] = FE_DARG_SAVE;
		c->argv[argc++] = (char *)o->save;
	}
	if (o->state) {
		c->argv[argc++] = FE_DARG_LINGER;
		c->argv[argc++] = c->linger;
	}
	if (o->interval) {
		c->argv[argc++] = FE_DARG_INTERVAL;
		c->argv[argc++] = c->interval;
	}
	if (o->unknown_is_real)
		c->argv[argc++] = FE_DARG_UNKNOWN_IS_REAL;
	if (o->trace) {
		c->argv[argc++] = FE_DARG_TRACE;
		c->argv[argc++] = (char *)o->trace;
	}
	c->argv[argc] = NULL;
}

/*
 * s->ctl connected before the daemon runs: the connection waits in the
 * backlog until the daemon accepts it (after it has loaded its journal).
 * A daemon that refuses its journal removes the socket as it leaves, so
 * a connect after the fork could find no socket and report that instead
 * of the daemon's own message.
 */
static void connect_early(struct fe_sess *s, const struct sockaddr_un *sa)
{
	uid_t uid;

	s->ctl = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s->ctl < 0)
		start_fail(s, errno, "cannot start the daemon: socket");
	if (connect(s->ctl, (const struct sockaddr *)sa, sizeof(*sa)) < 0)
		start_fail(s, errno, "cannot start the daemon: connect %s",
			   s->sock);
	if (!fe_sockdir_peer_ours(s->ctl, &uid))
		start_fail(s, 0,
			   "refused the daemon at %s: it runs as uid %u, "
			   "not as you (uid %u)",
			   s->sock, (unsigned)uid,
			   (unsigned)fe_sockdir_real_uid());
}

/* Bind s->sock, start DAEMON on it, connect and check it with STATS. */
static void spawn(struct fe_sess *s, const char *daemon,
		  const struct fe_sess_opts *o)
{
	struct daemon_cmd cmd;
	struct sockaddr_un sa;
	char **envp;
	int lfd, r;
	pid_t pid;

	if (!fe_sockdir_addr(&sa, s->sock)) /* the callers checked the length */
		start_fail(s, ENAMETOOLONG, "socket %s", s->sock);
	lfd = listen_sock(s, &sa);
	daemon_argv(&cmd, s, daemon, o);
	envp = daemon_env();
	connect_early(s, &sa);
	pid = fork();
	if (pid < 0)
		start_fail(s, errno, "cannot start the daemon: fork");
	if (pid == 0)
		exec_daemon(lfd, daemon, cmd.argv, envp);
	s->daemon = pid;
	free(envp);
	/* Now the daemon holds the only listening fd: if it dies, our
	 * pending connection is reset and the STATS below fails. */
	close(lfd);

	r = fe_sess_ping(s);
	if (r < 0)
		fe_sess_fail(s, daemon, -r);
}

bool fe_sess_alive(const char *path)
{
	struct sockaddr_un sa;
	uid_t uid;
	int fd, r;

	if (!fe_sockdir_addr(&sa, path))
		return false;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (r == 0 && !fe_sockdir_peer_ours(fd, &uid))
		fe_sockdir_die_not_ours(path, uid);
	close(fd);
	return r == 0;
}

int fe_sess_connect(struct fe_sess *s, const char *path)
{
	struct sockaddr_un sa;
	uid_t uid;

	memset(s, 0, sizeof(*s));
	s->ctl = -1;
	if (!fe_sockdir_addr(&sa, path))
		return -ENAMETOOLONG;
	s->ctl = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s->ctl < 0)
		return -errno;
	if (connect(s->ctl, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = errno;

		close(s->ctl);
		s->ctl = -1;
		return -err;
	}
	if (!fe_sockdir_peer_ours(s->ctl, &uid))
		fe_sockdir_die_not_ours(path, uid);
	return 0;
}

char *fe_sess_state_sock(const char *dir)
{
	return xasprintf("%s/" FE_DIR_SOCK, dir);
}

/* Join the daemon serving s->sock, if one answers.  True when joined. */
static bool join(struct fe_sess *s)
{
	struct fe_sess t;

	if (fe_sess_connect(&t, s->sock) < 0)
		return false;
	/* A daemon that is leaving resets our pending connection: the
	 * caller then starts a new one. */
	if (fe_sess_ping(&t) < 0) {
		close(t.ctl);
		return false;
	}
	s->ctl = t.ctl;
	return true;
}

/* The --state directory: made 0700 if missing, then checked. */
static void check_state_dir(const char *dir)
{
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		die_errno("cannot make the state directory %s", dir);
	fe_sockdir_check_state(dir);
}

/*
 * A persistent session: join the daemon of DIR, or start one.  Launchers
 * starting together take turns on DIR/launch.lock, so that only the first
 * starts a daemon and the others join it.  A daemon that is leaving has
 * already removed its socket (the rest see no daemon and start the next
 * one, which waits on DIR/lock until the last journal is written).
 */
static void start_state(struct fe_sess *s, const char *daemon,
			const struct fe_sess_opts *o)
{
	char *lock_path;
	int lock;

	check_state_dir(o->state);
	/* Absolute: FAKEENV_SOCKET must work from any directory. */
	s->dir = realpath(o->state, NULL);
	if (!s->dir)
		die_errno("state directory %s", o->state);
	s->sock = fe_sess_state_sock(s->dir);
	s->keep_dir = true;
	if (strlen(s->sock) >= FE_SUN_PATH_MAX)
		die("state directory %s: the socket path would exceed %zu "
		    "bytes",
		    s->dir, FE_SUN_PATH_MAX - 1);
	if (join(s))
		return;
	lock_path = xasprintf("%s/launch.lock", s->dir);
	lock = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lock < 0)
		die_errno("cannot open %s", lock_path);
	while (flock(lock, LOCK_EX) < 0)
		if (errno != EINTR)
			die_errno("cannot lock %s", lock_path);
	if (!join(s)) {
		/* No daemon answers: the socket file, if any, is a dead
		 * one's. */
		if (unlink(s->sock) < 0 && errno != ENOENT)
			die_errno("cannot remove the stale socket %s", s->sock);
		spawn(s, daemon, o);
	}
	close(lock);
	free(lock_path);
}

void fe_sess_start(struct fe_sess *s, const char *daemon,
		   const struct fe_sess_opts *o)
{
	s->ctl = -1;
	s->daemon = 0;
	s->keep_dir = false;
	if (o->state) {
		start_state(s, daemon, o);
		return;
	}
	s->dir = fe_sockdir_make();
	s->sock = xasprintf("%s/" FE_DIR_SOCK, s->dir);
	spawn(s, daemon, o);
}

int fe_sess_restart(struct fe_sess *s, const char *daemon,
		    const struct fe_sess_opts *o, pid_t pid, pid_t pgid)
{
	char *journal, how[64] = "", when[64] = "";
	time_t now = time(NULL);
	struct stat st;
	struct tm tm;
	int wst, r;

	close(s->ctl);
	s->ctl = -1;
	/* Our child closes its end as it exits, a moment before it can be
	 * reaped: wait for that moment. */
	wst = reap_soon(s, 1000);
	if (wst != -1)
		describe_status(how, sizeof(how), wst);
	free(s->dir);
	free(s->sock);
	start_state(s, daemon, o);
	r = fe_sess_attach(s, pid, pgid);
	if (r < 0)
		fe_sess_fail(s, daemon, -r);
	journal = xasprintf("%s/" FE_DIR_JOURNAL, s->dir);
	if (stat(journal, &st) == 0 && localtime_r(&st.st_mtime, &tm))
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
	if (*when)
		fe_msg(0, "the daemon died%s%s%s; a new one carries on from "
			  "%s, written at %s (%lld s ago): changes made since "
			  "then are lost",
		       *how ? " (" : "", how, *how ? ")" : "", journal, when,
		       (long long)(now - st.st_mtime));
	else
		fe_msg(0, "the daemon died%s%s%s; a new one carries on with "
			  "no journal (none had been written): everything "
			  "recorded so far is lost",
		       *how ? " (" : "", how, *how ? ")" : "");
	free(journal);
	return s->ctl;
}

/* Send req, receive a reply of exactly size bytes into out (a longer one
 * is -EPROTO: the buffer has a byte to spare to see it).  The reply's
 * first field is its err.  Returns 0, that err, or -errno. */
static int xchg(struct fe_sess *s, const struct fe_req *req, void *out,
		size_t size)
{
	char in[sizeof(struct fe_status) + 1];
	int32_t err;
	ssize_t n;

	if (s->ctl < 0)
		return -EBADF;
	if (size >= sizeof(in) || size < sizeof(err))
		return -EINVAL;
	do
		n = send(s->ctl, req, sizeof(*req), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EPIPE ? -ECONNRESET : -errno;
	if ((size_t)n != sizeof(*req))
		return -EPROTO;
	do
		n = recv(s->ctl, in, sizeof(in), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ECONNRESET;
	if ((size_t)n != size || fe_rep_check(req->op, in, (size_t)n) < 0)
		return -EPROTO;
	memcpy(&err, in, sizeof(err));
	memcpy(out, in, size);
	return err;
}

int fe_sess_status(struct fe_sess *s, struct fe_status *st)
{
	struct fe_req req = { .op = FE_OP_STATUS, .version = FE_PROTO_VERSION };

	return xchg(s, &req, st, sizeof(*st));
}

int fe_sess_call(struct fe_sess *s, const struct fe_req *req,
		 struct fe_rep *rep)
{
	return xchg(s, req, rep, sizeof(*rep));
}

int fe_sess_call_data(struct fe_sess *s, const struct fe_req *req,
		      const void *tail, struct fe_rep *rep, void *data,
		      size_t size, size_t *got)
{
	struct iovec out[2] = { { (void *)req, sizeof(*req) },
				{ (void *)tail, req->tail_len } };
	struct iovec in[2] = { { rep, sizeof(*rep) }, { data, size } };
	struct msghdr mo = { .msg_iov = out, .msg_iovlen = 2 };
	struct msghdr mi = { .msg_iov = in, .msg_iovlen = 2 };
	ssize_t n;

	*got = 0;
	if (s->ctl < 0)
		return -EBADF;
	do
		n = sendmsg(s->ctl, &mo, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EPIPE ? -ECONNRESET : -errno;
	if ((size_t)n != sizeof(*req) + req->tail_len)
		return -EPROTO;
	do
		n = recvmsg(s->ctl, &mi, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ECONNRESET;
	if ((mi.msg_flags & MSG_TRUNC) ||
	    fe_rep_check(req->op, in[0].iov_base, (size_t)n) < 0)
		return -EPROTO;
	*got = (size_t)n - sizeof(*rep);
	return rep->err;
}

int fe_sess_ping(struct fe_sess *s)
{
	struct fe_req req = { .op = FE_OP_STATS, .version = FE_PROTO_VERSION };
	struct fe_rep rep;

	return fe_sess_call(s, &req, &rep);
}

int fe_sess_checkpoint(struct fe_sess *s, struct fe_rep *rep)
{
	struct fe_req req = { .op = FE_OP_CHECKPOINT,
			      .version = FE_PROTO_VERSION };

	return fe_sess_call(s, &req, rep);
}

int fe_sess_sync(struct fe_sess *s, struct fe_rep *rep)
{
	struct fe_req req = { .op = FE_OP_SYNC, .version = FE_PROTO_VERSION };

	return fe_sess_call(s, &req, rep);
}

int fe_sess_attach(struct fe_sess *s, pid_t pid, pid_t pgid)
{
	struct fe_req req = {
		.op = FE_OP_SESSION,
		.version = FE_PROTO_VERSION,
		.ino = (uint64_t)pid,
		.dev = (uint64_t)pgid,
	};
	struct fe_rep rep;

	return fe_sess_call(s, &req, &rep);
}

void fe_sess_detach(struct fe_sess *s)
{
	struct fe_req req = { .op = FE_OP_DETACH, .version = FE_PROTO_VERSION };
	struct fe_rep rep;
	int r = fe_sess_call(s, &req, &rep);
	int st = 0;
	pid_t pid;

	if (s->ctl >= 0) {
		close(s->ctl);
		s->ctl = -1;
	}
	/* Usually still running: it serves CMD's leftover children and
	 * leaves by itself when its last client is gone.  Never wait.  A
	 * daemon we joined is not our child at all. */
	do
		pid = s->daemon > 0 ? waitpid(s->daemon, &st, WNOHANG) : 0;
	while (pid < 0 && errno == EINTR);
	if (s->daemon > 0 && pid == s->daemon) {
		s->daemon = 0;
		remove_dir(s);
	}
	if (r < 0) {
		char how[64] = "";

		if (pid > 0)
			describe_status(how, sizeof(how), st);
		fe_msg(-r, "the daemon died before the session ended%s%s%s",
		       *how ? " (" : "", how, *how ? ")" : "");
	}
	free(s->sock);
	free(s->dir);
	s->sock = s->dir = NULL;
}
