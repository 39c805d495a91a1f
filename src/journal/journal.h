/*
 * The journal: the flat file a daemon's table is saved to, and the only
 * on-disk format of fakeenv.  Linked into the daemon, the launcher (fsck,
 * export), the unit tests and the fuzz targets; never into the shim.
 *
 * Layout (every integer little-endian, fixed width; offsets from the start
 * of the file):
 *
 *   header   64 bytes
 *     0  magic[8]       "FAKEENVJ"
 *     8  u32 version    FE_JNL_VERSION; a larger one is refused as newer
 *    12  u32 hdr_size   64
 *    16  u32 rec_size   64
 *    20  u32 flags      0 (a set bit is refused as newer)
 *    24  u64 nrec       records
 *    32  u64 str_size   bytes of the string area
 *    40  i64 written    unix seconds at write time (informational)
 *    48  u64 file_size  64 + nrec * 64 + str_size + 8
 *    56  u64 reserved   0
 *   records  nrec * 64 bytes, at offset 64
 *     0  u64 dev        st_dev when saved (glibc makedev encoding)
 *     8  u64 ino
 *    16  u64 rdev       faked st_rdev (with FE_JNL_DEV_SET), else 0
 *    24  u64 str_off    offset of this record's strings in the string area
 *    32  u32 btag       birth-time tag of the file (fakeenv/map.h,
 *                       fe_btag()), 0: unknown
 *    36  u32 reserved   0
 *    40  u32 reserved   0
 *                       (version 1 called 32..43 a birth time and always
 *                       wrote 0: the same bytes read as btag 0)
 *    44  u32 str_len    bytes of this record's strings
 *    48  u32 uid
 *    52  u32 gid
 *    56  u32 mode       st_mode, type bits included: the faked type with
 *                       FE_JNL_DEV_SET, else the real type; the permission
 *                       bits mean something with FE_JNL_MODE_SET
 *    60  u32 flags      FE_JNL_MODE_SET | FE_JNL_DEV_SET | FE_JNL_ORPHAN,
 *                       no other bit
 *   string area  str_size bytes, at offset 64 + nrec * 64
 *     a record's strings: its path, NUL-terminated (an empty path, a lone
 *     NUL, means unknown), then its xattr block: zero or more entries of
 *     u32 name_len (1..255), u32 value_len (0..FE_JNL_XATTR_MAX), the name
 *     (no NUL in it), the value.  Records' strings never overlap and lie
 *     within the area; the area holds nothing else.
 *   trailer  8 bytes
 *     0  u32 crc        CRC-32C (Castagnoli) of every byte before it
 *     4  magic[4]       "JEND"
 *
 * Every check is made before a single record is trusted: a journal is
 * taken whole or refused whole.
 */
#ifndef FE_JOURNAL_H
#define FE_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FE_JNL_VERSION   2
#define FE_JNL_HDR_SIZE  64
#define FE_JNL_REC_SIZE  64
#define FE_JNL_TRL_SIZE  8
#define FE_JNL_XATTR_MAX 65536 /* bytes of one value */
#define FE_JNL_NAME_MAX  255   /* bytes of one xattr name */

/* Record flags. */
#define FE_JNL_MODE_SET 0x1u /* permission bits are faked */
#define FE_JNL_DEV_SET  0x2u /* type and rdev are faked (a device node whose
				real file is a regular file) */
#define FE_JNL_ORPHAN   0x4u /* the inode had no name left when saved, but
				was open: dropped at load unless it still
				is */

/* Why a journal was refused.  fe_jnl_errname() gives a short name. */
enum fe_jnl_err {
	FE_JNL_OK = 0,
	FE_JNL_ETRUNC,   /* shorter than the header says (or than a header) */
	FE_JNL_EMAGIC,   /* not a fakeenv journal */
	FE_JNL_EVERSION, /* a newer version or unknown header flags */
	FE_JNL_ESIZE,    /* sizes that cannot be: file_size disagrees with
			    the counts or the length, counts that overflow */
	FE_JNL_ECRC,     /* checksum mismatch, or trailer magic wrong */
	FE_JNL_ERECORD,  /* a record breaks a rule above (its index named in
			    the message) */
};

/* A decoded record.  path and xattrs point into the checked buffer. */
struct fe_jnl_rec {
	uint64_t dev;
	uint64_t ino;
	uint64_t rdev;
	uint32_t btag;                /* birth-time tag, 0: unknown */
	uint64_t reserved;            /* bytes 36..43, zero */
	uint32_t uid;
	uint32_t gid;
	uint32_t mode;
	uint32_t flags;               /* FE_JNL_* */
	const char *path;             /* NUL-terminated, "" when unknown */
	size_t path_len;              /* strlen(path) */
	const unsigned char *xattrs;  /* the raw xattr block */
	size_t xattrs_len;
};

