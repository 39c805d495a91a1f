/*
 * The journal's load, the one way a journal becomes the records a
 * session holds; see load.h.  Linked into the daemon and into the
 * launcher (export, ls), which must show what a session shows.
 */
#include "load.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "journal/journal.h"
#include "journal/recheck.h"
#include "table.h"

static uint32_t rec_flags(uint32_t jnl)
{
	return ((jnl & FE_JNL_MODE_SET) ? FE_REC_MODE_SET : 0) |
	       ((jnl & FE_JNL_DEV_SET) ? FE_REC_DEV_SET : 0) |
	       ((jnl & FE_JNL_ORPHAN) ? FE_REC_ORPHAN : 0);
}

/* Where each record's file is now.  A record with a birth time is keyed
 * without I/O (recheck.h); one without is checked by its path, the slow
 * part of such a load (a statx per record), spread over the CPUs. */
#define LOCATE_GONE UINT64_MAX /* dev of a record that is not there */
#define LOCATE_MIN_PER_THREAD 4096
#define LOCATE_MAX_THREADS 8

struct located {
	uint64_t dev;
	uint64_t ino;
	uint32_t btag;
	bool moved; /* relocated (recheck.h: FE_JNL_MOVED) */
};

struct locate_job {
	const struct fe_jnl_devmaps *dm;
	const struct fe_jnl_view *v;
	const uint64_t *order; /* indexes of the records that look at their
				  paths, one directory's together */
	struct located *out;
	uint64_t from, to;     /* a range of order */
};

/* out for record jr, whose path is statted (if at all) at at+name. */
static void place(const struct fe_jnl_rec *jr, const struct fe_jnl_devmaps *dm,
		  int at, const char *name, struct located *out)
{
	struct fe_jnl_place p;

	fe_jnl_rec_place(jr, dm, at, name, &p);
	*out = (struct located){
	    .dev = fe_jnl_fate_kept(p.fate) ? p.dev : LOCATE_GONE,
	    .ino = p.ino,
	    .btag = p.btag,
	    .moved = p.fate == FE_JNL_MOVED,
	};
}

/* Where a path's last component starts (after its last '/'). */
static size_t base_of(const char *path, size_t len)
{
	while (len > 0 && path[len - 1] != '/')
		len--;
	return len;
}

/*
 * Records come in order of their directory, so that each directory is
 * opened once and its names statted from there: a statx by absolute path
 * walks every component, and the walk is most of a load (the kernel's
 * dentry lookups in perf).  A directory that cannot be opened falls back
 * to the absolute path.  The rule itself is fe_jnl_rec_place()
 * (src/journal/recheck.c), shared with fsck --against-fs.
 */
static void *locate_range(void *arg)
{
	const struct locate_job *j = arg;
	const char *dir = NULL; /* the open directory's path, in the buffer */
	size_t dir_len = 0;
	int dfd = -1;

	for (uint64_t k = j->from; k < j->to; k++) {
		uint64_t i = j->order[k];
		struct fe_jnl_rec jr;
		int at = AT_FDCWD;
		const char *name;
		size_t b;

		fe_jnl_get(j->v, i, &jr);
		name = jr.path;
		b = base_of(jr.path, jr.path_len);
		/* A file in / (or a path ending in '/'): as is. */
		if (b >= 2 && b < jr.path_len && jr.path[0] == '/') {
			if (!dir || dir_len != b - 1 ||
			    memcmp(dir, jr.path, b - 1)) {
				char buf[FE_PATH_MAX];

				if (dfd >= 0)
					close(dfd);
				dfd = -1;
				dir = jr.path;
				dir_len = b - 1;
				if (dir_len < sizeof(buf)) {
					memcpy(buf, jr.path, dir_len);
					buf[dir_len] = '\0';
					dfd = open(buf, O_PATH | O_DIRECTORY |
								O_CLOEXEC);
				}
			}
			if (dfd >= 0) {
				at = dfd;
				name = jr.path + b;
			}
		}
		place(&jr, j->dm, at, name, &j->out[i]);
	}
	if (dfd >= 0)
		close(dfd);
	return NULL;
}

/* FNV-1a of a record's directory: the sort key that brings the records of
 * one directory together (a collision only costs a reopen). */
static uint64_t dir_key(const struct fe_jnl_view *v, uint64_t i)
{
	struct fe_jnl_rec jr;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t b;

	fe_jnl_get(v, i, &jr);
	b = base_of(jr.path, jr.path_len);
	for (size_t k = 0; k < b; k++)
		h = (h ^ (unsigned char)jr.path[k]) * 0x100000001b3ull;
	return h;
}

