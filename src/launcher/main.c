/*
 * fakeenv: run a command as if root, through a private fakeenvd and
 * LD_PRELOAD of libfakeenv.so.  This file owns the command line and the
 * order of events; session.c owns the daemon, run.c owns CMD.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/secarm.h"
#include "common/util.h"
#include "fakeenv/env.h"
#include "ctl.h"
#include "export.h"
#include "fsck.h"
#include "locate.h"
#include "relocate.h"
#include "ls.h"
#include "run.h"
#include "session.h"
#include "supervise.h"
#include "utils.h"

#define LIB_REL     "lib/fakeenv"     /* from bin/, installed */
#define DAEMON_NAME "fakeenvd"
#define DAEMON_REL  "libexec/fakeenv" /* from bin/, installed */

struct opts {
	struct fe_sess_opts sess; /* what the daemon is started with */
	bool linger_set;          /* --linger given */
	bool state_set;           /* --state given (not $FAKEENV_STATE) */
	bool trace_set;           /* --trace given (not $FAKEENV_TRACE) */
	char **cmd;               /* CMD and ARGS, NULL-terminated, never
				     empty */
	const char *lib;          /* -l LIBRARY, or NULL: the located shim */
	const char *daemon;       /* --faked BINARY, or NULL: the located
				     fakeenvd */
	char *ignore;             /* --ignore-path list "P1:P2", or NULL */
	const char *seccomp;      /* --seccomp MODE, or NULL: $FAKEENV_SECCOMP */
};

/* Called by the name fakeroot (an alternative for /usr/bin/fakeroot):
 * the first argument is never one of our commands, and -v says what
 * fakeroot's -v says, since scripts read it. */
static bool as_fakeroot;

/* Whether ARGV0's last component is "fakeroot" (as dpkg-buildpackage and
 * debuild run it, or /usr/bin/fakeroot through /etc/alternatives). */
static bool called_fakeroot(const char *argv0)
{
	const char *base = strrchr(argv0, '/');

	return !strcmp(base ? base + 1 : argv0, "fakeroot");
}

/* The fakeroot release whose command line ours takes whole. */
#define FAKEROOT_COMPAT "1.31"

/* Long-only options take ids from here, above every short letter. */
enum { OPT_LONG_ONLY = 256, OPT_STATE, OPT_INTERVAL, OPT_LINGER, OPT_TRACE,
       OPT_SECCOMP };
enum { OPT_IGNORE_PATH = OPT_LONG_ONLY + 64 };

/*
 * The options, one a line; getopt's tables and --help are built from this.
 * A new option is one line here and one case in one_opt().
 */
static const struct opt_def {
	int id;            /* short letter, or >= OPT_LONG_ONLY */
	const char *name;  /* long name */
	int has_arg;       /* no_argument or required_argument */
	const char *arg;   /* argument name shown by --help, or NULL */
	const char *help;  /* one line for --help */
} opt_defs[] = {
	{ 'u', "unknown-is-real", no_argument, NULL,
	  "unrecorded files keep their real owner, not 0:0" },
	{ 's', "save", required_argument, "FILE",
	  "save the state to FILE when CMD ends" },
	{ 'i', "load", required_argument, "FILE",
	  "load the state from FILE first" },
	{ OPT_STATE, "state", required_argument, "DIR",
	  "persistent state in DIR, shared by concurrent runs" },
	{ OPT_INTERVAL, "checkpoint-interval", required_argument, "SECONDS",
	  "write the journal this often while it has changes" },
	{ OPT_LINGER, "linger", required_argument, "SECONDS",
	  "seconds a --state daemon stays after its last client" },
	{ OPT_IGNORE_PATH, "ignore-path", required_argument, "PREFIX",
	  "files under PREFIX are real: never recorded (repeatable)" },
	{ OPT_TRACE, "trace", required_argument, "FILE",
	  "append a line per faked change to FILE" },
	{ OPT_SECCOMP, "seccomp", required_argument, "MODE",
	  "auto, always or never: fake programs that bypass libc" },
	/* fakeroot's own options, for callers that know only fakeroot. */
	{ 'l', "lib", required_argument, "LIBRARY",
	  "preload LIBRARY, a libfakeenv.so, instead of ours" },
	{ 'f', "faked", required_argument, "BINARY",
	  "start BINARY (a fakeenvd) as the daemon" },
	{ 'b', "fd-base", required_argument, "FD",
	  "accepted for fakeroot and ignored (no TCP here)" },
	{ 'h', "help", no_argument, NULL, "show this help and exit" },
	{ 'v', "version", no_argument, NULL, "show the version and exit" },
};

