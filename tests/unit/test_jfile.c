/*
 * The journal's files: the atomic saves (fe_jnl_save, fe_jnl_save_at),
 * salvage, and the one opener (fe_jnl_load): what reaches the disk, what
 * a damaged journal keeps, what is refused before it is read.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "journal/crc32c.h"
#include "journal/journal.h"
#include "jnlset.h"
#include "jnlfix.h"
#include "unit.h"

/* emit() variants that fail in each way a caller can. */
static int emit_fail_midway(struct fe_jnl_w *w, int fd, void *ctx)
{
	(void)ctx;
	fe_jnl_w_begin(w, fd, 1, fe_jnl_str_len(&small[0]), 0);
	fe_jnl_w_rec(w, &small[0]);
	return -EIO; /* gives up without fe_jnl_w_end() */
}

static int emit_nothing(struct fe_jnl_w *w, int fd, void *ctx)
{
	(void)w;
	(void)fd;
	(void)ctx;
	return 0;
}

static int emit_no_end(struct fe_jnl_w *w, int fd, void *ctx)
{
	(void)ctx;
	fe_jnl_w_begin(w, fd, 0, 0, 0);
	return 0;
}

static int emit_misuse(struct fe_jnl_w *w, int fd, void *ctx)
{
	(void)ctx;
	fe_jnl_w_begin(w, fd, 2, 0, 0);
	fe_jnl_w_end(w);
	return 0; /* and hides the writer's -EINVAL */
}

static void test_save(void)
{
	struct jnl_set s = {small, 0, 5};
	unsigned char *old, *now;
	size_t old_len, now_len;
	const char *path;
	int entries, r;

	/* The small journal's records, as test_journal's tests make them. */
	free(small_journal(&old_len));
	s.n = n_small;
	old = build(&s, "keep", &old_len);
	CHECK("save: a first journal", old != NULL);
	if (!old)
		return;
	entries = dir_entries();
	path = file_in_dir("keep");
	static const struct {
		const char *name;
		int (*emit)(struct fe_jnl_w *, int, void *);
		int want;
	} fails[] = {
	    {"emit fails midway", emit_fail_midway, -EIO},
	    {"emit never begins", emit_nothing, -EINVAL},
	    {"emit never ends", emit_no_end, -EINVAL},
	    {"emit hides a writer error", emit_misuse, -EINVAL},
	};
	for (size_t i = 0; i < sizeof(fails) / sizeof(fails[0]); i++) {
		char name[128];

		r = fe_jnl_save(path, fails[i].emit, NULL);
		now = NULL;
		snprintf(name, sizeof(name),
			 "save: %s: error, old journal intact, no temp file",
			 fails[i].name);
		CHECK(name, r == fails[i].want &&
				fe_jnl_read_file(path, &now, &now_len) == 0 &&
				now_len == old_len &&
				!memcmp(now, old, old_len) &&
				dir_entries() == entries);
		free(now);
	}
	CHECK("save: no such directory",
	      fe_jnl_save("/nonexistent-fakeenv-dir/j", jnl_set_emit, &s) ==
		  -ENOENT);
	s.n = 1;
	now = NULL;
	CHECK("save replaces the journal",
	      fe_jnl_save(path, jnl_set_emit, &s) == 0 &&
		  fe_jnl_read_file(path, &now, &now_len) == 0 &&
		  now_len != old_len && parse(now, now_len) == FE_JNL_OK &&
		  dir_entries() == entries);
	free(now);
	free(old);
	CHECK("read_file: a missing file is -ENOENT",
	      fe_jnl_read_file(file_in_dir("missing"), &now, &now_len) ==
		  -ENOENT);
}

/* ---- Salvage ---- */

/* Salvage len bytes at b into dir/out; returns its result and parses the
 * output into *v (kept in *out, to be freed). */
static int salvage(const unsigned char *b, size_t len, uint64_t *kept,
		   uint64_t *lost, unsigned char **out, struct fe_jnl_view *v)
{
	const char *path = file_in_dir("salvaged");
	char why[256];
	size_t out_len;
	int fd, r;

	*out = NULL;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	r = fe_jnl_salvage(b, len, fd, kept, lost, why, sizeof(why));
	close(fd);
	if (r == 0 && (fe_jnl_read_file(path, out, &out_len) ||
		       fe_jnl_parse(*out, out_len, v, why, sizeof(why)))) {
		printf("# salvaged output: %s\n", why);
		r = -EIO;
	}
	unlink(path);
	return r;
}