/*
 * The n record indexes of idx put in order of dir_key: an LSD radix sort,
 * 16 bits a pass, stable, O(n).  false when memory runs out.  Called once,
 * at load, before any thread runs.
 */
static bool dir_sort(const struct fe_jnl_view *v, uint64_t *idx, uint64_t n)
{
	uint64_t *key = malloc((n ? n : 1) * sizeof(*key));
	uint64_t *tk = malloc((n ? n : 1) * sizeof(*tk));
	uint64_t *ti = malloc((n ? n : 1) * sizeof(*ti));
	static size_t count[1 << 16]; /* 512 KiB: not on the stack */

	if (!key || !tk || !ti) {
		free(key);
		free(tk);
		free(ti);
		return false;
	}
	for (uint64_t i = 0; i < n; i++)
		key[i] = dir_key(v, idx[i]);
	for (int shift = 0; shift < 64; shift += 16) {
		size_t sum = 0;

		memset(count, 0, sizeof(count));
		for (uint64_t i = 0; i < n; i++)
			count[(key[i] >> shift) & 0xffff]++;
		for (size_t d = 0; d < (1 << 16); d++) {
			size_t c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (uint64_t i = 0; i < n; i++) {
			size_t at = count[(key[i] >> shift) & 0xffff]++;

			tk[at] = key[i];
			ti[at] = idx[i];
		}
		memcpy(key, tk, n * sizeof(*key));
		memcpy(idx, ti, n * sizeof(*idx));
	}
	free(key);
	free(tk);
	free(ti);
	return true;
}

/* Fill out[i] for each of the n records i of order, with threads when
 * there are many (those that cannot be started leave their share to this
 * one). */
static void locate_all(const struct fe_jnl_view *v,
		       const struct fe_jnl_devmaps *dm, struct located *out,
		       const uint64_t *order, uint64_t n)
{
	struct locate_job jobs[LOCATE_MAX_THREADS] = { { 0 } };
	pthread_t th[LOCATE_MAX_THREADS];
	bool started[LOCATE_MAX_THREADS] = { false };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t per;
	sigset_t all, old;
	int k;

	k = cpus > 0 ? (int)cpus : 1;
	if (k > LOCATE_MAX_THREADS)
		k = LOCATE_MAX_THREADS;
	if ((uint64_t)k > n / LOCATE_MIN_PER_THREAD)
		k = (int)(n / LOCATE_MIN_PER_THREAD) + 1; /* at least 1 */
	per = n / (uint64_t)k + 1;
	for (int i = 0; i < k; i++) {
		jobs[i].dm = dm;
		jobs[i].v = v;
		jobs[i].order = order;
		jobs[i].out = out;
		jobs[i].from = (uint64_t)i * per < n ? (uint64_t)i * per : n;
		jobs[i].to = jobs[i].from + per < n ? jobs[i].from + per : n;
	}
	/* The threads take no signal: the loop reads them from its
	 * signalfd. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 1; i < k; i++)
		started[i] = pthread_create(&th[i], NULL, locate_range,
					    &jobs[i]) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	locate_range(&jobs[0]);
	for (int i = 1; i < k; i++) {
		if (started[i])
			pthread_join(th[i], NULL);
		else
			locate_range(&jobs[i]);
	}
}

/* ", N relocated (found at their new paths), " when n, else "". */
static const char *moved_note(uint64_t n, char *buf, size_t size)
{
	if (!n)
		return "";
	snprintf(buf, size, "%llu relocated (found at their new paths), ",
		 (unsigned long long)n);
	return buf;
}

void fe_load_say(int r, const char *msg, const char *what)
{
	if (r == -EBADMSG)
		fe_log("%s; %s, the file is left as it is (see fakeenv fsck)",
		       msg, what);
	else
		fe_log("%s", msg);
}

/* Read and check the journal at path into *buf and *v, with the refusal
 * logged (what: what it stops).  0 or -errno. */
static int read_journal(const char *path, unsigned flags, const char *what,
			unsigned char **buf, struct fe_jnl_view *v,
			struct fe_load_stats *st)
{
	char msg[768];
	size_t len;
	int r;

	r = fe_jnl_load(path, flags, buf, &len, v, msg, sizeof(msg));
	if (r < 0 && r != -ENOENT)
		fe_load_say(r, msg, what);
	if (r < 0)
		return r;
	st->loaded = v->nrec;
	st->bytes = len;
	return 0;
}

/* Where each record of v is now (a malloc'd array of v->nrec), or NULL
 * when memory runs out.  Those with a birth time are placed at once; the
 * others, which look at their paths, by directory. */
static struct located *locate(const struct fe_jnl_view *v)
{
	size_t size = v->nrec ? v->nrec : 1;
	struct located *where = malloc(size * sizeof(*where));
	uint64_t *order = malloc(size * sizeof(*order));
	struct fe_jnl_devmaps dm;
	uint64_t n = 0;

	if (!where || !order || fe_jnl_devmap_build(v, &dm) < 0) {
		free(order);
		free(where);
		return NULL;
	}
	for (uint64_t i = 0; i < v->nrec; i++) {
		struct fe_jnl_rec jr;

		fe_jnl_get(v, i, &jr);
		if (fe_jnl_rec_looks(&jr))
			order[n++] = i;
		else
			place(&jr, &dm, AT_FDCWD, jr.path, &where[i]);
	}
	if (n && !dir_sort(v, order, n)) {
		fe_jnl_devmap_free(&dm);
		free(order);
		free(where);
		return NULL;
	}
	locate_all(v, &dm, where, order, n);
	free(order);
	fe_jnl_devmap_free(&dm);
	return where;
}

/*
 * Put the records where says into t.  The key rule: a record at its
 * saved key takes it (over a record re-keyed onto it before); a record
 * re-keyed onto a key already held is dropped.  0 or -errno (logged).
 */
static int put_all(struct fe_tab *t, const char *path,
		   const struct fe_jnl_view *v, const struct located *where,
		   bool over, struct fe_load_stats *st)
{
	uint64_t kept = 0;

	/* Room for every record kept before the first goes in: see
	 * fe_tab_reserve().  Without it the inserts grow the table as they
	 * go, which fails, if memory is short, where it would have. */
	for (uint64_t i = 0; i < v->nrec; i++)
		kept += where[i].dev != LOCATE_GONE;
	(void)fe_tab_reserve(t, kept);
	for (uint64_t i = 0; i < v->nrec; i++) {
		uint64_t dev = where[i].dev, ino = where[i].ino;
		struct fe_rec rec = { 0 }, old;
		struct fe_jnl_rec jr;
		bool moved;
		int r;

		fe_jnl_get(v, i, &jr);
		moved = dev != jr.dev || ino != jr.ino;
		if (dev == LOCATE_GONE ||
		    (moved && !over && fe_tab_find(t, dev, ino, &old))) {
			st->dropped++;
			continue;
		}
		rec.uid = jr.uid;
		rec.gid = jr.gid;
		rec.mode = jr.mode;
		rec.flags = rec_flags(jr.flags);
		rec.btag = where[i].btag;
		rec.rdev = jr.rdev;
		r = fe_tab_put_xattrs(t, dev, ino, &rec, jr.path, jr.xattrs,
				      jr.xattrs_len);
		if (r < 0) {
			fe_log("journal %s: %s after %llu records", path,
			       fe_strerror(-r), (unsigned long long)i);
			return r;
		}
		st->rekeyed += moved;
		st->moved += where[i].moved;
		st->orphans += !!(rec.flags & FE_REC_ORPHAN);
	}
	return 0;
}

int fe_load_journal(struct fe_tab *t, const char *path, unsigned flags,
		      const char *what, struct fe_load_stats *st)
{
	struct located *where;
	struct fe_jnl_view v;
	unsigned char *buf;
	char note[64];
	int r;

	memset(st, 0, sizeof(*st));
	r = read_journal(path, flags, what, &buf, &v, st);
	if (r < 0)
		return r;
	where = locate(&v);
	if (!where) {
		fe_log("journal %s: %s", path, fe_strerror(ENOMEM));
		free(buf);
		return -ENOMEM;
	}
	r = put_all(t, path, &v, where, false, st);
	free(where);
	free(buf);
	if (r < 0)
		return r;
	if (st->dropped || st->rekeyed)
		fe_log("journal %s: %llu records: %llu kept, %llu re-keyed "
		       "(st_dev changed), %s%llu dropped (file gone or "
		       "replaced)",
		       path, (unsigned long long)st->loaded,
		       (unsigned long long)(st->loaded - st->dropped),
		       (unsigned long long)(st->rekeyed - st->moved),
		       moved_note(st->moved, note, sizeof(note)),
		       (unsigned long long)st->dropped);
	return 0;
}

int fe_load_view(struct fe_tab *t, const char *path,
		 const struct fe_jnl_view *v, struct fe_load_stats *st)
{
	struct located *where = locate(v);
	int r;

	if (!where) {
		fe_log("%s: %s", path, fe_strerror(ENOMEM));
		return -ENOMEM;
	}
	st->loaded += v->nrec;
	r = put_all(t, path, v, where, true, st);
	free(where);
	return r;
}
