/*
 * The daemon's event loop: one thread, one epoll set holding the listening
 * socket, a signalfd, the journal writer's eventfd and every client.  It
 * owns the sockets and the session rules (who may connect, when to exit,
 * whom to kill when the launcher dies, when to checkpoint); the ops'
 * handlers own what a request does (ops.h), state.c how the journal is
 * read and written.
 */
#ifndef FE_DAEMON_LOOP_H
#define FE_DAEMON_LOOP_H

#include <stdbool.h>

/* Seconds to wait for a first client before concluding that the launcher
 * died first. */
#define FE_LOOP_FIRST_CLIENT_SEC 30

struct fe_loop_cfg {
	int listen_fd;        /* a listening AF_UNIX SOCK_SEQPACKET socket */
	const char *sock;     /* its path: unlinked before it closes, so that
				 a launcher never connects to a daemon that
				 is leaving */
	bool unknown_is_real; /* files without a record keep their owner */
	const char *load;     /* journal to load first, or NULL */
	unsigned load_flags;  /* FE_JNL_* for fe_jnl_load(): FE_JNL_FOLLOW
				 for a path the user gave */
	bool load_optional;   /* a missing load file means an empty table */
	const char *save;     /* journal for checkpoints and exit, or NULL */
	unsigned linger;      /* seconds to stay after the last client */
	unsigned interval;    /* checkpoint this often while there are unsaved
				 changes; 0: only when asked and at exit */
	const char *log;      /* once the journal is loaded, stderr goes
				 here (appended), or NULL to keep it */
	const char *state;    /* --state DIR, or NULL: the journal and the
				 marker are written through state_fd */
	int state_fd;         /* DIR opened when it was locked; -1 */
	int log_fd;           /* log, opened and checked at start
				 (fe_jnl_open_log()); -1 with log NULL */
	const char *trace;    /* --trace FILE, or NULL */
	int trace_fd;         /* it, opened by fe_jnl_open_trace(); -1 */
};

/*
 * Load cfg->load, then serve clients until SIGTERM or SIGINT, until the
 * last client has been gone cfg->linger seconds (after at least one came),
 * or until no client came within FE_LOOP_FIRST_CLIENT_SEC; then write
 * cfg->save if anything changed since it was last written.  SIGUSR1 asks
 * for a checkpoint; the other signals a terminal or a parent may send are
 * ignored.  A missing cfg->load is an empty table when load_optional is
 * set or when cfg->save names the same file (`-i F -s F`, said on
 * stderr).  Closes listen_fd.  Returns 0 on one of those ends, -EBADMSG
 * when the journal could not be loaded (missing, unreadable or refused),
 * or another -errno when the loop could not be set up or the last save
 * failed; each is logged.  cfg->sock is gone when it returns.
 *
 * With cfg->state, nothing is written unless DIR still is the directory
 * the daemon locked (fe_state_dir_check()); when it is not, that counts
 * as a failed write and the daemon leaves as soon as no client is left.
 * A daemon that leaves with changes it could not write says so in
 * DIR/unsaved (src/journal/unsaved.h) and removes that file once a
 * journal is written.
 */
int fe_loop_run(const struct fe_loop_cfg *cfg);

#endif
