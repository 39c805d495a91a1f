/*
 * `fakeenv fsck --against-fs`: the journal's records against the files
 * they describe, each as the next load would treat it.  Reads the journal
 * and looks at the files; changes neither.
 */
#ifndef FE_LAUNCHER_FSCK_FS_H
#define FE_LAUNCHER_FSCK_FS_H

/*
 * Check the journal of the --state directory state (when not NULL) or
 * the journal file file.  One line on stdout for each record the load
 * would not keep as it is, then a summary.  Returns the exit status:
 *   0  every record is kept and its file is at its path (as it is, on a
 *      renumbered filesystem, or relocated);
 *   1  some record would be dropped, or its file is not at its path;
 *   2  the journal is missing, unreadable, damaged or not ours.
 */
int fe_fsck_against_fs(const char *state, const char *file);

#endif
