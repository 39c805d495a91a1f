/*
 * fakeenv state relocate; see relocate.h.  The records whose path is OLD
 * or under it get the same path under NEW and the mark that makes the
 * next load find them by that path (recheck.h, FE_JNL_DEV_BYPATH); every
 * other byte of the journal stays.  It never touches the files.
 */
#include "relocate.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "daemon/load.h"
#include "fakeenv/daemon.h"
#include "fakeenv/env.h"
#include "fakeenv/proto.h"
#include "journal/journal.h"
#include "journal/recheck.h"
#include "session.h"
#include "sockdir.h"
#include "held.h"
#include "utils.h"

typedef unsigned long long ull;

#define USAGE "Usage: fakeenv state relocate OLD NEW [--state DIR | FILE]\n"

static int usage(const char *problem, const char *arg)
{
	fe_msg(0, "state relocate: %s%s", problem, arg ? arg : "");
	fputs(USAGE "Try 'fakeenv state relocate --help' for more "
		    "information.\n",
	      stderr);
	return 2;
}

static int help(void)
{
	fputs(USAGE
	      "After a tree was moved (mv) or restored (tar, cp -a, a cache)\n"
	      "from OLD to NEW outside any session, make the journal's\n"
	      "records of OLD and of every file under it records of the same\n"
	      "names under NEW: the next session finds each by its new path\n"
	      "(the file of its type there, whichever inode it is) and keeps\n"
	      "it.  OLD and NEW may be the same (a tree restored in place).\n"
	      "They are made absolute against the current directory and\n"
	      "cleaned of '.', '..' and repeated '/' without resolving any\n"
	      "symbolic link (as realpath -s): give the paths the session\n"
	      "used (fakeenv fsck --against-fs lists them).\n\n"
	      "  --state DIR  the journal of a --state directory, refused\n"
	      "               while its daemon runs; default $FAKEENV_STATE\n"
	      "  FILE         a journal written with -s FILE: run this while\n"
	      "               no session uses FILE (one would write its own\n"
	      "               state over it when it ends)\n"
	      "  -h, --help   show this help and exit\n\n"
	      "Exit status: 0 (the count of records moved on stdout), 2 for\n"
	      "a usage error, 125 when the journal cannot be read or written\n"
	      "or a daemon runs on DIR.\n",
	      stdout);
	return 0;
}

/*
 * p made absolute against the working directory and cleaned lexically:
 * no ".", "..", empty or trailing component; "/" stays "/".  No symbolic
 * link is resolved ("a/link/.." is "a").  malloc'd.
 */
static char *absolute(const char *p)
{
	char *cwd = NULL, *out;

	if (p[0] != '/') {
		cwd = getcwd(NULL, 0);
		if (!cwd)
			die_errno("state relocate: the current directory");
	}
	out = cwd ? xasprintf("%s/%s", cwd, p) : xstrdup(p);
	fe_path_lexical(out);
	free(cwd);
	return out;
}

struct reloc {
	const struct fe_jnl_view *v;
	const char *old; /* cleaned OLD, "" for "/" */
	size_t old_len;
	const char *new; /* cleaned NEW, "" for "/" */
	size_t new_len;
	uint64_t moved;	  /* records given a new path */
	uint64_t orphans; /* under OLD, left as they are */
	size_t longest;	  /* the longest new path too long to make, or 0 */
};

/* What follows OLD in r's path when the path is OLD or under it at a
 * component boundary ("" for OLD itself), else NULL. */
static const char *rest_under(const struct reloc *c, const struct fe_jnl_rec *r)
{
	const char *rest = r->path + c->old_len;

	if (!r->path_len || r->path[0] != '/' ||
	    strncmp(r->path, c->old, c->old_len) || (*rest && *rest != '/'))
		return NULL;
	return !c->old_len && !strcmp(rest, "/") ? "" : rest;
}

/*
 * *out: r relocated, its path in buf (FE_PATH_MAX bytes), when r's path
 * is under OLD (rest_under()) and the new one fits; else r as it is.  An
 * orphan (no name left when it was saved) keeps its path: what is at that
 * name now is another file.  Returns whether r moved.
 */
static bool relocate_rec(const struct reloc *c, const struct fe_jnl_rec *r,
			 struct fe_jnl_rec *out, char *buf)
{
	const char *rest = rest_under(c, r);
	size_t len;

