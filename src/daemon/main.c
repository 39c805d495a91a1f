/*
 * fakeenvd: the daemon behind a fakeenv session.  The launcher starts it
 * with N bound and listening at DIR/sock, as
 *
 *   fakeenvd --listen-fd N --dir DIR [--load FILE] [--save FILE] [OPTS]
 *       a private session: DIR is ours and goes when we do;
 *   fakeenvd --listen-fd N --state DIR [OPTS]
 *       a persistent one: DIR/journal is loaded (if there is one) and
 *       written back; DIR stays.  DIR/lock is held for our whole life, so
 *       that a successor waits until our last journal is written;
 *
 * OPTS: --unknown-is-real, --linger SECONDS, --checkpoint-interval
 * SECONDS, --trace FILE (a line per change appended to FILE, which must
 * be a regular file of ours or missing: else exit 125).  Bad options exit 2 before anything is touched; a journal that
 * cannot be loaded (missing, unreadable, refused) exits 125 (the
 * launcher's "fakeenv failed" status), with the reason on stderr.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/util.h"
#include "journal/journal.h"
#include "loop.h"

/* The launcher's own "fakeenv failed" status: it says nothing more, the
 * daemon has said why. */
#define FE_DAEMON_EXIT_REFUSED 125

static void usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("fakeenvd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nusage: fakeenvd --listen-fd N (--dir DIR [--load FILE] "
	      "[--save FILE] | --state DIR)\n"
	      "                [--unknown-is-real] [--linger SECONDS] "
	      "[--checkpoint-interval SECONDS]\n"
	      "                [--trace FILE]\n",
	      stderr);
	exit(2);
}

/* The value of the option at argv[*i]; *i moves past it. */
static const char *value(char **argv, int *i)
{
	const char *opt = argv[*i];

	if (!argv[*i + 1])
		usage_error("%s needs a value", opt);
	return argv[++*i];
}

static unsigned seconds(char **argv, int *i)
{
	const char *opt = argv[*i], *v = value(argv, i), *end;
	uint32_t n;

	if (fe_parse_u32(v, &n, &end) < 0 || *end || n > 86400 * 365)
		usage_error("%s '%s': not a number of seconds", opt, v);
	return n;
}

/* True when fd is a listening AF_UNIX SOCK_SEQPACKET socket. */
static bool is_listener(int fd)
{
	int v;
	socklen_t len = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) < 0 ||
	    v != AF_UNIX)
		return false;
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) < 0 ||
	    v != SOCK_SEQPACKET)
		return false;
	len = sizeof(v);
	return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == 0 && v;
}

/* Hold DIR/lock for the rest of our life.  A predecessor still writing
 * its last journal holds it: wait for it, so that we load what it wrote.
 * The lock is taken in dfd, the directory every later write goes to. */
static int lock_state(int dfd)
{
	int fd;

	fd = openat(dfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
		    0600);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR)
			return -errno;
	return fd; /* never closed: the lock goes when we exit */
}

/* With DIR/lock held, a temporary journal in DIR is a leftover of a
 * daemon killed while it wrote (the journal beside it is whole): remove
 * it, so that crashes do not pile them up. */
static void remove_stale_temps(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "journal.tmp.", 12))
			(void)unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
}

/*
 * Open DIR/log before the load, so that a bad one costs no load.  One
 * that is there but is not a regular file of ours (a FIFO, whose open
 * would block, a symbolic link, a device, another user's file) refuses
 * the start: DIR is not as we made it.  One that cannot be made or
 * opened (a full or read-only disk, no permission) leaves the messages
 * on stderr, as they were before the load.  Returns 0 or -EINVAL (said).
 */
static int open_log(struct fe_loop_cfg *cfg)
{
	char msg[PATH_MAX + 128];
	int fd = fe_jnl_open_log(cfg->log, msg, sizeof(msg));

	if (fd == -EINVAL) {
		fe_log("%s; refusing to start (remove it: a new one is made)",
		       msg);
		return fd;
	}
	if (fd < 0) {
		fe_log("daemon: %s; messages go to stderr", msg);
		cfg->log = NULL;
		return 0;
	}
	cfg->log_fd = fd;
	return 0;
}

/*
 * Open the --trace file before the load.  One that is not a regular file
 * of ours, or cannot be opened, refuses the start: the user asked for a
 * trace and would get none.  A full disk (the file cannot be made) runs
 * without one, as a full disk later stops it: the session goes on.
 * Returns 0 or -EINVAL (said).
 */
static int open_trace(struct fe_loop_cfg *cfg)
{
	char msg[PATH_MAX + 128];
	int fd = fe_jnl_open_trace(cfg->trace, msg, sizeof(msg));

	if (fd == -ENOSPC || fd == -EDQUOT) {
		fe_log("%s; no trace is written, the session goes on", msg);
		cfg->trace = NULL;
		return 0;
	}
	if (fd < 0) {
		fe_log("%s; refusing to start", msg);
		return -EINVAL;
	}
	cfg->trace_fd = fd;
	return 0;
}

