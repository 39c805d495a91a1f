/*
 * The dispatch of a checked request to its op's handler, the ops on one
 * file's record, the record helpers every handler shares (ops.h), and the
 * trace of a change; see serve.h and proto.h.  Everything a message asks
 * is checked by fe_req_check() before a handler runs, so the handlers
 * trust their input; they never log, never exit, and leave the reply's
 * unused fields zero.
 */
#include "serve.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/util.h"
#include "ops.h"

/* Table slots to start with: 40 KiB, enough for a small build. */
#define SRV_INIT_CAP 1024

#define PERM_BITS FE_MAP_PERM_BITS

int fe_srv_init(struct fe_srv *s, bool unknown_is_real)
{
	int r;

	memset(s, 0, sizeof(*s));
	s->unknown_is_real = unknown_is_real;
	s->xbuf = malloc(FE_XATTR_REC_MAX);
	if (!s->xbuf)
		return -ENOMEM;
	r = fe_tab_init(&s->tab, SRV_INIT_CAP);
	if (r < 0) {
		free(s->xbuf);
		s->xbuf = NULL;
		return r;
	}
	/* Readers of the shared table apply the same default owner. */
	if (unknown_is_real)
		s->tab.root->flags |= FE_MAP_UNKNOWN_REAL;
	return 0;
}

void fe_srv_free(struct fe_srv *s)
{
	fe_tab_free(&s->tab);
	free(s->xbuf);
	free(s->dirty.keys);
	s->xbuf = NULL;
	s->dirty.keys = NULL;
}

static uint32_t default_uid(const struct fe_srv *s, const struct fe_req *req)
{
	return s->unknown_is_real ? req->real_uid : 0;
}

static uint32_t default_gid(const struct fe_srv *s, const struct fe_req *req)
{
	return s->unknown_is_real ? req->real_gid : 0;
}

/* A fresh record for req's file: default owner, the real type, nothing
 * faked. */
void fe_srv_new_rec(const struct fe_srv *s, const struct fe_req *req,
		    struct fe_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->uid = default_uid(s, req);
	rec->gid = default_gid(s, req);
	rec->mode = req->real_mode & S_IFMT;
	rec->btag = req->btag;
}

/*
 * in, in its lexical normal form (fe_path_lexical()), into out, which has
 * room for strlen(in) + 1 bytes; a relative path is copied.  The paths
 * are hints for the journal's check at load, but a directory's rename
 * moves every record under it by prefix, and "/a/./b" must be found under
 * "/a".  ("x/.." is taken lexically: a symlink x makes the hint wrong, and
 * the load drops it.)
 */
void fe_srv_norm_path(const char *in, char *out)
{
	strcpy(out, in);
	if (out[0] == '/')
		fe_path_lexical(out);
}

int fe_srv_put(struct fe_srv *s, uint64_t dev, uint64_t ino,
	       const struct fe_rec *rec, const char *path, bool set_x,
	       const void *blk, size_t len)
{
	char buf[FE_PATH_MAX + 1];
	int r;

	if (path && strlen(path) < FE_PATH_MAX) {
		fe_srv_norm_path(path, buf);
		path = buf;
	}
	r = set_x ? fe_tab_put_xattrs(&s->tab, dev, ino, rec, path, blk, len) :
		    fe_tab_put(&s->tab, dev, ino, rec, path);
	if (r == 0) {
		s->changes++;
		fe_dirty_add(&s->dirty, dev, ino);
	}
	return r;
}

static int put(struct fe_srv *s, uint64_t dev, uint64_t ino,
	       const struct fe_rec *rec, const char *path)
{
	return fe_srv_put(s, dev, ino, rec, path, false, NULL, 0);
}

static bool del(struct fe_srv *s, uint64_t dev, uint64_t ino)
{
	struct fe_rec rec;

	if (!fe_tab_find(&s->tab, dev, ino, &rec))
		return false;
	if (rec.flags & FE_REC_ORPHAN)
		s->orphans--;
	fe_tab_del(&s->tab, dev, ino);
	s->changes++;
	return true;
}

/* The rule is shared with the shim's reader: fakeenv/map.h. */
static bool stale(const struct fe_rec *rec, const struct fe_req *req)
{
	return fe_rec_stale(rec->mode, rec->flags, rec->btag, req->real_mode,
			    req->btag);
}