static void test_salvage(void)
{
	struct fe_jnl_view v;
	struct fe_jnl_rec got;
	unsigned char *b, *c, *out;
	uint64_t kept, lost;
	size_t len, cut;
	char why[256];
	int same = 1;

	b = small_journal(&len);
	if (!b || fe_jnl_parse(b, len, &v, why, sizeof(why)))
		return;
	c = malloc(len);

	/* Cut in the middle of the last record's path: the others keep
	 * theirs. */
	fe_jnl_get(&v, n_small - 1, &got);
	cut = (size_t)((const unsigned char *)got.path - b) + 3;
	CHECK("salvage of a journal cut in its strings keeps the records "
	      "before the cut",
	      salvage(b, cut, &kept, &lost, &out, &v) == 0 &&
		  kept == n_small - 1 && lost == 1);
	for (uint64_t i = 0; out && i < v.nrec; i++) {
		fe_jnl_get(&v, i, &got);
		same &= rec_eq(&got, &small[i]);
	}
	CHECK("salvaged records are the originals", out && same);
	free(out);

	memcpy(c, b, len);
	c[len - 8] ^= 0x40;
	same = 1;
	CHECK("salvage of a bad checksum keeps every record",
	      salvage(c, len, &kept, &lost, &out, &v) == 0 && kept == n_small &&
		  lost == 0 && v.nrec == n_small);
	for (uint64_t i = 0; out && i < v.nrec; i++) {
		fe_jnl_get(&v, i, &got);
		same &= rec_eq(&got, &small[i]);
	}
	CHECK("records salvaged past a bad checksum are the originals",
	      out && same);
	free(out);

	memcpy(c, b, len);
	put32(c + REC(1) + R_MODE, 0170755);
	CHECK("salvage drops only the bad record",
	      salvage(c, len, &kept, &lost, &out, &v) == 0 &&
		  kept == n_small - 1 && lost == 1);
	free(out);

	memcpy(c, b, len);
	c[3] ^= 0x20;
	CHECK("salvage refuses a journal without its magic",
	      fe_jnl_salvage(c, len, 1, &kept, &lost, why, sizeof(why)) ==
		      -EINVAL &&
		  kept == 0 && strstr(why, "FAKEENVJ"));
	CHECK("salvage refuses 10 bytes",
	      fe_jnl_salvage(b, 10, 1, &kept, &lost, why, sizeof(why)) ==
		  -EINVAL);
	free(c);
	free(b);
}

/* ---- Opening: fe_jnl_load() and fe_jnl_open_log() ---- */

/* Write len bytes of b to dir/name. */
static const char *put_file(const char *name, const void *b, size_t len)
{
	const char *path = file_in_dir(name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd >= 0) {
		if (write(fd, b, len) != (ssize_t)len)
			perror("write");
		close(fd);
	}
	return path;
}

/* fe_jnl_load() of path: its result, with msg. */
static int load(const char *path, unsigned flags, char *msg, size_t size,
		size_t *len)
{
	struct fe_jnl_view v;
	unsigned char *b = NULL;
	int r;

	*len = 0;
	msg[0] = '\0';
	r = fe_jnl_load(path, flags, &b, len, &v, msg, size);
	if (r == 0)
		free(b);
	return r;
}

/* What the opener refuses for its file type, links followed or not, and
 * the log it makes (len: the size of the journal "lj"). */
