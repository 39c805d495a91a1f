/*
 * fakeenv wire protocol: the only place where the shim and the daemon meet.
 *
 * One SOCK_SEQPACKET message per request and per reply.  A request is a
 * fixed 64-byte header (struct fe_req) followed by tail_len bytes of tail:
 * a NUL-terminated path with no interior NUL, at most FE_PATH_MAX bytes
 * counting the NUL (RENAMEDIR: two such paths, one after the other; the
 * xattr ops: a struct fe_xhdr, a name, a value and maybe a path, see
 * FE_TAIL_X).  A reply is one struct fe_rep (STATUS: one struct
 * fe_status), followed by count[0] bytes of a value or a name list for
 * XGET and XLIST when the caller has room for them.  All fields are
 * fixed-width, host byte order (both ends run on the same machine), and
 * padding is explicit and must be zero.
 *
 * The daemon checks every field before it acts (fe_req_check() in
 * src/daemon/check.c): a message whose length is not sizeof(struct fe_req)
 * + tail_len, with a wrong version, an unknown op, flags outside the op's
 * mask, a tail the op does not take or a malformed path, closes that
 * connection and changes nothing.
 */
#ifndef FAKEENV_PROTO_H
#define FAKEENV_PROTO_H

#include <stdbool.h>
#include <stdint.h>

#define FE_PROTO_VERSION 5

/* Longest tail, NUL included.  Longer paths are simply not sent: the path
 * is a hint for the journal, never a key. */
#define FE_PATH_MAX 4096

/* Extended attributes, as the kernel limits them (linux/limits.h):
 * XATTR_NAME_MAX, XATTR_SIZE_MAX and XATTR_LIST_MAX. */
#define FE_XATTR_NAME_MAX 255   /* bytes of a name, NUL not counted */
#define FE_XATTR_SIZE_MAX 65536 /* bytes of a value */
#define FE_XATTR_LIST_MAX 65536 /* bytes of one inode's name list */
/* Bytes of one record's xattrs as the daemon keeps them (the journal's
 * block: 8 bytes a name, plus names and values); past it XSET replies
 * -ENOSPC, as a full filesystem would. */
#define FE_XATTR_REC_MAX (1u << 20)

/* The POSIX ACLs' xattr names: the shim sends them to the daemon, which
 * keeps them and reads the access ACL as permission bits. */
#define FE_XATTR_ACL_ACCESS  "system.posix_acl_access"
#define FE_XATTR_ACL_DEFAULT "system.posix_acl_default"

/* Most fds a MAP reply carries. */
#define FE_MAP_FDS 4

/* Request flags: which of uid, gid, mode, rdev carry a new value. */
#define FE_F_UID  0x1u
#define FE_F_GID  0x2u
#define FE_F_MODE 0x4u
#define FE_F_RDEV 0x8u
/* XSET only: setxattr(2)'s XATTR_CREATE (-EEXIST when the name exists)
 * and XATTR_REPLACE (-ENODATA when it does not); both: always one of
 * them, as the kernel. */
#define FE_F_XCREATE  0x10u
#define FE_F_XREPLACE 0x20u
/* A change sent one-way: the daemon sends no reply.  For the ops that
 * change what stat shows (fe_op_pends()), the sender raised the pending
 * counter of the key's bucket (fakeenv/map.h) before sending, and the
 * daemon lowers it once the change is in the table; a failure the
 * daemon meets is counted (fe_status.lost) and logged, and turns the
 * launcher's exit status to 125. */
#define FE_F_ONEWAY   0x80u
/* RENAMEDIR only: renameat2(RENAME_EXCHANGE); the two paths swapped
 * places, so the records under each take the other's prefix. */
#define FE_F_XCHG 0x40u

/* Tail rules. */
#define FE_TAIL_NONE 0 /* tail_len must be 0 */
#define FE_TAIL_OPT  1 /* a path may follow */
#define FE_TAIL_REQ  2 /* a path must follow */
#define FE_TAIL_TWO  3 /* two paths follow, each NUL-terminated */
#define FE_TAIL_X    4 /* struct fe_xhdr, then name_len bytes of name (its
			  only NUL the last; none for XLIST), value_len
			  bytes of value (XSET only), then for XSET an
			  optional path (the rules above) and nothing more */

/*
 * The head of an xattr op's tail.  XGET, XDEL: a name, no value, size
 * (XGET) the bytes the caller can take.  XLIST: no name, no value.  XSET:
 * a name, a value, size 0.
 */
