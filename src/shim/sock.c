/*
 * Opening the socket of the session's daemon (sock.c), for the
 * connection conn.c keeps: the path from FAKEENV_SOCKET, the daemon's
 * uid checked, the fd moved above the ones programs use; waiting for a
 * --state session's daemon to be restarted, and the one report of a
 * daemon that cannot be used.
 */
#include "shim.h"
#include "sock.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include "common/util.h"
#include "fakeenv/env.h"

static int sock_open_once(int *fd, struct stat *st);

/* What sock_open_once() returns for a daemon of another user: a code no
 * call on the way to it returns. */
#define E_NOT_OURS EREMCHG
static _Atomic uint32_t foreign_uid; /* that daemon's uid, for the report */

static atomic_int waited_out; /* a wait for a restart ran out: no more */
static atomic_int reported;   /* the unreachable daemon was reported */

bool fe_sock_may_wait(void)
{
	const char *state = fe_env_initial(FE_ENV_STATE);

	return state && *state && !atomic_load(&reported) &&
	       !atomic_load(&waited_out);
}

void fe_sock_pause(void)
{
	struct timespec ts = { 0, FE_RESTART_STEP_MS * 1000000L };

	nanosleep(&ts, NULL);
}

int fe_sock_open(int *fd, struct stat *st)
{
	int r = sock_open_once(fd, st);

	for (int ms = 0; r == -EHOSTDOWN && fe_sock_may_wait();
	     ms += FE_RESTART_STEP_MS) {
		if (ms >= FE_RESTART_WAIT_MS) {
			atomic_store(&waited_out, 1);
			break;
		}
		fe_sock_pause();
		r = sock_open_once(fd, st);
	}
	return r;
}

/* The real uid the kernel gave this process at exec: the shim's fake ids
 * never change it, and reading it costs no call that could be wrapped. */
static uint32_t our_uid(void)
{
	return (uint32_t)getauxval(AT_UID);
}

/* Whether the daemon on s runs as our own user (SO_PEERCRED: the uid it
 * listened as).  Another user's daemon, at a path swapped under us, could
 * answer anything: it is refused, as no daemon at all would be.  Returns 0
 * or -errno (-E_NOT_OURS). */
static int peer_check(int s)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	if (cred.uid != our_uid()) {
		atomic_store(&foreign_uid, (uint32_t)cred.uid);
		return -E_NOT_OURS;
	}
	return 0;
}

static int sock_open_once(int *fd, struct stat *st)
{
	const char *path = fe_socket_path();
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(path);
	struct rlimit rl;
	int s, hi, r;

	if (len == 0 || len >= sizeof(sa.sun_path))
		return -EHOSTDOWN;
	memcpy(sa.sun_path, path, len + 1);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		close(s);
		return r == -ENOENT || r == -ECONNREFUSED ? -EHOSTDOWN : r;
	}
	r = peer_check(s);
	if (r < 0) {
		close(s);
		return r;
	}
	/* Out of the way of programs that expect the lowest free fd, or
	 * dup2 onto 3, 4, ...: the highest tenth below the soft limit. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 64) {
		rlim_t floor = rl.rlim_cur > 1024 ? 1000 : rl.rlim_cur - rl.rlim_cur / 10;

		hi = (int)fe_syscall(SYS_fcntl, s, F_DUPFD_CLOEXEC, (int)floor);
		if (hi >= 0) {
			close(s);
			s = hi;
		}
	}
	if (fe_sys_fstat(s, st) < 0) {
		close(s);
		return -EIO;
	}
	*fd = s;
	return 0;
}

void fe_sock_report(int r)
{
	int saved = errno;

	if (atomic_exchange(&reported, 1) != 0)
		return;
	if (r == -E_NOT_OURS)
		fe_log("refused: the daemon at %s runs as uid %u, "
		       "not as this process (uid %u); files read as "
		       "having no record and ownership changes fail",
		       fe_socket_path(),
		       (unsigned)atomic_load(&foreign_uid),
		       (unsigned)our_uid());
	else
		fe_log("cannot reach the daemon at %s: %s; files read "
		       "as having no record and ownership changes "
		       "fail",
		       fe_socket_path(),
		       r == -EHOSTDOWN ? "no daemon is listening" :
					 fe_strerror(-r));
	errno = saved;
}
