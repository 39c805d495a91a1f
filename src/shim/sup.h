/*
 * The supervisor's parts (supervise.c, sup_target.c, sup_loop.c): what
 * they share.  The supervisor is described in supervise.c.
 */
#ifndef FE_SHIM_SUP_H
#define FE_SHIM_SUP_H

#include "shim.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/syscall.h>

#include "fakeenv/seccomp.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* fe_syscall's result, or -errno; errno is the supervisor's own.  Every
 * system call of the supervisor's own is raw: as the shim's, never a
 * wrapper. */
static inline long fe_sup_sys(long nr, long a, long b, long c, long d,
			      long e)
{
	long r = fe_syscall(nr, a, b, c, d, e, 0L);

	return r < 0 ? -errno : r;
}

/* Whether a process's root is the supervisor's for good (sup_root.c). */
enum { ROOT_UNKNOWN, ROOT_OURS, ROOT_VARIES };

/* A process seen in a notification: its fake ids, kept from call to
 * call; a new process starts with its parent's (or, for the armed one,
 * the hello's). */
struct proc {
	pid_t tgid;
	int lst;    /* its listener's index */
	int pidfd;  /* -1 until an fd of its is needed */
	int root;   /* ROOT_*: looked at on its first path */
	struct fe_sec_hello ids;
};

/* A listener: the ids it was armed with; vary: one of its processes made
 * a call that changes a root (FE_SEC_ROOT), so none of them is taken to
 * have ours any more. */
struct lst {
	struct fe_sec_hello hello;
	bool vary;
};

/* A thread id's process, cached: Go programs run many threads. */
struct tid {
	pid_t tid, tgid;
};

#define TIDS 1024

struct sup {
	int sock;           /* where armed processes connect */
	struct pollfd *pfd; /* [0]: sock, then the listeners */
	struct lst *lst;    /* per listener */
	size_t nlst, cap;
	struct proc *procs;
	size_t nproc, proc_cap;
	struct tid tids[TIDS];
	long long swept;    /* CLOCK_MONOTONIC ns of the last sweep */
	struct seccomp_notif *n;
	struct seccomp_notif_resp *resp;
	struct seccomp_notif_sizes sizes;
};

/* The targets (sup_target.c; fe_sup_status() is in shim.h). */
struct proc *fe_sup_proc_add(struct sup *sp, pid_t tgid, int lst,
			     const struct fe_sec_hello *ids);
struct proc *fe_sup_proc_of(struct sup *sp, int lst, pid_t tid);
void fe_sup_procs_drop(struct sup *sp, int lst);
int fe_sup_read_mem(pid_t pid, void *buf, unsigned long addr, size_t n);
int fe_sup_write_mem(pid_t pid, const void *buf, unsigned long addr,
		     size_t n);
int fe_sup_read_str(pid_t pid, char *buf, unsigned long addr, size_t size);
long fe_sup_take_fd(struct proc *p, int fd);

/* Answer notification n of listener lst into *r; false when nothing is
 * to be sent (the target is gone, or the answer went with an fd). */
/* A relative path of a stat by target tid as "/proc/TID/cwd/PATH", in
 * place (its buffer has room for the prefix past PATH_MAX): true when
 * rewritten, false when it is to go through the cwd's fd (sup_root.c). */
bool fe_sup_cwd_prefix(pid_t tid, char *path);

/* Whether target tid of p (a process of listener l) has the
 * supervisor's root and cannot leave it but by a call the filter traps:
 * then its paths are the supervisor's to resolve as they are, with no
 * look at /proc/TID/root each time (sup_root.c). */
bool fe_sup_root_ours(const struct lst *l, struct proc *p, pid_t tid);

/* A chrooted target tid's path in name (size bytes: rewritten) as a
 * directory fd of ours in its root (*dirfd, the caller's to close) and a
 * name under it; follow: the call follows a symbolic link there.  1
 * when done, 0 when the target's root is ours or the path is to be
 * taken as it is, -errno for the call's answer (sup_root.c). */
int fe_sup_root_path(pid_t tid, char *name, size_t size, bool follow,
		     int *dirfd);
bool fe_sup_answer(struct sup *sp, int lst, const struct seccomp_notif *n,
		   struct seccomp_notif_resp *r);

#endif
