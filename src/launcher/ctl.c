/*
 * checkpoint and status; see ctl.h.  The session is --state DIR, else
 * $FAKEENV_STATE, else the one we run in ($FAKEENV_SOCKET).  status of a
 * --state directory whose daemon has gone reads the journal instead.
 */
#include "ctl.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fakeenv/env.h"
#include "journal/journal.h"
#include "session.h"
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

/* status with no daemon: what the journal on disk holds. */
static int status_offline(const char *dir)
{
	char *path = xasprintf("%s/journal", dir), msg[PATH_MAX + 512], t[64];
	struct fe_jnl_view v;
	unsigned char *buf;
	size_t len;
	int r;

	printf("state:           %s\n", dir);
	printf("daemon:          not running\n");
	r = fe_jnl_load(path, 0, &buf, &len, &v, msg, sizeof(msg));
	if (r == -ENOENT) {
		printf("journal:         none yet\n");
		free(path);
		return 0;
	}
	if (r < 0) {
		fe_msg(0, "%s%s", msg,
		       r == -EBADMSG ? " (see fakeenv fsck)" : "");
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
	if (!(st->flags & FE_S_JOURNAL)) {
		printf("journal:         none (in memory only: -s FILE or "
		       "--state DIR keep it)\n");
		return;
	}
	printf("unsaved changes: %llu%s\n", (unsigned long long)st->unsaved,
	       st->flags & FE_S_SAVING ? " (a checkpoint is being written)" :
					 "");
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

int fe_ctl_main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "state", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = argv[0], *state = NULL, *sock;
	bool is_status = !strcmp(cmd, "status");
	struct fe_sess s;
	char *state_sock = NULL;
	int c, r;

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
	if (state) {
		struct stat st;

		if (stat(state, &st) < 0)
			die_errno("state directory %s", state);
		sock = state_sock = fe_sess_state_sock(state);
	} else {
		sock = getenv(FE_ENV_SOCKET);
		if (!sock || !*sock)
			die("%s: which session?  Give --state DIR, set %s, or "
			    "run inside a session",
			    cmd, FE_ENV_STATE);
	}
	r = fe_sess_connect(&s, sock);
	if (r < 0) {
		if (state && is_status && (r == -ENOENT || r == -ECONNREFUSED)) {
			r = status_offline(state);
			free(state_sock);
			return r;
		}
		if (state && (r == -ENOENT || r == -ECONNREFUSED)) {
			/* Nothing to write: a daemon that left wrote its
			 * journal as it went. */
			printf("no daemon is running for %s: its journal is "
			       "already on disk\n", state);
			free(state_sock);
			return 0;
		}
		die("%s: no daemon at %s: %s", cmd, sock, strerror(-r));
	}
	if (is_status) {
		struct fe_status st;

		r = fe_sess_status(&s, &st);
		if (r < 0)
			die("status: %s: %s", sock, strerror(-r));
		print_status(state ? state : sock, state, &st);
	} else {
		struct fe_req req = { .op = FE_OP_CHECKPOINT,
				      .version = FE_PROTO_VERSION };
		struct fe_rep rep;

		r = fe_sess_call(&s, &req, &rep);
		if (r == -ENOENT)
			die("checkpoint: this session keeps its state in "
			    "memory only (start it with -s FILE or --state "
			    "DIR)");
		if (r < 0)
			die("checkpoint: %s", strerror(-r));
		printf("checkpoint: %llu records, %llu bytes\n",
		       (unsigned long long)rep.count[0],
		       (unsigned long long)rep.count[1]);
	}
	close(s.ctl);
	free(state_sock);
	return 0;
}
