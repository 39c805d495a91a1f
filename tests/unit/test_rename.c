/*
 * RENAMEDIR's checks and its move of the records under a directory (and
 * their swap under two exchanged ones, FE_F_XCHG), the change counter they
 * bump, and the normal form of stored paths: the table alone, no file
 * behind it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "daemon/serve.h"
#include "statefix.h"
#include "unit.h"

/* The path recorded for (dev, ino), or "(none)". */
static const char *path_of(struct fe_srv *s, uint64_t dev, uint64_t ino)
{
	struct fe_rec rec;
	const char *p;

	if (!fe_tab_find(&s->tab, dev, ino, &rec))
		return "(no record)";
	p = fe_tab_path(&s->tab, &rec);
	return p ? p : "(none)";
}

static void test_renamedir_check(void)
{
	struct fe_srv s;
	struct fe_rep rep;
	struct fe_req r = req_of(FE_OP_RENAMEDIR, NULL);

	r.real_mode = S_IFDIR | 0755;
	fe_srv_init(&s, false);
	CHECK("RENAMEDIR: two paths", serve(&s, r, "/a\0/b", 6, &rep) == 0);
	CHECK("RENAMEDIR: one path refused",
	      serve(&s, r, "/a", 3, &rep) == -EPROTO);
	CHECK("RENAMEDIR: no tail refused", serve(&s, r, "", 0, &rep) == -EPROTO);
	CHECK("RENAMEDIR: empty second refused",
	      serve(&s, r, "/a\0", 4, &rep) == -EPROTO);
	CHECK("RENAMEDIR: unterminated second refused",
	      serve(&s, r, "/a\0/b", 5, &rep) == -EPROTO);
	CHECK("RENAMEDIR: three paths refused",
	      serve(&s, r, "/a\0/b\0/c", 8, &rep) == -EPROTO);
	CHECK("RENAMEDIR: a flag refused", ({
		      struct fe_req f = r;
		      f.flags = FE_F_UID;
		      serve(&s, f, "/a\0/b", 6, &rep) == -EPROTO;
	      }));
	fe_srv_free(&s);
}

static void test_renamedir_moves(void)
{
	struct fe_srv s;
	struct fe_rep rep;
	struct stat st = { .st_dev = 9, .st_mode = S_IFREG | 0644 };
	struct stat d = { .st_dev = 9, .st_ino = 100, .st_mode = S_IFDIR | 0755 };
	struct fe_req r;
	static const char *paths[] = {
		"/x/d/f", "/x/d/sub/g", "/x/dd/f", "/x/d", "/x/other/d/f",
	};
	uint64_t changes;

	fe_srv_init(&s, false);
	for (size_t i = 0; i < 5; i++) {
		st.st_ino = 10 + i;
		chown_path(&s, paths[i], 1, &st);
	}
	chown_path(&s, "/x/d", 1, &d);
	changes = s.changes;
	r = req_of(FE_OP_RENAMEDIR, &d);
	CHECK("RENAMEDIR served", serve(&s, r, "/x/d\0/y/e", 10, &rep) == 0);
	CHECK("child moved", !strcmp(path_of(&s, 9, 10), "/y/e/f"));
	CHECK("grandchild moved", !strcmp(path_of(&s, 9, 11), "/y/e/sub/g"));
	CHECK("a sibling with the same prefix stays",
	      !strcmp(path_of(&s, 9, 12), "/x/dd/f"));
	CHECK("the directory itself moved", !strcmp(path_of(&s, 9, 100), "/y/e"));
	CHECK("a path containing the name elsewhere stays",
	      !strcmp(path_of(&s, 9, 14), "/x/other/d/f"));
	CHECK("owners kept", ({
		      struct fe_rec rec;
		      fe_tab_find(&s.tab, 9, 10, &rec) && rec.uid == 1;
	      }));
	CHECK("changes counted", s.changes > changes);
	/* Unnormalized paths still match. */
	CHECK("RENAMEDIR with ./ and //",
	      serve(&s, r, "/y//./e\0/z/../w", 16, &rep) == 0);
	CHECK("moved through a normal form", !strcmp(path_of(&s, 9, 11), "/w/sub/g"));
	fe_srv_free(&s);
}

