/*
 * What the loop's files share (loop.c the events and requests, conn.c
 * the connections and replies, ckpt.c the checkpoints, durable.c the
 * delta between them, status.c the figures STATUS reports): the loop's state and the connections.  Not a
 * module interface: the rest of the daemon sees loop.h.
 */
#ifndef FE_DAEMON_LOOP_INT_H
#define FE_DAEMON_LOOP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "fakeenv/ring.h"
#include "journal/unsaved.h"
#include "loop.h"
#include "serve.h"
#include "state.h"
#include "trace.h"

/* Refused connections and bad requests cost their sender nothing
 * (conn.c): the first NOISE_FIRST of each are logged one by one, the rest
 * are counted and summed up in one line at most every NOISE_EVERY_MS, and
 * at exit. */
#define NOISE_FIRST    5
#define NOISE_EVERY_MS 10000

struct noise {
	const char *what;  /* "refused connections", "bad requests" */
	uint64_t total;    /* since the start */
	uint64_t unsaid;   /* counted, not yet in a summary */
	long long said_ms; /* CLOCK_MONOTONIC ms of the last summary */
};

struct conn {
	int fd;
	pid_t peer;        /* SO_PEERCRED pid, for logs */
	bool mute;         /* the peer has gone: drain its queued messages
			      (one-way notices sent before it exited), reply
			      no more */
	struct fe_sess sess;
	int ckpt_wait;     /* waits for a checkpoint's reply: CKPT_NEXT
			      until one starts, then CKPT_RUNNING; its
			      input is off meanwhile */
	bool evicting;     /* shut for reading to make room (evict()):
			      what it queued before is served, then it
			      closes */
	bool spoke;        /* a message came: a connection is never shut
			      before its first, which its sender made it
			      for */
	bool closed;       /* fe_conn_close() ran: its fd is closed, it is off
			      the list and on the loop's dead list, freed
			      after the batch of events that may name it */
	struct fe_ring *ring; /* its change ring (RING), or NULL */
	uint64_t ring_tail;  /* bytes of the ring taken: ours, whatever the
				mapping says */
	bool ring_bad;       /* the ring held a bad entry: the connection is
				closed and nothing more of it is taken */
	struct conn *ring_prev; /* the loop's list of connections with a
				   ring */
	struct conn *ring_next;
	struct conn *prev; /* the loop's list of clients, the most
			      recently active first */
	struct conn *next; /* closed: the next of the dead list */
};

enum { CKPT_NONE, CKPT_NEXT, CKPT_RUNNING };