#define USAGE_LINE                                              \
	"Usage: fakeenv [OPTION]... [--] [CMD [ARG]...]\n"       \
	"  or:  fakeenv checkpoint|status [--state DIR]\n"       \
	"  or:  fakeenv fsck [--salvage [-o OUT]] FILE\n"       \
	"  or:  fakeenv fsck --against-fs [--state DIR | FILE]\n" \
	"  or:  fakeenv state relocate OLD NEW [--state DIR | FILE]\n" \
	"  or:  fakeenv export --format FORMAT [--state DIR | -i FILE] " \
	"[ROOT]\n"                                                  \
	"  or:  fakeenv ls [--state DIR] PATH...\n"

static void usage_short(void)
{
	fputs(USAGE_LINE "Try 'fakeenv --help' for more information.\n",
	      stderr);
	exit(FE_EXIT_FAIL);
}

static void help(void)
{
	fputs(USAGE_LINE
	      "Run CMD (default: $SHELL) as if root ran it, with no privilege:\n"
	      "the owners, modes and device nodes it makes are recorded and\n"
	      "shown back to it, never applied.\n\n",
	      stdout);
	for (size_t i = 0; i < FE_ARRAY_LEN(opt_defs); i++) {
		const struct opt_def *d = &opt_defs[i];
		char left[64];

		if (d->id < OPT_LONG_ONLY)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", d->id,
				 d->name, d->arg ? " " : "",
				 d->arg ? d->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", d->name,
				 d->arg ? "=" : "", d->arg ? d->arg : "");
		/* A long option name gets a line of its own. */
		if (strlen(left) > 24)
			printf("  %s\n  %-24s %s\n", left, "", d->help);
		else
			printf("  %-24s %s\n", left, d->help);
	}
	printf("\nCommands (only as the first argument; `fakeenv -- status`\n"
	       "runs a program called status; called as fakeroot, the first\n"
	       "argument is always CMD):\n"
	       "  checkpoint   write the session's journal now\n"
	       "  status       show the session's records, unsaved changes,\n"
	       "               clients and last checkpoint\n"
	       "  fsck FILE    check a journal; --salvage writes what can\n"
	       "               be recovered to a new file; --against-fs\n"
	       "               what the next load makes of each record\n"
	       "  export       print the state as an mtree, a device table\n"
	       "               or mksquashfs pseudo definitions for the\n"
	       "               files under ROOT (see fakeenv export --help)\n"
	       "  state relocate OLD NEW  after a tree moved outside any\n"
	       "               session: its records follow it to NEW\n"
	       "  ls PATH...   what the session holds for each PATH\n"
	       "Without --state, checkpoint and status use $FAKEENV_STATE,\n"
	       "else the session they run in.  FAKEENV_STATE=DIR also works\n"
	       "as --state DIR for a session (default linger: 10 s).\n");
	printf("\nExit status: CMD's own, or 128+N when CMD died of signal N;\n"
	       "125 when fakeenv fails, 126 when CMD cannot be executed,\n"
	       "127 when CMD is not found.\n");
	exit(0);
}

static unsigned seconds_arg(const char *opt, const char *v)
{
	const char *end;
	uint32_t n;

	if (fe_parse_u32(v, &n, &end) < 0 || *end || n > 86400 * 365) {
		fe_msg(0, "%s '%s': not a number of seconds", opt, v);
		usage_short();
	}
	return n;
}

/* getopt's tables from opt_defs: shorts (2 + 2 per option + 1 bytes)
 * and longs (one per option + the end). */
static void getopt_tables(char *shorts, struct option *longs)
{
	/* '+': stop at CMD, whose options are never ours; ':': we report
	 * errors ourselves, in our own words. */
	size_t ns = 2;

	memcpy(shorts, "+:", 2);
	for (size_t i = 0; i < FE_ARRAY_LEN(opt_defs); i++) {
		const struct opt_def *d = &opt_defs[i];

		longs[i] = (struct option){ d->name, d->has_arg, NULL, d->id };
		if (d->id < OPT_LONG_ONLY) {
			shorts[ns++] = (char)d->id;
			if (d->has_arg == required_argument)
				shorts[ns++] = ':';
		}
	}
	shorts[ns] = '\0';
	memset(&longs[FE_ARRAY_LEN(opt_defs)], 0, sizeof(longs[0]));
}

/* --seccomp, else $FAKEENV_SECCOMP, else auto: checked, and put in the
 * environment for CMD and the shim. */
