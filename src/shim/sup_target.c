/*
 * The supervisor's targets (sup.h): the processes under the filter and
 * their fake ids, their memory and their fds.
 */
#include "sup.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

/* ---- the targets ---- */

int fe_sup_status(pid_t tid, pid_t *tgid, pid_t *ppid, unsigned *umask)
{
	char path[64], buf[2048], *p;
	long fd, n;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	fd = fe_sup_sys(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0, 0);
	if (fd < 0)
		return (int)fd;
	n = fe_sup_sys(SYS_read, fd, (long)buf, sizeof(buf) - 1, 0, 0);
	fe_sup_sys(SYS_close, fd, 0, 0, 0, 0);
	if (n <= 0)
		return -ESRCH;
	buf[n] = '\0';
	if (umask && (p = strstr(buf, "\nUmask:")))
		*umask = (unsigned)strtoul(p + 7, NULL, 8);
	if (tgid)
		*tgid = (p = strstr(buf, "\nTgid:")) ?
				(pid_t)strtol(p + 6, NULL, 10) : tid;
	if (ppid)
		*ppid = (p = strstr(buf, "\nPPid:")) ?
				(pid_t)strtol(p + 6, NULL, 10) : 0;
	return 0;
}

static struct proc *proc_find(struct sup *sp, pid_t tgid)
{
	for (size_t i = 0; i < sp->nproc; i++)
		if (sp->procs[i].tgid == tgid)
			return &sp->procs[i];
	return NULL;
}

/* Forget the processes gone() says are, and the cached thread ids. */
static void procs_forget(struct sup *sp, bool (*gone)(const struct proc *, int),
			 int lst)
{
	size_t k = 0;

	for (size_t i = 0; i < sp->nproc; i++) {
		struct proc *p = &sp->procs[i];

		if (gone(p, lst)) {
			if (p->pidfd >= 0)
				fe_sup_sys(SYS_close, p->pidfd, 0, 0, 0, 0);
			continue;
		}
		sp->procs[k++] = *p;
	}
	sp->nproc = k;
	memset(sp->tids, 0, sizeof(sp->tids));
}

/* Whether p has exited: its pidfd is readable then, whoever has its pid
 * now; without one, whether its pid is free. */
static bool exited(const struct proc *p, int lst)
{
	struct pollfd pf = { .fd = p->pidfd, .events = POLLIN };
	struct timespec zero = { 0, 0 };

	(void)lst;
	if (p->pidfd < 0)
		return fe_sup_sys(SYS_kill, p->tgid, 0, 0, 0, 0) == -ESRCH;
	return fe_sup_sys(SYS_ppoll, (long)&pf, 1, (long)&zero, 0, 0) != 0;
}

/*
 * The processes gone are forgotten within SWEEP_NS of a notification,
 * and the thread ids cached with them: otherwise a new process that got
 * a dead one's pid would take its fake ids (and its root, sup_root.c)
 * for its parent's.  The kernel hands a pid out again only after going
 * round pid_max, far more forks than that time holds.  A process's pidfd
 * tells its exit even once its pid is another's; past 256 processes a
 * sweep asks kill(pid, 0), as the table's growth does.
 */
#define SWEEP_NS 100000000LL

