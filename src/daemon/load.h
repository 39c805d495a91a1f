/*
 * The load: a journal turned into the records a session holds, each
 * checked against the filesystem (journal/recheck.h) and keyed where its
 * file is now.  One function for the daemon's start (state.h) and for
 * `fakeenv export` and `fakeenv ls`, which must show what a session
 * shows; it needs the table and nothing else of the daemon.
 */
#ifndef FE_DAEMON_LOAD_H
#define FE_DAEMON_LOAD_H

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
 * Say why a journal was not read: msg is what fe_jnl_load() (which
 * returned r) wrote; a refused journal (-EBADMSG) also says what that
 * stops (what: "refusing to start", "nothing relocated") and that the
 * file is left as it is for fakeenv fsck.  The one wording of a refusal,
 * for the daemon and for every command that reads a journal.
 */
void fe_load_say(int r, const char *msg, const char *what);

#endif
