/*
 * The daemon's side of the journal: loading one into the table at start
 * (load.h's load, with the server's counts), and writing the table
 * out without stalling clients: the loop takes a snapshot (a copy of
 * the records' fixed fields, the only pause clients see; the paths are
 * read where the table keeps them, pinned meanwhile) and a thread
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

#include "load.h"
#include "serve.h"

/* fe_load_journal() into s's table ("refusing to start"), and s->orphans
 * counts the orphans it kept. */
int fe_state_load(struct fe_srv *s, const char *path,
		  struct fe_load_stats *st);

/* The same, opened with flags (journal/journal.h, fe_jnl_load()):
 * FE_JNL_FOLLOW for a path the user gave (-i); fe_state_load() is 0, for
 * DIR/journal, which is never a symbolic link. */
int fe_state_load_flags(struct fe_srv *s, const char *path, unsigned flags,
			struct fe_load_stats *st);

/* A copy of the records' fields; their paths and xattrs stay in the
 * table's arena, which the snapshot pins (fe_arena_pin()) until it is
 * freed, so that a thread can write them while the table changes. */
struct fe_snap;

/* Copy the table's records (36 bytes each).  NULL when memory runs out,
 * or when another snapshot of t, taken before t's paths moved, is still
 * held.  Free it (in t's thread) before t. */
struct fe_snap *fe_snap_take(struct fe_tab *t);
void fe_snap_free(struct fe_snap *sn);

/* A snapshot of the records at the n keys (sorted in place; a key
 * given twice or with no record is taken once or not at all), for a
 * delta's segment.  NULL as fe_snap_take(). */
struct fe_snap *fe_snap_take_keys(struct fe_tab *t, uint64_t (*keys)[2],
				  size_t n);

/* qsort's order of (dev, ino) pairs, uint64_t[2]. */
int fe_key_cmp(const void *a, const void *b);

/* Write sn as one journal, the delta's segment, at fd's offset (fd is
 * O_APPEND); *bytes gets its size.  0 or -errno (some bytes may have
 * been written: the caller cuts them). */
int fe_snap_append(const struct fe_snap *sn, int fd, uint64_t *bytes);
size_t fe_snap_count(const struct fe_snap *sn);

/*
 * The --state directory a daemon locked: its fd, opened once at the
 * start, and its identity then.  Every write into it goes through fd and
 * is made only while path still leads to that directory: one removed
 * (`rm -rf DIR`), renamed, or made again at the same path is no longer
 * ours, and the session that owns the new one must not get our journal.
 */
struct fe_state_dir {
	const char *path;    /* DIR, as given */
	int fd;              /* DIR, O_RDONLY | O_DIRECTORY */
	const char *journal; /* the journal's name in it */
	uint64_t dev;        /* fd's st_dev and st_ino at the start */
	uint64_t ino;
};

/* Fill d for fd (DIR at path).  Returns 0 or -errno. */
int fe_state_dir_init(struct fe_state_dir *d, const char *path, int fd,
		      const char *journal);

/* 0 while path leads to d's directory and it still has a name; -ESTALE
 * when it does not (gone, or another directory there now).  Safe in any
 * thread. */
int fe_state_dir_check(const struct fe_state_dir *d);

/* Write sn to path atomically; *bytes gets the journal's size.
 * Returns 0 or -errno. */
int fe_snap_save(const struct fe_snap *sn, const char *path,
		 uint64_t *bytes);

/* The same into dir's journal, through its fd, dir checked before each
 * step.  Returns 0 or -errno (-ESTALE: dir is no longer ours, and
 * nothing was renamed into it). */
int fe_snap_save_dir(const struct fe_snap *sn, const struct fe_state_dir *dir,
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
	const struct fe_state_dir *dir; /* set after fe_saver_init() for a
				 --state directory, else NULL */
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