/* A journal that passed fe_jnl_parse(). */
struct fe_jnl_view {
	const unsigned char *buf;
	size_t len;
	uint64_t nrec;
	uint64_t str_size;
	int64_t written;
	uint32_t version;
};

/* The CRC-32C of len bytes, continued from crc (0 to start). */
uint32_t fe_crc32c(uint32_t crc, const void *buf, size_t len);

/* A short fixed name for err ("truncated", "bad checksum", ...). */
const char *fe_jnl_errname(enum fe_jnl_err err);

/*
 * Check the len bytes at buf completely: header, sizes, checksum, then
 * every record and its strings and xattr block.  Returns FE_JNL_OK and
 * fills *v, or an error with a one-line description in why (always
 * NUL-terminated, e.g. "truncated: 4096 bytes, the header says 81920").
 * Pure: reads buf only; buf need not be aligned.
 */
enum fe_jnl_err fe_jnl_parse(const void *buf, size_t len,
			     struct fe_jnl_view *v, char *why, size_t why_size);

/* The checks that need only the first got bytes (a whole header, when the
 * file has one) and the file's size: the magic, the version, the sizes
 * and, unless raw, that size is what the header claims.  *want gets the
 * bytes to read: the header's file_size, or raw, all there is.  The
 * opener's way to refuse a file that is no journal before reading it. */
enum fe_jnl_err fe_jnl_head(const unsigned char *hdr, size_t got,
			    uint64_t size, bool raw, uint64_t *want, char *why,
			    size_t why_size);

/* Record i (< v->nrec) of a parsed journal. */
void fe_jnl_get(const struct fe_jnl_view *v, uint64_t i,
		struct fe_jnl_rec *r);

/*
 * Iterate an xattr block: *pos starts at 0.  Returns true and sets the
 * entry's name (not NUL-terminated; name_len bytes) and value, or false at
 * the end.  The block must come from a parsed journal (or have been built
 * by fe_jnl_xattr_put()).
 */
bool fe_jnl_xattr_next(const unsigned char *blk, size_t len, size_t *pos,
		       const char **name, size_t *name_len,
		       const unsigned char **val, size_t *val_len);

/*
 * Append one entry (name: NUL-terminated, 1..FE_JNL_NAME_MAX bytes; vlen
 * <= FE_JNL_XATTR_MAX) to the block of *len bytes at blk, whose capacity
 * is cap.  Returns 0 and advances *len, -EINVAL for a name or value the
 * format cannot hold, -ENOSPC when it does not fit (*len unchanged).
 */
int fe_jnl_xattr_put(unsigned char *blk, size_t cap, size_t *len,
		     const char *name, const void *value, size_t vlen);

/*
 * The streaming writer: one sequential pass, buffered, so that the number
 * of write(2) calls does not grow with the records (1 MiB at a time).
 * The caller knows its counts first (a pass over its table in memory),
 * then writes every record, then every record's strings in the same
 * order.  The writer checks that the calls add up and keeps the CRC.
 *
 *   fe_jnl_w_begin(&w, fd, nrec, str_size, time(NULL));
 *   for each record:  fe_jnl_w_rec(&w, &rec)       (str_off is the
 *                     writer's running sum of fe_jnl_str_len())
 *   for each record:  fe_jnl_w_str(&w, &rec)
 *   fe_jnl_w_end(&w);                                (trailer, flush)
 *
 * Errors are sticky: the first -errno (or -EINVAL when the calls do not
 * add up) is kept, later calls do nothing, fe_jnl_w_end() returns it.
 * fe_jnl_w_end() always frees the buffer.
 */
struct fe_jnl_w {
	int fd;
	int err;
	unsigned char *buf;
	size_t len;
	uint32_t crc;
	uint64_t nrec, recs_done;
	uint64_t str_size, str_off, str_done;
};

/* The bytes fe_jnl_w_str() will write for r: path + NUL + xattrs. */
static inline uint64_t fe_jnl_str_len(const struct fe_jnl_rec *r)
{
	return (uint64_t)r->path_len + 1 + r->xattrs_len;
}

int fe_jnl_w_begin(struct fe_jnl_w *w, int fd, uint64_t nrec,
		   uint64_t str_size, int64_t written);
void fe_jnl_w_rec(struct fe_jnl_w *w, const struct fe_jnl_rec *r);
void fe_jnl_w_str(struct fe_jnl_w *w, const struct fe_jnl_rec *r);
int fe_jnl_w_end(struct fe_jnl_w *w);

/*
 * Save atomically to path: a temporary file beside it (mode 0600), emit()
 * writes the journal through the writer it is given (begin to end), then
 * fsync, rename over path, fsync of the directory.  On any failure the
 * temporary file is removed and path is as it was, except when only the
 * directory's fsync fails: path then holds the new journal, which may not
 * survive a crash.  emit() must begin and end the writer it is given (one
 * that does not fails with -EINVAL).  Returns 0 or -errno.
 */