static void sweep(struct sup *sp)
{
	struct timespec ts;
	long long t;

	if (!sp->nproc || clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		return;
	t = ts.tv_sec * 1000000000LL + ts.tv_nsec;
	if (t - sp->swept < SWEEP_NS)
		return;
	sp->swept = t;
	procs_forget(sp, exited, -1);
}

static bool of_listener(const struct proc *p, int lst)
{
	return p->lst == lst;
}

struct proc *fe_sup_proc_add(struct sup *sp, pid_t tgid, int lst,
			     const struct fe_sec_hello *ids)
{
	struct proc *p;

	/* A session that runs thousands of processes under one filter
	 * keeps the table as small as what still runs. */
	if (sp->nproc >= 256 && sp->nproc == sp->proc_cap)
		procs_forget(sp, exited, -1);

	if (sp->nproc == sp->proc_cap) {
		size_t cap = sp->proc_cap ? 2 * sp->proc_cap : 16;
		void *q = realloc(sp->procs, cap * sizeof(*sp->procs));

		if (!q)
			return NULL;
		sp->procs = q;
		sp->proc_cap = cap;
	}
	p = &sp->procs[sp->nproc++];
	p->tgid = tgid;
	p->lst = lst;
	p->pidfd = sp->nproc <= 256 ?
			   (int)fe_sup_sys(SYS_pidfd_open, tgid, 0, 0, 0, 0) : -1;
	if (p->pidfd < 0)
		p->pidfd = -1;
	p->root = ROOT_UNKNOWN;
	p->ids = *ids;
	return p;
}

/* The process of thread tid, under listener lst. */
struct proc *fe_sup_proc_of(struct sup *sp, int lst, pid_t tid)
{
	struct tid *t = &sp->tids[(unsigned)tid % TIDS];
	pid_t tgid, ppid = 0;
	struct proc *p, *parent;

	sweep(sp);
	if (t->tid == tid) {
		tgid = t->tgid;
	} else {
		if (fe_sup_status(tid, &tgid, &ppid, NULL) < 0)
			return NULL;
		t->tid = tid;
		t->tgid = tgid;
	}
	p = proc_find(sp, tgid);
	if (p)
		return p;
	if (!ppid && fe_sup_status(tgid, NULL, &ppid, NULL) < 0)
		return NULL;
	parent = proc_find(sp, ppid);
	return fe_sup_proc_add(sp, tgid, lst,
			       parent ? &parent->ids : &sp->lst[lst].hello);
}

/* Forget a listener's processes: they are gone with it. */
void fe_sup_procs_drop(struct sup *sp, int lst)
{
	procs_forget(sp, of_listener, lst);
}

/* ---- the target's memory and fds ---- */

static long vm(pid_t pid, void *local, unsigned long remote, size_t n,
	       bool write)
{
	struct iovec l = { local, n }, r = { (void *)remote, n };

	return fe_sup_sys(write ? SYS_process_vm_writev : SYS_process_vm_readv, pid,
		   (long)&l, 1, (long)&r, 1);
}

int fe_sup_read_mem(pid_t pid, void *buf, unsigned long addr, size_t n)
{
	if (n == 0)
		return 0;
	if (!addr)
		return -EFAULT;
	return vm(pid, buf, addr, n, false) == (long)n ? 0 : -EFAULT;
}

int fe_sup_write_mem(pid_t pid, const void *buf, unsigned long addr, size_t n)
{
	if (n == 0)
		return 0;
	if (!addr)
		return -EFAULT;
	return vm(pid, (void *)buf, addr, n, true) == (long)n ? 0 : -EFAULT;
}

/* A NUL-terminated string of at most size bytes, read a page at a time
 * (the string may end just before an unmapped page). */
int fe_sup_read_str(pid_t pid, char *buf, unsigned long addr, size_t size)
{
	size_t got = 0;

	if (!addr)
		return -EFAULT;
	while (got < size) {
		size_t chunk = 4096 - ((addr + got) & 4095);
		long n;

		if (chunk > size - got)
			chunk = size - got;
		n = vm(pid, buf + got, addr + got, chunk, false);
		if (n <= 0)
			return -EFAULT;
		if (memchr(buf + got, '\0', (size_t)n))
			return 0;
		got += (size_t)n;
	}
	return -ENAMETOOLONG;
}

/* The target's fd as one of ours: -EBADF when it has none. */
long fe_sup_take_fd(struct proc *p, int fd)
{
	long r;

	if (p->pidfd < 0) {
		r = fe_sup_sys(SYS_pidfd_open, p->tgid, 0, 0, 0, 0);
		if (r < 0)
			return -EBADF;
		p->pidfd = (int)r; /* close-on-exec, as every pidfd */
	}
	r = fe_sup_sys(SYS_pidfd_getfd, p->pidfd, fd, 0, 0, 0);
	return r < 0 ? -EBADF : r;
}