/* The live record at req's key into *rec; a stale one (a dead file's, at
 * a reused inode number) is deleted, counted and reported absent.  A
 * record of unknown birth time learns it from the first request that
 * knows it and agrees on the type: from then on it is checked. */
bool fe_srv_lookup(struct fe_srv *s, const struct fe_req *req,
		   struct fe_rec *rec)
{
	if (!fe_tab_find(&s->tab, req->dev, req->ino, rec))
		return false;
	if (stale(rec, req)) {
		del(s, req->dev, req->ino);
		s->stale++;
		return false;
	}
	if (!rec->btag)
		rec->btag = req->btag;
	return true;
}

/*
 * The record at req's key if it is req's file, for the ops that may come
 * late, one-way and with no pending counter to order them (DROP, RENAME,
 * RENAMEDIR): such a request may name a file that died since, whose
 * inode number a newer file has now.  A birth time that differs then
 * says the request is stale, not the record: nothing is deleted.
 */
bool fe_srv_lookup_own(struct fe_srv *s, const struct fe_req *req,
		       struct fe_rec *rec)
{
	if (!fe_tab_find(&s->tab, req->dev, req->ino, rec))
		return false;
	if (rec->btag && req->btag && rec->btag != req->btag)
		return false;
	return fe_srv_lookup(s, req, rec);
}

/* What stat shows of req's file: rec laid over the real file, or the
 * defaults when rec is NULL.  The one rule is fe_rec_view(), shared with
 * the shim's reader; every op that looks at a file's effective type or
 * bits asks it here. */
static void view(const struct fe_srv *s, const struct fe_req *req,
		 const struct fe_rec *rec, struct fe_view *v)
{
	struct fe_slot slot = { 0 };

	if (rec) {
		slot.uid = rec->uid;
		slot.gid = rec->gid;
		slot.mode = rec->mode;
		slot.rdev = rec->rdev;
		slot.flags = FE_SLOT_USED | rec->flags;
	}
	fe_rec_view(rec ? &slot : NULL, req->real_mode, req->real_uid,
		    req->real_gid, s->unknown_is_real, v);
}

/* The st_mode stat shows with rec over req's file. */
uint32_t fe_srv_shown_mode(const struct fe_srv *s, const struct fe_req *req,
			   const struct fe_rec *rec)
{
	struct fe_view v;

	view(s, req, rec, &v);
	return v.mode;
}

/* Fill rep with what stat should show (view()). */
void fe_srv_reply_rec(const struct fe_srv *s, const struct fe_req *req,
		      const struct fe_rec *rec, struct fe_rep *rep)
{
	struct fe_view v;

	view(s, req, rec, &v);
	rep->flags = (rec ? FE_R_FOUND : 0) | (v.dev ? FE_R_DEV : 0);
	rep->uid = v.uid;
	rep->gid = v.gid;
	rep->mode = v.mode;
	rep->rdev = v.rdev;
}

/* Store rec at req's key and reply its effective values, or the error. */
void fe_srv_store(struct fe_srv *s, const struct fe_req *req,
		  const struct fe_rec *rec, const char *tail,
		  struct fe_rep *rep)
{
	int r = put(s, req->dev, req->ino, rec, tail);

	if (r < 0)
		rep->err = r;
	else
		fe_srv_reply_rec(s, req, rec, rep);
}

void fe_op_GET(struct fe_srv *s, struct fe_call *call)
{
	const struct fe_req *req = call->req;
	struct fe_rep *rep = &call->rep;
	struct fe_rec rec;

	fe_srv_reply_rec(s, req, fe_srv_lookup(s, req, &rec) ? &rec : NULL,
			 rep);
}

/* A directory that is set-gid for real and gets a group: its mode is
 * recorded, so that root's nsgid counts it and the shim gives its group
 * to the files made in it (even those fopen makes without a word). */
static void keep_real_sgid(struct fe_rec *rec, const struct fe_req *req)
{
	if ((req->real_mode & S_ISGID) && !(rec->flags & FE_REC_MODE_SET)) {
		rec->mode = (rec->mode & S_IFMT) | (req->real_mode & PERM_BITS);
		rec->flags |= FE_REC_MODE_SET;
	}
}