int fe_jnl_save(const char *path,
		int (*emit)(struct fe_jnl_w *w, int fd, void *ctx), void *ctx);

/*
 * fe_jnl_save() into the directory dirfd (open for reading), under name:
 * the temporary file, the rename and the fsync all go through dirfd, so
 * a directory that was removed never gets the journal, and one made at
 * its path since never does either.  check(check_ctx), when not NULL,
 * runs before the temporary file is made and again before the rename;
 * a non-zero return (-errno) stops the save there and is its result.
 */
int fe_jnl_save_at(int dirfd, const char *name, int (*check)(void *ctx),
		   void *check_ctx,
		   int (*emit)(struct fe_jnl_w *w, int fd, void *ctx), void *ctx);

/*
 * The one way a journal (or the log beside it) is opened.  A file is
 * refused before any byte of it is trusted or any memory is spent on it
 * unless it is a regular file owned by the real uid: opened with
 * O_NONBLOCK (a FIFO never blocks the open), O_NOFOLLOW (a symbolic link
 * is never followed behind the user's back), O_NOCTTY and O_CLOEXEC,
 * then fstat'd.  The header is read and checked first; only then is the
 * rest read, and never more than the file_size the header claims: a file
 * of another size is refused, the message giving both.
 */
/* FE_JNL_FOLLOW: path is one the user gave (-i, fsck, export -i): a
 * symbolic link in it is resolved first (realpath) and every check
 * applies to its target; without it a symbolic link is refused
 * (DIR/journal is never one).  FE_JNL_RAW: for salvage, only the header's
 * magic, version and size fields are checked, then the whole file is
 * read, at most its size at open; *v is not filled. */
#define FE_JNL_FOLLOW 0x1u
#define FE_JNL_RAW    0x2u

/*
 * Read and check the journal at path (flags: FE_JNL_*).  Returns 0 with
 * *buf (malloc'd, *len bytes) and *v filled by fe_jnl_parse(), or -errno
 * with msg filled (always, NUL-terminated) as the one line every caller
 * prints: "journal PATH: REASON", REASON e.g. "no such file", "a FIFO,
 * not a regular file", "owned by uid 1, not by you (uid 1000)",
 * "cannot read it: Permission denied" or the parse's refusal ("bad
 * checksum: stored 0x..., computed 0x...").  -ENOENT: no such file (the
 * caller's to judge: a journal not written yet); -EBADMSG: not a sound
 * journal (damaged, truncated, another size than its header says);
 * another -errno: not ours, not a regular file, or unreadable.
 */
int fe_jnl_load(const char *path, unsigned flags, unsigned char **buf,
		size_t *len, struct fe_jnl_view *v, char *msg, size_t msg_size);

/*
 * Open path (DIR/log) for appending, created 0600 if missing, with the
 * same refusals as fe_jnl_load() (never a symbolic link, a regular file
 * owned by the real uid; a FIFO neither blocks nor is written).  Returns
 * the fd, or -errno with msg filled ("log PATH: a FIFO, not a regular
 * file").  -EINVAL: the file is there but is not a regular file of
 * ours; another -errno: it could not be opened or made.
 */
int fe_jnl_open_log(const char *path, char *msg, size_t msg_size);

/* The same for a trace file (fakeenv --trace FILE): msg says "trace
 * PATH: ...". */
int fe_jnl_open_trace(const char *path, char *msg, size_t msg_size);

/*
 * Read the whole file at path into a malloc'd buffer (*buf, *len), for
 * tools and tests that want the bytes as they are (damaged or another
 * user's): a regular file only, never a symbolic link, at most its size
 * at open.  Returns 0 or -errno (-EINVAL: not a regular file; -EFBIG
 * past SIZE_MAX/2).  -ENOENT is the caller's to judge.
 */
int fe_jnl_read_file(const char *path, unsigned char **buf, size_t *len);

/*
 * Salvage: write to fd (with a fresh header and checksum) every record of
 * the damaged len bytes at buf that can be trusted on its own: the header
 * magic must be right and its hdr_size/rec_size known; then each whole
 * record present in the file, with valid fields and strings that lie
 * within the bytes present and are well-formed, is kept; the checksum is
 * ignored.  *kept and *lost count records (lost: those the header claims
 * that were not kept).  Returns 0 or -errno (-EINVAL: nothing can be
 * trusted, e.g. the magic is wrong; *why then says why).
 */
int fe_jnl_salvage(const void *buf, size_t len, int fd, uint64_t *kept,
		   uint64_t *lost, char *why, size_t why_size);

#endif
