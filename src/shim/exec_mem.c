/*
 * Memory an exec is handed (a repaired environment, an argument list too
 * long for the stack) that nobody can give back once the exec succeeded
 * in a vfork child: the mapping is in the parent's memory, and the parent
 * never learns it was made.  So each such mapping is noted in a slot,
 * with the thread that made it, until the exec fails and the maker gives
 * it back itself; a later caller unmaps what is still noted once kcmp
 * says its maker no longer has this memory (it exec'd, or is gone).
 * In a process whose own exec succeeded the slots went with its memory.
 *
 * Under a seccomp filter of the program's own (fe_conn_filtered()) kcmp
 * is not tried, and nothing is unmapped.
 *
 * Runs in vfork children and signal handlers: no lock, no malloc; a slot
 * is taken and given by compare-and-swap.  A slot still being written
 * when its process forked stays taken in the child, and its mapping
 * stays there; with every slot taken, a mapping goes unnoted and stays
 * in a vfork child's parent, as all of them did before the slots.
 */
#include "shim.h"
#include "exec_mem.h"

#include <linux/kcmp.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define SLOTS 16
#define BUSY ((pid_t)-1) /* being noted or unmapped */

static struct {
	_Atomic pid_t tid; /* 0: free; BUSY; else the maker */
	void *mem;
	size_t size;
} slot[SLOTS];
static _Atomic int noted; /* slots not free */

/* Unmap what makers that left this memory noted. */
static void sweep(void)
{
	pid_t self = (pid_t)fe_syscall(SYS_gettid), pid = getpid();

	for (int i = 0; i < SLOTS && atomic_load(&noted); i++) {
		pid_t t = atomic_load(&slot[i].tid);
		long r;

		if (t <= 0 || t == self)
			continue;
		r = fe_syscall(SYS_kcmp, pid, t, KCMP_VM, 0, 0);
		/* Refused, or the maker still has this memory: keep it. */
		if (r == 0 || (r < 0 && errno != ESRCH))
			continue;
		if (!atomic_compare_exchange_strong(&slot[i].tid, &t, BUSY))
			continue;
		munmap(slot[i].mem, slot[i].size);
		atomic_fetch_sub(&noted, 1);
		atomic_store(&slot[i].tid, 0);
	}
}

void *fe_exec_mem_get(size_t size)
{
	int saved = errno;
	void *mem;

	if (atomic_load(&noted) && !fe_conn_filtered())
		sweep();
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return NULL;
	for (int i = 0; i < SLOTS; i++) {
		pid_t none = 0;

		if (!atomic_compare_exchange_strong(&slot[i].tid, &none, BUSY))
			continue;
		atomic_fetch_add(&noted, 1);
		slot[i].mem = mem;
		slot[i].size = size;
		atomic_store(&slot[i].tid, (pid_t)fe_syscall(SYS_gettid));
		break;
	}
	errno = saved;
	return mem;
}

void fe_exec_mem_put(void *mem, size_t size)
{
	pid_t self = (pid_t)fe_syscall(SYS_gettid);
	int saved = errno;

	/* A thread's slots are its own while they name it; it may hold two
	 * (an exec in a signal handler that came during an exec). */
	for (int i = 0; i < SLOTS; i++) {
		pid_t t = self;

		if (!atomic_compare_exchange_strong(&slot[i].tid, &t, BUSY))
			continue;
		if (slot[i].mem != mem) {
			atomic_store(&slot[i].tid, self);
			continue;
		}
		atomic_fetch_sub(&noted, 1);
		atomic_store(&slot[i].tid, 0);
		break;
	}
	munmap(mem, size);
	errno = saved;
}
