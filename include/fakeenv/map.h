/*
 * The shared read-only mapping of the record table: the daemon writes it,
 * every process of the session reads it without a round trip.  The daemon
 * alone writes; readers never write.
 *
 * Layout.  Each slot array lives in its own memfd: a struct fe_map_arr
 * header (64 bytes) followed by cap struct fe_slot.  A one-page "root"
 * memfd (struct fe_map_root) names the arrays of the table right now: cur
 * (takes every insert) and, while a rehash moves records, old.  Every memfd
 * is sized once and sealed against shrinking and growing, so a reader's
 * mapping can never fault; root's and the arrays' also against writing
 * (F_SEAL_FUTURE_WRITE: only the daemon's own mapping, made before the
 * seal, writes them), so no reader can change them by any route.
 *
 * Seq protocol (root and every slot alike): seq is odd while the daemon
 * writes, and grows by 2 with every write; the final store is a release.
 * A reader loads seq (acquire), retries while odd, copies the fields
 * (relaxed atomic loads), then an acquire fence and seq again: a change
 * means a torn copy, and it retries.
 *
 * Finding a record: read root (seq r1), probe old then cur, read root seq
 * again: if it is not r1 the arrays changed under the probe, and the
 * lookup retries.  While root's seq stays r1, a slot is copied into cur
 * before it is tombstoned in old (src/daemon/table.h), so probing old
 * then cur never misses a record.  An array that leaves the table gets
 * `superseded` set; its memfd stays valid for readers that map it.
 *
 * What a record shows: fe_rec_stale() and fe_rec_view() below, used by
 * the daemon's GET and by the shim's reader, so that the two cannot
 * drift.
 */
#ifndef FAKEENV_MAP_H
#define FAKEENV_MAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#define FE_MAP_MAGIC_ROOT 0x746f6f52764e4546ull /* "FENvRoot" */
#define FE_MAP_MAGIC_ARR  0x7272416d764e4546ull /* "FENvmArr" */
#define FE_MAP_VERSION 5

/* Root flags. */
#define FE_MAP_UNKNOWN_REAL 0x1u /* files with no record show their real
				    owner (fakeenvd --unknown-is-real) */

/* Slot state. */
#define FE_SLOT_USED 0x1u /* holds a record */
#define FE_SLOT_TOMB 0x2u /* held one: probes go past it, inserts reuse it */
/* Record flags, kept in the same word. */
#define FE_REC_MODE_SET 0x4u /* permission bits are faked */
#define FE_REC_DEV_SET  0x8u /* type and rdev are faked (a device whose real
				file is a regular file) */
#define FE_REC_XATTR    0x10u /* the daemon keeps xattrs for this inode
				 (security.*, ...): without it, getxattr
				 and listxattr need not ask */
#define FE_REC_ORPHAN  0x20u /* the inode lost its last name (nlink 0) but
				 may still be open: the daemon drops the
				 record once no process has it open */
#define FE_REC_FLAGS \
	(FE_REC_MODE_SET | FE_REC_DEV_SET | FE_REC_XATTR | FE_REC_ORPHAN)

/*
 * One slot, 40 bytes.  seq is odd while the slot is being written and
 * grows by 2 with every write (see above).
 *
 * A record's identity is (dev, ino, btag): btag is fe_btag() of the
 * file's birth time (statx STATX_BTIME), 0 where the filesystem has none.
 * Inode numbers are reused (ext4 at once), birth times are not: a record
 * whose btag differs from the file's is stale (fe_rec_stale()).
 *
 * dev and rdev take 32 bits: the kernel's dev_t is 32 bits (12 for the
 * major, 20 for the minor), and for those values glibc's 64-bit encoding
 * is the same number, so every st_dev and every device a mknod can make
 * fits (the daemon refuses the others, FE_DEV_MAX).  8 bytes less a slot
 * is 16 MiB less for a million records at the table's usual load.
 */
#define FE_DEV_MAX 0xffffffffu

struct fe_slot {
	uint64_t ino;   /* key: st_ino */
	uint32_t dev;   /* key: st_dev */
	uint32_t rdev;  /* faked st_rdev, meaningful with FE_REC_DEV_SET */
	uint32_t uid;   /* fake owner */
	uint32_t gid;   /* fake group */
	uint32_t btag;  /* birth-time tag of the file, 0: unknown */
	uint16_t mode;  /* type bits (the faked type with DEV_SET, else the
			   real type when recorded) and permission bits
			   (meaningful with MODE_SET): st_mode's 16 bits */
	uint16_t flags; /* FE_SLOT_* | FE_REC_* */
	uint32_t path;  /* arena offset of the last known path, 0: none (the
			   daemon's; meaningless to readers) */
	uint32_t seq;   /* write sequence: odd while a write is in progress */
};
_Static_assert(sizeof(struct fe_slot) == 40, "slot layout");