/* chown as the kernel does it: even with no id changed, a non-directory
 * loses setuid, and setgid when group-exec is set (setgid without it
 * means mandatory locking and stays). */
void fe_op_CHOWN(struct fe_srv *s, struct fe_call *call)
{
	const struct fe_req *req = call->req;
	const char *tail = call->tail;
	struct fe_rep *rep = &call->rep;
	struct fe_rec rec;
	uint32_t shown, perm, kept;

	if (!fe_srv_lookup(s, req, &rec))
		fe_srv_new_rec(s, req, &rec);
	if (req->flags & FE_F_UID)
		rec.uid = req->uid;
	if (req->flags & FE_F_GID)
		rec.gid = req->gid;
	shown = fe_srv_shown_mode(s, req, &rec);
	if (!S_ISDIR(shown)) {
		perm = shown & PERM_BITS;
		kept = perm & ~(uint32_t)S_ISUID;
		if (kept & S_IXGRP)
			kept &= ~(uint32_t)S_ISGID;
		if (kept != perm) {
			rec.mode = (rec.mode & S_IFMT) | kept;
			rec.flags |= FE_REC_MODE_SET;
		}
		/* And its file capabilities (the kernel's killpriv). */
		fe_xattr_store_chown(s, req, &rec, tail, rep);
		return;
	}
	keep_real_sgid(&rec, req);
	fe_srv_store(s, req, &rec, tail, rep);
}

void fe_op_CHMOD(struct fe_srv *s, struct fe_call *call)
{
	const struct fe_req *req = call->req;
	const char *tail = call->tail;
	struct fe_rep *rep = &call->rep;
	struct fe_rec rec;

	if (!fe_srv_lookup(s, req, &rec))
		fe_srv_new_rec(s, req, &rec);
	if (req->flags & FE_F_MODE) {
		rec.mode = (rec.mode & S_IFMT) | (req->mode & PERM_BITS);
		rec.flags |= FE_REC_MODE_SET;
	}
	fe_xattr_store_chmod(s, req, &rec, tail, rep);
}

/* The owner a new inode gets: the ids given, else the defaults. */
static void new_owner(const struct fe_srv *s, const struct fe_req *req,
		      struct fe_rec *rec)
{
	fe_srv_new_rec(s, req, rec);
	if (req->flags & FE_F_UID)
		rec->uid = req->uid;
	if (req->flags & FE_F_GID)
		rec->gid = req->gid;
}

/* A device node is a regular file for real: its type and rdev are faked.
 * Other types are made for real and only their permissions are faked. */
void fe_op_MKNOD(struct fe_srv *s, struct fe_call *call)
{
	const struct fe_req *req = call->req;
	const char *tail = call->tail;
	struct fe_rep *rep = &call->rep;
	struct fe_rec rec;
	uint32_t type = req->mode & S_IFMT;

	del(s, req->dev, req->ino);
	new_owner(s, req, &rec);
	if (req->flags & FE_F_MODE) {
		rec.mode = req->mode;
		rec.flags |= FE_REC_MODE_SET;
		if (type == S_IFCHR || type == S_IFBLK) {
			rec.flags |= FE_REC_DEV_SET;
			if (req->flags & FE_F_RDEV)
				rec.rdev = req->rdev;
		}
	}
	fe_srv_store(s, req, &rec, tail, rep);
}

/* A new inode: whatever was recorded at a reused (dev, ino) goes.  Most
 * files made as the fake root look exactly like a file without a record,
 * and get none: the table stays small. */
void fe_op_CREATE(struct fe_srv *s, struct fe_call *call)
{
	const struct fe_req *req = call->req;
	const char *tail = call->tail;
	struct fe_rep *rep = &call->rep;
	struct fe_rec rec;

	del(s, req->dev, req->ino);
	new_owner(s, req, &rec);
	if (req->flags & FE_F_MODE) {
		rec.mode |= req->mode & PERM_BITS;
		rec.flags |= FE_REC_MODE_SET;
	}
	if (rec.uid == default_uid(s, req) && rec.gid == default_gid(s, req) &&
	    !rec.flags) {
		fe_srv_reply_rec(s, req, NULL, rep);
		return;
	}
	fe_srv_store(s, req, &rec, tail, rep);
}

