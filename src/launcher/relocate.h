/*
 * `fakeenv state relocate OLD NEW`: point a journal's records under OLD
 * at the same names under NEW, for a tree moved or restored outside any
 * session.  Writes the journal only whole (fe_jnl_save), never while a
 * daemon holds the state directory.
 */
#ifndef FE_LAUNCHER_RELOCATE_H
#define FE_LAUNCHER_RELOCATE_H

#include <stdbool.h>

/* argv[0] is "state", argv[1] the subcommand ("relocate").  Returns the
 * exit status: 0, 2 for usage, 125 when the journal cannot be read or
 * written or a daemon runs on the state directory. */
int fe_relocate_main(int argc, char **argv);

/*
 * Take DIR/lock, the lock a daemon holds for its whole life (made, 0600,
 * when create and missing), without waiting: returns its fd, held until
 * closed (a daemon starting meanwhile waits for it), -EWOULDBLOCK when a
 * daemon holds it, -ENOENT when it is missing and !create, or another
 * -errno.
 */
int fe_state_lock(const char *dir, bool create);

#endif
