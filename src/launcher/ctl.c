/*
 * checkpoint and status; see ctl.h.  The session is --state DIR, else
 * $FAKEENV_STATE, else the one we run in ($FAKEENV_SOCKET).  status of a
 * --state directory whose daemon has gone reads the journal instead.
 */
#include "ctl.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/load.h"
#include "fakeenv/daemon.h"
#include "fakeenv/env.h"
#include "journal/journal.h"
#include "journal/unsaved.h"
#include "session.h"
#include "sockdir.h"
#include "utils.h"

static void usage(const char *cmd)
{
	fprintf(stderr, "Usage: fakeenv %s [--state DIR]\n", cmd);
	exit(2);
}

static void when(char *buf, size_t size, uint64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!t || !gmtime_r(&tt, &tm) ||
	    !strftime(buf, size, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, size, "never");
}

/* "N changes" of a marker, or "changes" when it could not say. */
static void lost_changes(char *buf, size_t size, uint64_t n)
{
	if (n)
		snprintf(buf, size, "%llu change%s", (unsigned long long)n,
			 n == 1 ? "" : "s");
	else
		snprintf(buf, size, "changes");
}

/* One line for DIR/unsaved, without "fakeenv: " or a newline. */
static void say_unsaved(char *buf, size_t size, const char *dir,
			uint64_t time, uint64_t changes, int err)
{
	char t[64], n[64];

	when(t, sizeof(t), time);
	lost_changes(n, sizeof(n), changes);
	snprintf(buf, size, "%s could not be written to %s/journal%s%s%s by "
		 "the daemon that left at %s: they are lost",
		 n, dir, err ? " (" : "", err ? strerror(-err) : "",
		 err ? ")" : "", t);
}

/* DIR/unsaved read by path; 1 when it is there (*u filled), else 0. */
static int read_unsaved(const char *dir, struct fe_unsaved *u)
{
	char *path = xasprintf("%s/%s", dir, FE_UNSAVED_NAME);
	int r = fe_unsaved_read(AT_FDCWD, path, u);

	if (r < 0)
		fe_msg(-r, "%s", path);
	free(path);
	return r > 0;
}

/* status with no daemon: what the journal on disk holds. */
static int status_offline(const char *dir)
{
	char *path = xasprintf("%s/" FE_DIR_JOURNAL, dir), msg[PATH_MAX + 512], t[64];
	struct fe_jnl_view v;
	unsigned char *buf;
	size_t len;
	int r;

	printf("state:           %s\n", dir);
	printf("daemon:          not running\n");
	{
		struct fe_unsaved u;

		if (read_unsaved(dir, &u)) {
			char line[PATH_MAX + 256];

			say_unsaved(line, sizeof(line), dir, u.time, u.changes,
				    u.err);
			printf("not written:     %s (%s/%s)\n", line, dir,
			       FE_UNSAVED_NAME);
		}
	}
	r = fe_jnl_load(path, 0, &buf, &len, &v, msg, sizeof(msg));
	if (r == -ENOENT) {
		printf("journal:         none yet\n");
		free(path);
		return 0;
	}
	if (r < 0) {
		fe_load_say(r, msg, "its records are not counted");
		free(path);
		return 1;
	}
	when(t, sizeof(t), (uint64_t)v.written);
	printf("records:         %llu\n", (unsigned long long)v.nrec);
	printf("journal:         %s, %zu bytes, written %s\n", path, len, t);
	free(buf);
	free(path);
	return 0;
}

/* The "last failure" line: the journal's last failed write, and whether
 * one has worked since. */
static void print_failure(const struct fe_status *st)
{
	char t[64];

	when(t, sizeof(t), st->fail_time);
	printf("last failure:    %s: %s, at %s (%llu failed write%s%s)\n",
	       st->fail_what == FE_FAIL_EXIT ? "the last write" :
	       st->fail_what == FE_FAIL_REPLACED ? "no write" :
						   "checkpoint",
	       st->fail_what == FE_FAIL_REPLACED ?
		       "the state directory was removed or replaced "
		       "since the daemon locked it" :
		       strerror(-st->fail_err),
	       t, (unsigned long long)st->failures,
	       st->failures == 1 ? "" : "s",
	       st->flags & FE_S_FAILING ? ", none written since" :
					  ", a later one worked");
}

