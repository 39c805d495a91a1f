/*
 * `fakeenv checkpoint` and `fakeenv status`: requests to a running
 * session's daemon.
 */
#ifndef FE_LAUNCHER_CTL_H
#define FE_LAUNCHER_CTL_H

#include <stdbool.h>

#include "session.h"

/* argv[0] is "checkpoint" or "status"; returns the exit status. */
int fe_ctl_main(int argc, char **argv);

/*
 * At the start of a --state session (s joined or started DIR's daemon):
 * changes an earlier daemon could not write (DIR/unsaved) are said on
 * stderr, and a checkpoint is asked for, whose success removes the note
 * so that it is said once.  Returns true when something was said.
 */
bool fe_ctl_prev_lost(struct fe_sess *s, const char *dir);

/*
 * When CMD has ended in a --state session: if the daemon's last journal
 * write failed and changes are not on disk, one more checkpoint is tried;
 * if that fails too, it is said on stderr and a successful STATUS
 * becomes 125 (the command's own failure is kept).  Returns the status.
 */
int fe_ctl_state_end(struct fe_sess *s, const char *dir, int status);

#endif
