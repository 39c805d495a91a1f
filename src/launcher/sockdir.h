/*
 * Where a session's socket lives and whom what we connect to belongs to:
 * the private socket directory, the --state directory's checks and its
 * lock, and the daemon's user.  For the session's start (session.c) and
 * for every command that reads a --state directory.
 */
#ifndef FE_LAUNCHER_SOCKDIR_H
#define FE_LAUNCHER_SOCKDIR_H

#include <stdbool.h>
#include <sys/types.h>
#include <sys/un.h>

#define FE_SUN_PATH_MAX sizeof(((struct sockaddr_un *)0)->sun_path)

/* *sa for the socket at path; false when path does not fit sun_path. */
bool fe_sockdir_addr(struct sockaddr_un *sa, const char *path);

/* Our real uid as the kernel gave it at exec.  Not getuid() alone: run
 * inside a session (`fakeenv status` from CMD), the shim fakes it. */
uid_t fe_sockdir_real_uid(void);

/* Whether uid is us: the real user, or who the shim says we are. */
bool fe_sockdir_is_us(uid_t uid);

/* Whether the daemon we connected to on fd runs as our own user
 * (SO_PEERCRED: the uid it listened as); *uid gets its uid.  Another
 * user's, at a path swapped under us, could answer anything.  Dies (125)
 * when it cannot tell. */
bool fe_sockdir_peer_ours(int fd, uid_t *uid);

/* Die (125): the daemon at path runs as uid, not as us. */
__attribute__((noreturn))
void fe_sockdir_die_not_ours(const char *path, uid_t uid);

/*
 * The private directory: under $XDG_RUNTIME_DIR (per-user, 0700, cleaned at
 * logout), else $TMPDIR, else /tmp; the first that works wins, so a stale
 * or too long XDG_RUNTIME_DIR falls back quietly.  mkdtemp makes it 0700,
 * which with SO_PEERCRED in the daemon keeps other users out.  Returns
 * it (malloc'd); dies (125) when no base works.
 */
char *fe_sockdir_make(void);

/* Check the --state directory DIR before it is used: a directory of ours
 * that nobody else may write, in directories that nobody but root and us
 * may change (sticky ones aside, as /tmp, when what is below them is
 * ours).  Dies (125) naming the directory that fails. */
void fe_sockdir_check_state(const char *dir);

/*
 * Take DIR/lock, the lock a daemon holds for its whole life (made, 0600,
 * when create and missing), without waiting: returns its fd, held until
 * closed (a daemon starting meanwhile waits for it), -EWOULDBLOCK when a
 * daemon holds it, -ENOENT when it is missing and !create, or another
 * -errno.
 */
int fe_sockdir_lock_state(const char *dir, bool create);

#endif
