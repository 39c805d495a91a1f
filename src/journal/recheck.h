/*
 * The rules that say where a journal record belongs now: one definition
 * for the daemon's load (src/daemon/state.c) and for `fakeenv export`,
 * which must key records exactly as a session would.
 *
 * A record that knows its file's birth time (btag) is its file's for
 * good, wherever the file's names went: it keeps its inode number, and
 * its st_dev follows its filesystem, which is found again as a whole
 * (fe_jnl_devmap_build(): a reboot or a remount renumbers a filesystem,
 * never its inodes).  It is never checked by its path, which a rename
 * outside any session or the loss of one hard link makes stale; a file
 * of another birth time at its key is found out when it is used.  A
 * record without a birth time (a filesystem that keeps none) falls back
 * to its path: fe_jnl_rec_seen() is pure; fe_jnl_rec_locate() adds the
 * one statx.  A record `fakeenv state relocate` rewrote is found by its
 * (new) path whatever its inode (FE_JNL_DEV_BYPATH).  fe_jnl_rec_place()
 * is the whole rule for one record.
 */
#ifndef FE_JOURNAL_RECHECK_H
#define FE_JOURNAL_RECHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "journal/journal.h"

/* What is at a record's stored path now (from statx or lstat). */
struct fe_jnl_seen {
	uint64_t dev;	   /* st_dev, glibc makedev encoding */
	uint64_t ino;	   /* st_ino */
	uint32_t mode;	   /* st_mode: only the type bits are used */
	uint32_t btag;	   /* birth-time tag, 0: the filesystem has none */
};

/*
 * Whether a file of real type real_mode & S_IFMT can carry a record of
 * mode jmode and flags jflags: fakeenv/map.h's fe_rec_stale() for a
 * journal record, birth times aside.
 */
bool fe_jnl_type_ok(uint32_t jmode, uint32_t jflags, uint32_t real_mode);

/*
 * Whether r still describes the file seen at its path: the type fits
 * (fe_jnl_type_ok), and on the same st_dev the inode number and, when
 * both sides know it, the birth time are the same.  Another st_dev (a
 * reboot, a remount, a copy) keeps the record under the file's new key,
 * and so does a relocated record (FE_JNL_DEV_BYPATH) whatever the inode.
 * On true, *dev and *ino get the key the record belongs under now.
 */
bool fe_jnl_rec_seen(const struct fe_jnl_rec *r, const struct fe_jnl_seen *s,
		     uint64_t *dev, uint64_t *ino);

/* What is at dirfd+name now (no symlink followed), into *s.  Returns
 * false when it cannot be statted. */
bool fe_jnl_see(int dirfd, const char *name, struct fe_jnl_seen *s);

/* Where each filesystem of a journal is now: from, the st_dev its
 * records were saved with; to, the st_dev it has now. */
struct fe_jnl_devmap {
	uint64_t from;
	uint64_t to;
};

struct fe_jnl_devmaps {
	struct fe_jnl_devmap *map; /* n entries, malloc'd */
	size_t n;
	uint64_t samples;          /* paths looked at to build it */
};

/*
 * Find each filesystem of v's records again: a few records of each
 * st_dev (evenly spread, then the first ones) are looked at by path, and
 * the first whose file has the record's inode number and birth time
 * tells the st_dev its filesystem has now.  A filesystem none of whose
 * samples is found (unmounted, or every sample moved) keeps its st_dev.
 * Returns 0 or -ENOMEM.
 */
int fe_jnl_devmap_build(const struct fe_jnl_view *v,
			struct fe_jnl_devmaps *m);

/* The st_dev now of a filesystem whose records were saved with dev. */
uint64_t fe_jnl_devmap_get(const struct fe_jnl_devmaps *m, uint64_t dev);

void fe_jnl_devmap_free(struct fe_jnl_devmaps *m);

/*
 * fe_jnl_rec_seen() for what statx (no symlink followed) finds at
 * r->path now; false for a record with no absolute path or a path that
 * cannot be statted.  *btag gets the file's birth-time tag.
 */
bool fe_jnl_rec_locate(const struct fe_jnl_rec *r, uint64_t *dev,
		       uint64_t *ino, uint32_t *btag);

/* The same with the statx of name relative to dirfd, an open directory
 * where r->path's last component (name) lives: a load that checks the
 * records of one directory together walks each path once. */
