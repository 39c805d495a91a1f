/*
 * The rule that keeps, re-keys or drops a journal record at load (and in
 * fakeenv export): every branch of fe_jnl_rec_seen() and of the type
 * rule, then fe_jnl_rec_locate() on real files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/journal.h"
#include "journal/recheck.h"
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
			       .btime_sec = 5,
			       .btime_nsec = 6,
			       .path = "/x",
			       .path_len = 2};
	struct fe_jnl_seen s = {.dev = 10,
				.ino = 20,
				.mode = S_IFREG,
				.has_btime = true,
				.btime_sec = 5,
				.btime_nsec = 6};
	uint64_t dev = 0, ino = 0;

	CHECK("same file kept",
	      fe_jnl_rec_seen(&r, &s, &dev, &ino) && dev == 10 && ino == 20);
	s.ino = 21;
	CHECK("same dev, other inode: dropped",
	      !fe_jnl_rec_seen(&r, &s, &dev, &ino));
	s.ino = 20;
	s.btime_nsec = 7;
	CHECK("same inode, other birth: dropped",
	      !fe_jnl_rec_seen(&r, &s, &dev, &ino));
	s.has_btime = false;
	CHECK("birth unknown to the filesystem: kept",
	      fe_jnl_rec_seen(&r, &s, &dev, &ino));
	s.has_btime = true;
	r.btime_sec = 0;
	r.btime_nsec = 0;
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
	struct stat st;
	int fd = mkstemp(path);

	CHECK("temp file", fd >= 0 && fstat(fd, &st) == 0);
	r.dev = st.st_dev;
	r.ino = st.st_ino;
	r.path = path;
	r.path_len = strlen(path);
	CHECK("locate: the file itself", fe_jnl_rec_locate(&r, &dev, &ino) &&
					     dev == st.st_dev &&
					     ino == st.st_ino);
	r.path = "tmp/relative";
	r.path_len = strlen(r.path);
	CHECK("locate: a relative path is no path",
	      !fe_jnl_rec_locate(&r, &dev, &ino));
	r.path = "";
	r.path_len = 0;
	CHECK("locate: no path", !fe_jnl_rec_locate(&r, &dev, &ino));
	unlink(path);
	r.path = path;
	r.path_len = strlen(path);
	CHECK("locate: gone", !fe_jnl_rec_locate(&r, &dev, &ino));
	close(fd);
}

int main(void)
{
	test_type();
	test_seen();
	test_locate();
	UNIT_EXIT();
}
