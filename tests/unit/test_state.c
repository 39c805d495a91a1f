/*
 * state.c's snapshot, save and load with the filesystem check (kept,
 * dropped when gone or replaced or of another type, re-keyed when st_dev
 * differs), its saver thread, xattrs through a save and a load, and a
 * big table through two cycles.  Real files in a temp directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/serve.h"
#include "daemon/state.h"
#include "journal/journal.h"
#include "statefix.h"
#include "unit.h"

static char dir[64];

static void mkfile(const char *name, struct stat *st)
{
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
	stat(p, st);
}

/* The five files test_save_load records, each as stat saw it. */
struct sl_files {
	struct stat kept, gone, retyped, moved, replaced;
};

/* Records in a for each file of f (two of them under a key they no longer
 * have), and one with no path. */
static void sl_fill(struct fe_srv *a, struct sl_files *f)
{
	char p[256];

	mkfile("kept", &f->kept);
	mkfile("gone", &f->gone);
	mkfile("retyped", &f->retyped);
	mkfile("moved", &f->moved);
	mkfile("replaced", &f->replaced);
	snprintf(p, sizeof(p), "%s/kept", dir);
	chown_path(a, p, 11, &f->kept);
	snprintf(p, sizeof(p), "%s/gone", dir);
	chown_path(a, p, 12, &f->gone);
	snprintf(p, sizeof(p), "%s/retyped", dir);
	chown_path(a, p, 13, &f->retyped);
	/* As if saved on another filesystem: another st_dev. */
	f->moved.st_dev += 1;
	snprintf(p, sizeof(p), "%s/moved", dir);
	chown_path(a, p, 14, &f->moved);
	/* The same filesystem, another inode number now. */
	f->replaced.st_ino += 1000003;
	snprintf(p, sizeof(p), "%s/replaced", dir);
	chown_path(a, p, 15, &f->replaced);
	/* A record with no path cannot be checked. */
	{
		struct fe_req r = req_of(FE_OP_CHOWN, &f->kept);
		struct fe_rep rep;

		r.ino = 77777777;
		r.flags = FE_F_UID;
		r.uid = 16;
		serve(a, r, "", 0, &rep);
	}
}

/* Saves a's snapshot to journal, then removes "gone" and turns "retyped"
 * into a directory; returns the bytes the save reported. */