struct fe_xhdr {
	uint32_t name_len;  /* 2..FE_XATTR_NAME_MAX + 1, NUL included; 0
			       for XLIST */
	uint32_t value_len; /* 0..FE_XATTR_SIZE_MAX (XSET), else 0 */
	uint32_t size;      /* XGET: 0..FE_XATTR_SIZE_MAX, XLIST:
			       0..FE_XATTR_LIST_MAX: room for the bytes of
			       the reply, 0: only say how many; else 0 */
	uint32_t pad;       /* zero */
};
_Static_assert(sizeof(struct fe_xhdr) == 16, "bump FE_PROTO_VERSION");

/* The longest tail of any op: XSET's. */
#define FE_TAIL_MAX                                                     \
	(sizeof(struct fe_xhdr) + FE_XATTR_NAME_MAX + 1 + FE_XATTR_SIZE_MAX + \
	 FE_PATH_MAX)
_Static_assert(FE_TAIL_MAX >= 2 * FE_PATH_MAX, "RENAMEDIR fits");

/* The longest reply: a struct fe_rep and a value or a name list. */
#define FE_REP_MAX (48 + FE_XATTR_LIST_MAX)

/* What an op is (the fourth column of FE_OPS). */
#define FE_OPK_FILE  0x1u /* names a file: dev within FE_DEV_MAX, real_mode
			     of a valid type; else real_mode may be 0 and
			     btag must be 0 */
#define FE_OPK_PENDS 0x2u /* sent one-way, it changes what stat shows, so
			     its sender raised the pending counter of the
			     key's bucket (FE_F_ONEWAY) */
#define FE_OPK_DRAIN 0x4u /* sent for a reply, it comes after every
			     one-way change already queued (Order, below) */

/*
 * X(name, allowed flags, tail rule, kind), one op a line.  A new op is a
 * line here and a function in the daemon (src/daemon/ops.h).
 *
 * Every op that names a file names it by (dev, ino, btag): btag is the
 * birth-time tag of the file the shim saw (fakeenv/map.h, fe_btag()), 0
 * when unknown.  A record at (dev, ino) with another known btag, or
 * whose file type no longer matches (fe_rec_stale()), belongs to a dead
 * file: it is stale, dropped and counted, and never applied.
 *
 * GET     (dev, ino) with the real st_mode/st_uid/st_gid: reply the
 *         effective uid, gid, mode and rdev.
 * CHOWN   set uid and/or gid; clears setuid (and setgid when group-exec is
 *         set) on non-directories, as the kernel does.
 * CHMOD   set the permission bits (mode & 07777).
 * MKNOD   a new inode with the type, permissions, rdev and owner given
 *         (mode carries the type); any earlier record is discarded.
 * CREATE  a new inode owned by uid:gid (and with the permissions in mode
 *         when FE_F_MODE); any earlier record at (dev, ino) is discarded.
 * DROP    the inode (dev, ino, btag) has no name left (its nlink is 0,
 *         seen through an fd held across the removal): its record
 *         becomes an orphan (FE_REC_ORPHAN), kept while any process may
 *         still have the file open, and dropped once none has (the
 *         daemon looks in /proc at checkpoints and when orphans pile
 *         up).
 * RENAME  (dev, ino) is now known by the path in the tail.
 * SESSION from the launcher: ino is the pid of CMD, dev its process group
 *         (0: none).  If this connection closes before DETACH, the launcher
 *         died, and the daemon kills that group and that pid.
 * DETACH  the launcher is leaving normally; clients may stay.
 * STATS   reply count[0] = records held, count[1] = clients connected.
 * RENAMEDIR the directory (dev, ino) moved from the first path of the
 *         tail to the second: every record under the old path follows.
 *         With FE_F_XCHG the second path's inode moved to the first in
 *         the same step (either may be a non-directory): the records
 *         under each path take the other's, in one pass, and (dev, ino)
 *         the second path; the other inode's own record is the sender's
 *         to RENAME.  Paths one of which lies in the other (or "/", or
 *         a relative one) reply -EINVAL and change nothing.
 * CHECKPOINT write the journal now; the reply comes when it is on disk
 *         (err -ENOENT: the session has no journal file), with count[0] =
 *         records written and count[1] = bytes.
 * SYNC    every change made so far on disk: in a --state session the
 *         records changed since the last write are appended to
 *         DIR/delta (or, when that cannot serve, the journal written);
 *         elsewhere as CHECKPOINT.  The reply comes when they are on
 *         disk, count[0] = records written, count[1] = bytes.
 * STATUS  reply one struct fe_status instead of a struct fe_rep.
 * MAP     reply count[0] = n, with n fds passed as SCM_RIGHTS: the
 *         memfds of the shared table (fakeenv/map.h): root (read-only),
 *         the pending counters (read-write), cur, then old while a
 *         rehash is in progress (read-only).  err -ENOSYS: the table is
 *         not shared; readers ask with GET, writers wait for replies.
 * RING    reply count[0] = 1 with one fd passed as SCM_RIGHTS: a change
 *         ring for this connection (fakeenv/ring.h), read-write.  err
 *         -EBUSY: this connection has one, or the daemon has as many as
 *         it keeps; -ENOSYS: no shared table.  The sender goes on by the
 *         socket.
 * WAKE    nothing but what every message does: the daemon first takes
 *         what the sender's ring holds.  Sent one-way by a writer that
 *         published in its ring while the daemon went to sleep.
 *
 * Order.  Every request of an FE_OPK_DRAIN op that waits for a reply
 * (all but MAP, RING, WAKE, SESSION and DETACH) first has the daemon
 * apply every one-way change already queued on any connection or
 * published in any ring (a drain): a change that returned in any process
 * before a read (GET, XGET, XLIST, STATS, STATUS, CHECKPOINT, SYNC) or a
 * change with a reply started is in the table before it.  And before
 * any message of a connection, what its ring holds: a process's changes
 * land in the order it made them, whichever way each went.
 *
 * The xattrs the daemon keeps (the names a real filesystem refuses to an
 * unprivileged user: security.*, trusted.*, system.posix_acl_access and
 * system.posix_acl_default; the shim sends no other), per record:
 * XSET    set the tail's name to its value (FE_F_XCREATE, FE_F_XREPLACE),
 *         making a record with the default owner when there is none (the
 *         path, when given, is its hint).  system.posix_acl_access must
 *         be a valid POSIX ACL (else -EINVAL): its owner, mask (or group)
 *         and other entries become the permission bits, as the kernel
 *         does, and a minimal one is not kept.  system.posix_acl_default
 *         only on a directory (else -EACCES).  Replies like CHMOD.
 * XGET    count[0] = the value's length; the value follows the reply when
 *         0 < length <= size; -ERANGE when size is not 0 and too small;
 *         -ENODATA when there is no such name.
 * XLIST   the same with the record's names, each NUL-terminated (no
 *         record, or none: count[0] = 0).
 * XDEL    remove the name (-ENODATA when absent); a record left with
 *         nothing else stays.
 * Every record holding xattrs has FE_REC_XATTR in the shared mapping: a
 * reader that sees a file without it needs no XGET or XLIST.  CHMOD
 * rewrites a kept access ACL's owner, mask (or group) and other entries;
 * CHOWN of a non-directory drops security.capability (the kernel's
 * killpriv); DROP, a stale record, and MKNOD or CREATE at the key take
 * them all away.
 */