/* The inode has no name left: its record waits, as an orphan, for no
 * process to have it open (fe_reap_orphans()). */
void fe_op_DROP(struct fe_srv *s, struct fe_call *call)
{
	const struct fe_req *req = call->req;
	struct fe_rep *rep = &call->rep;
	struct fe_rec rec;

	if (!fe_srv_lookup_own(s, req, &rec))
		return;
	rep->flags = FE_R_FOUND;
	if (rec.flags & FE_REC_ORPHAN)
		return;
	rec.flags |= FE_REC_ORPHAN;
	if (put(s, req->dev, req->ino, &rec, NULL) == 0)
		s->orphans++;
}

void fe_op_RENAME(struct fe_srv *s, struct fe_call *call)
{
	const struct fe_req *req = call->req;
	const char *tail = call->tail;
	struct fe_rep *rep = &call->rep;
	struct fe_rec rec;

	if (fe_srv_lookup_own(s, req, &rec))
		fe_srv_store(s, req, &rec, tail, rep);
	else
		fe_srv_reply_rec(s, req, NULL, rep);
}

/* SESSION: this connection is the launcher's, for CMD's pid (ino) and
 * process group (dev). */
void fe_op_SESSION(struct fe_srv *s, struct fe_call *call)
{
	(void)s;
	call->sess->pid = (pid_t)call->req->ino;
	call->sess->pgid = (pid_t)call->req->dev;
	call->sess->attached = true;
}

void fe_op_DETACH(struct fe_srv *s, struct fe_call *call)
{
	(void)s;
	call->sess->attached = false;
}

void fe_op_STATS(struct fe_srv *s, struct fe_call *call)
{
	call->rep.count[0] = fe_tab_count(&s->tab);
	call->rep.count[1] = s->clients;
}

void fe_op_MAP(struct fe_srv *s, struct fe_call *call)
{
	int n = fe_tab_map_fds(&s->tab, call->fds);

	if (n < 0) {
		call->rep.err = n;
		return;
	}
	call->rep.count[0] = (uint64_t)n;
	call->nfds = n;
}

/* Each op's handler, by the name FE_OPS gives it: an op without one does
 * not link. */
static fe_op_fn *const handlers[FE_OP_COUNT] = {
#define HANDLER(name, flags, tail, kind) [FE_OP_##name] = fe_op_##name,
	FE_OPS(HANDLER)
#undef HANDLER
};

static void serve_call(struct fe_srv *s, struct fe_call *call)
{
	const struct fe_req *req = call->req;

	memset(&call->rep, 0, sizeof(call->rep));
	call->reply = &call->rep;
	call->reply_len = sizeof(call->rep);
	call->nfds = 0;
	call->close_fds = false;
	call->later = false;
	s->rep_data = NULL;
	s->rep_len = 0;
	handlers[req->op](s, call);
	if (req->flags & FE_F_ONEWAY) {
		/* Lowered even for a change that failed: its readers must
		 * not wait on it for ever.  Nobody hears of the failure but
		 * the count. */
		if (fe_op_pends(req->op))
			fe_tab_pend_done(&s->tab, req->dev, req->ino);
		if (call->rep.err)
			s->lost++;
	}
}

/* ---- the trace ---- */

/* The ops whose changes are traced: every one that changes a record. */
static bool traced(uint16_t op)
{
	switch (op) {
	case FE_OP_CHOWN:
	case FE_OP_CHMOD:
	case FE_OP_MKNOD:
	case FE_OP_CREATE:
	case FE_OP_DROP:
	case FE_OP_RENAME:
	case FE_OP_RENAMEDIR:
	case FE_OP_XSET:
	case FE_OP_XDEL:
		return true;
	}
	return false;
}

/* What req's file shows now, from its live record or from the real file;
 * with xcopy and pcopy (the state before a change, which the put may move
 * in the arena) its xattr block and path are copied there. */
