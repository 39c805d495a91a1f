/*
 * The rule that keeps, re-keys or drops a journal record at load (and in
 * fakeenv export): every branch of fe_jnl_rec_seen() and of the type
 * rule, then fe_jnl_rec_locate() on real files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "journal/journal.h"
#include "journal/recheck.h"
#include "jnlset.h"
#include "unit.h"

static void test_type(void)
{
	CHECK("same type", fe_jnl_type_ok(S_IFREG | 0644, 0, S_IFREG | 0600));
	CHECK("another type", !fe_jnl_type_ok(S_IFDIR | 0755, 0, S_IFREG));
	CHECK("faked device on a regular file",
	      fe_jnl_type_ok(S_IFCHR | 0600, FE_JNL_DEV_SET, S_IFREG | 0600));
	CHECK("faked device shown as itself",
	      fe_jnl_type_ok(S_IFBLK | 0600, FE_JNL_DEV_SET, S_IFBLK));
	CHECK("faked device on a directory",
	      !fe_jnl_type_ok(S_IFCHR | 0600, FE_JNL_DEV_SET, S_IFDIR));
	CHECK("a char record is no regular file without DEV_SET",
	      !fe_jnl_type_ok(S_IFCHR | 0600, 0, S_IFREG));
}

static void test_seen(void)
{
	struct fe_jnl_rec r = {.dev = 10,
			       .ino = 20,
			       .mode = S_IFREG | 0644,
			       .btag = 56,
			       .path = "/x",
			       .path_len = 2};
	struct fe_jnl_seen s = {.dev = 10,
				.ino = 20,
				.mode = S_IFREG,
				.btag = 56};
	uint64_t dev = 0, ino = 0;

	CHECK("same file kept",
	      fe_jnl_rec_seen(&r, &s, &dev, &ino) && dev == 10 && ino == 20);
	s.ino = 21;
	CHECK("same dev, other inode: dropped",
	      !fe_jnl_rec_seen(&r, &s, &dev, &ino));
	s.ino = 20;
	s.btag = 57;
	CHECK("same inode, other birth: dropped",
	      !fe_jnl_rec_seen(&r, &s, &dev, &ino));
	s.btag = 0;
	CHECK("birth unknown to the filesystem: kept",
	      fe_jnl_rec_seen(&r, &s, &dev, &ino));
	s.btag = 56;
	r.btag = 0;
	CHECK("birth unknown to the journal: kept",
	      fe_jnl_rec_seen(&r, &s, &dev, &ino));
	s.dev = 11;
	s.ino = 99;
	CHECK("other dev: re-keyed",
	      fe_jnl_rec_seen(&r, &s, &dev, &ino) && dev == 11 && ino == 99);
	s.mode = S_IFDIR;
	CHECK("other dev, other type: dropped",
	      !fe_jnl_rec_seen(&r, &s, &dev, &ino));
}

static void test_locate(void)
{
	char path[] = "/tmp/fe-recheck-XXXXXX";
	struct fe_jnl_rec r = {.mode = S_IFREG | 0644};
	uint64_t dev, ino;
	uint32_t btag;
	struct stat st;
	int fd = mkstemp(path);

	CHECK("temp file", fd >= 0 && fstat(fd, &st) == 0);
	r.dev = st.st_dev;
	r.ino = st.st_ino;
	r.path = path;
	r.path_len = strlen(path);
	CHECK("locate: the file itself", fe_jnl_rec_locate(&r, &dev, &ino, &btag) &&
					     dev == st.st_dev &&
					     ino == st.st_ino);
	r.path = "tmp/relative";
	r.path_len = strlen(r.path);
	CHECK("locate: a relative path is no path",
	      !fe_jnl_rec_locate(&r, &dev, &ino, &btag));
	r.path = "";
	r.path_len = 0;
	CHECK("locate: no path", !fe_jnl_rec_locate(&r, &dev, &ino, &btag));
	unlink(path);
	r.path = path;
	r.path_len = strlen(path);
	CHECK("locate: gone", !fe_jnl_rec_locate(&r, &dev, &ino, &btag));
	close(fd);
}

/* The journal of n records r, saved and read back into *buf. */
static int unit_journal(const struct fe_jnl_rec *r, size_t n,
			unsigned char **buf, size_t *len)
{
	char path[] = "/tmp/fe-devmap-j-XXXXXX";
	struct jnl_set set = { r, n, 0 };
	int fd = mkstemp(path), e;

	if (fd < 0)
		return -1;
	close(fd);
	e = fe_jnl_save(path, jnl_set_emit, &set) ||
	    fe_jnl_read_file(path, buf, len);
	unlink(path);
	return e ? -1 : 0;
}

/* A filesystem found again from a sample path: same inode and birth
 * time, another st_dev (as after a remount), re-keys all its records. */