/* An op on one file's record; one whose one-way form shows in stat. */
#define FE_OPK_REC   (FE_OPK_FILE | FE_OPK_DRAIN)
#define FE_OPK_SHOWN (FE_OPK_REC | FE_OPK_PENDS)
#define FE_OPS(X)                                                       \
	X(GET,        0,                    FE_TAIL_NONE, FE_OPK_REC)   \
	X(CHOWN,      FE_F_UID | FE_F_GID | FE_F_ONEWAY,                \
	                            FE_TAIL_OPT,  FE_OPK_SHOWN)         \
	X(CHMOD,      FE_F_MODE | FE_F_ONEWAY,                          \
	                            FE_TAIL_OPT,  FE_OPK_SHOWN)         \
	X(MKNOD,      FE_F_UID | FE_F_GID | FE_F_MODE | FE_F_RDEV |     \
	              FE_F_ONEWAY,  FE_TAIL_OPT,  FE_OPK_SHOWN)         \
	X(CREATE,     FE_F_UID | FE_F_GID | FE_F_MODE | FE_F_ONEWAY,    \
	                            FE_TAIL_OPT,  FE_OPK_SHOWN)         \
	X(DROP,       FE_F_ONEWAY,          FE_TAIL_NONE, FE_OPK_REC)   \
	X(RENAME,     FE_F_ONEWAY,          FE_TAIL_REQ,  FE_OPK_REC)   \
	X(SESSION,    0,                    FE_TAIL_NONE, 0)            \
	X(DETACH,     0,                    FE_TAIL_NONE, 0)            \
	X(STATS,      0,                    FE_TAIL_NONE, FE_OPK_DRAIN) \
	X(RENAMEDIR,  FE_F_XCHG | FE_F_ONEWAY,                          \
	                            FE_TAIL_TWO,  FE_OPK_REC)           \
	X(CHECKPOINT, 0,                    FE_TAIL_NONE, FE_OPK_DRAIN) \
	X(STATUS,     0,                    FE_TAIL_NONE, FE_OPK_DRAIN) \
	X(MAP,        0,                    FE_TAIL_NONE, 0)            \
	X(RING,       0,                    FE_TAIL_NONE, 0)            \
	X(WAKE,       FE_F_ONEWAY,          FE_TAIL_NONE, 0)            \
	X(XSET,       FE_F_XCREATE | FE_F_XREPLACE,                     \
	                            FE_TAIL_X,    FE_OPK_REC)           \
	X(XGET,       0,                    FE_TAIL_X,    FE_OPK_REC)   \
	X(XLIST,      0,                    FE_TAIL_X,    FE_OPK_REC)   \
	X(XDEL,       0,                    FE_TAIL_X,    FE_OPK_REC)   \
	X(SYNC,       0,                    FE_TAIL_NONE, FE_OPK_DRAIN)

