/*
 * A session: the private socket directory, the daemon we started for it
 * and our control connection to that daemon.  The control connection is
 * what keeps CMD alive: if it closes without a DETACH (the launcher died,
 * even of SIGKILL), the daemon kills CMD and its process group.
 */
#ifndef FE_LAUNCHER_SESSION_H
#define FE_LAUNCHER_SESSION_H

#include <stdbool.h>
#include <sys/types.h>

#include "fakeenv/proto.h"

struct fe_sess {
	char *dir;     /* the socket's directory (malloc'd): private 0700,
			  made by mkdtemp, or the --state directory */
	char *sock;    /* dir + "/sock": FAKEENV_SOCKET (malloc'd) */
	int ctl;       /* control connection, CLOEXEC; -1 when closed */
	pid_t daemon;  /* our child fakeenvd; 0 once reaped, or when we
			  joined one that was running */
	bool keep_dir; /* a --state directory: never removed */
};

/* How the daemon is to be started. */
struct fe_sess_opts {
	bool unknown_is_real; /* files without a record keep their owner */
	const char *load;     /* -i FILE: journal to load, or NULL */
	const char *save;     /* -s FILE: journal to write, or NULL */
	const char *state;    /* --state DIR, or NULL */
	unsigned linger;      /* --state: seconds to stay after the last
				 client */
	unsigned interval;    /* --checkpoint-interval, 0: none */
	const char *trace;    /* --trace FILE, or NULL */
};

/* Seconds a --state daemon stays after its last client by default: long
 * enough for the next step of a build to find it warm, short enough that
 * the journal is on disk soon after the build. */
#define FE_SESS_LINGER_DEFAULT 10

/* Whether a daemon answers a connect() on the socket PATH: true for a live
 * outer session (a nested call), false when it is gone. */
bool fe_sess_alive(const char *path);

/* Make the socket directory, start DAEMON (fakeenvd) listening in it with
 * the given options and open the control connection; one STATS round trip
 * proves the daemon is serving before any CMD exists.  With o->state, join
 * the daemon already serving that directory instead, if there is one.
 * Dies with exit 125 and cleans up after itself on any failure. */
void fe_sess_start(struct fe_sess *s, const char *daemon,
		   const struct fe_sess_opts *o);

/*
 * The daemon of a --state session died while CMD (PID, group PGID) runs:
 * start a new one from the last journal (or join the one another launcher
 * started), attach CMD to it, and say what was lost.  Returns the new
 * control fd.  Dies with exit 125 if no daemon can be started.
 */
int fe_sess_restart(struct fe_sess *s, const char *daemon,
		    const struct fe_sess_opts *o, pid_t pid, pid_t pgid);

/* Connect to the daemon at the socket PATH for a control request
 * (checkpoint, status): fills s with no directory of ours.  Returns 0 or
 * -errno. */
int fe_sess_connect(struct fe_sess *s, const char *path);

/* The socket of a --state directory (malloc'd). */
char *fe_sess_state_sock(const char *dir);

/* STATUS: one request, a struct fe_status back.  Returns 0 or -errno. */
int fe_sess_status(struct fe_sess *s, struct fe_status *st);

/* One request, one reply on the control connection.  Returns 0, the
 * daemon's -errno from rep->err, or -errno of the transport (-ECONNRESET
 * when the daemon closed the connection, -EPROTO for a malformed reply). */
int fe_sess_call(struct fe_sess *s, const struct fe_req *req,
		 struct fe_rep *rep);

/* The same for a request with a tail (tail_len bytes, set in req) whose
 * reply may carry up to size bytes of data (XGET, XLIST): *got says how
 * many came. */
int fe_sess_call_data(struct fe_sess *s, const struct fe_req *req,
		      const void *tail, struct fe_rep *rep, void *data,
		      size_t size, size_t *got);

/* STATS, to see that the daemon on s answers: 0 or -errno. */
int fe_sess_ping(struct fe_sess *s);

/* CHECKPOINT: the journal is written when it returns 0 (rep->count[0]
 * records, count[1] bytes); -ENOENT for a session without one, else
 * -errno. */
int fe_sess_checkpoint(struct fe_sess *s, struct fe_rep *rep);
/* SYNC: the session's changes so far on disk (proto.h).  0 or -errno. */
int fe_sess_sync(struct fe_sess *s, struct fe_rep *rep);

/* Tell the daemon which process (PID) and group (PGID, 0 for none) to kill
 * if the launcher dies.  Returns 0 or -errno. */
int fe_sess_attach(struct fe_sess *s, pid_t pid, pid_t pgid);

/* Leave the session normally: DETACH, close the control connection, and
 * reap the daemon if it is already gone (then remove its directory).  The
 * daemon itself stays while other clients (background children of CMD)
 * remain.  Says on stderr if the daemon died during the session. */
void fe_sess_detach(struct fe_sess *s);

/* Give up a session whose daemon failed (ERR: what our last call to it
 * got): kill and reap DAEMON, say why, remove the directory, exit 125. */
__attribute__((noreturn))
void fe_sess_fail(struct fe_sess *s, const char *daemon, int err);

#endif
