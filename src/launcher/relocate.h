/*
 * `fakeenv state relocate OLD NEW`: point a journal's records under OLD
 * at the same names under NEW, for a tree moved or restored outside any
 * session.  Writes the journal only whole (fe_jnl_save), never while a
 * daemon holds the state directory.
 */
#ifndef FE_LAUNCHER_RELOCATE_H
#define FE_LAUNCHER_RELOCATE_H

/* argv[0] is "state", argv[1] the subcommand ("relocate").  Returns the
 * exit status: 0, 2 for usage, 125 when the journal cannot be read or
 * written or a daemon runs on the state directory. */
int fe_relocate_main(int argc, char **argv);

#endif