static void print_status(const char *where, const char *state,
			 const struct fe_status *st)
{
	char t[64];
	uint64_t now = (uint64_t)time(NULL);

	printf("%s %s\n", state ? "state:          " : "session:        ",
	       where);
	printf("daemon:          pid %llu, up %llu s, %llu client%s\n",
	       (unsigned long long)st->pid,
	       (unsigned long long)(now > st->started ? now - st->started : 0),
	       (unsigned long long)st->clients, st->clients == 1 ? "" : "s");
	printf("records:         %llu\n", (unsigned long long)st->records);
	printf("stale dropped:   %llu (another birth time or type at the "
	       "record's inode)\n",
	       (unsigned long long)st->stale);
	printf("orphans:         %llu kept (no name left, maybe open), %llu "
	       "reaped\n",
	       (unsigned long long)st->orphans, (unsigned long long)st->reaped);
	printf("lost changes:    %llu (one-way changes the daemon could not "
	       "store)\n",
	       (unsigned long long)st->lost);
	printf("one-way changes: %llu from the processes' rings, %llu as "
	       "messages\n",
	       (unsigned long long)st->by_ring,
	       (unsigned long long)st->by_socket);
	if (!(st->flags & FE_S_JOURNAL)) {
		printf("journal:         none (in memory only: -s FILE or "
		       "--state DIR keep it)\n");
		return;
	}
	printf("unsaved changes: %llu%s\n", (unsigned long long)st->unsaved,
	       st->flags & FE_S_SAVING ? " (a checkpoint is being written)" :
	       st->flags & FE_S_FAILING ? " (the last write failed: not on "
					  "disk)" :
					 "");
	if (st->failures)
		print_failure(st);
	if (st->flags & FE_S_PREV_LOST) {
		char line[PATH_MAX + 256];

		say_unsaved(line, sizeof(line), state ? state : where,
			    st->prev_time, st->prev_changes, st->prev_err);
		printf("not written:     %s\n", line);
	}
	when(t, sizeof(t), st->last_checkpoint);
	printf("last checkpoint: %s (%llu written by this daemon)\n", t,
	       (unsigned long long)st->checkpoints);
	if (st->checkpoints)
		printf("its cost:        %.1f ms copying the table (clients "
		       "waited), %.1f ms writing\n",
		       (double)st->snap_us / 1000, (double)st->write_us / 1000);
	printf("journal size:    %llu bytes\n",
	       (unsigned long long)st->journal_bytes);
	if (st->flags & FE_S_LOADED)
		printf("loaded at start: %llu records: %llu kept, %llu "
		       "re-keyed, %llu dropped\n",
		       (unsigned long long)st->loaded,
		       (unsigned long long)(st->loaded - st->dropped),
		       (unsigned long long)st->rekeyed,
		       (unsigned long long)st->dropped);
	if (st->interval)
		printf("interval:        a checkpoint every %llu s while "
		       "changed\n",
		       (unsigned long long)st->interval);
	if (state)
		printf("linger:          %llu s after the last client\n",
		       (unsigned long long)st->linger);
}

/* The --state directory of cmd's command line (or $FAKEENV_STATE), or
 * NULL; dies (2) on a bad argument. */