static void seccomp_opt(struct opts *o)
{
	const char *v = o->seccomp ? o->seccomp : getenv(FE_ENV_SECCOMP);
	const char *what = o->seccomp ? "--seccomp" : FE_ENV_SECCOMP;

	if (v && !*v)
		v = NULL;
	if (v && fe_sec_mode_parse(v) < 0) {
		fe_msg(0, "%s '%s': not auto, always or never", what, v);
		usage_short();
	}
	if (setenv(FE_ENV_SECCOMP, v ? v : "auto", 1) < 0)
		die_errno("cannot set %s", FE_ENV_SECCOMP);
}

/* Option c (with optarg) into o; exits for --help, --version and a bad
 * option. */
static void one_opt(int c, char **argv, struct opts *o)
{
	switch (c) {
	case 'u':
		o->sess.unknown_is_real = true;
		break;
	case 's':
		o->sess.save = optarg;
		break;
	case 'i':
		o->sess.load = optarg;
		break;
	case OPT_STATE:
		o->sess.state = optarg;
		o->state_set = true;
		break;
	case OPT_INTERVAL:
		o->sess.interval = seconds_arg("--checkpoint-interval",
					       optarg);
		break;
	case OPT_LINGER:
		o->sess.linger = seconds_arg("--linger", optarg);
		o->linger_set = true;
		break;
	case OPT_IGNORE_PATH:
		fe_run_ignore_add(&o->ignore, optarg);
		break;
	case OPT_TRACE:
		o->sess.trace = optarg;
		o->trace_set = true;
		break;
	case OPT_SECCOMP:
		o->seccomp = optarg;
		break;
	case 'l':
		o->lib = optarg;
		break;
	case 'f':
		o->daemon = optarg;
		break;
	case 'b':
		/* fakeroot-tcp's lowest fd for its sockets; ours sits
		 * high above the program's fds already. */
		break;
	case 'h':
		help();
		break;
	case 'v':
		/* "fakeroot version 1.31" first, as fakeroot prints
		 * it: its third word is the version scripts take. */
		if (as_fakeroot)
			printf("fakeroot version " FAKEROOT_COMPAT
			       " (fakeenv %s)\n", FE_VERSION);
		else
			printf("fakeenv %s\n", FE_VERSION);
		exit(0);
	case ':':
		fe_msg(0, "option '%s' needs an argument",
		       argv[optind - 1]);
		usage_short();
		break;
	default:
		/* optopt is 0 for an unknown long option; a short
		 * one may sit inside a cluster such as -ux. */
		if (optopt && strncmp(argv[optind - 1], "--", 2))
			fe_msg(0, "unknown option '-%c'", optopt);
		else
			fe_msg(0, "unknown option '%s'",
			       argv[optind - 1]);
		usage_short();
	}
}

/* What the options leave to the environment and to defaults, the
 * combinations they refuse, and CMD (the shell when none). */
static void settle_opts(int argc, char **argv, struct opts *o)
{
	if (o->sess.state && !*o->sess.state)
		die("--state: empty directory name");
	if (o->sess.state && (o->sess.save || o->sess.load))
		die("--state keeps its journal in DIR: it does not go with -s "
		    "or -i");
	if (!o->sess.state && !o->sess.save && !o->sess.load) {
		const char *env = getenv(FE_ENV_STATE);

		if (env && *env)
			o->sess.state = env;
	}
	if (!o->sess.trace) {
		const char *env = getenv(FE_ENV_TRACE);

		if (env && *env)
			o->sess.trace = env;
	}
	if (o->sess.trace && !*o->sess.trace)
		die("--trace: empty file name");
	seccomp_opt(o);
	if (o->linger_set && !o->sess.state)
		fe_msg(0, "--linger applies to --state sessions only");
	if (!o->linger_set)
		o->sess.linger = FE_SESS_LINGER_DEFAULT;

	if (optind < argc) {
		o->cmd = &argv[optind];
	} else {
		static char *shell[2];
		const char *sh = getenv("SHELL");

		shell[0] = (char *)(sh && *sh ? sh : "/bin/sh");
		o->cmd = shell;
	}
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	char shorts[2 + 2 * FE_ARRAY_LEN(opt_defs) + 1];
	struct option longs[FE_ARRAY_LEN(opt_defs) + 1];
	int c;

	getopt_tables(shorts, longs);
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1)
		one_opt(c, argv, o);
	settle_opts(argc, argv, o);
}

/* fds 0-2 open, so that no socket or pipe of ours lands on them and is
 * taken by CMD or the daemon for a standard stream. */
static void open_std_fds(void)
{
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		if (open("/dev/null", O_RDWR) < 0)
			die_errno("/dev/null");
	}
}

