/*
 * What a session would hold, read without one: the records of a --state
 * directory (its journal and its delta) or of a journal file, put into a
 * table by the daemon's own load (src/daemon/load.c), and each file's view by the one rule of
 * fakeenv/map.h.  For `fakeenv export` and `fakeenv ls`, which must show
 * what a session shows.
 */
#ifndef FE_LAUNCHER_HELD_H
#define FE_LAUNCHER_HELD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "fakeenv/map.h"

struct fe_held;

/*
 * Load the records of the --state directory state (a daemon serving it
 * writes its journal first; one leaving or starting is waited for) or,
 * with state NULL, of the journal file file.  Dies (125) when the journal
 * is missing, cannot be read or is refused (what: what that stops, as
 * fe_load_say() says it).
 */
struct fe_held *fe_held_open(const char *state, const char *file,
			     const char *what);

/*
 * The view of the file at path (its real lstat st) into *v, as a
 * session's stat shows it: a file without a live record shows 0:0 (its
 * real owner with unknown_real).  Returns whether a live record applies;
 * then *xattrs and *xlen are its xattr block (journal/journal.h's format,
 * NULL and 0 for none), valid until fe_held_close().
 */
bool fe_held_view(const struct fe_held *h, const char *path,
		  const struct stat *st, bool unknown_real, struct fe_view *v,
		  const unsigned char **xattrs, size_t *xlen);

void fe_held_close(struct fe_held *h);

/* Whether DIR/delta of the --state directory state holds changes that
 * no journal has yet: a daemon of it was killed, and the next session on
 * it folds them in. */
bool fe_held_delta_pending(const char *state);

#endif