/* A literal tail and its length, its last NUL included. */
#define TAIL(lit) lit, sizeof(lit)

static struct fe_req xchg_of(const struct stat *st)
{
	struct fe_req r = req_of(FE_OP_RENAMEDIR, st);

	r.flags = FE_F_XCHG;
	return r;
}

static void test_exchange_check(void)
{
	struct stat d = { .st_dev = 9, .st_ino = 100, .st_mode = S_IFDIR | 0755 };
	struct fe_req r = xchg_of(&d);
	struct fe_srv s;
	struct fe_rep rep;

	fe_srv_init(&s, false);
	CHECK("XCHG: accepted on RENAMEDIR",
	      serve(&s, r, TAIL("/a\0/b"), &rep) == 0);
	CHECK("XCHG: refused on RENAME", ({
		      struct fe_req f = req_of(FE_OP_RENAME, &d);
		      f.flags = FE_F_XCHG;
		      serve(&s, f, TAIL("/a"), &rep) == -EPROTO;
	      }));
	CHECK("XCHG: refused with another flag", ({
		      struct fe_req f = r;
		      f.flags |= FE_F_UID;
		      serve(&s, f, TAIL("/a\0/b"), &rep) == -EPROTO;
	      }));
	CHECK("XCHG: one path refused", serve(&s, r, TAIL("/a"), &rep) == -EPROTO);
	fe_srv_free(&s);
}

/* The records of two exchanged directories, the files below them, and
 * neighbours whose paths look alike. */
static void test_exchange_moves(void)
{
	struct fe_srv s;
	struct fe_rep rep;
	struct stat st = { .st_dev = 9, .st_mode = S_IFREG | 0644 };
	struct stat a = { .st_dev = 9, .st_ino = 100, .st_mode = S_IFDIR | 0755 };
	struct stat b = { .st_dev = 9, .st_ino = 101, .st_mode = S_IFDIR | 0755 };
	static const char *paths[] = {
		"/x/a/f", "/x/a/sub/g", "/x/b/h", "/x/b/sub/a/i", "/x/ab/f",
		"/x/b2/k", "/y/x/a/f", "/x/a/b/j",
	};
	uint64_t changes;

	fe_srv_init(&s, false);
	for (size_t i = 0; i < 8; i++) {
		st.st_ino = 10 + i;
		chown_path(&s, paths[i], (uint32_t)(1 + i), &st);
	}
	chown_path(&s, "/x/a", 20, &a);
	chown_path(&s, "/x/b", 21, &b);
	changes = s.changes;
	CHECK("exchange served",
	      serve(&s, xchg_of(&a), TAIL("/x/a\0/x/b"), &rep) == 0);
	CHECK("exchange: the key's record found", rep.flags & FE_R_FOUND);
	CHECK("exchange: a child of the first moves to the second",
	      !strcmp(path_of(&s, 9, 10), "/x/b/f"));
	CHECK("exchange: a grandchild of the first",
	      !strcmp(path_of(&s, 9, 11), "/x/b/sub/g"));
	CHECK("exchange: a child of the second moves to the first",
	      !strcmp(path_of(&s, 9, 12), "/x/a/h"));
	CHECK("exchange: moved once, not back (a name like the other)",
	      !strcmp(path_of(&s, 9, 13), "/x/a/sub/a/i"));
	CHECK("exchange: a sibling with the same prefix stays",
	      !strcmp(path_of(&s, 9, 14), "/x/ab/f"));
	CHECK("exchange: a sibling of the second with its prefix stays",
	      !strcmp(path_of(&s, 9, 15), "/x/b2/k"));
	CHECK("exchange: a path containing the names elsewhere stays",
	      !strcmp(path_of(&s, 9, 16), "/y/x/a/f"));
	CHECK("exchange: a name of the other below the first moves once",
	      !strcmp(path_of(&s, 9, 17), "/x/b/b/j"));
	CHECK("exchange: the key's directory takes the second path",
	      !strcmp(path_of(&s, 9, 100), "/x/b"));
	CHECK("exchange: the other's own record is left to its RENAME",
	      !strcmp(path_of(&s, 9, 101), "/x/b"));
	CHECK("exchange: owners kept", ({
		      struct fe_rec rec;
		      fe_tab_find(&s.tab, 9, 12, &rec) && rec.uid == 3 &&
			      fe_tab_find(&s.tab, 9, 100, &rec) && rec.uid == 20;
	      }));
	CHECK("exchange: changes counted", s.changes > changes);
	/* And back, from the other side, through unnormalized paths. */
	CHECK("exchange back with ./ and //",
	      serve(&s, xchg_of(&b), TAIL("/x//./a/\0/z/../x/b"), &rep) == 0);
	CHECK("exchange back: every path as it was", ({
		      bool same = true;
		      for (size_t i = 0; i < 8; i++)
			      same = same && !strcmp(path_of(&s, 9, 10 + i),
						     paths[i]);
		      same && !strcmp(path_of(&s, 9, 101), "/x/b");
	      }));
	fe_srv_free(&s);
}

