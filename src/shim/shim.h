/*
 * Internal interface of the preload shim.  The shim runs inside every
 * program of a session: nothing here may allocate, print with stdio, take
 * a lock across a call that can re-enter, or leave errno changed on a
 * success path.  Internal functions return 0 (or a value) or -errno; only
 * the exported wrappers set errno, once, through fe_ret().
 */
#ifndef FE_SHIM_H
#define FE_SHIM_H

/* The shim exports libc.h's calls itself (real.c finds the next ones). */
#define FE_IN_SHIM 1
#include "fakeenv/libc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#ifdef FE_HAVE_FTS
#include <fts.h>
#endif
#include <ftw.h>
#include <spawn.h> /* posix_spawn_file_actions_t in wrap.def */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/capability.h> /* capget, capset in wrap.def */
#include <sys/prctl.h> /* prctl in wrap.def */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>
#include <utmp.h> /* login_tty in wrap.def */

#include "fakeenv/map.h"
#include "fakeenv/proto.h"

#define FE_EXPORT __attribute__((visibility("default")))

/* What every process of a session writes while it loads, kept in .data:
 * the page the dynamic loader already writes (it clears the head of
 * .bss), not pages of .bss of their own.  Each page a new process
 * writes is a page fault, and fork+exec pays them all. */
#define FE_LOAD_DATA __attribute__((section(".data.fe_load")))

/* ftw's and nftw's callbacks, which only glibc names (__ftw_func_t). */
typedef int fe_ftw_cb(const char *path, const struct stat *st, int flag);
typedef int fe_nftw_cb(const char *path, const struct stat *st, int flag,
		       struct FTW *f);

/*
 * What wrap.def's SYSCALL rows test.  The kernel's struct stat is glibc's
 * on these: a SYS_stat result can be laid over by the stat wrappers as it
 * is.  Elsewhere (i386's old struct, x32) the stat numbers pass through
 * unfaked.
 */
#include <sys/syscall.h>
#if (defined(__x86_64__) && defined(__LP64__)) || defined(__aarch64__)
#define FE_KSTAT_IS_STAT 1
#endif
/* SYS_fchmodat2 where the headers are older than the kernel. */
#include "fakeenv/seccomp.h"

/* Every wrapper, the __xstat family too, which old binaries call and glibc
 * >= 2.33 no longer declares. */
#define WRAP(ret, name, params)                 \
	typedef ret fe_##name##_fn params;      \
	FE_EXPORT ret name params;              \
	fe_##name##_fn *real_##name(void);      \
	__attribute__((visibility("hidden"))) fe_##name##_fn fe_self_##name;
#include "wrap.def"

/*
 * fe_self_<name>: a hidden second name of our own wrapper <name>, for the
 * calls the shim routes to itself (syscall(SYS_chown, ...) is chown).
 * Bound when the library is linked, never through the PLT, so it cannot
 * land in libc or in whoever else defines <name>.  An alias must be made
 * in its target's own file: "self.h", included at the end of each file
 * of wrappers, makes one for each SYSCALL row of that file's family.
 */