/*
 * FAKEENV_SOCKET names a daemon that is gone: start afresh.  Our own shim
 * may be preloaded into this very process; its wrappers would keep talking
 * to the dead daemon (so nothing here may stat a file) and its exec
 * wrappers would put the old session's variables back.  So drop the
 * session from the environment and, when the shim is in LD_PRELOAD,
 * re-execute ourselves without it.
 */
static void leave_dead_session(char **argv)
{
	const char *pre = getenv("LD_PRELOAD");
	char *rest;

	if (pre) {
		rest = fe_run_preload_without(pre, getenv(FE_ENV_LIB));
		if (!strcmp(rest, pre)) {
			free(rest);
			rest = NULL;
		}
	} else {
		rest = NULL;
	}
	unsetenv(FE_ENV_SOCKET);
	unsetenv(FE_ENV_LIB);
	unsetenv(FE_ENV_UIDS);
	unsetenv(FE_ENV_GIDS);
	unsetenv(FE_ENV_GROUPS);
	unsetenv(FE_ENV_UNKNOWN_REAL);
	if (rest) {
		extern char **environ;
		char *self = fe_loc_self();

		if (*rest && setenv("LD_PRELOAD", rest, 1) < 0)
			die_errno("cannot set LD_PRELOAD");
		if (!*rest)
			unsetenv("LD_PRELOAD");
		/* Raw: the shim's execve wrapper would restore it all. */
		syscall(SYS_execve, self, argv, environ);
		die_errno("cannot re-execute %s", self);
	}
}

/* CMD while it runs: killed if we exit early (fakeenv failed mid-way),
 * so that it never runs on without its daemon's records. */
static struct fe_job *running;

static void kill_running(void)
{
	if (running)
		fe_run_kill(running);
}

struct restart {
	struct fe_sess *sess;
	const char *daemon;
	const struct fe_sess_opts *o;
	struct fe_job *job;
};

static int restart_daemon(void *arg)
{
	struct restart *r = arg;

	return fe_sess_restart(r->sess, r->daemon, r->o, r->job->pid,
			       r->job->pgid);
}

/* -s FILE: the journal is on disk before we return, whatever CMD's
 * leftover children still do (the daemon writes again when they are
 * gone).  A failure turns a successful run into 125: state was lost. */
static int save_now(struct fe_sess *sess, const char *file, int status)
{
	struct fe_rep rep;
	int r = fe_sess_checkpoint(sess, &rep);

	if (r == 0)
		return status;
	fe_msg(-r, "cannot save the state to %s", file);
	return status ? status : FE_EXIT_FAIL;
}

/* One-way changes the daemon has counted as lost, or 0 when it cannot
 * say (its STATUS waits for every change already queued). */
static uint64_t lost_now(struct fe_sess *sess)
{
	struct fe_status st;

	return fe_sess_status(sess, &st) == 0 && st.err == 0 ? st.lost : 0;
}

/* A change this session made and the daemon could not keep (out of
 * memory) is said, and a successful run's status becomes 125: never a
 * silently wrong owner in what CMD produced. */
static int check_lost(struct fe_sess *sess, uint64_t before, int status)
{
	uint64_t lost = lost_now(sess);

	if (lost <= before)
		return status;
	fe_msg(0, "%llu recorded change%s could not be kept by the daemon "
	       "(out of memory): the owners or modes of those files are "
	       "wrong in this session",
	       (unsigned long long)(lost - before), lost - before == 1 ? "" : "s");
	return status ? status : FE_EXIT_FAIL;
}

/* The commands that are not a session, by their first argument. */
static const struct {
	const char *name;
	int (*main)(int argc, char **argv); /* given argv from the name */
} commands[] = {
	{ "checkpoint", fe_ctl_main },	{ "status", fe_ctl_main },
	{ "fsck", fe_fsck_main },	{ "export", fe_export_main },
	{ "state", fe_relocate_main },	{ "ls", fe_ls_main },
};

/* Inside a live session (FAKEENV_SOCKET answers): run CMD in it, saying
 * which of our options do not apply; never returns.  Inside a dead one:
 * leave it and return, to start a fresh session. */
static void nested(const struct opts *o, char **argv)
{
	const char *outer = getenv(FE_ENV_SOCKET);

	if (!outer || !*outer)
		return;
	if (fe_sess_alive(outer)) {
		/* Nested: the environment carries the session. */
		if (o->sess.unknown_is_real)
			fe_msg(0, "-u ignored: the outer session's setting "
				  "applies");
		if (o->sess.save || o->sess.load || o->state_set)
			fe_msg(0, "-s, -i and --state ignored: the outer "
				  "session's state applies");
		if (o->trace_set)
			fe_msg(0, "--trace ignored: the outer session's "
				  "daemon is already running");
		if (o->lib || o->daemon)
			fe_msg(0, "-l and --faked ignored: the outer "
				  "session's library and daemon apply");
		fe_run_ignore_setenv(o->ignore);
		fe_run_exec(o->cmd);
	}
	fe_msg(0, "no daemon at %s: starting a fresh session", outer);
	leave_dead_session(argv);
}

