/*
 * The rule that says whether a journal record still describes a file:
 * one definition for the daemon's load (src/daemon/state.c) and for
 * `fakeenv export`, which must key records exactly as a session would.
 * fe_jnl_rec_seen() is pure; fe_jnl_rec_locate() adds the one statx.
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
	bool has_btime;	   /* the filesystem told the birth time */
	int64_t btime_sec; /* birth time, with has_btime */
	uint32_t btime_nsec;
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

/*
 * fe_jnl_rec_seen() for what statx (no symlink followed) finds at
 * r->path now; false for a record with no absolute path or a path that
 * cannot be statted.
 */
bool fe_jnl_rec_locate(const struct fe_jnl_rec *r, uint64_t *dev,
		       uint64_t *ino);

/* The same with the statx of name relative to dirfd, an open directory
 * where r->path's last component (name) lives: a load that checks the
 * records of one directory together walks each path once. */
bool fe_jnl_rec_locate_at(int dirfd, const char *name,
			  const struct fe_jnl_rec *r, uint64_t *dev,
			  uint64_t *ino);

#endif