	*out = *r;
	if (!rest || (r->flags & FE_JNL_ORPHAN))
		return false;
	len = c->new_len + strlen(rest);
	if (len >= FE_PATH_MAX)
		return false; /* refused before the write: see count() */
	memcpy(buf, c->new, c->new_len);
	memcpy(buf + c->new_len, rest, strlen(rest) + 1);
	if (!len) {
		strcpy(buf, "/");
		len = 1;
	}
	out->path = buf;
	out->path_len = len;
	out->dev = FE_JNL_DEV_BYPATH;
	out->btag = 0;
	return true;
}

/* Count what relocate_rec() will move and the orphans it leaves, and find
 * the longest new path too long to make (one refuses the relocation). */
static void count(struct reloc *c)
{
	c->moved = c->orphans = 0;
	c->longest = 0;
	for (uint64_t i = 0; i < c->v->nrec; i++) {
		struct fe_jnl_rec r;
		const char *rest;
		size_t len;

		fe_jnl_get(c->v, i, &r);
		rest = rest_under(c, &r);
		if (!rest)
			continue;
		if (r.flags & FE_JNL_ORPHAN) {
			c->orphans++;
			continue;
		}
		len = c->new_len + strlen(rest);
		if (len >= FE_PATH_MAX && len > c->longest)
			c->longest = len;
		c->moved += len < FE_PATH_MAX;
	}
}

static int emit(struct fe_jnl_w *w, int fd, void *ctx)
{
	struct reloc *c = ctx;
	char buf[FE_PATH_MAX];
	struct fe_jnl_rec r, o;
	uint64_t str = 0;

	for (uint64_t i = 0; i < c->v->nrec; i++) {
		fe_jnl_get(c->v, i, &r);
		relocate_rec(c, &r, &o, buf);
		str += fe_jnl_str_len(&o);
	}
	fe_jnl_w_begin(w, fd, c->v->nrec, str, (int64_t)time(NULL));
	for (uint64_t i = 0; i < c->v->nrec; i++) {
		fe_jnl_get(c->v, i, &r);
		relocate_rec(c, &r, &o, buf);
		fe_jnl_w_rec(w, &o);
	}
	for (uint64_t i = 0; i < c->v->nrec; i++) {
		fe_jnl_get(c->v, i, &r);
		relocate_rec(c, &r, &o, buf);
		fe_jnl_w_str(w, &o);
	}
	return fe_jnl_w_end(w);
}

/* Lock the --state directory state against a daemon (we write into
 * it); *dfd gets it open.  Returns the lock's fd; dies when a daemon
 * runs there. */
static int lock_state(const char *state, int *dfd)
{
	int lock;

	/* As a session's start checks it: we write into DIR. */
	fe_sockdir_check_state(state);
	lock = fe_sockdir_lock_state(state, true);
	if (lock == -EWOULDBLOCK)
		die("state relocate: a daemon runs on %s (it holds "
		    "%s/lock): end its session, and let it linger "
		    "out, first (it would write its own state over "
		    "the relocation)",
		    state, state);
	if (lock < 0)
		die("state relocate: %s/lock: %s", state, strerror(-lock));
	*dfd = open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*dfd < 0)
		die_errno("state relocate: %s", state);
	return lock;
}

/* c for moving the records of v under old to new, counted; dies when a
 * path would grow too long. */
static void plan(struct reloc *c, const struct fe_jnl_view *v,
		 const char *old, const char *new)
{
	c->v = v;
	c->old = strcmp(old, "/") ? old : "";
	c->old_len = strlen(c->old);
	c->new = strcmp(new, "/") ? new : "";
	c->new_len = strlen(c->new);
	count(c);
	if (c->longest)
		die("state relocate: a record would get a path of %zu bytes, "
		    "longer than %d: nothing relocated",
		    c->longest, FE_PATH_MAX - 1);
	if (c->orphans)
		fe_msg(0,
		       "state relocate: %llu record%s under %s of files "
		       "that had no name left when saved (orphans) stay "
		       "as they are",
		       (ull)c->orphans, c->orphans == 1 ? "" : "s", old);
}

/* Write c's journal over the one it was read from: DIR/journal through
 * dfd, or the file itself.  Dies when it cannot. */
