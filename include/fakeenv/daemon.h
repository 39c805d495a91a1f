/*
 * The contract between the launcher and the daemon it starts (and the
 * commands that read a state directory behind a daemon's back: export,
 * relocate, fsck, status): the daemon's command line, its exit status,
 * and the names of what lives in a session's directory.  Both sides spell
 * them from here, so that renaming one breaks the build, not a session.
 */
#ifndef FAKEENV_DAEMON_H
#define FAKEENV_DAEMON_H

/*
 * The daemon's command line, which only the launcher writes:
 *
 *   fakeenvd --listen-fd N --dir DIR [--load FILE] [--save FILE] [OPTS]
 *       a private session: DIR is the launcher's socket directory and
 *       goes when the daemon does;
 *   fakeenvd --listen-fd N --state DIR [OPTS]
 *       a persistent one: DIR/journal is loaded (if there is one) and
 *       written back; DIR stays.  DIR/lock is held for the daemon's whole
 *       life, so that a successor waits until its last journal is written.
 *
 * OPTS: --unknown-is-real, --linger SECONDS, --checkpoint-interval
 * SECONDS, --trace FILE.  N is an AF_UNIX SOCK_SEQPACKET socket already
 * bound at DIR/sock and listening: the launcher binds it, so that a
 * client can connect as soon as the daemon is started.
 */
#define FE_DARG_LISTEN_FD       "--listen-fd"
#define FE_DARG_DIR             "--dir"
#define FE_DARG_STATE           "--state"
#define FE_DARG_LOAD            "--load"
#define FE_DARG_SAVE            "--save"
#define FE_DARG_LINGER          "--linger"
#define FE_DARG_INTERVAL        "--checkpoint-interval"
#define FE_DARG_TRACE           "--trace"
#define FE_DARG_UNKNOWN_IS_REAL "--unknown-is-real"

/*
 * fakeenv's own failure, as env(1) and timeout(1) use 125: the launcher's
 * exit status when it, not CMD, failed, and the daemon's when it refused
 * to start (a lock, log, trace or journal refused), having said why on
 * stderr, so that the launcher adds nothing.  Bad options exit 2.
 */
#define FE_EXIT_FAIL 125

/* A session's directory: the socket directory of a private session, or
 * the DIR of --state, which also holds the rest (and FE_UNSAVED_NAME,
 * whose format is journal/unsaved.h's). */
#define FE_DIR_SOCK    "sock"    /* the daemon's listening socket */
#define FE_DIR_JOURNAL "journal" /* the state: loaded, then saved over */
#define FE_DIR_LOCK    "lock"    /* flock'd by the daemon that owns DIR */
#define FE_DIR_LOG     "log"     /* the daemon's messages */
#define FE_DIR_DELTA   "delta"   /* changes since the journal, appended
				    (journal/delta.h) */

/* A save writes NAME's new contents to NAME FE_JNL_TMP SUFFIX beside it,
 * then renames; one left behind is a crash's, which the daemon that next
 * holds DIR/lock removes. */
#define FE_JNL_TMP ".tmp."

#endif