static void load_kinds(size_t len)
{
	char msg[512], *p;
	size_t got;
	int fd;

	p = file_in_dir("lj-link");
	CHECK("load: a symbolic link is refused",
	      symlink("lj", p) == 0 &&
		  load(p, 0, msg, sizeof(msg), &got) == -EINVAL &&
		  strstr(msg, "lj-link: a symbolic link, not followed"));
	CHECK("load: FE_JNL_FOLLOW follows it and says so when refusing",
	      load(p, FE_JNL_FOLLOW, msg, sizeof(msg), &got) == 0 &&
		  got == len && unlink(p) == 0 && symlink("lj-magic", p) == 0 &&
		  load(p, FE_JNL_FOLLOW, msg, sizeof(msg), &got) == -EBADMSG &&
		  strstr(msg, "lj-link (a symbolic link to /") &&
		  strstr(msg, "/lj-magic): not a journal"));
	unlink(p);

	p = file_in_dir("fifo");
	CHECK("load: a FIFO is refused at once",
	      mkfifo(p, 0600) == 0 &&
		  load(p, FE_JNL_FOLLOW, msg, sizeof(msg), &got) == -EINVAL &&
		  strstr(msg, "fifo: a FIFO, not a regular file"));
	CHECK("open_log: a FIFO without a reader is refused at once",
	      fe_jnl_open_log(p, msg, sizeof(msg)) == -EINVAL &&
		  strstr(msg, "log ") && strstr(msg, "fifo: a FIFO, not a "));
	unlink(p);
	CHECK("load: a directory is refused",
	      load(dir, 0, msg, sizeof(msg), &got) == -EINVAL &&
		  strstr(msg, ": a directory, not a regular file"));
	CHECK("load: /dev/zero is refused",
	      load("/dev/zero", 0, msg, sizeof(msg), &got) == -EINVAL &&
		  strstr(msg, "a character device, not a regular file"));

	p = file_in_dir("log");
	fd = fe_jnl_open_log(p, msg, sizeof(msg));
	{
		struct stat st;

		CHECK("open_log: makes a 0600 file, appends",
		      fd >= 0 && write(fd, "x", 1) == 1 && !fstat(fd, &st) &&
			  (st.st_mode & 07777) == 0600 &&
			  (fcntl(fd, F_GETFL) & (O_APPEND | O_NONBLOCK)) ==
			      O_APPEND);
	}
	if (fd >= 0)
		close(fd);
	unlink(p);
}

static void test_load(void)
{
	struct jnl_set s = {.written = 1};
	unsigned char *b, *c;
	char msg[512];
	size_t len, got;

	b = build(&s, "lj", &len);
	CHECK("load: a journal loads",
	      b && load(file_in_dir("lj"), 0, msg, sizeof(msg), &got) == 0 &&
		  got == len);
	c = calloc(1, len + 1);
	if (!b || !c)
		return;
	memcpy(c, b, len);
	put_file("lj-long", c, len + 1);
	CHECK("load: a byte more than the header says: both sizes said",
	      load(file_in_dir("lj-long"), 0, msg, sizeof(msg), &got) ==
		      -EBADMSG &&
		  strstr(msg, "73 bytes, the header says 72"));
	put_file("lj-short", c, len - 1);
	CHECK("load: a byte less: truncated, both sizes said",
	      load(file_in_dir("lj-short"), 0, msg, sizeof(msg), &got) ==
		      -EBADMSG &&
		  strstr(msg, "truncated: 71 bytes, the header says 72"));
	CHECK("load: raw reads a cut journal as it is",
	      load(file_in_dir("lj-short"), FE_JNL_RAW, msg, sizeof(msg),
		   &got) == 0 &&
		  got == len - 1);
	c[0] ^= 1;
	put_file("lj-magic", c, len);
	CHECK("load: no magic: not a journal",
	      load(file_in_dir("lj-magic"), 0, msg, sizeof(msg), &got) ==
		      -EBADMSG &&
		  strstr(msg, ": not a journal: "));
	CHECK("load: raw, no magic: refused too",
	      load(file_in_dir("lj-magic"), FE_JNL_RAW, msg, sizeof(msg),
		   &got) == -EBADMSG);
	CHECK("load: a missing file is -ENOENT, said",
	      load(file_in_dir("none"), FE_JNL_FOLLOW, msg, sizeof(msg),
		   &got) == -ENOENT &&
		  strstr(msg, "none: no such file"));

	load_kinds(len);
	for (const char *const *f =
		 (const char *const[]){"lj", "lj-long", "lj-short", "lj-magic",
				       NULL};
	     *f; f++)
		unlink(file_in_dir(*f));
	free(c);
	free(b);
}

int main(void)
{
	if (make_dir() < 0)
		return 1;
	test_save();
	test_salvage();
	test_load();
	for (const char *const *f =
		 (const char *const[]){"full", "big", "empty", "small", "keep",
				       NULL};
	     *f; f++)
		unlink(file_in_dir(*f));
	CHECK("the test leaves no file behind", dir_entries() == 0);
	rmdir(dir);
	UNIT_EXIT();
}
