/*
 * --seccomp, the launcher's part (fakeenv/seccomp.h): the supervisor's
 * socket and thread, and CMD itself armed when the preload cannot reach
 * it (the launcher execs CMD without the shim).
 */
#ifndef FE_LAUNCHER_SUPERVISE_H
#define FE_LAUNCHER_SUPERVISE_H

#include <stdbool.h>

/* Listen for armed processes and say where in FAKEENV_SUPERVISOR; before
 * CMD is forked.  The fd, or -1 (said: nothing will be armed). */
int fe_sup_listen(void);

/* Load the shim at lib for the supervisor; before CMD is forked, so that
 * the fork copies no thread.  false (said) when it cannot be had: fd is
 * closed and FAKEENV_SUPERVISOR unset, so that nothing is armed. */
bool fe_sup_load(int fd, const char *lib);

/* The supervisor's thread, after the fork: armed processes wait for it. */
void fe_sup_start(int fd);

/* In CMD's child, before the exec of file: arm when FAKEENV_SECCOMP says
 * so for it. */
void fe_sup_arm_cmd(const char *file);

/* "fakeenv FE_SEC_EXEC_ARG PATH ARGV...": the shim's posix_spawn of a
 * program to arm.  Arms this process with the ids of FAKEENV_UIDS,
 * _GIDS and _GROUPS, then execs PATH with ARGV; returns only when that
 * fails (127 or 126, as a shell). */
int fe_sup_exec(const char *path, char **argv);

#endif
