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
#include <sys/auxv.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/reply.h"
#include "utils.h"

#define SUN_PATH_MAX sizeof(((struct sockaddr_un *)0)->sun_path)
#define SOCK_NAME    "sock"
#define DIR_TEMPLATE "fakeenv.XXXXXX"

/* The daemon's listening socket, as fakeenvd --listen-fd expects it. */
#define DAEMON_LISTEN_FD 3

static bool fill_addr(struct sockaddr_un *sa, const char *path)
{
	size_t len = strlen(path);

	if (len >= SUN_PATH_MAX)
		return false;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, path, len + 1);
	return true;
}

/* Our real uid as the kernel gave it at exec.  Not getuid() alone: run
 * inside a session (`fakeenv status` from CMD), the shim fakes it. */
static uid_t real_uid(void)
{
	return (uid_t)getauxval(AT_UID);
}

/* Whether uid is us: the real user, or who the shim says we are. */
static bool is_us(uid_t uid)
{
	return uid == real_uid() || uid == getuid();
}

/* Whether the daemon we connected to on fd runs as our own user
 * (SO_PEERCRED: the uid it listened as); *uid gets its uid.  Another
 * user's, at a path swapped under us, could answer anything. */
static bool peer_ours(int fd, uid_t *uid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		die_errno("cannot check the daemon's user: SO_PEERCRED");
	*uid = cred.uid;
	return cred.uid == real_uid();
}

__attribute__((noreturn))
static void die_not_ours(const char *path, uid_t uid)
{
	die("refused the daemon at %s: it runs as uid %u, not as you "
	    "(uid %u)",
	    path, (unsigned)uid, (unsigned)real_uid());
}

/*
 * Whether nobody but us (and root) can replace what lies at DIR, an
 * existing directory: every directory above its real path must be
 * root's or ours and not writable by group or others, unless it is
 * sticky and the entry below it on the way is ours (ssh's secure_path
 * rule, with the exception that makes /tmp usable).  DIR itself is the
 * caller's to check.  Returns 0, or -1 with why (of size bytes) saying
 * which directory fails and how.
 */
