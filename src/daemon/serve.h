/*
 * Requests: the checks every message must pass and what each op does to
 * the table.  No sockets here: the loop hands in bytes and sends back the
 * reply, so unit tests drive this module directly.
 */
#ifndef FE_DAEMON_SERVE_H
#define FE_DAEMON_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "fakeenv/proto.h"
#include "table.h"
#include "trace.h"

/* The receive buffer: a whole valid message fits, and one byte more shows
 * that a message is too long. */
#define FE_REQ_BUF (sizeof(struct fe_req) + FE_TAIL_MAX + 1)

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

/*
 * Check a whole message of len bytes (buf need not be aligned): length ==
 * header + tail_len; version; op known; flags within the op's mask; btag
 * zero on an op that names no file; the op's tail rule, and a tail is a path of 2..FE_PATH_MAX bytes
 * ending in its only NUL; real_mode has no bits outside S_IFMT | 07777 and
 * a valid file type (type 0 allowed for SESSION, DETACH, STATS only);
 * an xattr op's tail follows FE_TAIL_X (proto.h: lengths within the
 * limits and adding up, the name's only NUL its last byte, size within
 * the op's limit, pad zero, an XSET path as above);
 * CHMOD and CREATE's FE_F_MODE mode has no bits outside 07777; MKNOD's
 * FE_F_MODE mode is a CHR, BLK, FIFO, SOCK or REG type with no bits
 * outside S_IFMT | 07777; SESSION's pid and group are within pid_t.
 * Returns 0 or -EPROTO; *why (if given) then names the broken rule.
 * Pure: reads buf only.
 */
int fe_req_check(const void *buf, size_t len, const char **why);

/*
 * Carry out a request that passed fe_req_check() (tail: its path, or NULL
 * when tail_len is 0) and fill *rep, zeroed first.  rep->err is 0 or
 * -errno (-ENOMEM when the table or arena cannot grow; the state is then
 * as before the request, except that MKNOD and CREATE may have dropped the
 * record they were replacing).  Ops on a record (GET, CHOWN, CHMOD, MKNOD,
 * CREATE, RENAME) reply the effective uid, gid, mode and rdev afterwards,
 * with FE_R_FOUND when a record exists and FE_R_DEV when its type and rdev
 * are faked (rdev is 0 otherwise); DROP replies FE_R_FOUND if a live
 * record was there (it is now an orphan); STATS fills count[]; MAP
 * says in count[0] how many fds fe_tab_map_fds() gives (the loop sends
 * them), or -ENOSYS.  SESSION and DETACH change *sess only.  XGET and
 * XLIST put what follows the reply in s->rep_data and s->rep_len (0 for
 * every other op).  With s->trace, a change that succeeded and changed
 * the table adds its line (trace.h), from sess's peer and comm.
 */
void fe_serve_req(struct fe_srv *s, struct fe_sess *sess,
		  const struct fe_req *req, const char *tail,
		  struct fe_rep *rep);

#endif
