/*
 * Is a journal record still its file?  See recheck.h.  Linked into the
 * daemon and the launcher, never the shim.
 */
#include "recheck.h"
#include "fakeenv/libc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "fakeenv/map.h"

bool fe_jnl_type_ok(uint32_t jmode, uint32_t jflags, uint32_t real_mode)
{
	/* The session's rule, birth times left out: the caller compares
	 * those against the key the record goes under. */
	return !fe_rec_stale(jmode,
			     (jflags & FE_JNL_DEV_SET) ? FE_REC_DEV_SET : 0, 0,
			     real_mode, 0);
}

/*
 * How the file s at r's path compares with r.  by_key: r keeps its
 * inode number on st_dev key_dev whatever its path says (a record with a
 * birth time), so another file there is another file; else the path
 * finds r's file (a record without one), and another st_dev there is
 * r's filesystem renumbered.
 */
static enum fe_jnl_fate compare(const struct fe_jnl_rec *r,
				const struct fe_jnl_seen *s, bool by_key,
				uint64_t key_dev)
{
	if (!fe_jnl_type_ok(r->mode, r->flags, s->mode))
		return FE_JNL_RETYPED;
	if (!by_key && r->dev == FE_JNL_DEV_BYPATH)
		return FE_JNL_MOVED;
	if (!by_key && s->dev != r->dev)
		return FE_JNL_REKEYED; /* another filesystem: inode numbers
					  differ */
	if (s->dev != key_dev || s->ino != r->ino)
		return FE_JNL_REPLACED;
	/* The birth time tells a reused inode number from the same file,
	 * where both the journal and the filesystem know it. */
	if (r->btag && s->btag && s->btag != r->btag)
		return FE_JNL_REPLACED;
	return key_dev != r->dev ? FE_JNL_REKEYED : FE_JNL_KEPT;
}

bool fe_jnl_rec_seen(const struct fe_jnl_rec *r, const struct fe_jnl_seen *s,
		     uint64_t *dev, uint64_t *ino)
{
	if (!fe_jnl_fate_kept(compare(r, s, false, r->dev)))
		return false;
	*dev = s->dev;
	*ino = s->ino;
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
	/* Each record once: in a journal of fewer than DEVMAP_SPREAD
	 * records, k * nrec / DEVMAP_SPREAD names the same one again, whose
	 * tries would use up its filesystem's DEVMAP_FIRST. */
	for (uint64_t k = 0, last = UINT64_MAX; v->nrec && k < DEVMAP_SPREAD;
	     k++) {
		uint64_t i = k * v->nrec / DEVMAP_SPREAD;

		if (i != last)
			sample(v, i, m, found, tries);
		last = i;
	}
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

void fe_jnl_rec_place(const struct fe_jnl_rec *r,
		      const struct fe_jnl_devmaps *m, int dirfd,
		      const char *name, struct fe_jnl_place *p)
{
	memset(p, 0, sizeof(*p));
	/* A device number no Linux mknod can make: not ours. */
	if (r->rdev > FE_DEV_MAX) {
		p->fate = FE_JNL_BADDEV;
		return;
	}
	if (!fe_jnl_rec_looks(r)) {
		fe_jnl_rec_key(r, m, &p->dev, &p->ino);
		p->btag = r->btag;
		p->fate = p->dev != r->dev ? FE_JNL_REKEYED : FE_JNL_KEPT;
		/* A filesystem not found again keeps its saved st_dev, which
		 * may be one no table holds (nor any file has). */
		if (p->dev > FE_DEV_MAX)
			p->fate = FE_JNL_BADDEV;
		return;
	}
	p->fate = FE_JNL_GONE;
	if (!r->path_len || r->path[0] != '/')
		return;
	p->looked = true;
	if (!fe_jnl_see(dirfd, name, &p->seen))
		return;
	p->fate = compare(r, &p->seen, false, r->dev);
	p->dev = p->seen.dev;
	p->ino = p->seen.ino;
	p->btag = p->seen.btag;
}

void fe_jnl_rec_check(const struct fe_jnl_rec *r,
		      const struct fe_jnl_devmaps *m, struct fe_jnl_place *p,
		      bool *keyed)
{
	enum fe_jnl_fate f;

	*keyed = false;
	fe_jnl_rec_place(r, m, AT_FDCWD, r->path, p);
	if (p->looked || !fe_jnl_fate_kept(p->fate) ||
	    (r->flags & FE_JNL_ORPHAN) || !r->path_len || r->path[0] != '/')
		return;
	p->looked = true;
	if (!fe_jnl_see(AT_FDCWD, r->path, &p->seen))
		f = FE_JNL_GONE;
	else
		f = compare(r, &p->seen, true, p->dev);
	if (!fe_jnl_fate_kept(f)) {
		p->fate = f;
		*keyed = true;
	}
}
