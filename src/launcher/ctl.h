/*
 * `fakeenv checkpoint` and `fakeenv status`: requests to a running
 * session's daemon.
 */
#ifndef FE_LAUNCHER_CTL_H
#define FE_LAUNCHER_CTL_H

/* argv[0] is "checkpoint" or "status"; returns the exit status. */
int fe_ctl_main(int argc, char **argv);

#endif