/* A directory exchanged with a file: its subtree moves, and the record
 * at the key (either of the two) takes the second path. */
static void test_exchange_file(void)
{
	struct fe_srv s;
	struct fe_rep rep;
	struct stat f = { .st_dev = 9, .st_ino = 10, .st_mode = S_IFREG | 0644 };
	struct stat g = { .st_dev = 9, .st_ino = 11, .st_mode = S_IFREG | 0644 };
	struct stat d = { .st_dev = 9, .st_ino = 100, .st_mode = S_IFDIR | 0755 };

	fe_srv_init(&s, false);
	chown_path(&s, "/x/d/f", 1, &f);
	chown_path(&s, "/x/g", 2, &g);
	chown_path(&s, "/x/d", 3, &d);
	CHECK("exchange of a directory with a file",
	      serve(&s, xchg_of(&d), TAIL("/x/d\0/x/g"), &rep) == 0);
	CHECK("dir-file exchange: the directory's child moved",
	      !strcmp(path_of(&s, 9, 10), "/x/g/f"));
	CHECK("dir-file exchange: the directory has the file's path",
	      !strcmp(path_of(&s, 9, 100), "/x/g"));
	CHECK("exchange keyed on the file",
	      serve(&s, xchg_of(&g), TAIL("/x/g\0/x/d"), &rep) == 0 &&
		      (rep.flags & FE_R_FOUND));
	CHECK("file-dir exchange: the child moved back",
	      !strcmp(path_of(&s, 9, 10), "/x/d/f"));
	CHECK("file-dir exchange: the file has the directory's path",
	      !strcmp(path_of(&s, 9, 11), "/x/d"));
	fe_srv_free(&s);
}

