/*
 * mkjnl: write a journal whose records are keyed on purpose, for tests of
 * what a load makes of records that a session's own checkpoint never
 * writes in that order (two records for one file, a renumbered st_dev, a
 * key past 32 bits).  Linked to the journal code; run outside a session.
 *   mkjnl FILE <SPEC
 * SPEC: one record a line, "KEY PATH UID GID [FLAG...]", in journal order.
 * KEY says how the record is keyed from what statx finds at PATH now,
 * as items separated by commas, applied in order:
 *   real      its dev, ino and birth time, as a checkpoint writes them
 *   nobtag    no birth time (checked by its path)
 *   bypath    st_dev 0, no birth time: a record `state relocate` wrote
 *   dev=N     st_dev N (decimal): a filesystem renumbered since, or (N
 *             past 32 bits) an st_dev no table can hold
 *   ino=N     inode number N
 *   btag=N    birth-time tag N: another file's record at its inode number
 * A PATH with nothing there starts as a regular file with no key.
 * FLAG: mode=OCTAL (the faked permission bits), chr=MAJ,MIN (a faked
 * character device).  Exits 0, or 1 after "ERR <why>".
 */
#include "helper.h"

#include <fcntl.h>
#include <time.h>

#include "fakeenv/map.h"
#include "journal/journal.h"

#define MAX_RECS 64

struct spec {
	struct fe_jnl_rec r[MAX_RECS];
	char *paths[MAX_RECS];
	size_t n;
};

static int bad(const char *why, const char *what)
{
	printf("ERR %s: %s\n", why, what);
	return 1;
}

/* One item of KEY over what key_of() found. */
static int key_item(const char *k, struct fe_jnl_rec *r)
{
	if (!strcmp(k, "real"))
		return 0;
	if (!strcmp(k, "nobtag")) {
		r->btag = 0;
	} else if (!strcmp(k, "bypath")) {
		r->dev = 0;
		r->btag = 0;
	} else if (!strncmp(k, "dev=", 4)) {
		r->dev = strtoull(k + 4, NULL, 10);
	} else if (!strncmp(k, "ino=", 4)) {
		r->ino = strtoull(k + 4, NULL, 10);
	} else if (!strncmp(k, "btag=", 5)) {
		r->btag = (uint32_t)strtoul(k + 5, NULL, 10);
	} else {
		return bad("unknown key", k);
	}
	return 0;
}

/* The record's key: what statx finds at its path (a regular file of no
 * known key where there is nothing), then KEY's items, comma-separated,
 * in order.  0 or 1. */
static int key_of(char *key, struct fe_jnl_rec *r)
{
	struct statx stx;
	char *save, *k;

	if (statx(AT_FDCWD, r->path, AT_SYMLINK_NOFOLLOW,
		  STATX_TYPE | STATX_MODE | STATX_INO | STATX_BTIME,
		  &stx) < 0) {
		if (errno != ENOENT)
			return err_out(errno);
		r->mode = S_IFREG | 0644;
	} else {
		r->dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
		r->ino = stx.stx_ino;
		r->mode = stx.stx_mode;
		if (stx.stx_mask & STATX_BTIME)
			r->btag = fe_btag(stx.stx_btime.tv_sec,
					  stx.stx_btime.tv_nsec);
	}
	for (k = strtok_r(key, ",", &save); k; k = strtok_r(NULL, ",", &save))
		if (key_item(k, r))
			return 1;
	return 0;
}

static int flag_of(const char *f, struct fe_jnl_rec *r)
{
	unsigned maj, min;

	if (!strncmp(f, "mode=", 5)) {
		r->mode = (r->mode & S_IFMT) |
			  ((uint32_t)strtoul(f + 5, NULL, 8) & 07777);
		r->flags |= FE_JNL_MODE_SET;
	} else if (sscanf(f, "chr=%u,%u", &maj, &min) == 2) {
		r->mode = S_IFCHR | (r->mode & 07777);
		r->rdev = makedev(maj, min);
		r->flags |= FE_JNL_DEV_SET;
	} else {
		return bad("unknown flag", f);
	}
	return 0;
}

static int parse_line(char *line, struct spec *s)
{
	struct fe_jnl_rec *r = &s->r[s->n];
	char *key = strtok(line, " \n"), *path = strtok(NULL, " \n");
	char *uid = strtok(NULL, " \n"), *gid = strtok(NULL, " \n"), *f;

	if (!key || !path || !uid || !gid)
		return bad("a line needs KEY PATH UID GID", line);
	if (s->n == MAX_RECS)
		return bad("too many records", path);
	memset(r, 0, sizeof(*r));
	s->paths[s->n] = strdup(path);
	r->path = s->paths[s->n];
	r->path_len = strlen(path);
	r->xattrs = (const unsigned char *)"";
	r->uid = (uint32_t)strtoul(uid, NULL, 10);
	r->gid = (uint32_t)strtoul(gid, NULL, 10);
	if (key_of(key, r))
		return 1;
	while ((f = strtok(NULL, " \n")))
		if (flag_of(f, r))
			return 1;
	s->n++;
	return 0;
}

static int emit(struct fe_jnl_w *w, int fd, void *ctx)
{
	const struct spec *s = ctx;
	uint64_t str = 0;

	for (size_t i = 0; i < s->n; i++)
		str += fe_jnl_str_len(&s->r[i]);
	fe_jnl_w_begin(w, fd, s->n, str, (int64_t)time(NULL));
	for (size_t i = 0; i < s->n; i++)
		fe_jnl_w_rec(w, &s->r[i]);
	for (size_t i = 0; i < s->n; i++)
		fe_jnl_w_str(w, &s->r[i]);
	return fe_jnl_w_end(w);
}

int main(int argc, char **argv)
{
	static struct spec s;
	char line[4096];
	int r;

	if (argc != 2)
		return bad("usage", "mkjnl FILE <SPEC");
	while (fgets(line, sizeof(line), stdin))
		if (line[0] != '\n' && line[0] != '#' && parse_line(line, &s))
			return 1;
	r = fe_jnl_save(argv[1], emit, &s);
	if (r < 0)
		return err_out(-r);
	for (size_t i = 0; i < s.n; i++)
		free(s.paths[i]);
	return 0;
}
