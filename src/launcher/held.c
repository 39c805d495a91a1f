/*
 * The records a session would hold, for commands that run without one;
 * see held.h.  It never writes to the state directory: a live daemon is
 * asked for a checkpoint, and the journal is only read.
 */
#include "held.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "daemon/load.h"
#include "daemon/table.h"
#include "fakeenv/daemon.h"
#include "journal/delta.h"
#include "journal/journal.h"
#include "journal/recheck.h"
#include "session.h"
#include "sockdir.h"
#include "utils.h"

struct fe_held {
	struct fe_tab tab; /* the records, as the daemon's load put them */
};

/* Whether a daemon holds DIR/lock: one is alive in DIR (starting, serving
 * or writing its last journal).  Held for no longer than the look. */
static bool lock_held(const char *dir)
{
	int fd = fe_sockdir_lock_state(dir, false);

	if (fd >= 0)
		close(fd);
	return fd == -EWOULDBLOCK;
}

/* One CHECKPOINT request to the daemon at sock.  0 or -errno. */
static int checkpoint(const char *sock)
{
	struct fe_rep rep;
	struct fe_sess s;
	int r = fe_sess_connect(&s, sock);

	if (r < 0)
		return r;
	r = fe_sess_checkpoint(&s, &rep);
	close(s.ctl);
	return r;
}

/*
 * Make DIR/journal current: a daemon serving DIR writes it now; one that
 * is leaving or starting (it holds DIR/lock but does not answer) is waited
 * for, at most 10 s; with no daemon the journal on disk is the state.
 */
static void sync_state(const char *dir)
{
	char *sock = fe_sess_state_sock(dir);

	/* As a session's start checks it: what is there could be another
	 * user's. */
	fe_sockdir_check_state(dir);
	for (int tries = 0;; tries++) {
		int r = checkpoint(sock);

		if (!r)
			break;
		if (r != -ENOENT && r != -ECONNREFUSED && r != -ECONNRESET)
			die("export: checkpoint of %s: %s", dir, strerror(-r));
		if (!lock_held(dir))
			break;
		if (tries == 200)
			die("export: the daemon of %s holds its lock but does "
			    "not answer",
			    dir);
		nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
	}
	free(sock);
}

bool fe_held_delta_pending(const char *state)
{
	char *path = xasprintf("%s/" FE_DIR_DELTA, state);
	struct stat st;
	bool r = lstat(path, &st) == 0 && st.st_size > FE_DELTA_HDR_SIZE;

	free(path);
	return r;
}

/* What a killed daemon left in DIR/delta, over the journal's records. */
static void load_delta(struct fe_tab *t, const char *state, const char *what)
{
	char *path = xasprintf("%s/" FE_DIR_DELTA, state);
	int dfd = open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;
	struct fe_delta_load dl;

	if (dfd < 0)
		die_errno("state directory %s", state);
	fd = openat(dfd, FE_DIR_DELTA,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT)
		die_errno("delta %s", path);
	if (fd >= 0 && fe_load_delta(t, dfd, fd, path, what, &dl) < 0)
		exit(FE_EXIT_FAIL); /* the load said why */
	if (fd >= 0)
		close(fd);
	close(dfd);
	free(path);
}

struct fe_held *fe_held_open(const char *state, const char *file,
			     const char *what)
{
	struct fe_held *h = xmalloc(sizeof(*h));
	struct fe_load_stats st;
	char *jpath;
	int r;

	if (state) {
		sync_state(state);
		jpath = xasprintf("%s/" FE_DIR_JOURNAL, state);
	} else {
		jpath = xstrdup(file);
	}
	r = fe_tab_init(&h->tab, 0);
	if (r < 0)
		die("journal %s: %s", jpath, strerror(-r));
	r = fe_load_journal(&h->tab, jpath, state ? 0 : FE_JNL_FOLLOW, what,
			    &st);
	if (r == -ENOENT && !(state && fe_held_delta_pending(state)))
		fe_msg(ENOENT, "journal %s", jpath);
	if (r < 0 && !(r == -ENOENT && state && fe_held_delta_pending(state)))
		exit(FE_EXIT_FAIL); /* the load said why */
	if (state)
		load_delta(&h->tab, state, what);
	free(jpath);
	return h;
}

bool fe_held_view(const struct fe_held *h, const char *path,
		  const struct stat *st, bool unknown_real, struct fe_view *v,
		  const unsigned char **xattrs, size_t *xlen)
{
	struct fe_slot slot = {0};
	struct fe_jnl_seen seen;
	struct fe_rec rec;
	uint32_t btag = 0;
	bool live;

	*xattrs = NULL;
	*xlen = 0;
	live = fe_tab_find(&h->tab, st->st_dev, st->st_ino, &rec);
	/* The birth time only where the record knows one, as the stat
	 * wrappers compare it: a statx, never the path's record. */
	if (live && rec.btag && fe_jnl_see(AT_FDCWD, path, &seen) &&
	    seen.ino == st->st_ino)
		btag = seen.btag;
	if (live && fe_rec_stale(rec.mode, rec.flags, rec.btag, st->st_mode,
				 btag))
		live = false;
	if (live) {
		slot.uid = rec.uid;
		slot.gid = rec.gid;
		slot.mode = (uint16_t)rec.mode;
		slot.rdev = (uint32_t)rec.rdev;
		slot.btag = rec.btag;
		slot.flags = (uint16_t)(FE_SLOT_USED | rec.flags);
		fe_tab_xattrs(&h->tab, &rec, xattrs, xlen);
	}
	fe_rec_view(live ? &slot : NULL, st->st_mode, st->st_uid, st->st_gid,
		    unknown_real, v);
	return live;
}

void fe_held_close(struct fe_held *h)
{
	fe_tab_free(&h->tab);
	free(h);
}
