/*
 * Requests: the state every connection shares, and what each op does to
 * it (the checks every message must pass first are check.h's).  No
 * sockets here: the loop hands in a checked request and sends back the
 * reply a handler made, so unit tests drive this module directly.
 */
#ifndef FE_DAEMON_SERVE_H
#define FE_DAEMON_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "check.h"
#include "fakeenv/proto.h"
#include "table.h"
#include "trace.h"

/* The receive buffer: a whole valid message fits, and one byte more shows
 * that a message is too long. */
#define FE_REQ_BUF (sizeof(struct fe_req) + FE_TAIL_MAX + 1)

/* The keys put since the delta's last append (durable.c), tracked only
 * while on (a --state session).  A key may be there more than once. */
struct fe_dirty {
	uint64_t (*keys)[2]; /* n (dev, ino) pairs */
	size_t n, cap;
	bool on;
	bool all;            /* too many to track: the next SYNC writes the
				journal whole */
};

/* Note that (dev, ino) was put. */
void fe_dirty_add(struct fe_dirty *d, uint64_t dev, uint64_t ino);

/* The state every connection shares. */
struct fe_srv {
	struct fe_tab tab;     /* the records */
	bool unknown_is_real;  /* a file without a record shows its real
				  owner, not 0:0 */
	size_t clients;        /* connections open (kept by the loop) */
	uint64_t changes;      /* records put or deleted since start: the
				  loop compares it with the count at the
				  last checkpoint */
	unsigned char *xbuf;   /* FE_XATTR_REC_MAX bytes, allocated once:
				  xattr blocks and name lists are built
				  here */
	const void *rep_data;  /* the bytes that follow the last request's
				  reply (XGET, XLIST), valid until the next
				  request */
	size_t rep_len;        /* how many, 0: none */
	uint64_t stale;        /* stale records dropped since start */
	uint64_t orphans;      /* records with FE_REC_ORPHAN now */
	uint64_t reaped;       /* orphans dropped since start */
	uint64_t reap_kept;    /* orphans the last reap found still open */
	uint64_t lost;         /* one-way changes that failed (ENOMEM) */
	struct fe_trace *trace; /* --trace: each change's line; NULL: off */
	struct fe_dirty dirty;
};

/* A connection's session, set by SESSION and DETACH. */
struct fe_sess {
	pid_t pid;     /* CMD's pid, 0: none */
	pid_t pgid;    /* CMD's process group, 0: none */
	bool attached; /* SESSION seen and no DETACH since: closing this
			  connection means the launcher died */
	pid_t peer;    /* the sender (SO_PEERCRED), for the trace */
	char comm[FE_TRACE_COMM]; /* its name, read when it connected
				     while tracing; "": unknown */
};

/* Make the shared state with an empty table.  Returns 0 or -ENOMEM. */
int fe_srv_init(struct fe_srv *s, bool unknown_is_real);

/* Free the shared state. */
void fe_srv_free(struct fe_srv *s);

struct conn; /* the loop's (loop_int.h) */

/* One request being served: what its handler is given and what it
 * answers. */
struct fe_call {
	const struct fe_req *req; /* passed fe_req_check() */
	const char *tail;         /* its tail, NULL when tail_len is 0 */
	struct fe_sess *sess;     /* the sender's session */
	struct conn *conn;        /* the connection it came by; NULL when the
				     table is driven directly (unit tests, the
				     fuzzer), where the ops that answer from
				     the loop (STATUS, CHECKPOINT) reply
				     -ENOSYS */
	struct fe_rep rep;        /* the reply, zeroed first */
	const void *reply;        /* the bytes to send: &rep, or &status */
	size_t reply_len;
	struct fe_status status;  /* STATUS's reply */
	int fds[FE_MAP_FDS];      /* MAP, RING: the fds the reply carries */
	int nfds;                 /* how many, 0: none */
	bool close_fds;           /* the fds are the reply's alone (RING):
				     closed once it is sent */
	bool later;               /* the reply is not sent now: the handler
				     has the connection wait (CHECKPOINT) */
};

/*
 * Carry out call->req (which passed fe_req_check()) with its op's
 * handler (ops.h) and fill call's reply.  rep.err is 0 or -errno (-ENOMEM
 * when the table or arena cannot grow; the state is then as before the
 * request, except that MKNOD and CREATE may have dropped the record they
 * were replacing).  Ops on a record (GET, CHOWN, CHMOD, MKNOD, CREATE,
 * RENAME) reply the effective uid, gid, mode and rdev afterwards, with
 * FE_R_FOUND when a record exists and FE_R_DEV when its type and rdev are
 * faked (rdev is 0 otherwise); DROP replies FE_R_FOUND if a live record
 * was there (it is now an orphan); STATS fills count[]; MAP puts in
 * count[0] and call->fds the fds of the shared table, or -ENOSYS.
 * SESSION and DETACH change *sess only.  XGET and XLIST put what follows
 * the reply in s->rep_data and s->rep_len (0 for every other op).  A
 * one-way change lowers its pending counter (fe_op_pends()) and counts
 * in s->lost when it failed.  With s->trace, a change that succeeded and
 * changed the table adds its line (trace.h), from sess's peer and comm.
 */
void fe_serve_call(struct fe_srv *s, struct fe_call *call);

/* fe_serve_call() of a request that comes by no connection, into *rep. */
void fe_serve_req(struct fe_srv *s, struct fe_sess *sess,
		  const struct fe_req *req, const char *tail,
		  struct fe_rep *rep);

#endif
