/*
 * The change ring: a process's one-way changes written into shared memory
 * that the daemon polls, instead of one socket message each.  A process
 * that has sent a few one-way changes asks for one (RING, proto.h): the
 * daemon makes a memfd of one struct fe_ring and FE_RING_DATA bytes,
 * maps it read-write, and passes it; the process maps it read-write too.
 * One ring per connection, so per process: a ring's entries are that
 * process's changes in the order its calls returned.
 *
 * Writers (the threads of the owning process) take `lock` (a try-lock:
 * whoever fails sends by the socket instead), write an entry at head,
 * and publish it by storing head (release).  The daemon copies each
 * entry out before it checks it, carries it out as a one-way request of
 * that connection, and stores tail (release).  Both positions are byte
 * counts that only grow; an entry's place is (position % FE_RING_DATA),
 * and no entry runs past the end: a writer that does not fit writes a
 * WRAP frame and starts again at 0.
 *
 * The daemon polls rings only while it is awake (fe_pend_ctl's
 * awake_until, fakeenv/map.h): a writer that finds it asleep sends its
 * change by the socket, which wakes it and proves it alive.  Before it
 * serves any message of a connection, the daemon takes what that
 * connection's ring holds: a process's ring and socket stay in one order.
 *
 * Everything in the mapping is the client's to write, the daemon's
 * positions included: the daemon keeps its own tail, and checks every
 * frame and every head it reads against it (a bad one closes the
 * connection, as a bad message does).
 */
#ifndef FAKEENV_RING_H
#define FAKEENV_RING_H

#include <stdint.h>

#define FE_RING_MAGIC 0x676e6952764e4546ull /* "FENvRing" */
#define FE_RING_VERSION 1
/* Bytes of entries: a power of two, room for hundreds of changes with
 * their paths, and for the longest one (RENAMEDIR's two paths). */
#define FE_RING_DATA (128u * 1024u)

/* The ring closed by the daemon (its connection went): 1 while it takes
 * the last entries, 2 once it took all it ever will.  A writer that
 * published while it was 1 waits for 2, then reads tail to learn
 * whether its entry was taken. */
#define FE_RING_CLOSING 1u
#define FE_RING_CLOSED  2u

struct fe_ring {
	uint64_t magic;   /* FE_RING_MAGIC */
	uint32_t version; /* FE_RING_VERSION */
	uint32_t size;    /* FE_RING_DATA */
	uint32_t closed;  /* 0, FE_RING_CLOSING, FE_RING_CLOSED (daemon) */
	uint32_t pad0[11];
	uint64_t head;    /* bytes published (writers, under lock) */
	uint64_t pad1[7];
	uint64_t tail;    /* bytes taken (daemon) */
	uint64_t pad2[7];
	uint32_t lock;    /* 0: free, 1: a writer of the process holds it */
	uint32_t pad3[15];
	unsigned char data[];
};
_Static_assert(sizeof(struct fe_ring) == 256, "ring header layout");

/* Each entry: a frame, then (MSG) len bytes of one request as it would
 * go on the socket, then padding to a multiple of 8. */
#define FE_RING_MSG  1u
#define FE_RING_WRAP 2u /* nothing more before the end: go on at 0 */

struct fe_ring_frame {
	uint32_t len;  /* MSG: bytes of the request (header and tail) */
	uint32_t kind; /* FE_RING_MSG or FE_RING_WRAP */
};

/* Bytes an entry of a request of len bytes takes in the ring. */
static inline uint64_t fe_ring_span(uint64_t len)
{
	return (sizeof(struct fe_ring_frame) + len + 7) & ~(uint64_t)7;
}

#endif