struct fe_loop {
	const struct fe_loop_cfg *cfg;
	int ep;                /* the epoll set */
	int lfd;               /* listening socket; its address is the tag of
				  its events */
	int sfd;               /* signalfd; likewise */
	bool lfd_paused;       /* lfd is out of the set until resume_ms, or
				  until a client closes and frees an fd */
	long long resume_ms;   /* CLOCK_MONOTONIC ms */
	bool fd_freed;         /* a client closed in this pass */
	int accept_err;        /* last accept errno logged */
	long long accept_log_ms; /* when it was logged */
	long long deadline_ms; /* exit if no client has come by then */
	bool had_client;       /* a client was accepted once */
	long long linger_ms;   /* exit then if still no client; -1: none */
	struct fe_saver saver; /* its efd's address tags its events */
	uint64_t saved_changes; /* srv.changes as of the last journal */
	uint64_t snap_changes; /* srv.changes as of the snapshot being
				  written */
	bool on_disk;          /* cfg->save holds a journal of ours */
	bool ckpt_again;       /* asked for while one was being written */
	long long ckpt_ms;     /* CLOCK_MONOTONIC of the last checkpoint, or
				  of the start */
	uint64_t checkpoints;  /* journals written */
	uint64_t ckpt_time;    /* unix time of the last one, 0: none */
	uint64_t journal_bytes;
	uint64_t snap_us;      /* the last snapshot's duration */
	uint64_t write_us;     /* the last write's */
	uint64_t failures;     /* journal writes that failed */
	uint64_t fail_time;    /* unix time of the last failure */
	int fail_err;          /* its -errno */
	uint32_t fail_what;    /* FE_FAIL_* */
	bool failing;          /* the last write failed, none since worked */
	bool have_dir;         /* dir is set: a --state session */
	struct fe_state_dir dir;
	bool dir_gone;         /* dir is no longer ours: nothing is written,
				  and we leave once no client is left */
	int reserve;           /* fe_unsaved_reserve()'s fd, or -1 */
	bool have_prev;        /* DIR/unsaved was there at the start (or we
				  left one): prev says what it holds */
	struct fe_unsaved prev;
	struct fe_load_stats load;
	bool loaded;
	int delta;             /* DIR/delta (durable.c), O_APPEND, or -1 */
	uint64_t delta_len;    /* its bytes: header and whole segments */
	uint64_t appends;      /* segments appended since the start */
	size_t snap_keys;      /* srv.dirty's keys the snapshot being written
				  holds */
	bool snap_all;         /* srv.dirty.all when it was taken */
	uint64_t started;      /* unix time */
	bool stop;             /* leave the loop */
	uid_t uid;             /* peers must run as this uid */
	struct noise refused;  /* connections of other users */
	struct noise bad;      /* malformed requests */
	struct conn *conns;    /* open clients, the most recently active
				  first */
	struct conn *tail;     /* the least recently active */
	struct conn *dead;     /* closed, not yet freed (fe_conn_close()) */
	struct conn *rings;    /* the connections with a ring */
	unsigned nrings;       /* how many */
	uint64_t awake_until;  /* the last fe_pend_ctl.awake_until stored */
	uint64_t by_ring;      /* one-way changes taken from rings */
	uint64_t by_socket;    /* one-way changes that came as messages */
	unsigned max_clients;  /* clients kept open at most: RLIMIT_NOFILE
				  less FD_RESERVE */
	unsigned long long nofile; /* RLIMIT_NOFILE, raised to the hard one */
	unsigned evicting;     /* clients with evicting set */
	uint64_t evicted;      /* connections closed to make room */
	long long evict_log_ms; /* when that was last logged, 0: never */
	struct fe_srv srv;
	struct fe_trace trace; /* with cfg->trace: srv.trace points here */
	union {
		struct fe_req req; /* alignment for the header */
		char bytes[FE_REQ_BUF];
	} buf;
	union {
		struct fe_req req;
		char bytes[FE_REQ_BUF];
	} dbuf;                /* drain()'s: buf holds the request that
				  asked for the drain */
	union {
		struct fe_req req;
		char bytes[FE_REQ_BUF];
	} rbuf;                /* a ring entry's copy: rings are taken
				  inside both of the above */
};

/* The loop whose table s is: only for a call that came by a connection
 * (struct fe_call's conn set), since unit tests serve a table alone. */
static inline struct fe_loop *fe_loop_of(struct fe_srv *s)
{
	return (struct fe_loop *)((char *)s - offsetof(struct fe_loop, srv));
}

static inline long long fe_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline long long fe_now_ms(void)
{
	return fe_now_us() / 1000;
}

/* conn.c: the connections. */

/* Add fd to the epoll set, its events tagged with tag.  0 or -errno. */
int fe_loop_watch(struct fe_loop *lp, int fd, void *tag);
/* A client's input on or off (off while it waits for a checkpoint: one
 * request at a time, replies in order).  Hang-ups still wake us. */
void fe_conn_input_on(struct fe_loop *lp, struct conn *c, bool on);
/* c is the most recently active client now: evict() takes the least. */
void fe_conn_touch(struct fe_loop *lp, struct conn *c);
/* Close c (killing its command if it is a launcher that never
 * detached); c stays allocated, marked closed, until
 * fe_conn_free_dead(), once no event of the batch can name it. */
