/*
 * The xattr ops (XSET, XGET, XLIST, XDEL) and what chown and chmod do to
 * a record's xattrs.  A record's xattrs are one block in the journal's
 * encoding (fe_jnl_xattr_next()); a change builds the new block in
 * s->xbuf and stores it whole.  The POSIX ACLs are read with the codec the
 * shim shares (common/acl.h).
 */
#include "ops.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "common/acl.h"
#include "journal/journal.h"

#define CAP_NAME "security.capability"

/* One entry of an xattr block: where it starts and ends, its value. */
struct xent {
	size_t at, end;
	const unsigned char *val;
	size_t vlen;
};

/* Find name (nlen bytes, no NUL) in the block; fills *e. */
static bool blk_find(const unsigned char *blk, size_t len, const char *name,
		     size_t nlen, struct xent *e)
{
	size_t pos = 0, start = 0, nl;
	const char *n;

	while (fe_jnl_xattr_next(blk, len, &pos, &n, &nl, &e->val, &e->vlen)) {
		if (nl == nlen && !memcmp(n, name, nlen)) {
			e->at = start;
			e->end = pos;
			return true;
		}
		start = pos;
	}
	return false;
}

/* Bytes of the name list of a block: each name and a NUL. */
static size_t blk_list_len(const unsigned char *blk, size_t len)
{
	size_t pos = 0, nl, vl, n = 0;
	const unsigned char *v;
	const char *name;

	while (fe_jnl_xattr_next(blk, len, &pos, &name, &nl, &v, &vl))
		n += nl + 1;
	return n;
}

/* The block without entry e into out (room for len bytes); returns its
 * length. */
static size_t blk_without(const unsigned char *blk, size_t len,
			  const struct xent *e, unsigned char *out)
{
	memcpy(out, blk, e->at);
	memcpy(out + e->at, blk + e->end, len - e->end);
	return len - (e->end - e->at);
}

/* Store rec, with its xattrs less security.capability when it has it. */
void fe_xattr_store_chown(struct fe_srv *s, const struct fe_req *req,
			  const struct fe_rec *rec, const char *tail,
			  struct fe_rep *rep)
{
	const char *name = CAP_NAME;
	const unsigned char *blk;
	struct xent e;
	size_t len;
	int r;

	fe_tab_xattrs(&s->tab, rec, &blk, &len);
	/* (A journal may have held more than xbuf takes: kept whole.) */
	if (!blk || len > FE_XATTR_REC_MAX ||
	    !blk_find(blk, len, name, strlen(name), &e)) {
		fe_srv_store(s, req, rec, tail, rep);
		return;
	}
	len = blk_without(blk, len, &e, s->xbuf);
	r = fe_srv_put(s, req->dev, req->ino, rec, tail, true, s->xbuf, len);
	if (r < 0)
		rep->err = r;
	else
		fe_srv_reply_rec(s, req, rec, rep);
}

/* Store rec after a chmod: a kept access ACL follows the new bits. */
void fe_xattr_store_chmod(struct fe_srv *s, const struct fe_req *req,
			  const struct fe_rec *rec, const char *tail,
			  struct fe_rep *rep)
{
	const unsigned char *blk;
	struct xent e;
	size_t len;
	int r;

	fe_tab_xattrs(&s->tab, rec, &blk, &len);
	if (!blk || len > FE_XATTR_REC_MAX ||
	    !blk_find(blk, len, FE_XATTR_ACL_ACCESS,
		      strlen(FE_XATTR_ACL_ACCESS), &e)) {
		fe_srv_store(s, req, rec, tail, rep);
		return;
	}
	memcpy(s->xbuf, blk, len);
	fe_acl_chmod(s->xbuf + (e.val - blk), e.vlen, fe_srv_shown_mode(s, req, rec) & FE_MAP_PERM_BITS);
	r = fe_srv_put(s, req->dev, req->ino, rec, tail, true, s->xbuf, len);
	if (r < 0)
		rep->err = r;
	else
		fe_srv_reply_rec(s, req, rec, rep);
}

void fe_xreq_of(const struct fe_req *req, const char *tail,
		struct fe_xreq *x)
{
	memcpy(&x->h, tail, sizeof(x->h));
	x->name = tail + sizeof(x->h);
	x->nlen = x->h.name_len ? x->h.name_len - 1 : 0;
	x->val = (const unsigned char *)x->name + x->h.name_len;
	x->path = req->tail_len > sizeof(x->h) + x->h.name_len + x->h.value_len ?
			  (const char *)x->val + x->h.value_len :
			  NULL;
}

/* Reply the bytes at data (len) to a caller with room for size of them
 * (0: only asking how many). */
static void reply_bytes(struct fe_srv *s, const void *data, size_t len,
			uint32_t size, struct fe_rep *rep)
{
	rep->count[0] = len;
	if (size == 0 || len == 0)
		return;
	if (size < len) {
		rep->err = -ERANGE;
		return;
	}
	s->rep_data = data;
	s->rep_len = len;
}

