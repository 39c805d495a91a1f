/*
 * mkjournal: write a journal of N synthetic records, for measuring a load
 * at sizes no tree on the machine is worth making for.  Every record
 * carries a birth-time tag, so a load keeps it without a stat (its path,
 * laid out as mktree's, names no file: the few records a load looks up
 * to find its filesystem find nothing, and the st_dev stays as it is).
 * Owners, modes and inode numbers vary as a chowned tree's would.
 *
 *   mkjournal FILE N [ROOT]    ROOT: the paths' prefix (default
 *                              /nonexistent/fakeenv-scale)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "journal/journal.h"

#define PER_LEAF 100
#define PER_MID 32

struct gen {
	const char *root;
	uint64_t n;
	char path[4096];
};

/* Record i: a file of mktree's layout, every 101st entry a directory. */
static void rec_of(struct gen *g, uint64_t i, struct fe_jnl_rec *r)
{
	uint64_t leaf = i / PER_LEAF, f = i % PER_LEAF;
	int len;

	len = snprintf(g->path, sizeof(g->path), "%s/d%llu/d%llu/f%llu",
		       g->root, (unsigned long long)(leaf / PER_MID),
		       (unsigned long long)(leaf % PER_MID),
		       (unsigned long long)f);
	memset(r, 0, sizeof(*r));
	r->dev = makedev(254, 77);
	/* Inode numbers as ext4 hands them out: mostly in order, with the
	 * leaf's directory before its files. */
	r->ino = 1000 + i + leaf + 1;
	r->btag = (uint32_t)(i * 2654435761u) | 1;
	r->uid = 1 + (uint32_t)(i % 97);
	r->gid = 1 + (uint32_t)(i % 89);
	r->mode = S_IFREG | 0644;
	r->path = g->path;
	r->path_len = (size_t)len;
}

static int emit(struct fe_jnl_w *w, int fd, void *ctx)
{
	struct gen *g = ctx;
	struct fe_jnl_rec r;
	uint64_t str = 0;

	for (uint64_t i = 0; i < g->n; i++) {
		rec_of(g, i, &r);
		str += fe_jnl_str_len(&r);
	}
	fe_jnl_w_begin(w, fd, g->n, str, (int64_t)time(NULL));
	for (uint64_t i = 0; i < g->n; i++) {
		rec_of(g, i, &r);
		fe_jnl_w_rec(w, &r);
	}
	for (uint64_t i = 0; i < g->n; i++) {
		rec_of(g, i, &r);
		fe_jnl_w_str(w, &r);
	}
	return fe_jnl_w_end(w);
}

int main(int argc, char **argv)
{
	struct gen g;
	int r;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: mkjournal FILE N [ROOT]\n");
		return 2;
	}
	g.n = strtoull(argv[2], NULL, 10);
	g.root = argc > 3 ? argv[3] : "/nonexistent/fakeenv-scale";
	r = fe_jnl_save(argv[1], emit, &g);
	if (r < 0) {
		fprintf(stderr, "mkjournal: %s: %s\n", argv[1], strerror(-r));
		return 1;
	}
	return 0;
}