void fe_conn_close(struct fe_loop *lp, struct conn *c);
void fe_conn_free_dead(struct fe_loop *lp);
/* Accept every connection waiting, admitting our own user's. */
void fe_accept_all(struct fe_loop *lp);
/* The listening socket back in the set after a pause. */
void fe_accept_resume(struct fe_loop *lp);
/* Count one event of n: true when its own line is to be logged. */
bool fe_noise_count(struct noise *n);
/* Log what n counted and did not log, if the last summary was long
 * enough ago (or now is true). */
void fe_noise_sum(struct noise *n, bool now);
/* Send call's reply to c (with its fds, with the bytes srv.rep_data
 * holds), or the len bytes at msg and nothing else.  False when c was
 * closed (it could not take the reply). */
bool fe_conn_send(struct fe_loop *lp, struct conn *c,
		  const struct fe_call *call);
bool fe_conn_reply(struct fe_loop *lp, struct conn *c, const void *msg,
		   size_t len);

/* ring.c: the change rings (fakeenv/ring.h). */

/* Rings the daemon keeps at most: past it RING answers -EBUSY and the
 * process sends by the socket. */
#define FE_RINGS_MAX 1024

/* Promise writers a pass over the rings at or after until_us
 * (fakeenv/map.h): the loop must not sleep before then. */
void fe_ring_awake(struct fe_loop *lp, long long until_us);
/* Before the loop sleeps: once the promise is kept, writers are told,
 * then the rings looked at once more.  Returns the entries taken then:
 * if any, do not sleep. */
int fe_ring_sleep(struct fe_loop *lp);
/* Take what every ring holds; returns the entries taken. */
int fe_rings_poll(struct fe_loop *lp);
/* c's connection goes: the rest of its ring is taken (unless it was
 * bad), writers are told, and the ring is unmapped. */
void fe_ring_close(struct fe_loop *lp, struct conn *c);

/* loop.c: carry out the entries published in c's ring since the last
 * take, each as the one-way message it stands for.  Returns how many, or
 * -1 when a bad one closed c. */
int fe_loop_take_ring(struct fe_loop *lp, struct conn *c);

/* loop.c: the events, until told to stop: 0, or -errno when epoll
 * fails.  The epoll set is made and the daemon started by start.c. */
int fe_loop_events(struct fe_loop *lp);

/* ckpt.c: the journal's checkpoints. */

/* Changes since the last journal written. */
uint64_t fe_ckpt_unsaved(const struct fe_loop *lp);
/* Drop the orphans no process has open (reap.h); a failure is said
 * once. */
void fe_loop_reap(struct fe_loop *lp);
/* Whether DIR may be written to: false (and the failure counted, once
 * noticed) when it is no longer the directory we locked. */
bool fe_ckpt_dir_ours(struct fe_loop *lp);
/* Start writing the journal from a snapshot, or note that another is
 * wanted when one is being written; the clients waiting are answered
 * when it ends. */
void fe_ckpt_start(struct fe_loop *lp);
/* The writer thread is done (its eventfd woke us). */
void fe_ckpt_done(struct fe_loop *lp);
/* The last write, as the daemon leaves: 0 or -errno. */
int fe_ckpt_final(struct fe_loop *lp);
/* When the interval asks for the next checkpoint (CLOCK_MONOTONIC ms),
 * or -1. */
long long fe_ckpt_due(const struct fe_loop *lp);

/* durable.c: DIR/delta, what a run's SYNC appends between journals. */

/* Open DIR/delta of a --state session and put what it holds over the
 * table just loaded; tracking of the changed keys starts.  0, or
 * -EBADMSG (said) when it is refused: not a regular file of ours, or
 * damaged.  A delta that cannot be opened for other reasons is said and
 * left out: SYNC then writes whole journals. */
int fe_dur_open(struct fe_loop *lp);
/* A snapshot for the journal was taken: the keys it holds. */
void fe_dur_snap(struct fe_loop *lp);
/* The journal of that snapshot is on disk: the delta starts again,
 * empty, following it. */
void fe_dur_folded(struct fe_loop *lp);

#endif
