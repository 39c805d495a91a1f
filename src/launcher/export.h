/*
 * `fakeenv export`: a session's state written as a manifest that image
 * builders read without any preload (mtree for bsdtar, a device table for
 * genext2fs and makedevs, a pseudo file for mksquashfs).
 */
#ifndef FE_LAUNCHER_EXPORT_H
#define FE_LAUNCHER_EXPORT_H

#include <stdbool.h>
#include <sys/stat.h>

#include "journal/journal.h"

/* argv[0] is "export"; returns the exit status (0, 2 for usage, 125). */
int fe_export_main(int argc, char **argv);

/*
 * The records of a --state directory (state: a daemon serving it writes
 * its journal first; one leaving is waited for) or of the journal file
 * file, keyed as the daemon's load would key them now.  Dies (125) when
 * the journal cannot be read or is damaged.
 */
struct fe_export_state *fe_export_open(const char *state, const char *file);

/* The record of the file at path (its real lstat st) into *r, if it has
 * one that is still its own. */
bool fe_export_find(const struct fe_export_state *x, const char *path,
		    const struct stat *st, struct fe_jnl_rec *r);

void fe_export_close(struct fe_export_state *x);

#endif
