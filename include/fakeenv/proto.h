/*
 * fakeenv wire protocol: the only place where the shim and the daemon meet.
 *
 * One SOCK_SEQPACKET message per request and per reply.  A request is a
 * fixed 64-byte header (struct fe_req) followed by tail_len bytes of tail:
 * a NUL-terminated path with no interior NUL, at most FE_PATH_MAX bytes
 * counting the NUL (RENAMEDIR: two such paths, one after the other).  A
 * reply is one struct fe_rep (STATUS: one struct fe_status).  All fields are
 * fixed-width, host byte order (both ends run on the same machine), and
 * padding is explicit and must be zero.
 *
 * The daemon checks every field before it acts (fe_req_check() in
 * src/daemon/serve.c): a message whose length is not sizeof(struct fe_req)
 * + tail_len, with a wrong version, an unknown op, flags outside the op's
 * mask, a tail the op does not take or a malformed path, closes that
 * connection and changes nothing.
 */
#ifndef FAKEENV_PROTO_H
#define FAKEENV_PROTO_H

#include <stdint.h>

#define FE_PROTO_VERSION 1

/* Longest tail, NUL included.  Longer paths are simply not sent: the path
 * is a hint for the journal, never a key. */
#define FE_PATH_MAX 4096

/* Most fds a MAP reply carries. */
#define FE_MAP_FDS 3

/* Request flags: which of uid, gid, mode, rdev carry a new value. */
#define FE_F_UID  0x1u
#define FE_F_GID  0x2u
#define FE_F_MODE 0x4u
#define FE_F_RDEV 0x8u

/* Tail rules. */
#define FE_TAIL_NONE 0 /* tail_len must be 0 */
#define FE_TAIL_OPT  1 /* a path may follow */
#define FE_TAIL_REQ  2 /* a path must follow */
#define FE_TAIL_TWO  3 /* two paths follow, each NUL-terminated */

/*
 * X(name, allowed flags, tail rule), one op a line.
 *
 * GET     (dev, ino) with the real st_mode/st_uid/st_gid: reply the
 *         effective uid, gid, mode and rdev.  A record whose file type no
 *         longer matches the real file is stale and is dropped.
 * CHOWN   set uid and/or gid; clears setuid (and setgid when group-exec is
 *         set) on non-directories, as the kernel does.
 * CHMOD   set the permission bits (mode & 07777).
 * MKNOD   a new inode with the type, permissions, rdev and owner given
 *         (mode carries the type); any earlier record is discarded.
 * CREATE  a new inode owned by uid:gid (and with the permissions in mode
 *         when FE_F_MODE); any earlier record at (dev, ino) is discarded.
 * DROP    the last link of (dev, ino) is gone: forget it.
 * RENAME  (dev, ino) is now known by the path in the tail.
 * SESSION from the launcher: ino is the pid of CMD, dev its process group
 *         (0: none).  If this connection closes before DETACH, the launcher
 *         died, and the daemon kills that group and that pid.
 * DETACH  the launcher is leaving normally; clients may stay.
 * STATS   reply count[0] = records held, count[1] = clients connected.
 * RENAMEDIR the directory (dev, ino) moved from the first path of the
 *         tail to the second: every record under the old path follows.
 * CHECKPOINT write the journal now; the reply comes when it is on disk
 *         (err -ENOENT: the session has no journal file), with count[0] =
 *         records written and count[1] = bytes.
 * STATUS  reply one struct fe_status instead of a struct fe_rep.
 * MAP     reply count[0] = n, with n fds passed as SCM_RIGHTS: the
 *         read-only memfds of the shared table (fakeenv/map.h), root,
 *         cur, then old while a rehash is in progress.  err -ENOSYS: the
 *         table is not shared; readers ask with GET.
 */
