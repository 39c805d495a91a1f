/*
 * Is a journal record still its file?  See recheck.h.  Linked into the
 * daemon and the launcher, never the shim.
 */
#include "recheck.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "fakeenv/map.h"

bool fe_jnl_type_ok(uint32_t jmode, uint32_t jflags, uint32_t real_mode)
{
	uint32_t want = jmode & S_IFMT, got = real_mode & S_IFMT;

	if (jflags & FE_JNL_DEV_SET)
		return got == S_IFREG || got == want;
	return got == want;
}

bool fe_jnl_rec_seen(const struct fe_jnl_rec *r, const struct fe_jnl_seen *s,
		     uint64_t *dev, uint64_t *ino)
{
	if (!fe_jnl_type_ok(r->mode, r->flags, s->mode))
		return false;
	*dev = s->dev;
	*ino = s->ino;
	if (s->dev != r->dev)
		return true; /* another filesystem: inode numbers differ */
	if (s->ino != r->ino)
		return false;
	/* The birth time tells a reused inode number from the same file,
	 * where both the journal and the filesystem know it. */
	if (r->btag && s->btag && s->btag != r->btag)
		return false;
	return true;
}

bool fe_jnl_see(int dirfd, const char *name, struct fe_jnl_seen *s)
{
	struct statx stx;

	if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
		  STATX_TYPE | STATX_INO | STATX_BTIME, &stx) < 0)
		return false;
	*s = (struct fe_jnl_seen){
	    .dev = makedev(stx.stx_dev_major, stx.stx_dev_minor),
	    .ino = stx.stx_ino,
	    .mode = stx.stx_mode,
	    .btag = (stx.stx_mask & STATX_BTIME) ?
			    fe_btag(stx.stx_btime.tv_sec,
				    stx.stx_btime.tv_nsec) :
			    0,
	};
	return true;
}

/* The map entry of dev, or NULL. */
static struct fe_jnl_devmap *entry_of(const struct fe_jnl_devmaps *m,
				      uint64_t dev)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->map[i].from == dev)
			return &m->map[i];
	return NULL;
}

#define DEVMAP_SPREAD 64 /* evenly spread samples over the whole journal */
#define DEVMAP_FIRST 16  /* then at most this many of each st_dev */

/* Look at record i as a sample of its filesystem; *found set when it
 * tells where the filesystem is. */
static void sample(const struct fe_jnl_view *v, uint64_t i,
		   struct fe_jnl_devmaps *m, bool *found, unsigned *tries)
{
	struct fe_jnl_devmap *e;
	struct fe_jnl_seen s;
	struct fe_jnl_rec r;

	fe_jnl_get(v, i, &r);
	if (!r.btag || !r.path_len || r.path[0] != '/')
		return;
	e = entry_of(m, r.dev);
	if (!e || found[e - m->map] || tries[e - m->map] >= DEVMAP_FIRST)
		return;
	tries[e - m->map]++;
	m->samples++;
	if (fe_jnl_see(AT_FDCWD, r.path, &s) && s.ino == r.ino &&
	    s.btag == r.btag && fe_jnl_type_ok(r.mode, r.flags, s.mode)) {
		e->to = s.dev;
		found[e - m->map] = true;
	}
}

int fe_jnl_devmap_build(const struct fe_jnl_view *v, struct fe_jnl_devmaps *m)
{
	bool *found = NULL;
	unsigned *tries = NULL;
	size_t cap = 0;

	m->map = NULL;
	m->n = 0;
	m->samples = 0;
	for (uint64_t i = 0; i < v->nrec; i++) {
		struct fe_jnl_rec r;

		fe_jnl_get(v, i, &r);
		if (!r.btag || entry_of(m, r.dev))
			continue;
		if (m->n == cap) {
			size_t ncap = cap ? 2 * cap : 8;
			struct fe_jnl_devmap *nm =
				realloc(m->map, ncap * sizeof(*nm));

			if (!nm) {
				fe_jnl_devmap_free(m);
				return -ENOMEM;
			}
			m->map = nm;
			cap = ncap;
		}
		m->map[m->n++] = (struct fe_jnl_devmap){ r.dev, r.dev };
	}
	found = calloc(m->n ? m->n : 1, sizeof(*found));
	tries = calloc(m->n ? m->n : 1, sizeof(*tries));
	if (!found || !tries) {
		free(found);
		free(tries);
		fe_jnl_devmap_free(m);
		return -ENOMEM;
	}
	for (uint64_t k = 0; v->nrec && k < DEVMAP_SPREAD; k++)
		sample(v, k * v->nrec / DEVMAP_SPREAD, m, found, tries);
	for (uint64_t i = 0; i < v->nrec; i++) {
		size_t left = 0;

		for (size_t d = 0; d < m->n; d++)
			left += !found[d] && tries[d] < DEVMAP_FIRST;
		if (!left)
			break;
		sample(v, i, m, found, tries);
	}
	free(found);
	free(tries);
	return 0;
}

uint64_t fe_jnl_devmap_get(const struct fe_jnl_devmaps *m, uint64_t dev)
{
	const struct fe_jnl_devmap *e = entry_of(m, dev);

	return e ? e->to : dev;
}

void fe_jnl_devmap_free(struct fe_jnl_devmaps *m)
{
	free(m->map);
	m->map = NULL;
	m->n = 0;
}

void fe_jnl_rec_key(const struct fe_jnl_rec *r, const struct fe_jnl_devmaps *m,
		    uint64_t *dev, uint64_t *ino)
{
	*dev = fe_jnl_devmap_get(m, r->dev);
	*ino = r->ino;
}

bool fe_jnl_rec_locate(const struct fe_jnl_rec *r, uint64_t *dev, uint64_t *ino,
		       uint32_t *btag)
{
	if (!r->path_len || r->path[0] != '/')
		return false;
	return fe_jnl_rec_locate_at(AT_FDCWD, r->path, r, dev, ino, btag);
}

bool fe_jnl_rec_locate_at(int dirfd, const char *name,
			  const struct fe_jnl_rec *r, uint64_t *dev,
			  uint64_t *ino, uint32_t *btag)
{
	struct fe_jnl_seen s;

	if (!fe_jnl_see(dirfd, name, &s))
		return false;
	*btag = s.btag;
	return fe_jnl_rec_seen(r, &s, dev, ino);
}