#if defined(__clang__)
/* clang has no copy attribute; the alias keeps the target's. */
#define FE_SELF_COPY(name)
#else
/* gcc: the alias gets the wrapper's attributes (no -Wmissing-attributes). */
#define FE_SELF_COPY(name) , copy(name)
#endif
#define FE_SELF(name) \
	extern fe_##name##_fn fe_self_##name                   \
		__attribute__((alias(#name) FE_SELF_COPY(name)))

/*
 * syscall() is a wrapped name (wrap_syscall.c): the shim's own raw system
 * calls go to fe_syscall(), which has libc's syscall() conventions and is
 * never ours: the instruction itself on x86-64 and aarch64, libc's
 * syscall() elsewhere.
 */
long fe_syscall(long nr, ...);
#define syscall fe_syscall

/* close() is a wrapper too (fdlife.c): the shim closes its own fds by the
 * system call, which neither imports a wrapped name nor comes back. */
static inline int fe_close(int fd)
{
	return (int)fe_syscall(SYS_close, fd);
}
#define close(fd) fe_close(fd)

/* Call the next definition of name, or fail with ENOSYS when the libc we
 * run on does not have it (statx before glibc 2.28, ...). */
#define REAL(name, ...)                                                   \
	__extension__({                                                   \
		fe_##name##_fn *real_fn_ = real_##name();                 \
		real_fn_ ? real_fn_(__VA_ARGS__) : fe_enosys();           \
	})

/* The same for functions returning a pointer: NULL with errno ENOSYS. */
#define REAL_PTR(name, ...)                                               \
	__extension__({                                                   \
		fe_##name##_fn *real_fn_ = real_##name();                 \
		real_fn_ ? real_fn_(__VA_ARGS__) : fe_enosys_ptr();       \
	})

int fe_enosys(void);
void *fe_enosys_ptr(void);

/* The exported wrapper's single exit: r < 0 sets errno to -r and returns
 * -1; otherwise errno is restored to what it was on entry. */
static inline int fe_ret(int r, int saved)
{
	if (r < 0) {
		errno = -r;
		return -1;
	}
	errno = saved;
	return r;
}

/* --- session state (session.c) --- */

/* Nesting depth of the shim's own work on this thread: a wrapper reached
 * from inside the shim passes straight through. */
extern _Thread_local int fe_depth;

/* FE_SESSION_ON once the environment said we are in a session; anything
 * else means "not known yet" or "no session" (see session.c). */
#define FE_SESSION_ON 2
/* In a session, but FAKEENV_DISABLED: every wrapper passes through. */
#define FE_SESSION_DISABLED 4
extern _Atomic int fe_session_state;
int fe_session_init(void);

/* True when this process is in a session, faking or disabled
 * (FAKEENV_DISABLED), and the calling thread is not inside the shim: what
 * the exec wrappers ask, since a disabled process's children must still
 * be able to fake again.  May run in a vfork child. */
bool fe_in_session(void);

/* The exec wrappers, before the real call: arm this process with the
 * session's seccomp filter when the program is one the preload cannot
 * reach (sec_exec.c).  how: path as it is, searched in PATH, fd
 * (fexecve), or fd + path + flags (execveat).  True when the program
 * runs another libc's loader, which cannot load the library: the
 * caller leaves it out of the child's LD_PRELOAD (the filter fakes
 * such a program and every process it runs). */
enum { FE_EXEC_PATH, FE_EXEC_SEARCH, FE_EXEC_FD, FE_EXEC_AT };
bool fe_sec_exec(int how, const char *path, int fd, int flags);

/* posix_spawn's: the launcher's path when the program (path, searched in
 * PATH when search) must be armed, with its own path in buf; else NULL.
 * The spawn then runs "LAUNCHER FE_SEC_EXEC_ARG buf ARGV...".  *foreign
 * as fe_sec_exec() returns it. */
const char *fe_sec_spawn_via(bool search, const char *path, char *buf,
			     size_t size, bool *foreign);

/* True when this process runs under the session's seccomp filter (it then
 * passes every call through, as if disabled: the supervisor answers). */
bool fe_sec_under(void);

/*
 * strlen(), "e is NAME=..." and a string copy as plain loops, for what
 * runs at load and in fork children about to exec.  A fork child does not
 * inherit its parent's mappings of code: each libc function it calls
 * costs a page fault on its code, and at load each costs a lazy symbol
 * lookup, for strings of a few dozen bytes.
 */
static inline size_t fe_slen(const char *s)
{
	const char *p = s;

	/* The empty asm keeps the compiler from seeing strlen() here and
	 * calling it. */
	while (*p) {
		p++;
		__asm__("" : "+r"(p));
	}
	return (size_t)(p - s);
}

/* Whether e is "name=...": the value, or NULL. */
static inline const char *fe_var_value(const char *e, const char *name)
{
	while (*name && *e == *name) {
		e++;
		name++;
	}
	return !*name && *e == '=' ? e + 1 : NULL;
}

/* s copied to d, its NUL included: the end of the copy (at its NUL). */
static inline char *fe_scopy(char *d, const char *s)
{
	while ((*d = *s) != '\0') {
		d++;
		s++;
	}
	return d;
}

/* True when this process is in a session (FAKEENV_SOCKET was set when the
 * library loaded) and the calling thread is not already inside the shim.
 * Safe before our constructor has run.  Inline: every wrapper asks. */
static inline bool fe_faking(void)
{
	if (fe_depth != 0)
		return false;
	if (__atomic_load_n((int *)&fe_session_state, __ATOMIC_ACQUIRE) ==
	    FE_SESSION_ON)
		return true;
	return fe_session_init() == FE_SESSION_ON;
}

/* --- ignored paths (ignore.c) --- */

/* Number of FAKEENV_IGNORE_PATHS prefixes; 0 outside a session.  Set
 * once, before fe_session_state says FE_SESSION_ON. */
extern int fe_ignore_n;

/* Take the prefixes of list ("P1:P2", NULL: none), which must live as
 * long as the process image (the load-time copy of the environment). */
void fe_ignore_load(const char *list);

/* Whether dirfd+path (path "": the file open at dirfd) is under an
 * ignored prefix, the path made absolute and lexically normalised, its
 * symbolic links not resolved.  errno untouched. */
bool fe_ignored_slow(int dirfd, const char *path);

/* The same, one load when no prefix is set. */
static inline bool fe_ignored(int dirfd, const char *path)
{
	return fe_ignore_n != 0 && fe_ignored_slow(dirfd, path);
}

/* fe_faking() for a call on dirfd+path: false under an ignored prefix,
 * where the real call is the whole of it. */
static inline bool fe_faking_at(int dirfd, const char *path)
{
	return fe_faking() && !fe_ignored(dirfd, path);
}

/* True when files with no record show their real owner (fakeenv -u).
 * Meaningful once fe_faking() has said yes. */
bool fe_unknown_is_real(void);

/* The daemon's socket path, "" outside a session. */
const char *fe_socket_path(void);

/* --- chroot (chroot.c) --- */

/* FAKEENV_ROOT read at load. */
void fe_root_load(void);
/* The fd on the host's root once the process chrooted, else -1. */
int fe_root_fd(void);
/* "FAKEENV_ROOT=..." for a child's environment, or NULL when not
 * chrooted. */
const char *fe_root_ent(void);
/* Our library, the daemon's socket (host path sock), the launcher, as
 * this process reaches them. */
const char *fe_root_lib(void);
const char *fe_root_sock(const char *sock);
const char *fe_root_launcher(void);
/* The absolute path in buf (inside the root) as the host's; "" when it
 * does not fit. */
void fe_root_outside(char *buf, size_t size);

/* Value of NAME in the environment as it was when the library loaded
 * (captured once; later setenv/clearenv by the program do not change it),
 * or NULL. */
const char *fe_env_initial(const char *name);

/* --- fd lifetimes (fdlife.c) --- */

/* The token of fd: non-zero while fd is what the program opened through
 * one of our open wrappers, 0 once it closed it through us, and for any
 * fd the wrappers did not see open.  Two equal non-zero tokens read at
 * two times mean the same open file in between.  Async-signal-safe. */
uint32_t fe_fd_token(int fd);

/* The program opened fd through us (fd < 0: nothing); returns fd. */
int fe_fd_opened(int fd);

/* freopen closes the fd under fp (NULL: nothing), whatever comes of it.
 * Streams' fds get no token: fopen's are made inside libc. */
void fe_fd_stream_closed(FILE *fp);

/* The program closed fd, or every fd, through us. */
void fe_fd_closed(int fd);
void fe_fd_closed_all(void);

/* --- connection to the daemon (conn.c) --- */

/* One round trip: send req (version filled in) and tail (a NUL-terminated
 * path or NULL), wait for the reply.  Returns 0 or -errno: -EHOSTDOWN when
 * the daemon cannot be reached (reported once per process on stderr).
 * Blocks signals for its own duration; safe from threads, signal
 * handlers, fork children and vfork children; errno untouched. */
int fe_conn_call(struct fe_req *req, const char *tail, struct fe_rep *rep);

/* Open the connection (and map the shared table) now if this process has
 * none, so that a program about to forbid socket(2), connect(2) and
 * mmap(2) to itself (a seccomp filter) keeps its session; from now on the
 * round trip needs only writev, read, fstat, getpid and rt_sigprocmask.
 * Failure is silent: the next call reports.  fe_conn_filtered(): it was
 * called, so no other system call is to be tried. */
void fe_conn_prepare(void);
bool fe_conn_filtered(void);

/* The same with a tail of len bytes as it is (RENAMEDIR's two paths). */
int fe_conn_call_tail(struct fe_req *req, const char *tail, size_t len,
		      struct fe_rep *rep);

/* Send req and its tail one-way (FE_F_ONEWAY is set here): no reply is
 * awaited.  Returns 0 when the message is in the daemon's queue, or
 * -errno as fe_conn_call(). */
int fe_conn_send(struct fe_req *req, const char *tail, size_t len);

/*
 * A recorded change: one-way when this process can (fe_map_pend_raise()
 * for a change that shows in stat, fe_map_oneway() for the others), else
 * a round trip.  tail: len bytes (a path with its NUL, RENAMEDIR's two),
 * or NULL.  Returns 0, or -errno when the daemon cannot be reached; *err
 * gets the daemon's answer: always 0 one-way (whatever the daemon meets
 * then is counted as lost, and said by the launcher).
 */
int fe_change(struct fe_req *req, const char *tail, size_t len, int *err);

/* fe_change() with a path hint (NUL-terminated, or NULL; one too long for
 * FE_PATH_MAX is not sent). */
int fe_change_hint(struct fe_req *req, const char *hint, int *err);

/* Most tail parts fe_conn_xcall() takes. */
#define FE_CONN_TAIL_PARTS 4

/* The same with a tail given in ntail parts (sent as one message), and a
 * reply that may carry bytes after the struct fe_rep (XGET, XLIST): up to
 * size of them land in buf, *got (if given) says how many.  The same
 * rules as fe_conn_call(). */
int fe_conn_xcall(struct fe_req *req, const struct iovec *tail, int ntail,
		  struct fe_rep *rep, void *buf, size_t size, size_t *got);

/* One round trip of op (MAP, RING) whose reply carries fds: install(fds,
 * n) runs with the fds the daemon sent (closed afterwards), under the
 * connection's lock with signals blocked, so that installs never
 * overlap.  Returns 0, install's result, or -errno; -ESRCH in a process
 * that does not own the shim's globals (a vfork child, a raw clone),
 * where nothing may be installed.  Reports nothing: the caller goes on
 * without (GET, the socket). */
int fe_conn_fds(uint16_t op, int (*install)(const int *fds, int n));

/* Whether the shim's globals (the connection, the ring) are this
 * process's, without a system call where the fork mark can tell: false
 * in a fork child that has not used them yet (its first call through
 * the connection takes them over).  A vfork child counts as its
 * parent.  Async-signal-safe. */
bool fe_conn_owned(void);

/* Send WAKE one-way: the daemon takes this process's ring.  Returns 0,
 * or -errno as fe_conn_send() (the daemon is gone). */
int fe_conn_wake(void);

/* --- the change ring (ring.c, fakeenv/ring.h) --- */

/*
 * Put a one-way change in this process's ring, if it has one and the
 * daemon polls it now.  c: the pending counter of req's key (pend: the
 * counters) for a change that shows in stat, raised here when the
 * bucket holds no change in flight but this process's own (which land
 * before it: one ring), else NULL.  Returns 0 (published: done), 1 (not
 * here: send by the socket), or -EAGAIN (another process's change to
 * this bucket is in flight, or the daemon is gone: wait for a reply).
 * Async-signal-safe, lock-free (a try-lock among the process's threads);
 * errno untouched.
 */
int fe_ring_put(struct fe_req *req, const char *tail, size_t len,
		uint32_t *pend, uint32_t *c);

/* A one-way change went by the socket: after a few, this process asks
 * for a ring (RING), once. */
void fe_ring_sent(void);

/* Drop this process's ring (a fork child's copy of its parent's, or one
 * whose connection was replaced: lost says so, and the next change then
 * waits for its reply, so that it lands after whatever the old ring
 * still holds).  The mapping stays: another thread may be in it. */
void fe_ring_forget(bool lost);

/* The next change must wait for its reply (fe_ring_forget(true)):
 * true once, then false. */
bool fe_ring_resync(void);

/* Whether the daemon polls the rings now (fakeenv/map.h, awake_until),
 * with pend the counters. */
bool fe_ring_daemon_awake(uint32_t *pend);

/* A lookup of the shared table for fe_ring_overlay(): 1 and the slot in
 * *rec, 0 (no record: rec->flags 0), or -1 (cannot tell). */
typedef int fe_ring_look_fn(void *ctx, struct fe_slot *rec);

/*
 * What the table will show of (dev, ino) once this process's changes in
 * its ring are in, when they are all the changes in flight in its
 * bucket: look()'s slot with them laid over it (fakeenv/rec.h).  Returns
 * 1 (a record, in *rec), 0 (none) or -1 (others' changes are in flight
 * there too, or the daemon took one of ours meanwhile: wait, or ask).
 * Async-signal-safe; errno untouched.
 */
int fe_ring_overlay(uint32_t *pend, uint64_t dev, uint64_t ino,
		    bool unknown_is_real, fe_ring_look_fn *look, void *ctx,
		    struct fe_slot *rec);

/* --- the shared table (map.c) --- */

/*
 * The session's view of (dev, ino) from the shared mapping, without a round
 * trip, for a file of real st_mode/st_uid/st_gid real_* and birth-time tag btag
 * (0: unknown; v->btag then says the record's, for a caller that can still find
 * the file's).  Returns 1 (a record, laid over the real values in *v), 0 (no
 * record: the defaults in *v), or -1: the mapping cannot tell (not available,
 * kept changing, or the record is stale, which only the daemon may drop): ask
 * the daemon.  Async-signal-safe, lock-free on the hit path; errno untouched; a
 * vfork child only reads a mapping its parent published.
 */
int fe_map_view(uint64_t dev, uint64_t ino, uint32_t btag, uint32_t real_mode,
		uint32_t real_uid, uint32_t real_gid, struct fe_view *v);

/* The same for st, but -1 at once where a change to its bucket is still
 * on its way to the table, instead of waiting for it, unless the changes
 * there are all this process's (fe_ring_overlay()): for a change that
 * would rather be sent, maybe for nothing, than wait to know. */
int fe_map_view_now(const struct stat *st, uint32_t btag, struct fe_view *v);

/*
 * One-way changes (fakeenv/map.h): raise the pending counter of (dev,
 * ino)'s bucket from 0, before sending a change that shows in stat.
 * Returns the counter (its mapping is never unmapped), or NULL when this
 * process has no counters, or the bucket already has a change in flight
 * (whoever's: the change must then wait for its reply, to land after
 * it).  Async-signal-safe; errno untouched.
 */
uint32_t *fe_map_pend_raise(uint64_t dev, uint64_t ino);

/* The pending counters (fakeenv/map.h), mapped now if they were not, or
 * NULL when this process has none.  Async-signal-safe once mapped. */
uint32_t *fe_map_pend(void);

/* The same without mapping them: NULL when they are not mapped yet (or
 * were forgotten with their daemon). */
uint32_t *fe_map_pend_mapped(void);

/* Lower it again: the change raised for was never sent. */
void fe_map_pend_undo(uint32_t *c);

/* The daemon this process talked to is gone (a --state session restarts
 * it): its mapping is frozen at its last state, so forget it; the next
 * lookup maps the new daemon's.  Called under conn.c's lock. */
void fe_map_forget(void);

/* Map the shared table now if this process has not yet (before a seccomp
 * filter forbids mmap and recvmsg).  errno untouched. */
void fe_map_prefetch(void);

/* True when the shared table holds a faked device at all (false without
 * the mapping).  Async-signal-safe; errno untouched. */
bool fe_map_has_dev(void);

/* Whether the shared table holds a record with xattrs kept by the daemon
 * (FE_REC_XATTR) at all: 1, 0 (getxattr and listxattr need no lookup),
 * or -1 without the mapping.  Async-signal-safe; errno untouched. */
int fe_map_xattrs(void);

/* Whether the shared table holds a directory record whose faked mode is
 * set-gid (root's nsgid): 1, 0 (a new file's parent needs no lookup), or
 * -1 without the mapping.  Async-signal-safe; errno untouched. */
int fe_map_sgid_dirs(void);

/* Whether the shared table holds a record without a birth time (root's
 * nblind): 1, 0 (no record a dead file left can match a new inode), or
 * -1 without the mapping.  Async-signal-safe; errno untouched. */
int fe_map_blind(void);

/* Tgid, PPid and Umask of tid (0: this process) from /proc (a missing
 * Umask line leaves *umask): 0, or -errno, errno changed (sup_target.c). */
int fe_sup_status(pid_t tid, pid_t *tgid, pid_t *ppid, unsigned *umask);

/* fe_created()'s lesson for wrap_open.c: the real mode the kernel gave a
 * new inode (its mode & ~umask). */
void fe_owner_learn(mode_t real_mode);

/* The same for a real stat result and its birth-time tag. */
static inline int fe_map_view_st(const struct stat *st, uint32_t btag,
				 struct fe_view *v)
{
	return fe_map_view(st->st_dev, st->st_ino, btag, st->st_mode,
			   st->st_uid, st->st_gid, v);
}

/* --- fake credentials (creds.c) --- */

uid_t fe_cred_euid(void);
uid_t fe_cred_ruid(void);
gid_t fe_cred_egid(void);
gid_t fe_cred_rgid(void);
uid_t fe_cred_fsuid(void);
gid_t fe_cred_fsgid(void);
/* True when the fake fsuid and fsgid are both 0. */
bool fe_cred_fs_root(void);
/* True when gid is the fake egid or one of the fake supplementary groups. */
bool fe_cred_in_group(gid_t gid);

/* This process's fake ids into *ids (the hello an armed process sends),
 * and, for the supervisor, ids taken as this process's own for the calls
 * that follow (kept in memory, never written to the environment: they
 * are its targets'). */
struct fe_sec_hello;

/* syscall(2)'s router (wrap_syscall.c): a number the shim fakes goes to
 * its wrapper, with syscall()'s conventions (-1 and errno); *done false
 * for the others, untouched.  The supervisor answers with it too. */
long fe_route_syscall(long nr, const long *a, bool *done);

void fe_cred_give(struct fe_sec_hello *ids);
void fe_cred_take(const struct fe_sec_hello *ids);

/* --- metadata helpers (meta.c; fd paths and caches: fdpath.h) --- */

/* Where a stat result came from, for a birth time looked up only when a
 * record needs it (the stat calls that give none: glibc's walkers and
 * the old __xstat names).  path relative to dirfd, flags as fstatat. */
struct fe_restat {
	int dirfd;
	const char *path;
	int flags;
};

/* What the shim knows of one inode: the real values, then the faked ones
 * once fe_meta_get() has asked the daemon. */
struct fe_meta {
	uint64_t dev;  /* st_dev */
	uint64_t ino;  /* st_ino */
	uint32_t btag; /* birth-time tag (fe_btag()), 0: unknown */
	uint32_t mode; /* st_mode, type included */
	uint32_t uid;  /* st_uid */
	uint32_t gid;  /* st_gid */
	uint64_t rdev; /* st_rdev */
	const struct fe_restat *re; /* with btag 0: how to find it, or NULL */
};

/* Replace real values in m by the session's view of the inode.  When the
 * daemon cannot answer, the file reads as a file with no record: 0:0. */
void fe_meta_get(struct fe_meta *m);

/* The session's view of the inode of a real stat result (with its
 * birth-time tag), into m. */
void fe_meta_faked(const struct stat *st, uint32_t btag, struct fe_meta *m);

/* Lay the session's view over a stat result in place; errno untouched.
 * btag: the file's birth-time tag, 0: unknown (then re, if not NULL, can
 * find it). */
void fe_fix_stat(struct stat *st, uint32_t btag, const struct fe_restat *re);
void fe_fix_stat64(struct stat64 *st, uint32_t btag,
		   const struct fe_restat *re);
void fe_fix_statx(struct statx *stx);

/* The birth-time tag of a statx result, 0 when it has no birth time. */
uint32_t fe_statx_btag(const struct statx *stx);

/*
 * stat of dirfd+path (flags as fstatat: AT_SYMLINK_NOFOLLOW,
 * AT_EMPTY_PATH, AT_NO_AUTOMOUNT) into the caller's struct, and the
 * file's birth-time tag into *btag (0: unknown), in one system call
 * (statx; newfstatat where the kernel or a seccomp filter refuses
 * statx), without passing through our wrappers.  Returns 0 or -errno;
 * errno untouched.
 */
int fe_sys_statat(int dirfd, const char *path, int flags, struct stat *st,
		  uint32_t *btag);
int fe_sys_statat64(int dirfd, const char *path, int flags,
		    struct stat64 *st, uint32_t *btag);

/*
 * fe_sys_statat() of the file a change names, dirfd+path with flags
 * (AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH): one system call for anything but
 * a path whose last component is a symbolic link that the call follows
 * (*followed is then true): the record is the target's.
 */
int fe_stat_target(int dirfd, const char *path, int flags, struct stat *st,
		   uint32_t *btag, bool *followed);

/* The path hint for that file (st: what fe_stat_target() gave), into buf
 * (NULL when none fits): dirfd's own path for an empty path, the
 * target's name for a followed link, else dirfd+path made absolute.  Made
 * only when a change is sent: it costs a getcwd or a readlink, but for
 * an fd whose path this thread learnt last (fe_fd_hint_keep()). */
const char *fe_target_hint(int dirfd, const char *path, bool followed,
			   const struct stat *st, char *buf, size_t size);

/* lstat/stat of dirfd+path without passing through our wrappers, and
 * without a birth time (the shim's own fds: sockets, memfds); flags as
 * fstatat.  Returns 0 or -errno. */
int fe_sys_fstatat(int dirfd, const char *path, struct stat *st, int flags);
int fe_sys_fstat(int fd, struct stat *st);

/* A request for the inode described by st and btag, real fields filled
 * in. */
void fe_req_init(struct fe_req *req, uint16_t op, const struct stat *st,
		 uint32_t btag);

/* Tell the daemon that the inode at dirfd+path (or fd when path is NULL)
 * was just created by this process, owned by the fake fsuid:fsgid.  Keeps
 * the real file usable by its real owner (owner rw, rwx for directories):
 * when the kernel gave fewer bits, they are added for real and the
 * requested permissions are recorded instead, with the set-id bits in
 * setid that the real file was made without.  Returns 0 or -errno; the
 * creation itself has already happened and stands either way. */
int fe_created(int dirfd, const char *path, int fd, int stat_flags,
	       mode_t setid);

/* --- opening with creation (wrap_open.c, wrap_syscall.c) --- */

/* Whether open flags can create an inode: O_CREAT, or O_TMPFILE. */
static inline bool fe_open_creates(unsigned long long flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

/* One attempt at the open fe_open_new() makes, with these flags and mode
 * (the caller's, or the probe's): the fd or -errno. */
typedef int fe_open_try_fn(const void *ctx, unsigned long long flags,
			   unsigned long long mode);

/*
 * An open with creation (fe_open_creates(flags)) by try(ctx, ...), that
 * records a file it made as the fake fsuid's, and only then: O_CREAT
 * without O_EXCL first opens without O_CREAT, and only ENOENT leads to an
 * O_EXCL creation, which tells for sure that this call made the file (an
 * existing file costs one open, as natively).  dirfd+path name the file
 * for its record (path NULL: by the fd alone).  Returns the fd or
 * -errno; errno untouched.
 */
int fe_open_new(fe_open_try_fn *try, const void *ctx,
		unsigned long long flags, unsigned long long mode, int dirfd,
		const char *path);

/* --- set-gid directories (sgid.c) --- */

/* The kernel's inode_init_owner() for the inode just created at
 * dirfd+path (or fd when path is NULL), whose real stat is st: when its
 * parent shows S_ISGID in the session, *gid becomes the parent's faked
 * group, a directory gets S_ISGID in *perm, and a non-directory loses
 * S_ISGID (with group-exec) unless the fake fsuid is 0 or in that group.
 * *perm holds the permission bits that are to be recorded.  Looks the
 * parent up only when the table has a set-gid directory, or when st shows
 * that the kernel applied a real set-gid parent.  errno untouched. */
void fe_sgid_inherit(int dirfd, const char *path, int fd, const struct stat *st,
		     uint32_t *gid, mode_t *perm);

/* --- xattrs (wrap_own.c, wrap_xattr.c) --- */

/* setxattr of a minimal POSIX ACL (owner, group and other entries only)
 * is the chmod it stands for: done here for fd >= 0, or path with flags
 * (0 or AT_SYMLINK_NOFOLLOW).  Returns 0 or -errno when name=value was
 * one, 1 when it was not. */
int fe_acl_as_chmod(int fd, const char *path, int flags, const char *name,
		    const void *value, size_t size);

/* --- exec and spawn (wrap_exec.c, creds.c) --- */

/* Size of each buffer handed to fe_cred_format(): 64 groups of 10 digits
 * and a comma. */
#define FE_CRED_BUF 720

/* The current fake ids as the values of FAKEENV_UIDS, FAKEENV_GIDS and
 * FAKEENV_GROUPS, into three buffers of n >= FE_CRED_BUF bytes.  Takes
 * no lock, allocates nothing, writes no global: may run in a vfork
 * child. */
void fe_cred_format(char *uids, char *gids, char *groups, size_t n);

/* Paths of fds and dirfd+path, and the per-thread fd caches. */
#include "fdpath.h"

#endif
