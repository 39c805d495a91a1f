/*
 * The daemon's socket, opened for conn.c (sock.c).  Every function leaves
 * errno as it found it but fe_sock_open(), which returns -errno.
 */
#ifndef FE_SHIM_SOCK_H
#define FE_SHIM_SOCK_H

#include <stdbool.h>
#include <sys/stat.h>

/* How long a process of a --state session waits for its daemon to come
 * back (the launcher restarts it from the journal) before it reports, and
 * in what steps. */
#define FE_RESTART_WAIT_MS 5000
#define FE_RESTART_STEP_MS 20

/* Open a connection; on success *fd is above the usual fds, cloexec, and
 * *st its fstat.  A daemon that is not there may be being restarted: see
 * fe_sock_may_wait().  Returns 0 or -errno (-EHOSTDOWN: no daemon). */
int fe_sock_open(int *fd, struct stat *st);

/* Whether this process may wait for its daemon to come back: in a --state
 * session the launcher restarts a daemon that died, and once per process
 * (after a wait that ran out, or the report, fail at once). */
bool fe_sock_may_wait(void);

/* Sleep one FE_RESTART_STEP_MS step of that wait. */
void fe_sock_pause(void);

/* The one line a process writes about a daemon it cannot use (r: why),
 * the first time only; errno untouched. */
void fe_sock_report(int r);

#endif