static int secure_path(const char *dir, char *why, size_t size)
{
	char *path = realpath(dir, NULL);
	struct stat st;
	uid_t below;
	int r = -1;

	if (!path || lstat(path, &st) < 0) {
		snprintf(why, size, "%s", strerror(errno));
		free(path);
		return -1;
	}
	below = st.st_uid;
	while (strcmp(path, "/")) {
		char *slash = strrchr(path, '/');

		slash[slash == path] = '\0'; /* "/a" becomes "/" */
		if (lstat(path, &st) < 0) {
			snprintf(why, size, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (!S_ISDIR(st.st_mode)) {
			snprintf(why, size, "%s: not a directory", path);
			goto out;
		}
		if (st.st_uid != 0 && !is_us(st.st_uid)) {
			snprintf(why, size,
				 "the directory %s above it is owned by uid "
				 "%u, who could replace what is in it",
				 path, (unsigned)st.st_uid);
			goto out;
		}
		if ((st.st_mode & 022) &&
		    !((st.st_mode & S_ISVTX) && is_us(below))) {
			snprintf(why, size,
				 "the directory %s above it is writable by "
				 "%s (mode %04o)%s, so another user could "
				 "replace what is in it",
				 path, st.st_mode & 002 ? "others" : "its group",
				 (unsigned)(st.st_mode & 07777),
				 st.st_mode & S_ISVTX ?
					 " and what is below it there is not "
					 "ours" :
					 "");
			goto out;
		}
		below = st.st_uid;
	}
	r = 0;
out:
	free(path);
	return r;
}

bool fe_sess_alive(const char *path)
{
	struct sockaddr_un sa;
	uid_t uid;
	int fd, r;

	if (!fill_addr(&sa, path))
		return false;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (r == 0 && !peer_ours(fd, &uid))
		die_not_ours(path, uid);
	close(fd);
	return r == 0;
}

/* A base directory mkdtemp may work in: absolute (FAKEENV_SOCKET must be
 * absolute), a directory, writable and searchable.  0 or -errno. */
static int check_base(const char *base)
{
	struct stat st;

	if (base[0] != '/')
		return -EINVAL;
	if (stat(base, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (access(base, W_OK | X_OK) < 0)
		return -errno;
	return 0;
}

/* A private directory older than this with no daemon answering on its
 * socket is a leftover: a launcher between mkdtemp and listen holds one
 * for microseconds, never for this long. */
#define STALE_DIR_AGE 10

/* Whether a daemon listens on SOCK; a full backlog counts as listening.
 * Never blocks. */
static bool sock_answers(int dfd, const char *sock)
{
	struct sockaddr_un sa;
	char path[64];
	int fd, r;

	/* Connect through /proc/self/fd: BASE's path may be too long for
	 * sun_path when the socket's own path is not. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dfd, sock);
	if (!fill_addr(&sa, path))
		return true;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return true;
	r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (r < 0 && (errno == ECONNREFUSED || errno == ENOENT))
		r = -1;
	else
		r = 0;
	close(fd);
	return r == 0;
}

/*
 * Remove what launchers of ours killed before their command started left
 * in BASE: directories named like ours, owned by us, 0700, older than
 * STALE_DIR_AGE, holding at most a socket no daemon answers on.  A daemon
 * removes its directory when it exits; a launcher killed by SIGKILL
 * before the daemon ran cannot.  Errors are ignored: this is tidying.
 */
static void remove_stale_dirs(const char *base)
{
	const size_t plen = sizeof(DIR_TEMPLATE) - 7;
	time_t now = time(NULL);
	DIR *d = opendir(base);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct stat st;
		int dfd;

		if (strncmp(e->d_name, DIR_TEMPLATE, plen) != 0 ||
		    strlen(e->d_name) != sizeof(DIR_TEMPLATE) - 1 ||
		    (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
			continue;
		dfd = openat(dirfd(d), e->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			continue;
		if (fstat(dfd, &st) == 0 && st.st_uid == real_uid() &&
		    (st.st_mode & 07777) == 0700 &&
		    st.st_mtime < now - STALE_DIR_AGE &&
		    !sock_answers(dfd, SOCK_NAME)) {
			(void)unlinkat(dfd, SOCK_NAME, 0);
			(void)unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
		}
		close(dfd);
	}
	closedir(d);
}

/*
 * The private directory: under $XDG_RUNTIME_DIR (per-user, 0700, cleaned at
 * logout), else $TMPDIR, else /tmp; the first that works wins, so a stale
 * or too long XDG_RUNTIME_DIR falls back quietly.  mkdtemp makes it 0700,
 * which with SO_PEERCRED in the daemon keeps other users out.
 */
static char *make_dir(void)
{
	const char *bases[] = { getenv("XDG_RUNTIME_DIR"), getenv("TMPDIR"),
				"/tmp" };
	const char *last = "/tmp";
	char why[PATH_MAX + 256];
	int err = 0;

	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		const char *base = bases[i];
		size_t len;
		char *dir;

		if (!base || !*base)
			continue;
		last = base;
		err = -check_base(base);
		if (err)
			continue;
		remove_stale_dirs(base);
		len = strlen(base);
		dir = xasprintf("%s%s" DIR_TEMPLATE, base,
				base[len - 1] == '/' ? "" : "/");
		if (strlen(dir) + sizeof("/" SOCK_NAME) > SUN_PATH_MAX) {
			err = ENAMETOOLONG;
		} else if (mkdtemp(dir)) {
			/* Ours and 0700, but the place it is in must be
			 * safe too: the next base if it is not. */
			if (secure_path(dir, why, sizeof(why)) == 0)
				return dir;
			rmdir(dir);
			err = EPERM;
		} else {
			err = errno;
		}
		free(dir);
	}
	if (err == ENAMETOOLONG)
		die("cannot make the socket directory in %s: the socket path "
		    "would exceed %zu bytes",
		    last, SUN_PATH_MAX - 1);
	if (err == EPERM)
		die("cannot make the socket directory in %s: %s", last, why);
	errno = err;
	die_errno("cannot make the socket directory in %s", last);
}

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

/* Bind s->sock, start DAEMON on it, connect and check it with STATS. */
static void spawn(struct fe_sess *s, const char *daemon,
		  const struct fe_sess_opts *o)
{
	struct sockaddr_un sa;
	char fdbuf[16], linger[16], interval[16];
	char *argv[20];
	char **envp;
	struct fe_req req = { .op = FE_OP_STATS, .version = FE_PROTO_VERSION };
	struct fe_rep rep;
	int lfd, argc = 0, r;
	mode_t old_mask;
	uid_t uid;
	pid_t pid;

	if (!fill_addr(&sa, s->sock)) /* the callers checked the length */
		start_fail(s, ENAMETOOLONG, "socket %s", s->sock);

	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		start_fail(s, errno, "cannot create a socket");
	/* The socket file is made 0600 whatever the caller's umask: in a
	 * --state directory others may search, no other user may connect
	 * (they would only be refused, and fill the daemon's log). */
	old_mask = umask(0177);
	r = bind(lfd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old_mask);
	if (r < 0)
		start_fail(s, errno, "cannot bind %s", s->sock);
	if (listen(lfd, 128) < 0)
		start_fail(s, errno, "cannot listen on %s", s->sock);

	snprintf(fdbuf, sizeof(fdbuf), "%d", DAEMON_LISTEN_FD);
	snprintf(linger, sizeof(linger), "%u", o->linger);
	snprintf(interval, sizeof(interval), "%u", o->interval);
	argv[argc++] = (char *)daemon;
	argv[argc++] = "--listen-fd";
	argv[argc++] = fdbuf;
	argv[argc++] = o->state ? "--state" : "--dir";
	argv[argc++] = s->dir;
	if (o->load) {
		argv[argc++] = "--load";
		argv[argc++] = (char *)o->load;
	}
	if (o->save) {
		argv[argc++] = "--save";
		argv[argc++] = (char *)o->save;
	}
	if (o->state) {
		argv[argc++] = "--linger";
		argv[argc++] = linger;
	}
	if (o->interval) {
		argv[argc++] = "--checkpoint-interval";
		argv[argc++] = interval;
	}
	if (o->unknown_is_real)
		argv[argc++] = "--unknown-is-real";
	if (o->trace) {
		argv[argc++] = "--trace";
		argv[argc++] = (char *)o->trace;
	}
	argv[argc] = NULL;
	envp = daemon_env();

	/* Connected before the daemon runs: the connection waits in the
	 * backlog until the daemon accepts it (after it has loaded its
	 * journal).  A daemon that refuses its journal removes the socket
	 * as it leaves, so a connect after the fork could find no socket
	 * and report that instead of the daemon's own message. */
	s->ctl = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s->ctl < 0)
		start_fail(s, errno, "cannot start the daemon: socket");
	if (connect(s->ctl, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		start_fail(s, errno, "cannot start the daemon: connect %s",
			   s->sock);
	if (!peer_ours(s->ctl, &uid))
		start_fail(s, 0, "refused the daemon at %s: it runs as uid %u, "
			   "not as you (uid %u)",
			   s->sock, (unsigned)uid, (unsigned)real_uid());

	pid = fork();
	if (pid < 0)
		start_fail(s, errno, "cannot start the daemon: fork");
	if (pid == 0)
		exec_daemon(lfd, daemon, argv, envp);
	s->daemon = pid;
	free(envp);
	/* Now the daemon holds the only listening fd: if it dies, our
	 * pending connection is reset and the STATS below fails. */
	close(lfd);

	r = fe_sess_call(s, &req, &rep);
	if (r < 0)
		fe_sess_fail(s, daemon, -r);
}

int fe_sess_connect(struct fe_sess *s, const char *path)
{
	struct sockaddr_un sa;
	uid_t uid;

	memset(s, 0, sizeof(*s));
	s->ctl = -1;
	if (!fill_addr(&sa, path))
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
	if (!peer_ours(s->ctl, &uid))
		die_not_ours(path, uid);
	return 0;
}

char *fe_sess_state_sock(const char *dir)
{
	return xasprintf("%s/" SOCK_NAME, dir);
}

/* Join the daemon serving s->sock, if one answers.  True when joined. */
static bool join(struct fe_sess *s)
{
	struct fe_req req = { .op = FE_OP_STATS, .version = FE_PROTO_VERSION };
	struct fe_rep rep;
	struct fe_sess t;

	if (fe_sess_connect(&t, s->sock) < 0)
		return false;
	/* A daemon that is leaving resets our pending connection: the
	 * caller then starts a new one. */
	if (fe_sess_call(&t, &req, &rep) < 0) {
		close(t.ctl);
		return false;
	}
	s->ctl = t.ctl;
	return true;
}

void fe_sess_check_state(const char *dir)
{
	char why[PATH_MAX + 256];
	struct stat st;

	if (lstat(dir, &st) < 0)
		die_errno("state directory %s", dir);
	if (!S_ISDIR(st.st_mode))
		die("state directory %s: not a directory", dir);
	if (!is_us(st.st_uid))
		die("state directory %s: owned by uid %u, not by us (%u)", dir,
		    (unsigned)st.st_uid, (unsigned)real_uid());
	if (st.st_mode & 022)
		die("state directory %s: writable by others (mode %04o); "
		    "chmod go-w it",
		    dir, (unsigned)(st.st_mode & 07777));
	if (secure_path(dir, why, sizeof(why)) < 0)
		die("state directory %s: %s", dir, why);
}

/* The --state directory: made 0700 if missing, then checked. */
static void check_state_dir(const char *dir)
{
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		die_errno("cannot make the state directory %s", dir);
	fe_sess_check_state(dir);
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
	if (strlen(s->sock) >= SUN_PATH_MAX)
		die("state directory %s: the socket path would exceed %zu "
		    "bytes",
		    s->dir, SUN_PATH_MAX - 1);
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
	s->dir = make_dir();
	s->sock = xasprintf("%s/" SOCK_NAME, s->dir);
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
	journal = xasprintf("%s/journal", s->dir);
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
