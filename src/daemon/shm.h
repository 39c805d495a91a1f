/*
 * The daemon's shared memory: the memfds behind the table's slot arrays,
 * its root and its pending counters, which every process of the session
 * maps.  One allocator, so that one sealing rule holds for all of them
 * (below); table.c decides what goes in them.
 */
#ifndef FE_DAEMON_SHM_H
#define FE_DAEMON_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * size bytes of zeroed memory shared through a memfd: mapped read-write
 * here, sealed against shrinking and growing, with an fd for readers in
 * *rofd.  rw: readers write it too (the pending counters); else it is
 * also sealed with F_SEAL_FUTURE_WRITE once our own writable mapping is
 * made, so that no reader can write it by any route: not the read-only
 * fd they get, nor a read-write reopen of it through /proc/self/fd
 * (write(2), a shared writable mmap and fallocate fail with EPERM;
 * mprotect and /proc/PID/mem writes of a read-only mapping already
 * fail).  F_SEAL_WRITE applies to none of them: it needs every writable
 * mapping gone, and ours writes until the memfd is closed.  A kernel
 * that refuses the seal (before 5.1) gets no sharing at all (*rofd =
 * -1), as without memfd_create: readers ask with GET, which is safe.
 * Returns the mapping or NULL.
 */
void *fe_shm_alloc(size_t size, const char *name, int *rofd, bool rw);

/* Unmap p (NULL: nothing) and close fd (-1: none); readers that mapped it
 * keep their own copy of the memfd. */
void fe_shm_free(void *p, size_t size, int fd);

/* A one-way change to (dev, ino) is applied: lower its bucket's pending
 * counter (fakeenv/map.h) in pend (NULL: no sharing).  Every process of
 * the session may write the counters, so the test and the decrement are
 * one compare-and-swap, and a counter at 0 is left alone. */
void fe_shm_pend_done(uint32_t *pend, uint64_t dev, uint64_t ino);

#endif
