/*
 * The FAKEENV_* environment variables: how the launcher hands a session to
 * the shim, and how fake credentials survive exec.  Shared by the launcher
 * and the shim.
 */
#ifndef FAKEENV_ENV_H
#define FAKEENV_ENV_H

/* Absolute path of the daemon's socket.  Set: the shim fakes; unset: the
 * shim passes every call through untouched. */
#define FE_ENV_SOCKET "FAKEENV_SOCKET"

/* Fake user ids "ruid:euid:suid:fsuid", decimal.  Absent: all 0. */
#define FE_ENV_UIDS "FAKEENV_UIDS"

/* Fake group ids "rgid:egid:sgid:fsgid", decimal.  Absent: all 0. */
#define FE_ENV_GIDS "FAKEENV_GIDS"

/* Fake supplementary groups "g1,g2,...", decimal, possibly empty.
 * Absent: the single group 0. */
#define FE_ENV_GROUPS "FAKEENV_GROUPS"

/* Absolute path of libfakeenv.so, as put in LD_PRELOAD. */
#define FE_ENV_LIB "FAKEENV_LIB"

/* "1" when the session shows files with no record as their real owner
 * (fakeenv -u); absent otherwise.  The daemon decides what a GET shows;
 * the shim needs it only to know when a new file needs no record. */
#define FE_ENV_UNKNOWN_REAL "FAKEENV_UNKNOWN_IS_REAL"

/* fakeroot's own: set for CMD to the daemon's socket path (the same as
 * FAKEENV_SOCKET), so that scripts and tools that test it (debhelper, which
 * then runs file(1) without its seccomp sandbox) know they run under a fake
 * root.  Not read by the shim. */
#define FE_ENV_FAKEROOTKEY "FAKEROOTKEY"

/* Set to anything but "" or "0": this process and its children see the
 * real ids and files (every wrapper passes through), while the session
 * stays in their environment for a child that unsets it.  Read by the
 * shim at load; never put back by the exec wrappers. */
#define FE_ENV_DISABLED "FAKEENV_DISABLED"

/* "P1:P2:...": absolute path prefixes, matched on component boundaries,
 * whose files are never recorded and always read as real.  Set by the
 * launcher from --ignore-path, appended to an inherited list. */
#define FE_ENV_IGNORE_PATHS "FAKEENV_IGNORE_PATHS"

/* At most this many prefixes of FAKEENV_IGNORE_PATHS are honoured. */
#define FE_IGNORE_MAX 32

/* "auto" (the default), "always" or "never": which programs of the
 * session run under its seccomp filter (fakeenv/seccomp.h).  The
 * launcher's default for --seccomp; set by it for CMD. */
#define FE_ENV_SECCOMP "FAKEENV_SECCOMP"
/* Where the session's supervisor takes armed processes: an AF_UNIX
 * socket name, '@' first for the abstract namespace.  Set by the
 * launcher; absent: nothing is armed. */
#define FE_ENV_SUPERVISOR "FAKEENV_SUPERVISOR"
/* The launcher's absolute path: posix_spawn of a program to arm starts
 * it as "LAUNCHER FE_SEC_EXEC_ARG PATH ARGV...", which arms itself and
 * execs PATH (glibc's spawn child runs no code of ours).  Set by the
 * launcher. */
#define FE_ENV_LAUNCHER "FAKEENV_LAUNCHER"
/* What the shim's exec wrappers put back into a child's environment when
 * it lacks them, X(NAME, FROM): NAME=value of the load-time FROM.  The
 * value always comes from a FAKEENV_* variable, which is what the shim
 * copies at load. */
#define FE_ENV_RESTORED(X)                        \
	X(FE_ENV_SOCKET, FE_ENV_SOCKET)            \
	X(FE_ENV_LIB, FE_ENV_LIB)                  \
	X(FE_ENV_UNKNOWN_REAL, FE_ENV_UNKNOWN_REAL) \
	X(FE_ENV_IGNORE_PATHS, FE_ENV_IGNORE_PATHS) \
	X(FE_ENV_SECCOMP, FE_ENV_SECCOMP)          \
	X(FE_ENV_SUPERVISOR, FE_ENV_SUPERVISOR)    \
	X(FE_ENV_LAUNCHER, FE_ENV_LAUNCHER)        \
	X(FE_ENV_FAKEROOTKEY, FE_ENV_SOCKET)

/* "H:F:PATH" in a process that chrooted (the shim's chroot.c): H the fd
 * of an O_PATH open of the host's root, kept across exec; F 'n' when the
 * process is in the user namespace the shim made for it, 'k' when the
 * kernel granted the chroot itself; PATH the host path of the current
 * root ("" for the host's).  Set by the shim, always replaced by the exec
 * wrappers with the current value. */
#define FE_ENV_ROOT "FAKEENV_ROOT"

/* The launcher's default for --state DIR: a persistent session.  Read by
 * the launcher (and by `fakeenv checkpoint` and `status`); set for CMD in
 * a --state session, where the shim waits a moment for a daemon being
 * restarted. */
#define FE_ENV_STATE "FAKEENV_STATE"

/* The launcher's default for --trace FILE.  Read by the launcher only. */
#define FE_ENV_TRACE "FAKEENV_TRACE"

/* "1": the shim does not map the shared table and asks the daemon for
 * every stat, as where memfds cannot be sealed (for tests and
 * debugging). */
#define FE_ENV_NO_MAP "FAKEENV_NO_MAP"

/* "1": fork children are told apart by a pthread_atfork handler, as on a
 * kernel without MADV_WIPEONFORK, instead of the wiped page (for tests of
 * that path). */
#define FE_ENV_ATFORK "FAKEENV_ATFORK"

/* At most this many supplementary groups are faked (NGROUPS_MAX is 65536;
 * real builds use a handful). */
#define FE_GROUPS_MAX 64

#endif