static void test_devmap(void)
{
	char path[] = "/tmp/fe-devmap-XXXXXX";
	struct fe_jnl_devmaps m;
	struct fe_jnl_seen s;
	struct fe_jnl_view v;
	unsigned char *buf;
	size_t len;
	int fd = mkstemp(path);

	CHECK("temp file", fd >= 0 && fe_jnl_see(AT_FDCWD, path, &s));
	{
		struct fe_jnl_rec r[3] = {
			{.dev = 7777, .ino = s.ino, .mode = S_IFREG | 0644,
			 .btag = s.btag, .path = path, .path_len = strlen(path)},
			{.dev = 7777, .ino = 123456789, .mode = S_IFREG,
			 .btag = 5, .path = "/gone", .path_len = 5},
			{.dev = 8888, .ino = 1, .mode = S_IFREG, .btag = 6,
			 .path = "/gone2", .path_len = 6},
		};

		CHECK("journal", unit_journal(r, 3, &buf, &len) == 0 &&
					 fe_jnl_parse(buf, len, &v, NULL, 0) ==
						 FE_JNL_OK);
	}
	CHECK("devmap", fe_jnl_devmap_build(&v, &m) == 0 && m.n == 2);
	CHECK("a filesystem found by a sample moves whole",
	      fe_jnl_devmap_get(&m, 7777) == s.dev);
	CHECK("one found by none keeps its st_dev",
	      fe_jnl_devmap_get(&m, 8888) == 8888);
	if (s.btag) {
		struct fe_jnl_rec r;
		uint64_t dev, ino;

		fe_jnl_get(&v, 1, &r);
		fe_jnl_rec_key(&r, &m, &dev, &ino);
		CHECK("a record whose path is gone is kept, re-keyed",
		      dev == s.dev && ino == 123456789);
	}
	fe_jnl_devmap_free(&m);
	free(buf);
	unlink(path);
	close(fd);
}

/* fe_jnl_rec_place(), the load's whole rule, and fe_jnl_rec_check(),
 * fsck's look at what it keeps without one, on a real file. */
static void test_place(void)
{
	char path[] = "/tmp/fe-place-XXXXXX",
	     other[] = "/tmp/fe-place-o-XXXXXX";
	struct fe_jnl_devmaps m = {0};
	struct fe_jnl_place p;
	struct fe_jnl_seen s, so;
	struct fe_jnl_rec r;
	int fd = mkstemp(path), fo = mkstemp(other);
	bool keyed;

	CHECK("place: temp files", fd >= 0 && fo >= 0 &&
				       fe_jnl_see(AT_FDCWD, path, &s) &&
				       fe_jnl_see(AT_FDCWD, other, &so));
	r = (struct fe_jnl_rec){.dev = s.dev,
				.ino = s.ino,
				.mode = S_IFREG | 0644,
				.btag = 0,
				.path = path,
				.path_len = strlen(path)};
	fe_jnl_rec_place(&r, &m, AT_FDCWD, r.path, &p);
	CHECK("place: no birth time, the file at its path: kept",
	      p.fate == FE_JNL_KEPT && p.looked && p.dev == s.dev &&
		  p.ino == s.ino && p.btag == s.btag);
	r.ino = so.ino + 1000000;
	fe_jnl_rec_place(&r, &m, AT_FDCWD, r.path, &p);
	CHECK("place: no birth time, another inode: replaced",
	      p.fate == FE_JNL_REPLACED);
	r.dev = FE_JNL_DEV_BYPATH;
	fe_jnl_rec_place(&r, &m, AT_FDCWD, r.path, &p);
	CHECK("place: relocated, whichever inode: moved",
	      p.fate == FE_JNL_MOVED && p.dev == s.dev && p.ino == s.ino);
	r.mode = S_IFDIR | 0755;
	fe_jnl_rec_place(&r, &m, AT_FDCWD, r.path, &p);
	CHECK("place: relocated onto another type: retyped",
	      p.fate == FE_JNL_RETYPED);
	r.mode = S_IFCHR | 0644;
	r.flags = FE_JNL_DEV_SET;
	r.rdev = 1ull << 40;
	fe_jnl_rec_place(&r, &m, AT_FDCWD, r.path, &p);
	CHECK("place: a device number past 32 bits: bad",
	      p.fate == FE_JNL_BADDEV);
	r = (struct fe_jnl_rec){.dev = s.dev,
				.ino = s.ino,
				.mode = S_IFREG | 0644,
				.btag = 77,
				.path = "/nonexistent/fe-place",
				.path_len = strlen("/nonexistent/fe-place")};
	fe_jnl_rec_place(&r, &m, AT_FDCWD, r.path, &p);
	CHECK("place: a birth time: kept by its key, no look",
	      p.fate == FE_JNL_KEPT && !p.looked && p.dev == s.dev &&
		  p.btag == 77);
	fe_jnl_rec_check(&r, &m, &p, &keyed);
	CHECK("check: kept by its key, nothing at its path: gone",
	      p.fate == FE_JNL_GONE && keyed);
	r.path = other;
	r.path_len = strlen(other);
	fe_jnl_rec_check(&r, &m, &p, &keyed);
	CHECK("check: kept by its key, another file at its path: replaced",
	      p.fate == FE_JNL_REPLACED && keyed);
	if (s.btag) {
		r.path = path;
		r.path_len = strlen(path);
		r.btag = s.btag;
		fe_jnl_rec_check(&r, &m, &p, &keyed);
		CHECK("check: kept by its key, its file at its path: kept",
		      p.fate == FE_JNL_KEPT && !keyed);
	}
	r.path = "";
	r.path_len = 0;
	r.btag = 0;
	fe_jnl_rec_place(&r, &m, AT_FDCWD, r.path, &p);
	CHECK("place: no birth time and no path: gone", p.fate == FE_JNL_GONE);
	unlink(path);
	unlink(other);
	close(fd);
	close(fo);
}

int main(void)
{
	test_type();
	test_seen();
	test_locate();
	test_devmap();
	test_place();
	UNIT_EXIT();
}