int main(int argc, char **argv)
{
	static char sock[PATH_MAX], journal[PATH_MAX], log[PATH_MAX];
	struct fe_loop_cfg cfg = { .linger = 0, .state_fd = -1, .log_fd = -1,
				   .trace_fd = -1 };
	const char *dir = NULL, *state = NULL;
	const char *end;
	bool have_fd = false;
	uint32_t fd = 0;
	int flags, r;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--unknown-is-real")) {
			cfg.unknown_is_real = true;
		} else if (!strcmp(a, "--dir")) {
			dir = value(argv, &i);
		} else if (!strcmp(a, "--state")) {
			state = value(argv, &i);
		} else if (!strcmp(a, "--load")) {
			cfg.load = value(argv, &i);
			cfg.load_flags = FE_JNL_FOLLOW; /* -i FILE */
		} else if (!strcmp(a, "--save")) {
			cfg.save = value(argv, &i);
		} else if (!strcmp(a, "--linger")) {
			cfg.linger = seconds(argv, &i);
		} else if (!strcmp(a, "--trace")) {
			cfg.trace = value(argv, &i);
			if (!*cfg.trace)
				usage_error("--trace: empty file name");
		} else if (!strcmp(a, "--checkpoint-interval")) {
			cfg.interval = seconds(argv, &i);
		} else if (!strcmp(a, "--listen-fd")) {
			const char *v = value(argv, &i);

			if (fe_parse_u32(v, &fd, &end) < 0 || *end ||
			    fd > INT_MAX)
				usage_error("--listen-fd '%s': not an fd", v);
			have_fd = true;
		} else {
			usage_error("unknown option '%s'", a);
		}
	}
	if (!have_fd || !dir == !state)
		usage_error("--listen-fd and one of --dir and --state are "
			    "required");
	if (state && (cfg.load || cfg.save))
		usage_error("--state keeps its journal in DIR: no --load or "
			    "--save");
	if (state) {
		dir = state;
		if (!*dir || (size_t)fe_fmt(journal, sizeof(journal),
					    "%s/journal", dir) >=
				     sizeof(journal) - 1)
			usage_error("--state '%s': bad or too long a path",
				    dir);
		cfg.load = cfg.save = journal;
		cfg.load_optional = true;
		if ((size_t)fe_fmt(log, sizeof(log), "%s/log", dir) <
		    sizeof(log) - 1)
			cfg.log = log;
	}
	if (!*dir || (size_t)fe_fmt(sock, sizeof(sock), "%s/sock", dir) >=
			     sizeof(sock) - 1)
		usage_error("--dir '%s': bad or too long a path", dir);
	if (!is_listener((int)fd))
		usage_error("--listen-fd %u: not a listening AF_UNIX "
			    "SOCK_SEQPACKET socket", (unsigned)fd);
	flags = fcntl((int)fd, F_GETFL);
	if (flags < 0 || fcntl((int)fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
	    fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0) {
		fe_log("daemon: --listen-fd %u: %s", (unsigned)fd,
		       fe_strerror(errno));
		return 1;
	}
	/* Out of the terminal's session, so that its Ctrl-C, hangup and
	 * job control never reach us; EPERM: the launcher already did it. */
	(void)setsid();
	if (state) {
		/* Opened once: the identity the daemon writes into for its
		 * whole life (see fe_state_dir_check()). */
		cfg.state = state;
		cfg.state_fd = open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		r = cfg.state_fd < 0 ? -errno : lock_state(cfg.state_fd);
		if (r < 0) {
			fe_log("daemon: cannot lock %s/lock: %s", state,
			       fe_strerror(-r));
			unlink(sock);
			return FE_DAEMON_EXIT_REFUSED;
		}
		remove_stale_temps(state);
		if (cfg.log && open_log(&cfg) < 0) {
			unlink(sock);
			return FE_DAEMON_EXIT_REFUSED;
		}
	}
	if (cfg.trace && open_trace(&cfg) < 0) {
		unlink(sock);
		return FE_DAEMON_EXIT_REFUSED;
	}
	cfg.listen_fd = (int)fd;
	cfg.sock = sock;
	r = fe_loop_run(&cfg);
	if (r < 0 && r != -EBADMSG)
		fe_log("daemon: %s", fe_strerror(-r));
	/* Errors ignored: the launcher or a cleaner may have been first. */
	if (!state)
		rmdir(dir);
	return r == -EBADMSG ? FE_DAEMON_EXIT_REFUSED : r < 0 ? 1 : 0;
}
