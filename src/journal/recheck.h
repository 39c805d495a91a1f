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
 * one statx.
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
 * mode jmode and flags jflags: the same type, or, for a faked device
 * (FE_JNL_DEV_SET), a regular file (its real form) or the faked type.
 */
bool fe_jnl_type_ok(uint32_t jmode, uint32_t jflags, uint32_t real_mode);

/*
 * Whether r still describes the file seen at its path: the type fits
 * (fe_jnl_type_ok), and on the same st_dev the inode number and, when
 * both sides know it, the birth time are the same.  Another st_dev (a
 * reboot, a remount, a copy) keeps the record under the file's new key.
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

#endif
