/*
 * The load: a journal turned into the records a session holds, each
 * checked against the filesystem (journal/recheck.h) and keyed where its
 * file is now.  One function for the daemon's start (state.h) and for
 * `fakeenv export` and `fakeenv ls`, which must show what a session
 * shows; it needs the table and nothing else of the daemon.
 */
#ifndef FE_DAEMON_LOAD_H
#define FE_DAEMON_LOAD_H

#include <stdbool.h>
#include <stdint.h>

struct fe_tab;

/* What a load did. */
struct fe_load_stats {
	uint64_t loaded;  /* records in the journal */
	uint64_t rekeyed; /* kept under a new (dev, ino): st_dev changed,
			     or relocated */
	uint64_t moved;	  /* of those, relocated (found by their path) */
	uint64_t dropped; /* gone, replaced, or with no path to check */
	uint64_t orphans; /* kept with FE_REC_ORPHAN */
	uint64_t bytes;   /* size of the journal */
};

/*
 * Put the records of the journal at path into t (empty, or holding
 * records the journal's replace).  A record whose file is gone or is no
 * longer the same inode is dropped; one whose filesystem's st_dev changed
 * is re-keyed.  Of two records at one key, one at its saved key takes it
 * over one re-keyed onto it, and one re-keyed onto a key already held is
 * dropped.  flags: FE_JNL_FOLLOW for a path the user gave (-i), 0 for
 * DIR/journal (journal/journal.h, fe_jnl_load()).  what says what a
 * refused journal stops, for fe_load_say().  Returns 0;
 * -ENOENT when there is no file (no message); -EBADMSG when the journal
 * is refused (a message naming the file and the problem is logged, the
 * file untouched); another -errno when it cannot be read or held (logged
 * too).
 */
int fe_load_journal(struct fe_tab *t, const char *path, unsigned flags,
		    const char *what, struct fe_load_stats *st);

/*
 * Put the records of v, a delta's segment (journal/delta.h) that came
 * from path, over what t holds: checked and re-keyed as above, but a
 * re-keyed record replaces the one at its new key, being the newer.
 * Adds to *st.  0 or -errno (logged).
 */
struct fe_jnl_view;
int fe_load_view(struct fe_tab *t, const char *path,
		 const struct fe_jnl_view *v, struct fe_load_stats *st);

/* What fe_load_delta() found. */
struct fe_delta_load {
	struct fe_load_stats st; /* of the records its segments held */
	unsigned segs;           /* whole segments put over the table */
	uint64_t good;           /* bytes of its header and those segments */
	bool stale;              /* it follows a journal replaced since: all
				    of it is in the journal, nothing put */
	char torn[640];          /* "": none; else what is wrong with the
				    bytes after good, an unfinished append */
};

/*
 * Put what the delta at fd (DIR/delta of the directory at dirfd, named
 * path in messages) holds over t, which holds DIR/journal's records.
 * Refused (-EBADMSG, logged, ending with what) when fd is not a regular
 * file of ours, unreadable, damaged, or holds a bad segment with more
 * after it.  An empty file holds nothing.  0, filling *dl.
 */
int fe_load_delta(struct fe_tab *t, int dirfd, int fd, const char *path,
		  const char *what, struct fe_delta_load *dl);

/* The identity (*dev, *ino) of DIR/journal at dirfd, 0 and 0 for none,
 * once fd is checked to be a regular file of ours (else -EPERM).  0 or
 * -errno. */
int fe_load_delta_base(int dirfd, int fd, uint64_t *dev, uint64_t *ino);

/*
 * Say why a journal was not read: msg is what fe_jnl_load() (which
 * returned r) wrote; a refused journal (-EBADMSG) also says what that
 * stops (what: "refusing to start", "nothing relocated") and that the
 * file is left as it is for fakeenv fsck.  The one wording of a refusal,
 * for the daemon and for every command that reads a journal.
 */
void fe_load_say(int r, const char *msg, const char *what);

#endif