enum fe_op {
	FE_OP_NONE = 0, /* never valid on the wire */
#define FE_OP_ENUM(name, flags, tail, kind) FE_OP_##name,
	FE_OPS(FE_OP_ENUM)
#undef FE_OP_ENUM
	FE_OP_COUNT
};

/* An op's FE_OPK_* bits; 0 for a number that is no op. */
static inline unsigned fe_op_kind(unsigned op)
{
	static const unsigned char kind[FE_OP_COUNT] = {
#define FE_OP_KIND(name, flags, tail, k) [FE_OP_##name] = (k),
		FE_OPS(FE_OP_KIND)
#undef FE_OP_KIND
	};

	return op < FE_OP_COUNT ? kind[op] : 0;
}

/* Whether a one-way op changes what stat shows, so that its sender raised
 * a pending counter that the daemon lowers (DROP makes an orphan and
 * RENAME moves a path: neither shows in a stat). */
static inline bool fe_op_pends(unsigned op)
{
	return fe_op_kind(op) & FE_OPK_PENDS;
}

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
	uint32_t tail_len;  /* bytes of tail after this header (paths: NUL
			       included), at most FE_TAIL_MAX */
	uint32_t btag;      /* birth-time tag of the file, 0: unknown */
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
			      count[0] = fds passed; XGET, XLIST: count[0]
			      = bytes of the value or list */
};
_Static_assert(sizeof(struct fe_rep) == 48, "bump FE_PROTO_VERSION");
_Static_assert(FE_REP_MAX == sizeof(struct fe_rep) + FE_XATTR_LIST_MAX &&
		       FE_XATTR_LIST_MAX >= FE_XATTR_SIZE_MAX, "reply size");

/* Status flags. */
#define FE_S_JOURNAL 0x1u /* the session has a journal file */
#define FE_S_SAVING  0x2u /* a checkpoint is being written now */
#define FE_S_LOADED  0x4u /* a journal was loaded at start */
#define FE_S_FAILING 0x8u /* the last journal write failed: the unsaved
			     changes are not on disk */
#define FE_S_PREV_LOST 0x10u /* the daemon before this one left changes
				it could not write (DIR/unsaved); prev_*
				say what it knew */

/* What a failed journal write was (fe_status.fail_what). */
#define FE_FAIL_CHECKPOINT 1 /* a checkpoint: asked for, or the interval */
#define FE_FAIL_EXIT       2 /* the last write, as the daemon left */
#define FE_FAIL_REPLACED   3 /* none was tried: the --state directory was
				removed or replaced since the daemon
				locked it */

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
	uint64_t stale;           /* records found stale since the start
				     (another birth time or type at their
				     key) and dropped */
	uint64_t orphans;         /* records of inodes with no name left,
				     kept while they may be open */
	uint64_t reaped;          /* orphans dropped since the start: no
				     process had them open */
	uint64_t lost;            /* one-way changes the daemon could not
				     store (out of memory): the session's
				     state is wrong for them */
	uint64_t failures;        /* journal writes that failed since the
				     start */
	uint64_t fail_time;       /* when the last one failed */
	int32_t  fail_err;        /* its -errno */
	uint32_t fail_what;       /* FE_FAIL_*, 0: none failed */
	uint64_t prev_time;       /* FE_S_PREV_LOST: when that daemon left */
	uint64_t prev_changes;    /* the changes it could not write, 0:
				     unknown */
	int32_t  prev_err;        /* why, -errno; 0: unknown */
	uint32_t pad;             /* zero */
	uint64_t by_ring;         /* one-way changes taken from the
				     processes' rings (fakeenv/ring.h) */
	uint64_t by_socket;       /* one-way changes that came as messages */
};
_Static_assert(sizeof(struct fe_status) == 224, "bump FE_PROTO_VERSION");

#endif
