/*
 * fakeenvd: the daemon behind a fakeenv session.  Its command line, exit
 * status and the files of its directory are the launcher's contract with
 * it (fakeenv/daemon.h).  Here: the options, the lock, the log and trace
 * files, then the loop.  Bad options exit 2 before anything is touched; a
 * lock, log, trace or journal that cannot be had exits FE_EXIT_FAIL, with
 * the reason on stderr.
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
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/util.h"
#include "fakeenv/daemon.h"
#include "journal/journal.h"
#include "loop.h"


static void usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("fakeenvd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nusage: fakeenvd " FE_DARG_LISTEN_FD " N (" FE_DARG_DIR
	      " DIR [" FE_DARG_LOAD " FILE] [" FE_DARG_SAVE " FILE] | "
	      FE_DARG_STATE " DIR)\n"
	      "                [" FE_DARG_UNKNOWN_IS_REAL "] [" FE_DARG_LINGER
	      " SECONDS] [" FE_DARG_INTERVAL " SECONDS]\n"
	      "                [" FE_DARG_TRACE " FILE]\n",
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

	fd = openat(dfd, FE_DIR_LOCK, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
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
#define TMP_PREFIX FE_DIR_JOURNAL FE_JNL_TMP

static void remove_stale_temps(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, TMP_PREFIX, sizeof(TMP_PREFIX) - 1))
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

/* The command line, as the launcher writes it. */
struct args {
	struct fe_loop_cfg cfg;
	const char *dir, *state;
	int fd; /* FE_DARG_LISTEN_FD */
	char sock[PATH_MAX], journal[PATH_MAX], log[PATH_MAX];
};

static void parse_opts(int argc, char **argv, struct args *o)
{
	bool have_fd = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v, *end;
		uint32_t n;

		if (!strcmp(a, FE_DARG_UNKNOWN_IS_REAL)) {
			o->cfg.unknown_is_real = true;
		} else if (!strcmp(a, FE_DARG_DIR)) {
			o->dir = value(argv, &i);
		} else if (!strcmp(a, FE_DARG_STATE)) {
			o->state = value(argv, &i);
		} else if (!strcmp(a, FE_DARG_LOAD)) {
			o->cfg.load = value(argv, &i);
			o->cfg.load_flags = FE_JNL_FOLLOW; /* -i FILE */
		} else if (!strcmp(a, FE_DARG_SAVE)) {
			o->cfg.save = value(argv, &i);
		} else if (!strcmp(a, FE_DARG_LINGER)) {
			o->cfg.linger = seconds(argv, &i);
		} else if (!strcmp(a, FE_DARG_TRACE)) {
			o->cfg.trace = value(argv, &i);
			if (!*o->cfg.trace)
				usage_error("%s: empty file name", a);
		} else if (!strcmp(a, FE_DARG_INTERVAL)) {
			o->cfg.interval = seconds(argv, &i);
		} else if (!strcmp(a, FE_DARG_LISTEN_FD)) {
			v = value(argv, &i);
			if (fe_parse_u32(v, &n, &end) < 0 || *end || n > INT_MAX)
				usage_error("%s '%s': not an fd", a, v);
			o->fd = (int)n;
			have_fd = true;
		} else {
			usage_error("unknown option '%s'", a);
		}
	}
	if (!have_fd || !o->dir == !o->state)
		usage_error(FE_DARG_LISTEN_FD " and one of " FE_DARG_DIR
			    " and " FE_DARG_STATE " are required");
	if (o->state && (o->cfg.load || o->cfg.save))
		usage_error(FE_DARG_STATE " keeps its journal in DIR: no "
			    FE_DARG_LOAD " or " FE_DARG_SAVE);
}

/* DIR/NAME into buf, false when it does not fit. */
static bool dir_file(char *buf, size_t size, const char *dir,
		     const char *name)
{
	return *dir && (size_t)fe_fmt(buf, size, "%s/%s", dir, name) < size - 1;
}

/* The paths of DIR's files, and the listening fd checked and set up. */
static void check_opts(struct args *o)
{
	int flags;

	if (o->state) {
		o->dir = o->state;
		if (!dir_file(o->journal, sizeof(o->journal), o->dir,
			      FE_DIR_JOURNAL))
			usage_error(FE_DARG_STATE " '%s': bad or too long a "
				    "path", o->dir);
		o->cfg.load = o->cfg.save = o->journal;
		o->cfg.load_optional = true;
		if (dir_file(o->log, sizeof(o->log), o->dir, FE_DIR_LOG))
			o->cfg.log = o->log;
	}
	if (!dir_file(o->sock, sizeof(o->sock), o->dir, FE_DIR_SOCK))
		usage_error(FE_DARG_DIR " '%s': bad or too long a path",
			    o->dir);
	if (!is_listener(o->fd))
		usage_error(FE_DARG_LISTEN_FD " %d: not a listening AF_UNIX "
			    "SOCK_SEQPACKET socket", o->fd);
	flags = fcntl(o->fd, F_GETFL);
	if (flags < 0 || fcntl(o->fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
	    fcntl(o->fd, F_SETFD, FD_CLOEXEC) < 0) {
		fe_log("daemon: " FE_DARG_LISTEN_FD " %d: %s", o->fd,
		       fe_strerror(errno));
		exit(1);
	}
}

/* DIR/lock, then what a crash left in DIR, then the log: 0, or -1 when
 * the start is refused (said). */
static int take_state(struct args *o)
{
	int r;

	/* Opened once: the identity the daemon writes into for its whole
	 * life (see fe_state_dir_check()). */
	o->cfg.state = o->state;
	o->cfg.state_fd = open(o->state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = o->cfg.state_fd < 0 ? -errno : lock_state(o->cfg.state_fd);
	if (r < 0) {
		fe_log("daemon: cannot lock %s/" FE_DIR_LOCK ": %s", o->state,
		       fe_strerror(-r));
		return -1;
	}
	remove_stale_temps(o->state);
	if (o->cfg.log && open_log(&o->cfg) < 0)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	static struct args o = {
		.cfg = { .state_fd = -1, .log_fd = -1, .trace_fd = -1 },
	};
	int r;

	parse_opts(argc, argv, &o);
	check_opts(&o);
	/* Out of the terminal's session, so that its Ctrl-C, hangup and
	 * job control never reach us; EPERM: the launcher already did it. */
	(void)setsid();
	/* The loop naps 100 us between looks at the rings: the default
	 * slack would make that up to 150. */
	(void)prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	if ((o.state && take_state(&o) < 0) ||
	    (o.cfg.trace && open_trace(&o.cfg) < 0)) {
		unlink(o.sock);
		return FE_EXIT_FAIL;
	}
	o.cfg.listen_fd = o.fd;
	o.cfg.sock = o.sock;
	r = fe_loop_run(&o.cfg);
	if (r < 0 && r != -EBADMSG)
		fe_log("daemon: %s", fe_strerror(-r));
	/* Errors ignored: the launcher or a cleaner may have been first. */
	if (!o.state)
		rmdir(o.dir);
	return r == -EBADMSG ? FE_EXIT_FAIL : r < 0 ? 1 : 0;
}