/* The head of an array memfd; the slots follow it. */
struct fe_map_arr {
	uint64_t magic;      /* FE_MAP_MAGIC_ARR */
	uint64_t id;         /* this array's id, never reused by a daemon */
	uint64_t cap;        /* slots, 1 to FE_MAP_CAP_MAX */
	uint32_t version;    /* FE_MAP_VERSION */
	uint32_t superseded; /* 1 once the array left the table (atomic) */
	uint64_t pad[4];     /* zero */
	struct fe_slot slots[];
};
_Static_assert(sizeof(struct fe_map_arr) == 64, "array header layout");

/* The root memfd: which arrays make the table now. */
struct fe_map_root {
	uint64_t magic;   /* FE_MAP_MAGIC_ROOT */
	uint32_t version; /* FE_MAP_VERSION */
	uint32_t seq;     /* odd while cur_id/old_id change, +2 per change */
	uint64_t cur_id;  /* id of cur */
	uint64_t old_id;  /* id of old, 0: no rehash in progress */
	uint32_t flags;   /* FE_MAP_UNKNOWN_REAL; set before any client */
	uint32_t pad32;   /* zero */
	uint64_t ndev;    /* records with FE_REC_DEV_SET (atomic; not under
			     seq): 0 lets readdir skip its lookups */
	uint64_t nxattr;  /* records with FE_REC_XATTR (atomic; not under
			     seq; 0 in daemons that keep none): 0 lets
			     getxattr and listxattr skip their lookups */
	uint64_t nsgid;   /* records of directories whose faked mode has
			     S_ISGID (FE_REC_MODE_SET; atomic; not under
			     seq): 0 lets a creation skip the lookup of
			     its parent's record */
	uint64_t nblind;  /* records with btag 0 (a filesystem without
			     birth times; atomic; not under seq): 0 lets a
			     new file skip its look for a record left at
			     its inode number by a dead file, which only
			     such a record could match */
};
_Static_assert(sizeof(struct fe_map_root) == 72, "root layout");

/*
 * The pending counters: one memfd of FE_PEND_BUCKETS 32-bit counters,
 * mapped read-write by every process of the session (the one part of
 * the table that readers write).  A process sending a one-way change
 * that shows in stat (fe_op_pends()) adds 1 to the counter of its key's
 * bucket (fe_pend_bucket()) before it sends, and the daemon takes 1 away
 * once the change is in the table (a release after the slot's writes).
 * A reader that finds its bucket's counter 0 (acquire) reads the table;
 * one that finds it busy asks the daemon, whose GET first applies every
 * change queued on any connection.  So a change that returned is seen by
 * every read that starts after it.  A counter a killed sender left
 * raised only sends that bucket's readers to the daemon: slower, still
 * right.
 */
#define FE_PEND_BUCKETS 4096u

/*
 * After the counters, in the same memfd: what a writer with a change ring
 * (fakeenv/ring.h) must know of the daemon.  awake_until is a promise, in
 * CLOCK_MONOTONIC microseconds: the daemon looks at every ring again at
 * or after that time before it may sleep.  It moves it on while changes
 * come, and sets it to 0 once the time has passed, before it sleeps,
 * then looks at the rings once more.  A writer that reads a time still to
 * come may use its ring; one that reads a time past (the daemon asleep,
 * busy elsewhere, or dead) sends by the socket, which wakes the daemon or
 * tells that it is gone.
 *
 * So that publishing an entry needs no fence: a writer that, after its
 * store of head, reads a promise at least FE_RING_MARGIN_US away is done,
 * since its store is seen by every processor long before that (a store
 * waits in its processor's buffer for nanoseconds, and a preemption
 * drains it).  Nearer than that, it fences and reads again, as the
 * daemon fences between its store of 0 and its last look.  Closing a
 * ring keeps the same margin between CLOSING and the last look
 * (fe_ring_close()).
 */
#define FE_RING_MARGIN_US 50
struct fe_pend_ctl {
	uint64_t awake_until; /* CLOCK_MONOTONIC us; 0: asleep (daemon) */
	uint64_t pad[7];      /* zero */
};
_Static_assert(sizeof(struct fe_pend_ctl) == 64, "pend ctl layout");

/* Bytes of the pending memfd: the counters, then struct fe_pend_ctl. */
#define FE_PEND_SIZE (FE_PEND_BUCKETS * sizeof(uint32_t) + \
		      sizeof(struct fe_pend_ctl))

static inline struct fe_pend_ctl *fe_pend_ctl(uint32_t *pend)
{
	return (struct fe_pend_ctl *)(void *)(pend + FE_PEND_BUCKETS);
}

/* The hash of a (dev, ino) key, part of the layout: a slot's home is
 * fe_map_home(), linear probing from there, and a key's pending counter
 * is bucket ((hash >> 40) & (FE_PEND_BUCKETS - 1)).  The daemon places
 * and every reader probes with it: change it and FE_MAP_VERSION. */