void fe_op_XSET(struct fe_srv *s, struct fe_call *call)
{
	const struct fe_req *req = call->req;
	const char *tail = call->tail;
	struct fe_rep *rep = &call->rep;
	const unsigned char *blk;
	struct fe_rec rec;
	struct fe_xreq x;
	struct xent e;
	size_t len, n;
	bool found, keep = true;
	int r;

	fe_xreq_of(req, tail, &x);
	if (!fe_srv_lookup(s, req, &rec))
		fe_srv_new_rec(s, req, &rec);
	fe_tab_xattrs(&s->tab, &rec, &blk, &len);
	found = blk && blk_find(blk, len, x.name, x.nlen, &e);
	if (found && (req->flags & FE_F_XCREATE)) {
		rep->err = -EEXIST;
		return;
	}
	if (!found && (req->flags & FE_F_XREPLACE)) {
		rep->err = -ENODATA;
		return;
	}
	if (!strcmp(x.name, FE_XATTR_ACL_ACCESS) ||
	    !strcmp(x.name, FE_XATTR_ACL_DEFAULT)) {
		uint32_t perm;
		bool minimal;
		int a = fe_acl_parse(x.val, x.h.value_len, &perm, &minimal);

		if (a < 0) {
			rep->err = -EINVAL;
			return;
		}
		if (!strcmp(x.name, FE_XATTR_ACL_DEFAULT) &&
		    !S_ISDIR(fe_srv_shown_mode(s, req, &rec))) {
			if (a == 0)
				return; /* nothing to remove: done */
			rep->err = -EACCES;
			return;
		}
		if (a == 0) {
			/* An empty ACL: remove the one kept. */
			keep = false;
		} else if (!strcmp(x.name, FE_XATTR_ACL_ACCESS)) {
			/* The bits it stands for become the mode; a minimal
			 * ACL is nothing more (posix_acl_update_mode). */
			rec.mode = (rec.mode & S_IFMT) |
				   (fe_srv_shown_mode(s, req, &rec) & 07000) | perm;
			rec.flags |= FE_REC_MODE_SET;
			keep = !minimal;
		}
	}
	n = found ? len - (e.end - e.at) : len;
	if (n + (keep ? 8 + x.nlen + x.h.value_len : 0) > FE_XATTR_REC_MAX) {
		rep->err = -ENOSPC;
		return;
	}
	if (found)
		n = blk_without(blk, len, &e, s->xbuf);
	else if (len)
		memcpy(s->xbuf, blk, len);
	if (keep &&
	    (fe_jnl_xattr_put(s->xbuf, FE_XATTR_REC_MAX, &n, x.name, x.val,
			      x.h.value_len) < 0 ||
	     blk_list_len(s->xbuf, n) > FE_XATTR_LIST_MAX)) {
		rep->err = -ENOSPC;
		return;
	}
	r = fe_srv_put(s, req->dev, req->ino, &rec, x.path, true, s->xbuf, n);
	if (r < 0)
		rep->err = r;
	else
		fe_srv_reply_rec(s, req, &rec, rep);
}

/* The kept xattr a request names: its record, the record's block and the
 * entry.  False (rep->err -ENODATA) when there is none. */
static bool find_kept(struct fe_srv *s, const struct fe_req *req,
		      const char *tail, struct fe_xreq *x, struct fe_rec *rec,
		      const unsigned char **blk, size_t *len, struct xent *e,
		      struct fe_rep *rep)
{
	*blk = NULL;
	*len = 0;
	fe_xreq_of(req, tail, x);
	if (fe_srv_lookup(s, req, rec))
		fe_tab_xattrs(&s->tab, rec, blk, len);
	if (!*blk || !blk_find(*blk, *len, x->name, x->nlen, e)) {
		rep->err = -ENODATA;
		return false;
	}
	return true;
}

void fe_op_XGET(struct fe_srv *s, struct fe_call *call)
{
	const struct fe_req *req = call->req;
	const char *tail = call->tail;
	struct fe_rep *rep = &call->rep;
	const unsigned char *blk;
	struct fe_rec rec;
	struct fe_xreq x;
	struct xent e;
	size_t len;

	if (find_kept(s, req, tail, &x, &rec, &blk, &len, &e, rep))
		reply_bytes(s, e.val, e.vlen, x.h.size, rep);
}

void fe_op_XLIST(struct fe_srv *s, struct fe_call *call)
{
	const struct fe_req *req = call->req;
	const char *tail = call->tail;
	struct fe_rep *rep = &call->rep;
	const unsigned char *blk = NULL, *v;
	size_t len = 0, pos = 0, n = 0, nl, vl;
	struct fe_rec rec;
	const char *name;
	struct fe_xreq x;

	fe_xreq_of(req, tail, &x);
	if (fe_srv_lookup(s, req, &rec))
		fe_tab_xattrs(&s->tab, &rec, &blk, &len);
	while (blk && fe_jnl_xattr_next(blk, len, &pos, &name, &nl, &v, &vl) &&
	       n + nl + 1 <= FE_XATTR_LIST_MAX) {
		memcpy(s->xbuf + n, name, nl);
		s->xbuf[n + nl] = '\0';
		n += nl + 1;
	}
	reply_bytes(s, s->xbuf, n, x.h.size, rep);
}

void fe_op_XDEL(struct fe_srv *s, struct fe_call *call)
{
	const struct fe_req *req = call->req;
	const char *tail = call->tail;
	struct fe_rep *rep = &call->rep;
	const unsigned char *blk;
	struct fe_rec rec;
	struct fe_xreq x;
	struct xent e;
	size_t len;
	int r;

	if (!find_kept(s, req, tail, &x, &rec, &blk, &len, &e, rep))
		return;
	if (len > FE_XATTR_REC_MAX) {
		rep->err = -ENOSPC; /* a journal's record larger than ours */
		return;
	}
	len = blk_without(blk, len, &e, s->xbuf);
	r = fe_srv_put(s, req->dev, req->ino, &rec, NULL, true, s->xbuf, len);
	if (r < 0)
		rep->err = r;
}