static void trace_side(struct fe_srv *s, const struct fe_req *req,
		       struct fe_trace_side *side, unsigned char *xcopy,
		       char *pcopy)
{
	struct fe_rec rec;
	struct fe_rep v;
	bool found = fe_tab_find(&s->tab, req->dev, req->ino, &rec) &&
		     !stale(&rec, req);
	const char *path;

	memset(side, 0, sizeof(*side));
	fe_srv_reply_rec(s, req, found ? &rec : NULL, &v);
	side->rec = found;
	side->orphan = found && (rec.flags & FE_REC_ORPHAN);
	side->uid = v.uid;
	side->gid = v.gid;
	side->mode = v.mode;
	side->dev = v.flags & FE_R_DEV;
	side->rdev = v.rdev;
	if (!found)
		return;
	fe_tab_xattrs(&s->tab, &rec, &side->xattrs, &side->xattrs_len);
	path = fe_tab_path(&s->tab, &rec);
	side->path = path && *path ? path : NULL;
	if (!xcopy)
		return;
	if (side->xattrs && side->xattrs_len <= FE_XATTR_REC_MAX) {
		memcpy(xcopy, side->xattrs, side->xattrs_len);
		side->xattrs = xcopy;
	} else {
		side->xattrs = NULL; /* a journal's outsize block: not shown */
		side->xattrs_len = 0;
	}
	if (side->path && strlen(side->path) <= FE_PATH_MAX) {
		strcpy(pcopy, side->path);
		side->path = pcopy;
	} else {
		side->path = NULL;
	}
}

/* The line of a change that was applied (it counted in s->changes). */
static void trace_line(struct fe_srv *s, const struct fe_sess *sess,
		       const struct fe_req *req, const char *tail,
		       const struct fe_trace_side *old, uint64_t changes)
{
	struct fe_trace_change c = {
		.pid = sess->peer,
		.comm = sess->comm,
		.dev = req->dev,
		.ino = req->ino,
	};
	struct fe_trace_side new;
	struct fe_xreq x;

	trace_side(s, req, &new, NULL, NULL);
	switch (req->op) {
	case FE_OP_CHOWN:
		c.op = "chown";
		c.path = tail;
		c.always_owner = true;
		break;
	case FE_OP_CHMOD:
		c.op = "chmod";
		c.path = tail;
		c.always_mode = true;
		break;
	case FE_OP_MKNOD:
		c.op = "mknod";
		c.path = tail;
		c.always_owner = c.always_mode = c.always_type = true;
		break;
	case FE_OP_CREATE:
		c.op = "create";
		c.path = tail;
		c.always_owner = c.always_mode = true;
		break;
	case FE_OP_DROP:
		c.op = "drop";
		break;
	case FE_OP_RENAME:
		c.op = "rename";
		c.path = tail;
		c.always_path = true;
		break;
	case FE_OP_RENAMEDIR:
		c.op = "renamedir";
		c.path = tail + strlen(tail) + 1;
		c.always_path = true;
		c.moved = changes;
		break;
	case FE_OP_XSET:
	case FE_OP_XDEL:
		fe_xreq_of(req, tail, &x);
		c.op = req->op == FE_OP_XSET ? "xset" : "xdel";
		c.path = x.path;
		c.xname = x.name;
		break;
	}
	if (req->op == FE_OP_RENAMEDIR) {
		/* The directory may have no record of its own: the paths
		 * are the request's. */
		new.path = c.path;
		if (!old->path) {
			struct fe_trace_side o = *old;

			o.path = tail;
			fe_trace_add(s->trace, &c, &o, &new);
			return;
		}
	}
	fe_trace_add(s->trace, &c, old, &new);
}

void fe_serve_call(struct fe_srv *s, struct fe_call *call)
{
	const struct fe_req *req = call->req;
	struct fe_trace_side old;
	uint64_t changes = s->changes;
	bool tr = s->trace && traced(req->op);

	if (tr)
		trace_side(s, req, &old, s->trace->xold, s->trace->pold);
	serve_call(s, call);
	if (tr && !call->rep.err && s->changes != changes)
		trace_line(s, call->sess, req, call->tail, &old,
			   s->changes - changes);
}

void fe_serve_req(struct fe_srv *s, struct fe_sess *sess,
		  const struct fe_req *req, const char *tail,
		  struct fe_rep *rep)
{
	struct fe_call call = { .req = req, .tail = tail, .sess = sess };

	fe_serve_call(s, &call);
	*rep = call.rep;
}
