/*
 * `fakeenv ls PATH...`: what a session holds for each path (owner, mode,
 * type, rdev, kept xattr names, or no record), from its daemon or, with
 * --state DIR and no daemon, from DIR's journal.
 */
#ifndef FE_LAUNCHER_LS_H
#define FE_LAUNCHER_LS_H

/* argv[0] is "ls"; returns the exit status (0; 1: a path does not exist;
 * 2: usage; 125: no session to ask, or it failed). */
int fe_ls_main(int argc, char **argv);

#endif