/* The session: DAEMON started (or joined), CMD run with LIB preloaded
 * and waited for.  Returns the exit status. */
static int run(const struct opts *o, const char *daemon, const char *lib)
{
	struct fe_sess sess;
	struct fe_job job;
	uint64_t lost0;
	bool prev_lost;
	int r, err, status, sup = -1;

	fe_sess_start(&sess, daemon, &o->sess);
	if (o->trace_set && !sess.daemon)
		fe_msg(0, "--trace ignored: the daemon of %s was already "
			  "running", sess.dir);
	/* A --state daemon may have lost changes of other sessions. */
	lost0 = o->sess.state ? lost_now(&sess) : 0;
	/* And an earlier daemon may have left without writing them: CMD
	 * then sees an older state, which it must not do in silence. */
	prev_lost = o->sess.state && fe_ctl_prev_lost(&sess, sess.dir);
	fe_run_setenv(sess.sock, lib, o->sess.unknown_is_real);
	fe_run_ignore_setenv(o->ignore);
	/* CMD's `fakeenv status` finds this session's state; the shim waits
	 * a moment for a daemon that is being restarted. */
	if (o->sess.state && setenv(FE_ENV_STATE, sess.dir, 1) < 0)
		die_errno("cannot set %s", FE_ENV_STATE);
	if (!o->sess.state)
		unsetenv(FE_ENV_STATE);

	if (fe_sec_mode_of(getenv(FE_ENV_SECCOMP)) != FE_SEC_NEVER) {
		sup = fe_sup_listen();
		if (sup >= 0 && !fe_sup_load(sup, lib))
			sup = -1;
	}
	fe_run_spawn(&job, o->cmd);
	if (sup >= 0)
		fe_sup_start(sup);
	running = &job;
	atexit(kill_running);
	r = fe_sess_attach(&sess, job.pid, job.pgid);
	if (r < 0) {
		fe_run_kill(&job);
		fe_sess_fail(&sess, daemon, -r);
	}
	err = fe_run_exec_error(&job);
	{
		/* A --state session outlives its daemon: a new one is
		 * started from the last journal. */
		struct restart rs = { &sess, daemon, &o->sess, &job };

		status = fe_run_wait(&job, o->sess.state ? sess.ctl : -1,
				     restart_daemon, &rs);
	}
	running = NULL;
	if (err)
		status = fe_run_exec_status(o->cmd[0], err);
	if (o->sess.save)
		status = save_now(&sess, o->sess.save, status);
	status = check_lost(&sess, lost0, status);
	if (o->sess.state)
		status = fe_ctl_state_end(&sess, sess.dir, status);
	if (prev_lost && !status)
		status = FE_EXIT_FAIL;
	fe_sess_detach(&sess);
	return status;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	char *self, *lib, *daemon;
	int status;

	/* A program spawned to be armed (supervise.h), before anything. */
	if (argc > 3 && !strcmp(argv[1], FE_SEC_EXEC_ARG))
		return fe_sup_exec(argv[2], argv + 3);
	open_std_fds();
	as_fakeroot = argc > 0 && called_fakeroot(argv[0]);
	/* fakeroot's first non-option is always the command. */
	for (size_t i = 0; !as_fakeroot && argc > 1 &&
			   i < FE_ARRAY_LEN(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].main(argc - 1, argv + 1);
	parse_opts(argc, argv, &o);
	nested(&o, argv);
	self = fe_loc_self();
	if (setenv(FE_ENV_LAUNCHER, self, 1) < 0)
		die_errno("cannot set %s", FE_ENV_LAUNCHER);

	/* A SIGCHLD ignored by our caller would make the kernel reap CMD
	 * and the daemon behind our back. */
	signal(SIGCHLD, SIG_DFL);

	lib = o.lib ? fe_loc_given("-l", o.lib, R_OK)
		    : fe_loc_need(self, FE_LIB_NAME, LIB_REL, R_OK);
	daemon = o.daemon ? fe_loc_given("--faked", o.daemon, X_OK)
			  : fe_loc_need(self, DAEMON_NAME, DAEMON_REL, X_OK);
	status = run(&o, daemon, lib);
	free(daemon);
	free(lib);
	free(self);
	return status;
}
