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

#include "common/util.h"
#include "fakeenv/env.h"
#include "locate.h"
#include "run.h"
#include "session.h"
#include "utils.h"

#define LIB_NAME    "libfakeenv.so"
#define LIB_REL     "lib/fakeenv"     /* from bin/, installed */
#define DAEMON_NAME "fakeenvd"
#define DAEMON_REL  "libexec/fakeenv" /* from bin/, installed */

struct opts {
	bool unknown_is_real; /* -u: unrecorded files keep their real owner */
	char **cmd;           /* CMD and ARGS, NULL-terminated, never empty */
};

/* Long-only options take ids from here, above every short letter. */
enum { OPT_LONG_ONLY = 256 };

/*
 * The options, one a line; getopt's tables and --help are built from this.
 * A new option is one line here and one case in parse_opts().  Planned:
 * -s FILE and -i FILE (save and load state), --state DIR.
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
	{ 'h', "help", no_argument, NULL, "show this help and exit" },
	{ 'v', "version", no_argument, NULL, "show the version and exit" },
};

#define USAGE_LINE "Usage: fakeenv [OPTION]... [--] [CMD [ARG]...]\n"

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
		printf("  %-24s %s\n", left, d->help);
	}
	printf("\nExit status: CMD's own, or 128+N when CMD died of signal N;\n"
	       "125 when fakeenv fails, 126 when CMD cannot be executed,\n"
	       "127 when CMD is not found.\n");
	exit(0);
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	/* '+': stop at CMD, whose options are never ours; ':': we report
	 * errors ourselves, in our own words. */
	char shorts[2 + 2 * FE_ARRAY_LEN(opt_defs) + 1] = "+:";
	struct option longs[FE_ARRAY_LEN(opt_defs) + 1];
	size_t ns = 2;
	int c;

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

	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		switch (c) {
		case 'u':
			o->unknown_is_real = true;
			break;
		case 'h':
			help();
			break;
		case 'v':
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

	/*
	 * Later, a first argument naming a subcommand (checkpoint, status,
	 * export, fsck) will select it here, while one after "--" will stay
	 * a CMD.  For now every argument after the options is CMD.
	 */
	if (optind < argc) {
		o->cmd = &argv[optind];
	} else {
		static char *shell[2];
		const char *sh = getenv("SHELL");

		shell[0] = (char *)(sh && *sh ? sh : "/bin/sh");
		o->cmd = shell;
	}
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

/* Whether an LD_PRELOAD entry is a libfakeenv.so: the one the dead
 * session named, or any by that name (an older build, another tree). */
static bool is_our_lib(const char *entry, const char *env_lib)
{
	const char *base = strrchr(entry, '/');

	base = base ? base + 1 : entry;
	return (env_lib && !strcmp(entry, env_lib)) || !strcmp(base, LIB_NAME);
}

/* The LD_PRELOAD list PRE without our library.  Returns a malloc'd list,
 * possibly empty. */
static char *preload_without(const char *pre, const char *env_lib)
{
	char *copy = xstrdup(pre), *out = xmalloc(strlen(pre) + 1);
	char *save = NULL, *tok;
	size_t n = 0;

	for (tok = strtok_r(copy, ": ", &save); tok;
	     tok = strtok_r(NULL, ": ", &save)) {
		if (is_our_lib(tok, env_lib))
			continue;
		if (n)
			out[n++] = ':';
		memcpy(out + n, tok, strlen(tok));
		n += strlen(tok);
	}
	out[n] = '\0';
	free(copy);
	return out;
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
		rest = preload_without(pre, getenv(FE_ENV_LIB));
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

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct fe_sess sess;
	struct fe_job job;
	const char *outer;
	char *self, *lib, *daemon;
	int r, err, status;

	open_std_fds();
	parse_opts(argc, argv, &o);

	outer = getenv(FE_ENV_SOCKET);
	if (outer && *outer) {
		if (fe_sess_alive(outer)) {
			/* Nested: the environment carries the session. */
			if (o.unknown_is_real)
				fe_msg(0, "-u ignored: the outer session's "
					  "setting applies");
			fe_run_exec(o.cmd);
		}
		fe_msg(0, "no daemon at %s: starting a fresh session", outer);
		leave_dead_session(argv);
	}
	self = fe_loc_self();

	/* A SIGCHLD ignored by our caller would make the kernel reap CMD
	 * and the daemon behind our back. */
	signal(SIGCHLD, SIG_DFL);

	lib = fe_loc_need(self, LIB_NAME, LIB_REL, R_OK);
	daemon = fe_loc_need(self, DAEMON_NAME, DAEMON_REL, X_OK);
	fe_sess_start(&sess, daemon, o.unknown_is_real);
	fe_run_setenv(sess.sock, lib, o.unknown_is_real);

	fe_run_spawn(&job, o.cmd);
	r = fe_sess_attach(&sess, job.pid, job.pgid);
	if (r < 0) {
		fe_run_kill(&job);
		fe_sess_fail(&sess, daemon, -r);
	}
	err = fe_run_exec_error(&job);
	status = fe_run_wait(&job);
	if (err)
		status = fe_run_exec_status(o.cmd[0], err);
	fe_sess_detach(&sess);
	free(daemon);
	free(lib);
	free(self);
	return status;
}