static uint64_t sl_save(struct fe_srv *a, const char *journal)
{
	struct fe_snap *sn;
	char p[256];
	uint64_t bytes = 0;

	sn = fe_snap_take(&a->tab);
	CHECK("snapshot taken", sn && fe_snap_count(sn) == 6);
	CHECK("snapshot saved", sn && fe_snap_save(sn, journal, &bytes) == 0);
	CHECK("size reported", ({
		      struct stat js;
		      stat(journal, &js) == 0 && (uint64_t)js.st_size == bytes;
	      }));
	fe_snap_free(sn);

	snprintf(p, sizeof(p), "%s/gone", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/retyped", dir);
	unlink(p);
	mkdir(p, 0755);
	return bytes;
}

/* Loads journal (bytes long) against the files as sl_save left them. */
static void sl_load(const char *journal, const struct sl_files *f,
		    uint64_t bytes)
{
	struct fe_srv b;
	struct fe_load_stats ls;
	struct fe_rec rec;

	fe_srv_init(&b, false);
	CHECK("load", fe_state_load(&b, journal, &ls) == 0);
	CHECK("loaded 6", ls.loaded == 6);
	CHECK("re-keyed 1", ls.rekeyed == 1);
	CHECK("dropped 4 (gone, retyped, replaced, no path)", ls.dropped == 4);
	CHECK("bytes", ls.bytes == bytes);
	CHECK("kept record",
	      fe_tab_find(&b.tab, f->kept.st_dev, f->kept.st_ino, &rec) &&
		      rec.uid == 11);
	CHECK("re-keyed record under the real key",
	      fe_tab_find(&b.tab, f->moved.st_dev - 1, f->moved.st_ino, &rec) &&
		      rec.uid == 14);
	CHECK("not under the old key",
	      !fe_tab_find(&b.tab, f->moved.st_dev, f->moved.st_ino, &rec));
	CHECK("2 records", fe_tab_count(&b.tab) == 2);
	fe_srv_free(&b);
}

/* A missing journal, and journal damaged: both refused, nothing loaded. */
static void sl_refused(const char *journal)
{
	struct fe_load_stats ls;

	CHECK("missing file: -ENOENT", ({
		      struct fe_srv c;
		      char q[128];
		      int r;
		      fe_srv_init(&c, false);
		      snprintf(q, sizeof(q), "%s/none", dir);
		      r = fe_state_load(&c, q, &ls);
		      fe_srv_free(&c);
		      r == -ENOENT;
	      }));
	/* A damaged journal: refused (the message goes to stderr). */
	{
		int fd = open(journal, O_WRONLY);

		if (fd >= 0) {
			(void)!pwrite(fd, "X", 1, 70);
			close(fd);
		}
	}
	{
		struct fe_srv c;

		fe_srv_init(&c, false);
		CHECK("damaged: -EBADMSG", fe_state_load(&c, journal, &ls) == -EBADMSG);
		CHECK("damaged: nothing loaded", fe_tab_count(&c.tab) == 0);
		fe_srv_free(&c);
	}
}

static void test_save_load(void)
{
	struct fe_srv a;
	struct sl_files f;
	char journal[128];
	uint64_t bytes;

	fe_srv_init(&a, false);
	sl_fill(&a, &f);
	snprintf(journal, sizeof(journal), "%s/journal", dir);
	bytes = sl_save(&a, journal);
	sl_load(journal, &f, bytes);
	sl_refused(journal);
	fe_srv_free(&a);
}

static void test_saver(void)
{
	struct fe_srv a;
	struct fe_saver sv;
	struct stat st;
	char p[256], journal[128];
	uint64_t bytes = 0, records = 0, v;

	fe_srv_init(&a, false);
	mkfile("s1", &st);
	snprintf(p, sizeof(p), "%s/s1", dir);
	chown_path(&a, p, 5, &st);
	snprintf(journal, sizeof(journal), "%s/j2", dir);
	CHECK("saver init", fe_saver_init(&sv) == 0);
	CHECK("saver start", fe_saver_start(&sv, fe_snap_take(&a.tab), journal) == 0);
	CHECK("a second start while busy: -EBUSY",
	      fe_saver_start(&sv, fe_snap_take(&a.tab), journal) == -EBUSY);
	/* The eventfd becomes readable when the thread is done. */
	{
		int fl = fcntl(sv.efd, F_GETFL);

		fcntl(sv.efd, F_SETFL, fl & ~O_NONBLOCK);
		CHECK("eventfd signalled", read(sv.efd, &v, sizeof(v)) == sizeof(v));
		v = 1;
		(void)!write(sv.efd, &v, sizeof(v));
		fcntl(sv.efd, F_SETFL, fl);
	}
	CHECK("saver finish", fe_saver_finish(&sv, &bytes, &records) == 0);
	CHECK("one record written", records == 1 && bytes > 0);
	CHECK("finish when idle: -EINVAL", fe_saver_finish(&sv, &bytes, &records) == -EINVAL);
	snprintf(journal, sizeof(journal), "%s/no/such/dir/j", dir);
	CHECK("start to a bad path", fe_saver_start(&sv, fe_snap_take(&a.tab), journal) == 0);
	CHECK("its error comes back", fe_saver_finish(&sv, &bytes, &records) == -ENOENT);
	fe_saver_free(&sv);
	fe_srv_free(&a);
}

/* XSET of name=value (vlen bytes) on the file at path (stat st). */
static int xset(struct fe_srv *s, const char *path, const struct stat *st,
		const char *name, const void *value, uint32_t vlen)
{
	static char tail[FE_TAIL_MAX];
	struct fe_req r = req_of(FE_OP_XSET, st);
	struct fe_xhdr h = { .name_len = (uint32_t)strlen(name) + 1,
			     .value_len = vlen };
	struct fe_rep rep;
	size_t n = 0;

	memcpy(tail, &h, sizeof(h));
	n += sizeof(h);
	memcpy(tail + n, name, h.name_len);
	n += h.name_len;
	memcpy(tail + n, value, vlen);
	n += vlen;
	memcpy(tail + n, path, strlen(path) + 1);
	n += strlen(path) + 1;
	return serve(s, r, tail, n, &rep);
}

/* The value of name at st's key in s, or NULL. */
static const void *xget(struct fe_srv *s, const struct stat *st,
			const char *name, size_t *len)
{
	struct fe_req r = req_of(FE_OP_XGET, st);
	struct fe_xhdr h = { .name_len = (uint32_t)strlen(name) + 1,
			     .size = FE_XATTR_SIZE_MAX };
	char tail[sizeof(h) + 256];
	struct fe_rep rep;

	memcpy(tail, &h, sizeof(h));
	memcpy(tail + sizeof(h), name, h.name_len);
	if (serve(s, r, tail, sizeof(h) + h.name_len, &rep) < 0)
		return NULL;
	*len = s->rep_len;
	return s->rep_data ? s->rep_data : ""; /* "": an empty value */
}

/* The snapshot carries each record's xattrs, the journal keeps them, and
 * the load gives them back with FE_REC_XATTR in the shared slots. */
static void test_save_load_xattrs(void)
{
	static char big[FE_XATTR_SIZE_MAX];
	struct fe_srv a, b;
	struct fe_snap *sn;
	struct fe_load_stats ls;
	struct stat x, y;
	struct fe_rec rec;
	char journal[128], px[256], py[256];
	uint64_t bytes;
	const void *v;
	size_t len = 0;

	memset(big, 'b', sizeof(big));
	fe_srv_init(&a, false);
	mkfile("xa", &x);
	mkfile("xb", &y);
	snprintf(px, sizeof(px), "%s/xa", dir);
	snprintf(py, sizeof(py), "%s/xb", dir);
	CHECK("xattrs set", xset(&a, px, &x, "security.capability", "cap", 3) == 0 &&
				    xset(&a, px, &x, "trusted.t", big, sizeof(big)) == 0 &&
				    xset(&a, py, &y, "security.s", "", 0) == 0);
	snprintf(journal, sizeof(journal), "%s/journal-x", dir);
	sn = fe_snap_take(&a.tab);
	/* The table may change under a snapshot being written. */
	xset(&a, px, &x, "security.capability", "new", 3);
	CHECK("snapshot with xattrs saved",
	      sn && fe_snap_save(sn, journal, &bytes) == 0 &&
		      bytes > sizeof(big));
	fe_snap_free(sn);
	fe_srv_free(&a);
	fe_srv_init(&b, false);
	CHECK("journal with xattrs loaded",
	      fe_state_load(&b, journal, &ls) == 0 && ls.loaded == 2 &&
		      ls.dropped == 0);
	v = xget(&b, &x, "security.capability", &len);
	CHECK("loaded: the snapshot's value", v && len == 3 && !memcmp(v, "cap", 3));
	v = xget(&b, &x, "trusted.t", &len);
	CHECK("loaded: a 64 KiB value", v && len == sizeof(big) &&
						!memcmp(v, big, sizeof(big)));
	CHECK("loaded: an empty value", xget(&b, &y, "security.s", &len) &&
						len == 0);
	CHECK("loaded: FE_REC_XATTR set, nxattr 2",
	      fe_tab_find(&b.tab, x.st_dev, x.st_ino, &rec) &&
		      (rec.flags & FE_REC_XATTR) && b.tab.root->nxattr == 2);
	fe_srv_free(&b);
}

/* ---- a big table through load, checkpoint and load ---- */

#define BIG_N 200000

/* Record i of the big journal: tagged with a birth time (kept without a
 * stat), on two filesystems, inode numbers past 32 bits for some, a
 * device now and then, faked modes, orphans and xattrs here and there. */
static void big_rec(uint64_t i, struct fe_jnl_rec *r, char *path,
		    size_t psize, unsigned char *x, size_t xsize)
{
	size_t xlen = 0;
	char val[32];

	memset(r, 0, sizeof(*r));
	r->dev = i % 5 ? 0xfe01 : 0xfe02;
	r->ino = i % 3 ? 100 + i : ((uint64_t)7 << 40) + i;
	r->btag = (uint32_t)(i * 2654435761u) | 1;
	r->uid = (uint32_t)(i % 1009);
	r->gid = (uint32_t)(i % 997) + 70000;
	r->mode = S_IFREG | 0644;
	if (i % 1000 == 7) {
		r->mode = S_IFCHR | 0620;
		r->flags = FE_JNL_DEV_SET | FE_JNL_MODE_SET;
		r->rdev = 0x400 + i % 256;
	} else if (i % 10 == 3) {
		r->mode = S_IFREG | 04755;
		r->flags = FE_JNL_MODE_SET;
	}
	if (i % 4099 == 11)
		r->flags |= FE_JNL_ORPHAN;
	r->path_len = (size_t)snprintf(path, psize,
				       "/nonexistent/fe-big/d%llu/f%llu",
				       (unsigned long long)(i / 100),
				       (unsigned long long)i);
	r->path = path;
	if (i % 777 == 5) {
		snprintf(val, sizeof(val), "cap-%llu", (unsigned long long)i);
		(void)fe_jnl_xattr_put(x, xsize, &xlen, "security.capability",
				       val, strlen(val));
	}
	r->xattrs = x;
	r->xattrs_len = xlen;
}

static int big_emit(struct fe_jnl_w *w, int fd, void *ctx)
{
	unsigned char x[128];
	struct fe_jnl_rec r;
	char path[128];
	uint64_t str = 0;

	(void)ctx;
	for (uint64_t i = 0; i < BIG_N; i++) {
		big_rec(i, &r, path, sizeof(path), x, sizeof(x));
		str += fe_jnl_str_len(&r);
	}
	fe_jnl_w_begin(w, fd, BIG_N, str, 0);
	for (uint64_t i = 0; i < BIG_N; i++) {
		big_rec(i, &r, path, sizeof(path), x, sizeof(x));
		fe_jnl_w_rec(w, &r);
	}
	for (uint64_t i = 0; i < BIG_N; i++) {
		big_rec(i, &r, path, sizeof(path), x, sizeof(x));
		fe_jnl_w_str(w, &r);
	}
	return fe_jnl_w_end(w);
}

/* How many of the big journal's records s does not hold exactly. */
static uint64_t big_wrong(struct fe_srv *s)
{
	unsigned char x[128];
	struct fe_jnl_rec r;
	char path[128];
	uint64_t bad = 0;

	for (uint64_t i = 0; i < BIG_N; i++) {
		const unsigned char *blk;
		struct fe_rec rec;
		const char *p;
		size_t len;
		uint32_t want;

		big_rec(i, &r, path, sizeof(path), x, sizeof(x));
		want = (r.flags & FE_JNL_MODE_SET ? FE_REC_MODE_SET : 0) |
		       (r.flags & FE_JNL_DEV_SET ? FE_REC_DEV_SET : 0) |
		       (r.flags & FE_JNL_ORPHAN ? FE_REC_ORPHAN : 0) |
		       (r.xattrs_len ? FE_REC_XATTR : 0);
		if (!fe_tab_find(&s->tab, r.dev, r.ino, &rec)) {
			bad++;
			continue;
		}
		p = fe_tab_path(&s->tab, &rec);
		fe_tab_xattrs(&s->tab, &rec, &blk, &len);
		bad += rec.uid != r.uid || rec.gid != r.gid ||
		       rec.mode != r.mode || rec.flags != want ||
		       rec.btag != r.btag ||
		       ((rec.flags & FE_REC_DEV_SET) && rec.rdev != r.rdev) ||
		       !p || strcmp(p, r.path) || len != r.xattrs_len ||
		       (len && memcmp(blk, r.xattrs, len));
	}
	return bad;
}

/* 200,000 records survive a load, a checkpoint and a load; the
 * checkpoint's snapshot, whose paths stay in the arena, writes the table
 * as it was when taken even though every path changed, the arena grew
 * and was compacted while it waited. */
static void test_big_cycle(void)
{
	struct fe_srv a, b, c;
	struct fe_load_stats ls;
	struct fe_snap *sn;
	char j1[128], j2[128], j3[128], path[160];
	uint64_t bytes, moved = 0;
	size_t pos = 0, before, appended;
	struct fe_rec rec;
	uint64_t dev, ino;

	snprintf(j1, sizeof(j1), "%s/journal-big", dir);
	snprintf(j2, sizeof(j2), "%s/journal-big2", dir);
	snprintf(j3, sizeof(j3), "%s/journal-big3", dir);
	CHECK("big: journal written", fe_jnl_save(j1, big_emit, NULL) == 0);
	fe_srv_init(&a, false);
	CHECK("big: loaded whole",
	      fe_state_load(&a, j1, &ls) == 0 && ls.loaded == BIG_N &&
		      ls.dropped == 0 && ls.rekeyed == 0 &&
		      fe_tab_count(&a.tab) == BIG_N);
	CHECK("big: every record as written", big_wrong(&a) == 0);
	sn = fe_snap_take(&a.tab);
	CHECK("big: snapshot of every record",
	      sn && fe_snap_count(sn) == BIG_N);
	before = a.tab.arena.cap;
	appended = a.tab.arena.len;
	/* Every path anew, twice (the arena grows, then compacts), and
	 * records gone: none of it may reach the journal. */
	for (int round = 0; round < 2; round++) {
		pos = 0;
		while (fe_tab_next(&a.tab, &pos, &dev, &ino, &rec)) {
			snprintf(path, sizeof(path),
				 "/moved/round-%d/a/longer/path/%llu", round,
				 (unsigned long long)ino);
			rec.uid = 4242;
			moved += fe_tab_put(&a.tab, dev, ino, &rec, path) == 0;
			appended += strlen(path) + 1;
		}
	}
	for (uint64_t i = 0; i < 1000; i++)
		(void)fe_tab_del(&a.tab, 0xfe01, 101 + 3 * i);
	CHECK("big: the arena grew, compacted and moved meanwhile",
	      moved >= BIG_N && a.tab.arena.cap > before &&
		      a.tab.arena.len < appended &&
		      a.tab.arena.buf != a.tab.arena.pinned);
	CHECK("big: a second snapshot waits for the first",
	      fe_snap_take(&a.tab) == NULL);
	CHECK("big: snapshot saved",
	      sn && fe_snap_save(sn, j2, &bytes) == 0);
	fe_snap_free(sn);
	CHECK("big: the pin is gone", a.tab.arena.pins == 0 &&
					      a.tab.arena.pinned == NULL);
	fe_srv_free(&a);
	fe_srv_init(&b, false);
	CHECK("big: checkpoint loaded whole",
	      fe_state_load(&b, j2, &ls) == 0 && ls.loaded == BIG_N &&
		      ls.dropped == 0 && ls.bytes == bytes);
	CHECK("big: every record as at the snapshot", big_wrong(&b) == 0);
	sn = fe_snap_take(&b.tab);
	CHECK("big: saved again", sn && fe_snap_save(sn, j3, &bytes) == 0);
	fe_snap_free(sn);
	fe_srv_free(&b);
	fe_srv_init(&c, false);
	CHECK("big: loaded again",
	      fe_state_load(&c, j3, &ls) == 0 && ls.loaded == BIG_N &&
		      ls.dropped == 0);
	CHECK("big: every record after two cycles", big_wrong(&c) == 0);
	fe_srv_free(&c);
}

int main(void)
{
	char cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/fe-test-state.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_save_load();
	test_save_load_xattrs();
	test_saver();
	test_big_cycle();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	(void)!system(cmd);
	UNIT_EXIT();
}
