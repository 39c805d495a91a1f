/*
 * Running CMD: its environment, its process group, forwarding our signals
 * to it, and turning its end into our exit status.
 */
#ifndef FE_LAUNCHER_RUN_H
#define FE_LAUNCHER_RUN_H

#include <stdbool.h>
#include <sys/types.h>

struct fe_job {
	pid_t pid;   /* CMD */
	pid_t pgid;  /* CMD's own process group; 0 when it shares ours */
	int exec_fd; /* read end of the exec-error pipe; -1 once read */
};

/* The environment of CMD in a new session: FAKEENV_SOCKET=SOCK,
 * FAKEROOTKEY=SOCK, FAKEENV_LIB=LIB, LIB appended to LD_PRELOAD unless already there, and
 * no FAKEENV_UIDS/GIDS/GROUPS (the shim's default is root);
 * FAKEENV_UNKNOWN_IS_REAL=1 with -u.  Dies when LIB
 * cannot be put in LD_PRELOAD. */
void fe_run_setenv(const char *sock, const char *lib, bool unknown_is_real);

/* The shim's file name. */
#define FE_LIB_NAME "libfakeenv.so"

/* The LD_PRELOAD list pre without our library: entries equal to lib (the
 * path FAKEENV_LIB names; may be NULL) or named FE_LIB_NAME (an older
 * build, another tree).  A malloc'd list, possibly empty. */
char *fe_run_preload_without(const char *pre, const char *lib);

/* Add --ignore-path PREFIX to *list (a malloc'd "P1:P2", or NULL): made
 * lexically normal ("." and ".." taken out, no trailing '/'), as the shim
 * compares it.  Dies when PREFIX is not absolute or holds a ':'. */
void fe_run_ignore_add(char **list, const char *prefix);

/* FAKEENV_IGNORE_PATHS for CMD: list (NULL: no change) appended to the
 * inherited one. */
void fe_run_ignore_setenv(const char *list);

/* Exec ARGV in this process (a nested call).  Returns never: on failure
 * prints why and exits 127 (not found) or 126 (not executable). */
__attribute__((noreturn))
void fe_run_exec(char *const argv[]);

/* Fork and exec ARGV.  CMD keeps our process group when we are in the
 * foreground of the terminal on stdin (interactive use), and gets its own
 * otherwise.  From here on SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and
 * SIGUSR2 sent to us are forwarded to CMD (its group when it has one);
 * interactively SIGINT and SIGQUIT are ignored, the terminal sends them to
 * CMD itself.  CMD gets SIGKILL if we die (PR_SET_PDEATHSIG).  Dies on
 * fork failure. */
void fe_run_spawn(struct fe_job *job, char *const argv[]);

/* 0 when CMD's exec succeeded, else the errno of its failed execvp. */
int fe_run_exec_error(struct fe_job *job);

/* Report an exec failure of CMD ("fakeenv: CMD: command not found") and
 * return the exit status for it: 127 for ENOENT, 126 otherwise. */
int fe_run_exec_status(const char *cmd, int err);

/* Wait for CMD to end, stop forwarding signals and reap it.  Returns its
 * exit code, or 128+N when it died of signal N.
 *
 * Meanwhile, when *watch_fd >= 0 and it becomes readable or hangs up (the
 * daemon's end of our control connection closed: it died),
 * on_hangup(ctx) runs and returns the fd to watch from then on (-1: stop
 * watching).  Needs pidfd_open (Linux 5.3); without it nothing is watched. */
int fe_run_wait(struct fe_job *job, int watch_fd,
		int (*on_hangup)(void *ctx), void *ctx);

/* Kill CMD (and its group) with SIGKILL and reap it. */
void fe_run_kill(struct fe_job *job);

#endif