static void write_back(struct reloc *c, const char *state,
		       const char *file, int dfd, const char *jpath)
{
	char *real = NULL;
	int r;

	if (state) {
		r = fe_jnl_save_at(dfd, FE_DIR_JOURNAL, NULL, NULL, emit, c);
	} else {
		/* The file itself, not a symbolic link to it: fe_jnl_load
		 * followed one. */
		real = realpath(file, NULL);
		if (!real)
			die_errno("state relocate: %s", file);
		r = fe_jnl_save(real, emit, c);
	}
	if (r < 0)
		die("state relocate: writing %s: %s (nothing relocated, the "
		    "journal is as it was)",
		    real ? real : jpath, strerror(-r));
	free(real);
}

static int relocate(const char *old, const char *new, const char *state,
		    const char *file)
{
	struct reloc c = {0};
	struct fe_jnl_view v;
	unsigned char *buf;
	char msg[PATH_MAX * 2 + 256], *jpath;
	struct stat st;
	size_t len;
	int lock = -1, dfd = -1, r;

	if (state) {
		lock = lock_state(state, &dfd);
		if (fe_held_delta_pending(state))
			die("state relocate: %s/" FE_DIR_DELTA " holds changes "
			    "not yet in the journal (its daemon was killed): "
			    "run a session on it first (fakeenv --state %s "
			    "true), which folds them in; nothing relocated",
			    state, state);
		jpath = xasprintf("%s/" FE_DIR_JOURNAL, state);
	} else {
		jpath = xstrdup(file);
	}
	r = fe_jnl_load(jpath, state ? 0 : FE_JNL_FOLLOW, &buf, &len, &v, msg,
			sizeof(msg));
	if (r == -ENOENT)
		die("state relocate: journal %s: no such file", jpath);
	if (r < 0) {
		fe_load_say(r, msg, "nothing relocated");
		exit(FE_EXIT_FAIL);
	}
	plan(&c, &v, old, new);
	if (!c.moved) {
		printf("no record under %s in %s: nothing changed\n", old,
		       jpath);
	} else {
		if (lstat(new, &st) < 0)
			fe_msg(0,
			       "state relocate: %s: %s; the next load drops "
			       "the records it does not find there",
			       new, strerror(errno));
		write_back(&c, state, file, dfd, jpath);
		printf("relocated %llu record%s from %s to %s in %s\n",
		       (ull)c.moved, c.moved == 1 ? "" : "s", old, new, jpath);
	}
	free(buf);
	free(jpath);
	if (dfd >= 0)
		close(dfd);
	if (lock >= 0)
		close(lock);
	return 0;
}

int fe_relocate_main(int argc, char **argv)
{
	const char *pos[3] = {NULL, NULL, NULL}, *state = NULL;
	char *old, *new;
	size_t npos = 0;
	bool dashdash = false;
	int i, status;

	if (argc < 2 || strcmp(argv[1], "relocate")) {
		if (argc >= 2 &&
		    (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
			return help();
		return usage(argc < 2 ? "which command?  (relocate)"
				      : "unknown command ",
			     argc < 2 ? NULL : argv[1]);
	}
	for (i = 2; i < argc; i++) {
		const char *a = argv[i];

		if (!dashdash && !strcmp(a, "--")) {
			dashdash = true;
		} else if (!dashdash && !strcmp(a, "--state")) {
			if (++i == argc)
				return usage("--state needs a directory", NULL);
			state = argv[i];
		} else if (!dashdash && !strncmp(a, "--state=", 8)) {
			state = a + 8;
		} else if (!dashdash &&
			   (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
			return help();
		} else if (!dashdash && a[0] == '-' && a[1]) {
			return usage("unknown option ", a);
		} else if (npos == 3) {
			return usage("too many arguments: ", a);
		} else {
			pos[npos++] = a;
		}
	}
	if (npos < 2)
		return usage("OLD and NEW are needed", NULL);
	if (!*pos[0] || !*pos[1])
		return usage("an empty path", NULL);
	if (state && pos[2])
		return usage("--state and FILE do not go together", NULL);
	if (state && !*state)
		return usage("--state: empty directory name", NULL);
	if (pos[2] && !*pos[2])
		return usage("an empty FILE", NULL);
	if (!state && !pos[2]) {
		const char *env = getenv(FE_ENV_STATE);

		if (!env || !*env)
			return usage("which state?  Give --state DIR or FILE, "
				     "or set ",
				     FE_ENV_STATE);
		state = env;
	}
	old = absolute(pos[0]);
	new = absolute(pos[1]);
	status = relocate(old, new, state, pos[2]);
	free(old);
	free(new);
	if (fflush(stdout) == EOF) {
		fe_msg(errno, "stdout");
		return FE_EXIT_FAIL;
	}
	return status;
}