bool fe_jnl_rec_locate_at(int dirfd, const char *name,
			  const struct fe_jnl_rec *r, uint64_t *dev,
			  uint64_t *ino, uint32_t *btag);

/*
 * The key the record belongs under now, as a load makes it, for a
 * record with a birth-time tag: its inode number on its filesystem's
 * st_dev now (m).  The caller checks records without one by path
 * (fe_jnl_rec_locate()).
 */
void fe_jnl_rec_key(const struct fe_jnl_rec *r, const struct fe_jnl_devmaps *m,
		    uint64_t *dev, uint64_t *ino);

/*
 * A record's st_dev of 0 (FE_JNL_DEV_BYPATH, with btag 0), which no
 * filesystem has (Linux numbers anonymous ones from minor 1): written by
 * `fakeenv state relocate`, it says "find me by my path": the next load
 * gives the record to whatever file of its type is at its path then,
 * with that file's st_dev, inode number and birth time.  A reader that
 * predates it does the same, since it checks a record without a birth
 * time by its path and re-keys one whose st_dev differs.
 */
#define FE_JNL_DEV_BYPATH 0

/* What a load makes of a record (fe_jnl_rec_place()).  The first three
 * keep it; the others drop it. */
enum fe_jnl_fate {
	FE_JNL_KEPT,	 /* under its key as saved */
	FE_JNL_REKEYED,	 /* the same file; its filesystem's st_dev changed */
	FE_JNL_MOVED,	 /* relocated (FE_JNL_DEV_BYPATH): the file now at
			    its path, whichever inode it is */
	FE_JNL_GONE,	 /* nothing at its path, or no absolute path */
	FE_JNL_REPLACED, /* another inode (or birth time) at its path */
	FE_JNL_RETYPED,	 /* a file of another type at its path */
	FE_JNL_BADDEV,	 /* a faked st_rdev no Linux mknod can make, or
			    a key's st_dev no table holds */
};

/* Whether a record of fate f is kept. */
static inline bool fe_jnl_fate_kept(enum fe_jnl_fate f)
{
	return f == FE_JNL_KEPT || f == FE_JNL_REKEYED || f == FE_JNL_MOVED;
}

/* Where a record goes, and what was seen at its path to decide it. */
struct fe_jnl_place {
	enum fe_jnl_fate fate;
	uint64_t dev; /* the key it belongs under now (kept) */
	uint64_t ino;
	uint32_t btag;		 /* the birth-time tag it applies to, 0: none */
	bool looked;		 /* its path was statted ... */
	struct fe_jnl_seen seen; /* ... and this was there (looked, and
				    fate is not GONE) */
};

/* Whether fe_jnl_rec_place() looks at r's path: no birth time, or
 * relocated.  The others are placed without I/O. */
static inline bool fe_jnl_rec_looks(const struct fe_jnl_rec *r)
{
	return !r->btag || r->dev == FE_JNL_DEV_BYPATH;
}

/*
 * The load's rule for one record, the only copy of it (the daemon's
 * load, `fakeenv export`, `fakeenv fsck --against-fs`): a record with a
 * birth time goes under its inode number on its filesystem's st_dev now
 * (m) without a look at its path; one without a birth time, or
 * relocated, is checked by what is at its path (fe_jnl_rec_seen(), a
 * relocated one taking whatever file of its type is there).  dirfd and
 * name say where to statx that path (AT_FDCWD and r->path, or an open
 * directory and the last component: fe_jnl_rec_locate_at()).
 */
void fe_jnl_rec_place(const struct fe_jnl_rec *r,
		      const struct fe_jnl_devmaps *m, int dirfd,
		      const char *name, struct fe_jnl_place *p);

/*
 * fe_jnl_rec_place() from r->path, and, for a record it keeps without a
 * look (one with a birth time), the file at its path compared with that
 * key: GONE, REPLACED or RETYPED then say that the load keeps a record
 * whose file is not at its path (*keyed true), which applies to a file
 * renamed outside any session, or to nothing.  An orphan, or a keyed
 * record without a path, is not looked at.  For fsck --against-fs.
 */
void fe_jnl_rec_check(const struct fe_jnl_rec *r,
		      const struct fe_jnl_devmaps *m, struct fe_jnl_place *p,
		      bool *keyed);

#endif