/* Claims the kernel never makes change nothing. */
static void test_exchange_nested(void)
{
	struct fe_srv s;
	struct fe_rep rep;
	struct stat st = { .st_dev = 9, .st_mode = S_IFREG | 0644 };
	struct stat a = { .st_dev = 9, .st_ino = 100, .st_mode = S_IFDIR | 0755 };
	static const char *paths[] = { "/x/a/f", "/x/a/b/g", "/x/a", "/x/ab/h" };
	static const struct {
		const char *name, *tail;
		size_t len;
		int err;
	} cases[] = {
		{ "exchange with a descendant: -EINVAL", TAIL("/x/a\0/x/a/b"),
		  -EINVAL },
		{ "exchange with an ancestor: -EINVAL", TAIL("/x/a/b\0/x/a"),
		  -EINVAL },
		{ "exchange with a descendant, unnormalized: -EINVAL",
		  TAIL("/x/a/../a\0/x/./a/b/"), -EINVAL },
		{ "exchange with the root: -EINVAL", TAIL("/\0/x/a"), -EINVAL },
		{ "exchange with the root, reversed: -EINVAL", TAIL("/x/a\0//"),
		  -EINVAL },
		{ "exchange of a relative path: -EINVAL", TAIL("x/a\0/x/b"),
		  -EINVAL },
		{ "exchange of a path with itself: nothing moves",
		  TAIL("/x/a\0/x/./a/"), 0 },
	};
	uint64_t changes;
	char name[128];

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		bool same = true;

		fe_srv_init(&s, false);
		for (size_t i = 0; i < 4; i++) {
			st.st_ino = 10 + i;
			chown_path(&s, paths[i], 1, i == 2 ? &a : &st);
		}
		changes = s.changes;
		CHECK(cases[c].name,
		      serve(&s, xchg_of(&a), cases[c].tail, cases[c].len,
			    &rep) == cases[c].err);
		if (cases[c].err) {
			for (size_t i = 0; i < 4; i++)
				same = same && !strcmp(path_of(&s, 9, i == 2 ?
								  100 : 10 + i),
						       paths[i]);
			snprintf(name, sizeof(name), "%s: nothing changed",
				 cases[c].name);
			CHECK(name, same && s.changes == changes);
		}
		fe_srv_free(&s);
	}
	/* The same path twice: the kernel allows it, nothing is swapped. */
	fe_srv_init(&s, false);
	for (size_t i = 0; i < 4; i++) {
		st.st_ino = 10 + i;
		chown_path(&s, paths[i], 1, i == 2 ? &a : &st);
	}
	serve(&s, xchg_of(&a), TAIL("/x/a\0/x/a"), &rep);
	CHECK("exchange of a path with itself: the paths stay",
	      !strcmp(path_of(&s, 9, 10), "/x/a/f") &&
		      !strcmp(path_of(&s, 9, 11), "/x/a/b/g"));
	/* "/x/ab" shares a prefix with "/x/a" but is not in it. */
	CHECK("exchange with a sibling sharing a prefix: served",
	      serve(&s, xchg_of(&a), TAIL("/x/a\0/x/ab"), &rep) == 0);
	CHECK("... the two swapped",
	      !strcmp(path_of(&s, 9, 10), "/x/ab/f") &&
		      !strcmp(path_of(&s, 9, 11), "/x/ab/b/g") &&
		      !strcmp(path_of(&s, 9, 13), "/x/a/h") &&
		      !strcmp(path_of(&s, 9, 100), "/x/ab"));
	fe_srv_free(&s);
}

static void test_norm(void)
{
	struct fe_srv s;
	struct stat st = { .st_dev = 9, .st_ino = 1, .st_mode = S_IFREG | 0644 };
	static const char *const cases[][2] = {
		{ "/a/./b//c/../d/", "/a/b/d" },
		{ "//a", "/a" },
		{ "/..", "/" },
		{ "/a/b/../../..", "/" },
		{ "/a b/\nc", "/a b/\nc" },
		{ "/.hidden/..x", "/.hidden/..x" },
	};

	fe_srv_init(&s, false);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[64];

		chown_path(&s, cases[i][0], 1, &st);
		snprintf(name, sizeof(name), "normal form %zu", i);
		CHECK(name, !strcmp(path_of(&s, 9, 1), cases[i][1]));
	}
	fe_srv_free(&s);
}
int main(void)
{
	test_renamedir_check();
	test_renamedir_moves();
	test_exchange_check();
	test_exchange_moves();
	test_exchange_file();
	test_exchange_nested();
	test_norm();
	UNIT_EXIT();
}