static const char *parse(int argc, char **argv, const char *cmd)
{
	static const struct option longs[] = {
		{ "state", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *state = NULL;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", longs, NULL)) != -1) {
		if (c == 's')
			state = optarg;
		else if (c == 'h')
			usage(cmd);
		else {
			fe_msg(0, "%s: unknown option '%s'", cmd,
			       argv[optind - 1]);
			usage(cmd);
		}
	}
	if (optind < argc) {
		fe_msg(0, "%s: unexpected argument '%s'", cmd, argv[optind]);
		usage(cmd);
	}
	if (!state && getenv(FE_ENV_STATE) && *getenv(FE_ENV_STATE))
		state = getenv(FE_ENV_STATE);
	return state;
}

/* checkpoint of a --state directory with no daemon: there is nothing to
 * write, as a daemon that left wrote its journal as it went, or said in
 * DIR/unsaved that it could not.  The exit status. */
static int checkpoint_offline(const char *state)
{
	struct fe_unsaved u;

	if (read_unsaved(state, &u)) {
		char line[PATH_MAX + 256];

		say_unsaved(line, sizeof(line), state, u.time, u.changes,
			    u.err);
		fe_msg(0, "checkpoint: no daemon is running for %s, and %s",
		       state, line);
		return 1;
	}
	printf("no daemon is running for %s: its journal is already on "
	       "disk\n",
	       state);
	return 0;
}

/* CHECKPOINT on s (at where, of the --state directory state or NULL);
 * dies when it fails. */
static void do_checkpoint(struct fe_sess *s, const char *where,
			  const char *state)
{
	struct fe_status st;
	struct fe_rep rep;
	int r = fe_sess_checkpoint(s, &rep);

	if (r == -ENOENT)
		die("checkpoint: this session keeps its state in memory only "
		    "(start it with -s FILE or --state DIR)");
	if (r < 0) {
		if (fe_sess_status(s, &st) == 0 &&
		    st.fail_what == FE_FAIL_REPLACED)
			die("checkpoint: %s is no longer the directory its "
			    "daemon locked (removed or made again): %llu "
			    "changes are not written",
			    state ? state : where,
			    (unsigned long long)st.unsaved);
		die("checkpoint: %s", strerror(-r));
	}
	printf("checkpoint: %llu records, %llu bytes\n",
	       (unsigned long long)rep.count[0],
	       (unsigned long long)rep.count[1]);
}

int fe_ctl_main(int argc, char **argv)
{
	const char *cmd = argv[0], *state, *sock;
	bool is_status = !strcmp(cmd, "status");
	char *state_sock = NULL;
	struct fe_status st;
	struct fe_sess s;
	int r;

	state = parse(argc, argv, cmd);
	if (state) {
		/* As a session's start checks it: what is there could be
		 * another user's. */
		fe_sockdir_check_state(state);
		sock = state_sock = fe_sess_state_sock(state);
	} else {
		sock = getenv(FE_ENV_SOCKET);
		if (!sock || !*sock)
			die("%s: which session?  Give --state DIR, set %s, or "
			    "run inside a session",
			    cmd, FE_ENV_STATE);
	}
	r = fe_sess_connect(&s, sock);
	if (r < 0 && state && (r == -ENOENT || r == -ECONNREFUSED)) {
		r = is_status ? status_offline(state)
			      : checkpoint_offline(state);
		free(state_sock);
		return r;
	}
	if (r < 0)
		die("%s: no daemon at %s: %s", cmd, sock, strerror(-r));
	if (is_status) {
		r = fe_sess_status(&s, &st);
		if (r < 0)
			die("status: %s: %s", sock, strerror(-r));
		print_status(state ? state : sock, state, &st);
	} else {
		do_checkpoint(&s, sock, state);
	}
	close(s.ctl);
	free(state_sock);
	return 0;
}

bool fe_ctl_prev_lost(struct fe_sess *s, const char *dir)
{
	char line[PATH_MAX + 256];
	struct fe_status st;
	struct fe_rep rep;
	int r;

	if (fe_sess_status(s, &st) < 0 || !(st.flags & FE_S_PREV_LOST))
		return false;
	say_unsaved(line, sizeof(line), dir, st.prev_time, st.prev_changes,
		    st.prev_err);
	fe_msg(0, "%s", line);
	r = fe_sess_checkpoint(s, &rep);
	if (r < 0)
		fe_msg(-r, "%s/journal cannot be written now either "
		       "(%s/%s stays)", dir, dir, FE_UNSAVED_NAME);
	return true;
}

int fe_ctl_state_end(struct fe_sess *s, const char *dir, int status)
{
	struct fe_status st;
	struct fe_rep rep;
	char t[64];
	int r;

	/* CMD is done: its changes go to disk before we return (a delta
	 * of them, or the journal), and a failure is said now. */
	r = fe_sess_sync(s, &rep);
	if (r == 0)
		return status;
	if (fe_sess_status(s, &st) < 0)
		memset(&st, 0, sizeof(st));
	when(t, sizeof(t), st.fail_time);
	if (st.fail_what == FE_FAIL_REPLACED)
		fe_msg(0, "%s was removed or replaced while this session ran: "
		       "%llu change%s of it cannot be written to its journal",
		       dir, (unsigned long long)st.unsaved,
		       st.unsaved == 1 ? "" : "s");
	else if (st.flags & FE_S_FAILING)
		fe_msg(-r, "cannot write the state to %s/journal: %llu "
		       "change%s not on disk (%llu failed writes, the last "
		       "at %s)",
		       dir, (unsigned long long)st.unsaved,
		       st.unsaved == 1 ? "" : "s",
		       (unsigned long long)st.failures, t);
	else
		fe_msg(-r, "cannot write the state to %s: changes of this "
		       "run are not on disk (%llu not in its journal)",
		       dir, (unsigned long long)st.unsaved);
	return status ? status : FE_EXIT_FAIL;
}
