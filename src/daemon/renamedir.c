/*
 * RENAMEDIR: a directory's move carries the path hints of every record
 * under it, so that the journal's check finds them at load.  The one op
 * that touches many records; see proto.h for what it promises.
 */
#include "ops.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One prefix move of a RENAMEDIR: a record under from (flen bytes, an
 * absolute normal path other than "/") gets to in its place. */
struct pmove {
	const char *from, *to;
	size_t flen, tlen;
};

/* Whether the normal path p lies under the directory dir of dlen bytes:
 * "/a/b" does under "/a"; "/a" and "/ab" do not. */
static bool under(const char *p, const char *dir, size_t dlen)
{
	return !strncmp(p, dir, dlen) && p[dlen] == '/';
}

/* The index of the first of the n moves whose from holds p, or n. */
static size_t pmove_of(const char *p, const struct pmove *m, size_t n)
{
	size_t i = 0;

	while (i < n && !(p && under(p, m[i].from, m[i].flen)))
		i++;
	return i;
}

/*
 * Every record whose path lies under one of the n moves' from paths (the
 * froms disjoint) gets that move's to in its place.  Each record's move
 * is decided once, from its path before the call, so that with two moves
 * (an exchange: A to B and B to A) a record moved to B is never moved
 * back.  O(records), with an allocation: directory renames are rare next
 * to stats and chowns.  The keys are collected first, as a put may move
 * slots under an iteration.  Returns 0 or -ENOMEM: the records not yet
 * moved then keep their old paths.
 */
static int move_prefixes(struct fe_srv *s, const struct pmove *m, size_t nm)
{
	struct key {
		uint64_t dev, ino;
		size_t move;
	} *keys = NULL;
	size_t n = 0, cap = 0, pos = 0;
	struct fe_rec rec;
	uint64_t dev, ino;
	int err = 0;

	while (nm && fe_tab_next(&s->tab, &pos, &dev, &ino, &rec)) {
		size_t i = pmove_of(fe_tab_path(&s->tab, &rec), m, nm);

		if (i == nm)
			continue;
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			struct key *k = realloc(keys, ncap * sizeof(*k));

			if (!k) {
				err = -ENOMEM;
				break;
			}
			keys = k;
			cap = ncap;
		}
		keys[n++] = (struct key){ dev, ino, i };
	}
	for (size_t i = 0; i < n; i++) {
		const struct pmove *mv = &m[keys[i].move];
		const char *p;
		char *np;
		size_t rest;

		if (!fe_tab_find(&s->tab, keys[i].dev, keys[i].ino, &rec))
			continue;
		p = fe_tab_path(&s->tab, &rec);
		if (!p || !under(p, mv->from, mv->flen))
			continue;
		rest = strlen(p) - mv->flen;
		np = malloc(mv->tlen + rest + 1);
		if (!np) {
			err = -ENOMEM;
			break;
		}
		memcpy(np, mv->to, mv->tlen);
		memcpy(np + mv->tlen, p + mv->flen, rest + 1);
		if (fe_srv_put(s, keys[i].dev, keys[i].ino, &rec, np, false,
			       NULL, 0) < 0)
			err = -ENOMEM;
		free(np);
	}
	free(keys);
	return err;
}

/* A prefix a record can lie under: absolute and not "/". */
static bool movable(const char *p)
{
	return p[0] == '/' && p[1];
}

/*
 * A directory moved from the tail's first path to its second: every record
 * whose path lies under the old one follows, so that the journal's check
 * finds them at load.  With FE_F_XCHG the two paths swapped their inodes
 * (renameat2's RENAME_EXCHANGE): the records under each take the other's
 * prefix, in one pass.  The kernel refuses to exchange a directory with
 * its own ancestor, so such a claim (or one that names "/" or a relative
 * path) is -EINVAL with nothing changed; the same path twice (the kernel
 * allows it) moves nothing.
 */
void fe_op_RENAMEDIR(struct fe_srv *s, struct fe_call *call)
{
	const struct fe_req *req = call->req;
	const char *tail = call->tail;
	struct fe_rep *rep = &call->rep;
	char from[FE_PATH_MAX + 1], to[FE_PATH_MAX + 1];
	struct pmove m[2];
	struct fe_rec rec;
	size_t nm = 0;
	int err;

	fe_srv_norm_path(tail, from);
	fe_srv_norm_path(tail + strlen(tail) + 1, to);
	m[0] = (struct pmove){ from, to, strlen(from), strlen(to) };
	m[1] = (struct pmove){ to, from, m[0].tlen, m[0].flen };
	if (req->flags & FE_F_XCHG) {
		if (!movable(from) || !movable(to) ||
		    under(to, from, m[0].flen) || under(from, to, m[0].tlen)) {
			rep->err = -EINVAL;
			return;
		}
		nm = strcmp(from, to) ? 2 : 0;
	} else if (movable(from)) {
		nm = 1;
	}
	err = move_prefixes(s, m, nm);
	if (fe_srv_lookup_own(s, req, &rec))
		fe_srv_store(s, req, &rec, to, rep);
	else
		fe_srv_reply_rec(s, req, NULL, rep);
	if (err && !rep->err)
		rep->err = err;
}

