/*
 * The trace (fakeenv --trace FILE): one line per faked change, written by
 * the daemon alone, which applies every change in order.  Lines are built
 * whole in a buffer and written whole; a write that fails stops the
 * trace (said once, counted), never the session.  Off, it costs the
 * daemon one branch per request: struct fe_srv's trace is NULL.
 *
 * A line: TIME PID COMM OP PATH, then what changed, each as
 * "FIELD OLD -> NEW" (owner U:G, mode 0PPPP, type T, rdev MAJ,MIN,
 * record live|orphan, path P) or "xattr +NAME|-NAME|~NAME", and for a
 * directory's rename "records N".  COMM, PATH and names escape every
 * byte that is not printable ASCII, and space and backslash, as \ooo.
 */
#ifndef FE_DAEMON_TRACE_H
#define FE_DAEMON_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A process's name as /proc/PID/comm has it (TASK_COMM_LEN). */
#define FE_TRACE_COMM 16

struct fe_trace {
	int fd;             /* the file (O_APPEND), -1 once stopped */
	const char *path;   /* its name, for messages */
	char *buf;          /* whole lines not yet written */
	size_t len;         /* bytes in buf */
	char *line;         /* the line being built */
	unsigned char *xold; /* the record's xattrs before a change */
	char *pold;         /* its path before a change */
	uint64_t lines;     /* lines written */
	uint64_t lost;      /* lines not written: the write failed */
	int64_t end;        /* the file's size after our last whole write,
			       -1: unknown */
};

/* One side of a change: what the file showed before or after it. */
struct fe_trace_side {
	bool rec;                    /* a record was there */
	bool orphan;                 /* ... with no name left */
	uint32_t uid, gid, mode;     /* the effective owner and st_mode */
	bool dev;                    /* type and rdev are faked */
	uint64_t rdev;               /* with dev */
	const unsigned char *xattrs; /* the kept xattr block, or NULL */
	size_t xattrs_len;
	const char *path;            /* the record's path hint, or NULL */
};

/* One change, as serve.c saw it applied. */
struct fe_trace_change {
	pid_t pid;                 /* the sender */
	const char *comm;          /* its name, "" when unknown */
	const char *op;            /* "chown", "rename", ... */
	const char *path;          /* the request's path, or NULL */
	uint64_t dev, ino;         /* its key, printed without a path */
	bool always_owner;         /* print owner even when unchanged */
	bool always_mode;          /* likewise mode */
	bool always_type;          /* likewise type (and rdev) */
	bool always_path;          /* likewise path */
	const char *xname;         /* XSET's name: "~" when it was there */
	uint64_t moved;            /* RENAMEDIR: records moved, else 0 */
};

/* Take fd (opened by fe_jnl_open_trace()) for tracing to path.  Returns 0
 * or -ENOMEM (t is then off, fd closed). */
int fe_trace_init(struct fe_trace *t, const char *path, int fd);

/* Append c's line (old -> new); writes first when the buffer is full. */
void fe_trace_add(struct fe_trace *t, const struct fe_trace_change *c,
		  const struct fe_trace_side *old,
		  const struct fe_trace_side *new);

/* Write the buffered lines now, whole.  One failure stops the trace
 * (logged once, with the lines lost so far); nothing is then written
 * again.  Cheap when the buffer is empty. */
void fe_trace_flush(struct fe_trace *t);

/* Flush, close and free. */
void fe_trace_free(struct fe_trace *t);

/* The name of process pid into comm (FE_TRACE_COMM bytes): "" when it
 * cannot be read (gone already). */
void fe_trace_comm(pid_t pid, char *comm);

#endif