static inline uint64_t fe_hash_key(uint64_t dev, uint64_t ino)
{
	uint64_t h = ino * 0x9e3779b97f4a7c15ull ^ (dev + 0x632be59bd9b4e019ull);

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 29;
	return h;
}

/*
 * A key's home slot in an array of cap slots: the hash's top 32 bits
 * scaled to [0, cap).  Any cap works, not only powers of two, so that a
 * table can be sized to its records (a load fills 2/3 of it, not 3/8 to
 * 3/4); and an array's slot order is the order of those bits whatever
 * its size, so a journal written in one table's order fills another
 * from its first slot to its last.
 */
#define FE_MAP_CAP_MAX (1ull << 32)
static inline uint64_t fe_map_home(uint64_t h, uint64_t cap)
{
	return ((h >> 32) * cap) >> 32;
}

/* Bytes of an array memfd of cap slots. */
static inline uint64_t fe_map_arr_size(uint64_t cap)
{
	return sizeof(struct fe_map_arr) + cap * sizeof(struct fe_slot);
}

#define FE_MAP_PERM_BITS 07777u

/*
 * The birth-time tag of a file born at sec.nsec: its nanoseconds since
 * the epoch folded to 32 bits, never 0 (0 means "unknown").  Two files
 * born apart at one inode number, one after the other, get the same tag
 * only if their times collide in those 32 bits (1 in 2^32 for unrelated
 * times; never within 4.29 s of each other).  On every stat's path:
 * a few instructions.
 */
static inline uint32_t fe_btag(int64_t sec, uint32_t nsec)
{
	uint64_t x = (uint64_t)sec * 1000000000u + nsec;
	uint32_t t = (uint32_t)x ^ (uint32_t)(x >> 32);

	return t ? t : 1u;
}

/*
 * A record no longer describes the file at its key when the file was born
 * at another time (both tags known: the inode number was reused), or when
 * the real type differs from the one recorded (a faked device is a
 * regular file): the check where a birth time is unknown.  A faked device
 * may also come back with its faked type: the shim fixes up glibc's fts
 * entries in place, and fts_children then fts_read hand it the same entry
 * twice.
 */
static inline bool fe_rec_stale(uint32_t rec_mode, uint32_t rec_flags,
				uint32_t rec_btag, uint32_t real_mode,
				uint32_t btag)
{
	uint32_t real_type = real_mode & S_IFMT;

	if (rec_btag && btag && rec_btag != btag)
		return true;
	if (rec_flags & FE_REC_DEV_SET)
		return real_type != S_IFREG && real_type != (rec_mode & S_IFMT);
	return (rec_mode & S_IFMT) != real_type;
}

/* A record that root's nsgid counts: a directory whose faked mode is
 * set-gid, whose new files and directories take its group. */
static inline bool fe_rec_sgid_dir(uint32_t rec_mode, uint32_t rec_flags)
{
	return (rec_flags & FE_REC_MODE_SET) && S_ISDIR(rec_mode) &&
	       (rec_mode & S_ISGID);
}

/* What stat shows of a file: its record (if any) laid over the real
 * values. */
struct fe_view {
	uint32_t uid;   /* effective uid */
	uint32_t gid;   /* effective gid */
	uint32_t mode;  /* effective st_mode, type bits included */
	uint32_t dev;   /* true when type and rdev are faked */
	uint64_t rdev;  /* effective st_rdev when dev, else 0 */
	uint32_t xattr; /* true when the daemon keeps xattrs for the file */
	uint32_t btag;  /* the record's birth-time tag (0: none, or no
			   record) */
};

/*
 * The view of a file with real st_mode/st_uid/st_gid real_*: rec (a live
 * record, not stale; NULL: none) laid over them.  A file without a record
 * shows 0:0, or its real owner when unknown_is_real.
 */
static inline void fe_rec_view(const struct fe_slot *rec, uint32_t real_mode,
			       uint32_t real_uid, uint32_t real_gid,
			       bool unknown_is_real, struct fe_view *v)
{
	uint32_t type, perm;

	v->dev = 0;
	v->rdev = 0;
	v->xattr = rec && (rec->flags & FE_REC_XATTR);
	v->btag = rec ? rec->btag : 0;
	if (!rec) {
		v->uid = unknown_is_real ? real_uid : 0;
		v->gid = unknown_is_real ? real_gid : 0;
		v->mode = real_mode;
		return;
	}
	v->uid = rec->uid;
	v->gid = rec->gid;
	type = (rec->flags & FE_REC_DEV_SET) ? rec->mode & S_IFMT :
					       real_mode & S_IFMT;
	perm = (rec->flags & FE_REC_MODE_SET) ? rec->mode & FE_MAP_PERM_BITS :
						real_mode & FE_MAP_PERM_BITS;
	v->mode = type | perm;
	if (rec->flags & FE_REC_DEV_SET) {
		v->dev = 1;
		v->rdev = rec->rdev;
	}
}

#endif
