/*
 * The daemon's side of the journal: loading one into the table at start,
 * with every record checked against the filesystem, and writing the table
 * out without stalling clients: the loop takes a snapshot (one copy of
 * the records and their paths, the only pause clients see) and a thread
 * writes it while the loop serves on.  A fork would be cheaper to start,
 * but the table may live in shared mappings that a child would not see
 * frozen.
 */
#ifndef FE_DAEMON_STATE_H
#define FE_DAEMON_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serve.h"

/* What a load did. */
struct fe_load_stats {
	uint64_t loaded;  /* records in the journal */
	uint64_t rekeyed; /* kept under a new (dev, ino): st_dev changed */
	uint64_t dropped; /* gone, replaced, or with no path to check */
	uint64_t bytes;   /* size of the journal */
};

/*
 * Load the journal at path into s's table (empty, or holding records the
 * journal's replace).  Each record is checked by its path: a file that is
 * gone or is no longer the same inode (same st_dev, other inode number,
 * type or birth time) is dropped; one whose st_dev changed is re-keyed.
 * Returns 0; -ENOENT when there is no file; -EBADMSG when the journal is
 * refused (a message naming the file and the problem is logged, the file
 * untouched); another -errno when it cannot be read (logged too).
 */
int fe_state_load(struct fe_srv *s, const char *path,
		  struct fe_load_stats *st);

/* The same, opened with flags (journal/journal.h, fe_jnl_load()):
 * FE_JNL_FOLLOW for a path the user gave (-i); fe_state_load() is 0, for
 * DIR/journal, which is never a symbolic link. */
int fe_state_load_flags(struct fe_srv *s, const char *path, unsigned flags,
			struct fe_load_stats *st);

/* A copy of the records, independent of the table. */
struct fe_snap;

/* Copy the table.  NULL when memory runs out. */
struct fe_snap *fe_snap_take(const struct fe_tab *t);
void fe_snap_free(struct fe_snap *sn);
size_t fe_snap_count(const struct fe_snap *sn);

/* Write sn to path atomically; *bytes gets the journal's size.
 * Returns 0 or -errno. */
int fe_snap_save(const struct fe_snap *sn, const char *path,
		 uint64_t *bytes);

/*
 * A background writer.  fe_saver_start() hands it a snapshot (always
 * taken over, even on failure) and returns at once; when the journal is
 * written (or failed) the thread makes efd readable.  fe_saver_finish()
 * then joins it and returns the result.  One write at a time.
 */
struct fe_saver {
	int efd;              /* eventfd: readable when the write is done */
	bool busy;            /* a thread is running */
	pthread_t thread;
	struct fe_snap *snap;
	const char *path;
	int result;           /* 0 or -errno */
	uint64_t bytes;
	uint64_t records;
	uint64_t write_us;    /* how long the write took */
};

int fe_saver_init(struct fe_saver *sv);
void fe_saver_free(struct fe_saver *sv); /* waits for a running write */
int fe_saver_start(struct fe_saver *sv, struct fe_snap *snap,
		   const char *path);
/* Join the finished (or running: waits) write; returns its result and
 * fills *bytes and *records (and sv->write_us is its duration). */
int fe_saver_finish(struct fe_saver *sv, uint64_t *bytes, uint64_t *records);

#endif
