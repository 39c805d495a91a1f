/*
 * Shared memory for the table: see shm.h for the sealing rule.
 */
#include "shm.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/mapread.h"
#include "common/util.h"

/* Linux 5.1; older headers lack it, older kernels refuse it (EINVAL). */
#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

#define POPULATE_MIN (1u << 20)

void *fe_shm_alloc(size_t size, const char *name, int *rofd, bool rw)
{
	unsigned seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
	char proc[64];
	void *p;
	int fd;

	*rofd = -1;
	fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		goto private;
	if (ftruncate(fd, (off_t)size) < 0) {
		close(fd);
		goto private;
	}
	/* A big array (a load's, a growth's) is written whole soon: its
	 * pages made in one call cost half what a fault each does. */
	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | (size >= POPULATE_MIN ? MAP_POPULATE : 0), fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	if (!rw)
		seals |= F_SEAL_FUTURE_WRITE;
	if (fcntl(fd, F_ADD_SEALS, seals) < 0) {
		/* Ours alone now: our mapping outlives the fd. */
		close(fd);
		return p;
	}
	if (rw) {
		*rofd = fd;
		return p;
	}
	/* A read-only open of the same memfd, so that a reader's mapping is
	 * read-only without its asking.  Without /proc, the read-write fd
	 * is what they get: the seal holds all the same. */
	fe_fmt(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	*rofd = open(proc, O_RDONLY | O_CLOEXEC);
	if (*rofd < 0)
		*rofd = fd;
	else
		close(fd);
	return p;
private:
	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void fe_shm_free(void *p, size_t size, int fd)
{
	if (p)
		munmap(p, size);
	if (fd >= 0)
		close(fd);
}

void fe_shm_pend_done(uint32_t *pend, uint64_t dev, uint64_t ino)
{
	uint32_t *c, v;

	if (!pend)
		return;
	c = fe_pend_at(pend, dev, ino);
	/* A counter that is 0 was not raised by an honest sender: leave
	 * it, rather than wrap it to 4 billion, which would send that
	 * bucket's readers to the daemon for good.  Every process of the
	 * session may write the counters, so the test and the decrement
	 * are one step; a counter that keeps changing under us is left
	 * raised after a few tries (its readers ask: slower, still right),
	 * and nothing here ever waits on one. */
	v = __atomic_load_n(c, __ATOMIC_RELAXED);
	for (int i = 0; v && i < 16; i++)
		if (__atomic_compare_exchange_n(c, &v, v - 1, false,
						__ATOMIC_RELEASE,
						__ATOMIC_RELAXED))
			return;
}
