/*
 * DIR/unsaved: left in a --state directory by a daemon that exited with
 * changes it could not write to DIR/journal, so that the next launcher
 * and `fakeenv status` can say they are lost.  One line of text,
 *
 *   time=UNIX changes=N errno=E
 *
 * N counts the changes of every daemon that left one since the last
 * journal that was written (0: unknown), E the errno of the last failed
 * write.  An empty file says the same with nothing known but its mtime:
 * a full disk may refuse the line.  The next successful save removes it.
 */
#ifndef FE_JOURNAL_UNSAVED_H
#define FE_JOURNAL_UNSAVED_H

#include <stddef.h>
#include <stdint.h>

#define FE_UNSAVED_NAME "unsaved"

struct fe_unsaved {
	uint64_t time;    /* when the daemon left (unix seconds) */
	uint64_t changes; /* changes not written, 0: unknown */
	int32_t err;      /* why the last write failed, -errno; 0: unknown */
};

/* The line for u, NUL-terminated, into buf; returns its length. */
size_t fe_unsaved_format(char *buf, size_t size, const struct fe_unsaved *u);

/* Read the marker DIR/unsaved: name relative to dirfd (AT_FDCWD for a
 * path).  Returns 1 with *u filled when there is one (fields it does not
 * say are 0, time then its mtime), 0 when there is none, or -errno.  A
 * marker that is not a regular file of ours is refused (-EINVAL), never
 * waited on. */
int fe_unsaved_read(int dirfd, const char *name, struct fe_unsaved *u);

/*
 * What the daemon holds from its start so that the marker can be made on
 * a full disk: an inode without a name in dirfd (O_TMPFILE) with a block
 * already written, so that leaving the marker needs neither a new inode
 * nor a data block, only a name (a link and a rename).  Returns the fd,
 * or -errno when none can be made (no O_TMPFILE on that filesystem):
 * fe_unsaved_leave() then makes a file as usual.
 */
int fe_unsaved_reserve(int dirfd);

/* Make DIR/unsaved say u, replacing one that is there: from the reserve
 * (an fd of fe_unsaved_reserve(), taken over and closed), or a new file
 * when reserve < 0.  Returns 0 or -errno (the marker then is as before). */
int fe_unsaved_leave(int dirfd, int reserve, const struct fe_unsaved *u);

/* Remove DIR/unsaved.  Returns 0 (also when there was none) or -errno. */
int fe_unsaved_clear(int dirfd);

#endif