#define FE_OPS(X)                                                   \
	X(GET,     0,                                FE_TAIL_NONE)  \
	X(CHOWN,   FE_F_UID | FE_F_GID,              FE_TAIL_OPT)   \
	X(CHMOD,   FE_F_MODE,                        FE_TAIL_OPT)   \
	X(MKNOD,   FE_F_UID | FE_F_GID | FE_F_MODE | FE_F_RDEV,     \
	                                             FE_TAIL_OPT)   \
	X(CREATE,  FE_F_UID | FE_F_GID | FE_F_MODE,  FE_TAIL_OPT)   \
	X(DROP,    0,                                FE_TAIL_NONE)  \
	X(RENAME,  0,                                FE_TAIL_REQ)   \
	X(SESSION, 0,                                FE_TAIL_NONE)  \
	X(DETACH,  0,                                FE_TAIL_NONE)  \
	X(STATS,   0,                                FE_TAIL_NONE)  \
	X(RENAMEDIR, 0,                              FE_TAIL_TWO)   \
	X(CHECKPOINT, 0,                             FE_TAIL_NONE)  \
	X(STATUS,  0,                                FE_TAIL_NONE)  \
	X(MAP,     0,                                FE_TAIL_NONE)

enum fe_op {
	FE_OP_NONE = 0, /* never valid on the wire */
#define FE_OP_ENUM(name, flags, tail) FE_OP_##name,
	FE_OPS(FE_OP_ENUM)
#undef FE_OP_ENUM
	FE_OP_COUNT
};

struct fe_req {
	uint16_t op;        /* enum fe_op */
	uint16_t version;   /* FE_PROTO_VERSION */
	uint32_t flags;     /* FE_F_*, within the op's mask */
	uint64_t dev;       /* real st_dev (glibc makedev encoding) */
	uint64_t ino;       /* real st_ino */
	uint32_t real_mode; /* real st_mode, type bits included */
	uint32_t real_uid;  /* real st_uid: the owner shown under -u */
	uint32_t real_gid;  /* real st_gid */
	uint32_t uid;       /* new uid when FE_F_UID */
	uint32_t gid;       /* new gid when FE_F_GID */
	uint32_t mode;      /* new mode when FE_F_MODE (type bits: MKNOD) */
	uint64_t rdev;      /* new rdev when FE_F_RDEV */
	uint32_t tail_len;  /* bytes of path after this header, NUL included */
	uint32_t pad;       /* zero */
};
_Static_assert(sizeof(struct fe_req) == 64, "bump FE_PROTO_VERSION");

/* Reply flags. */
#define FE_R_FOUND 0x1u /* a record exists for (dev, ino) */
#define FE_R_DEV   0x2u /* type and rdev are faked */

struct fe_rep {
	int32_t  err;      /* 0 or -errno */
	uint32_t flags;    /* FE_R_* */
	uint32_t uid;      /* effective uid (GET) */
	uint32_t gid;      /* effective gid (GET) */
	uint32_t mode;     /* effective st_mode, type bits included (GET) */
	uint32_t pad;      /* zero */
	uint64_t rdev;     /* effective st_rdev (GET) */
	uint64_t count[2]; /* STATS: records held, clients connected; MAP:
			      count[0] = fds passed */
};
_Static_assert(sizeof(struct fe_rep) == 48, "bump FE_PROTO_VERSION");

/* Status flags. */
#define FE_S_JOURNAL 0x1u /* the session has a journal file */
#define FE_S_SAVING  0x2u /* a checkpoint is being written now */
#define FE_S_LOADED  0x4u /* a journal was loaded at start */

/* The reply to STATUS.  Times are unix seconds, 0 for never. */
struct fe_status {
	int32_t  err;             /* 0 or -errno */
	uint32_t flags;           /* FE_S_* */
	uint64_t records;         /* records held */
	uint64_t clients;         /* connections open, this one included */
	uint64_t unsaved;         /* changes since the last checkpoint */
	uint64_t checkpoints;     /* journals written by this daemon */
	uint64_t last_checkpoint; /* when the last one was written */
	uint64_t journal_bytes;   /* its size (or the loaded one's) */
	uint64_t loaded;          /* records read at start */
	uint64_t rekeyed;         /* of those, moved to a new (dev, ino) */
	uint64_t dropped;         /* of those, dropped by the check */
	uint64_t started;         /* when the daemon started */
	uint64_t pid;             /* the daemon's pid */
	uint64_t linger;          /* seconds it stays after the last client */
	uint64_t interval;        /* checkpoint interval in seconds, 0: none */
	uint64_t snap_us;         /* the last checkpoint's copy of the table:
				     the only time clients waited */
	uint64_t write_us;        /* its write, fsync and rename, while the
				     daemon served on */
};
_Static_assert(sizeof(struct fe_status) == 128, "bump FE_PROTO_VERSION");

#endif
