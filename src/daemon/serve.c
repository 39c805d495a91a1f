/*
 * Request checks and the ops; see serve.h and proto.h.  Everything a
 * message asks is checked by fe_req_check() before fe_serve_req() runs,
 * so the ops trust their input; they never log, never exit, and leave
 * the reply's unused fields zero.
 */
#include "serve.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/acl.h"
#include "common/util.h"
#include "journal/journal.h"

/* Table slots to start with: 40 KiB, enough for a small build. */
#define SRV_INIT_CAP 1024

#define PERM_BITS 07777u

static const uint32_t op_flags[FE_OP_COUNT] = {
#define OP_FLAGS(name, flags, tail) [FE_OP_##name] = (flags),
	FE_OPS(OP_FLAGS)
#undef OP_FLAGS
};

static const unsigned char op_tail[FE_OP_COUNT] = {
#define OP_TAIL(name, flags, tail) [FE_OP_##name] = (tail),
	FE_OPS(OP_TAIL)
#undef OP_TAIL
};

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
	s->xbuf = NULL;
}

/* The ops that leave real_mode unused, so that 0 is accepted there. */
static bool ignores_real_mode(uint16_t op)
{
	return op == FE_OP_SESSION || op == FE_OP_DETACH ||
	       op == FE_OP_STATS || op == FE_OP_CHECKPOINT ||
	       op == FE_OP_STATUS || op == FE_OP_MAP;
}

/* One path of a tail: 2..FE_PATH_MAX bytes whose only NUL is the last. */
static const char *path_problem(const char *p, uint32_t n)
{
	if (n < 2)
		return "empty path";
	if (n > FE_PATH_MAX)
		return "path too long";
	if (p[n - 1] != '\0')
		return "unterminated path";
	if (memchr(p, '\0', n - 1))
		return "NUL inside path";
	return NULL;
}

/* The check of the tail alone: one path (two for FE_TAIL_TWO), or
 * nothing when the op's rule allows. */
static const char *tail_problem(unsigned rule, const char *tail, uint32_t n)
{
	const char *nul;
	uint32_t first;

	if (n == 0)
		return rule == FE_TAIL_REQ || rule == FE_TAIL_TWO ?
			       "missing path" : NULL;
	if (rule == FE_TAIL_NONE)
		return "tail on an op that takes none";
	if (rule != FE_TAIL_TWO)
		return path_problem(tail, n);
	nul = memchr(tail, '\0', n);
	if (!nul || nul == tail + n - 1)
		return "missing second path";
	first = (uint32_t)(nul - tail) + 1;
	return path_problem(tail, first) ?: path_problem(nul + 1, n - first);
}

/* An xattr op's tail (FE_TAIL_X in proto.h). */
static const char *xtail_problem(uint16_t op, const char *tail, uint32_t n)
{
	struct fe_xhdr x;
	const char *name;
	uint32_t rest;

	if (n < sizeof(x))
		return "short xattr tail";
	memcpy(&x, tail, sizeof(x));
	if (x.pad)
		return "non-zero xattr padding";
	if (op == FE_OP_XLIST) {
		if (x.name_len || x.value_len)
			return "name or value on XLIST";
		if (x.size > FE_XATTR_LIST_MAX)
			return "xattr list size too large";
		return n == sizeof(x) ? NULL : "bytes after the xattr header";
	}
	if (x.name_len < 2 || x.name_len > FE_XATTR_NAME_MAX + 1)
		return "bad xattr name length";
	if (op != FE_OP_XSET && x.value_len)
		return "xattr value on an op that takes none";
	if (x.value_len > FE_XATTR_SIZE_MAX)
		return "xattr value too long";
	if (op == FE_OP_XGET ? x.size > FE_XATTR_SIZE_MAX : x.size != 0)
		return "bad xattr size";
	if ((uint64_t)n - sizeof(x) < (uint64_t)x.name_len + x.value_len)
		return "xattr tail shorter than its lengths";
	name = tail + sizeof(x);
	if (name[x.name_len - 1] != '\0')
		return "unterminated xattr name";
	if (memchr(name, '\0', x.name_len - 1))
		return "NUL inside xattr name";
	rest = n - (uint32_t)sizeof(x) - x.name_len - x.value_len;
	if (!rest)
		return NULL;
	if (op != FE_OP_XSET)
		return "bytes after the xattr name";
	return path_problem(name + x.name_len + x.value_len, rest);
}

static const char *req_problem(const void *buf, size_t len)
{
	struct fe_req req;
	uint32_t type;

	if (len < sizeof(req))
		return "short message";
	/* Copied out: buf need not be aligned. */
	memcpy(&req, buf, sizeof(req));
	if (len - sizeof(req) != req.tail_len)
		return "length does not match tail_len";
	if (req.tail_len > FE_TAIL_MAX)
		return "tail too long";
	if (req.version != FE_PROTO_VERSION)
		return "wrong protocol version";
	if (req.op == FE_OP_NONE || req.op >= FE_OP_COUNT)
		return "unknown op";
	if (req.flags & ~op_flags[req.op])
		return "flags outside the op's mask";
	if (req.btag && ignores_real_mode(req.op))
		return "birth-time tag on an op that names no file";
	if (req.real_mode & ~(uint32_t)(S_IFMT | PERM_BITS))
		return "bad real_mode";
	type = req.real_mode & S_IFMT;
	if (!fe_type_valid(type) && !(type == 0 && ignores_real_mode(req.op)))
		return "bad real_mode type";
	if ((req.op == FE_OP_CHMOD || req.op == FE_OP_CREATE) &&
	    (req.flags & FE_F_MODE) && (req.mode & ~PERM_BITS))
		return "mode outside 07777";
	if (req.op == FE_OP_MKNOD && (req.flags & FE_F_MODE)) {
		if (req.mode & ~(uint32_t)(S_IFMT | PERM_BITS))
			return "bad mknod mode";
		switch (req.mode & S_IFMT) {
		case S_IFCHR:
		case S_IFBLK:
		case S_IFIFO:
		case S_IFSOCK:
		case S_IFREG:
			break;
		default:
			return "bad mknod type";
		}
	}
	/* Keys and devices fit the kernel's 32-bit dev_t (fakeenv/map.h):
	 * the slots keep 32 bits of them. */
	if (!ignores_real_mode(req.op) && req.dev > FE_DEV_MAX)
		return "dev past 32 bits";
	if (req.op == FE_OP_MKNOD && (req.flags & FE_F_RDEV) &&
	    req.rdev > FE_DEV_MAX)
		return "rdev past 32 bits";
	/* (pid_t)ino must not turn negative: kill(-1, ...) would reach
	 * every process of the user. */
	if (req.op == FE_OP_SESSION && (req.ino > INT_MAX || req.dev > INT_MAX))
		return "session pid out of range";
	if (op_tail[req.op] == FE_TAIL_X)
		return xtail_problem(req.op, (const char *)buf + sizeof(req),
				     req.tail_len);
	return tail_problem(op_tail[req.op], (const char *)buf + sizeof(req),
			    req.tail_len);
}

int fe_req_check(const void *buf, size_t len, const char **why)
{
	const char *problem = req_problem(buf, len);

	if (why)
		*why = problem;
	return problem ? -EPROTO : 0;
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
static void new_rec(const struct fe_srv *s, const struct fe_req *req,
		    struct fe_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->uid = default_uid(s, req);
	rec->gid = default_gid(s, req);
	rec->mode = req->real_mode & S_IFMT;
	rec->btag = req->btag;
}

/*
 * An absolute path in its lexical normal form: no empty, "." or ".."
 * components, no trailing slash.  The paths are hints for the journal's
 * check at load, but a directory's rename moves every record under it by
 * prefix, and "/a/./b" must be found under "/a".  ("x/.." is taken
 * lexically: a symlink x makes the hint wrong, and the load drops it.)
 * out has room for strlen(in) + 2 bytes; a relative path is copied.
 */
static void norm_path(const char *in, char *out)
{
	size_t n = 0;

	if (in[0] != '/') {
		strcpy(out, in);
		return;
	}
	while (*in) {
		const char *c;
		size_t len;

		while (*in == '/')
			in++;
		c = in;
		while (*in && *in != '/')
			in++;
		len = (size_t)(in - c);
		if (len == 0 || (len == 1 && c[0] == '.'))
			continue;
		if (len == 2 && c[0] == '.' && c[1] == '.') {
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--; /* the slash before it */
			continue;
		}
		out[n++] = '/';
		memcpy(out + n, c, len);
		n += len;
	}
	if (n == 0)
		out[n++] = '/';
	out[n] = '\0';
}

/* Every change to the table goes through put(), put_x() and del(),
 * which count it for the checkpoint logic.  put_x() also replaces the
 * record's xattrs with the block at blk (len 0: none). */
static int put_core(struct fe_srv *s, uint64_t dev, uint64_t ino,
		    const struct fe_rec *rec, const char *path, bool set_x,
		    const void *blk, size_t len)
{
	char buf[FE_PATH_MAX + 1];
	int r;

	if (path && strlen(path) < FE_PATH_MAX) {
		norm_path(path, buf);
		path = buf;
	}
	r = set_x ? fe_tab_put_xattrs(&s->tab, dev, ino, rec, path, blk, len) :
		    fe_tab_put(&s->tab, dev, ino, rec, path);

	if (r == 0)
		s->changes++;
	return r;
}

static int put(struct fe_srv *s, uint64_t dev, uint64_t ino,
	       const struct fe_rec *rec, const char *path)
{
	return put_core(s, dev, ino, rec, path, false, NULL, 0);
}

static int put_x(struct fe_srv *s, uint64_t dev, uint64_t ino,
		 const struct fe_rec *rec, const char *path, const void *blk,
		 size_t len)
{
	return put_core(s, dev, ino, rec, path, true, blk, len);
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
static bool lookup(struct fe_srv *s, const struct fe_req *req,
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
static bool lookup_own(struct fe_srv *s, const struct fe_req *req,
		       struct fe_rec *rec)
{
	if (!fe_tab_find(&s->tab, req->dev, req->ino, rec))
		return false;
	if (rec->btag && req->btag && rec->btag != req->btag)
		return false;
	return lookup(s, req, rec);
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
static uint32_t shown_mode(const struct fe_srv *s, const struct fe_req *req,
			   const struct fe_rec *rec)
{
	struct fe_view v;

	view(s, req, rec, &v);
	return v.mode;
}

/* Fill rep with what stat should show (view()). */
static void reply_rec(const struct fe_srv *s, const struct fe_req *req,
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
static void store(struct fe_srv *s, const struct fe_req *req,
		  const struct fe_rec *rec, const char *tail,
		  struct fe_rep *rep)
{
	int r = put(s, req->dev, req->ino, rec, tail);

	if (r < 0)
		rep->err = r;
	else
		reply_rec(s, req, rec, rep);
}

#define CAP_NAME "security.capability"

/* Defined with the xattr ops below. */
static void store_without(struct fe_srv *s, const struct fe_req *req,
			  const struct fe_rec *rec, const char *tail,
			  const char *name, struct fe_rep *rep);
static void store_chmod(struct fe_srv *s, const struct fe_req *req,
			const struct fe_rec *rec, const char *tail,
			struct fe_rep *rep);

static void op_get(struct fe_srv *s, const struct fe_req *req,
		   struct fe_rep *rep)
{
	struct fe_rec rec;

	reply_rec(s, req, lookup(s, req, &rec) ? &rec : NULL, rep);
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
static void op_chown(struct fe_srv *s, const struct fe_req *req,
		     const char *tail, struct fe_rep *rep)
{
	struct fe_rec rec;
	uint32_t shown, perm, kept;

	if (!lookup(s, req, &rec))
		new_rec(s, req, &rec);
	if (req->flags & FE_F_UID)
		rec.uid = req->uid;
	if (req->flags & FE_F_GID)
		rec.gid = req->gid;
	shown = shown_mode(s, req, &rec);
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
		store_without(s, req, &rec, tail, CAP_NAME, rep);
		return;
	}
	keep_real_sgid(&rec, req);
	store(s, req, &rec, tail, rep);
}

static void op_chmod(struct fe_srv *s, const struct fe_req *req,
		     const char *tail, struct fe_rep *rep)
{
	struct fe_rec rec;

	if (!lookup(s, req, &rec))
		new_rec(s, req, &rec);
	if (req->flags & FE_F_MODE) {
		rec.mode = (rec.mode & S_IFMT) | (req->mode & PERM_BITS);
		rec.flags |= FE_REC_MODE_SET;
	}
	store_chmod(s, req, &rec, tail, rep);
}

/* The owner a new inode gets: the ids given, else the defaults. */
static void new_owner(const struct fe_srv *s, const struct fe_req *req,
		      struct fe_rec *rec)
{
	new_rec(s, req, rec);
	if (req->flags & FE_F_UID)
		rec->uid = req->uid;
	if (req->flags & FE_F_GID)
		rec->gid = req->gid;
}

/* A device node is a regular file for real: its type and rdev are faked.
 * Other types are made for real and only their permissions are faked. */
static void op_mknod(struct fe_srv *s, const struct fe_req *req,
		     const char *tail, struct fe_rep *rep)
{
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
	store(s, req, &rec, tail, rep);
}

/* A new inode: whatever was recorded at a reused (dev, ino) goes.  Most
 * files made as the fake root look exactly like a file without a record,
 * and get none: the table stays small. */
static void op_create(struct fe_srv *s, const struct fe_req *req,
		      const char *tail, struct fe_rep *rep)
{
	struct fe_rec rec;

	del(s, req->dev, req->ino);
	new_owner(s, req, &rec);
	if (req->flags & FE_F_MODE) {
		rec.mode |= req->mode & PERM_BITS;
		rec.flags |= FE_REC_MODE_SET;
	}
	if (rec.uid == default_uid(s, req) && rec.gid == default_gid(s, req) &&
	    !rec.flags) {
		reply_rec(s, req, NULL, rep);
		return;
	}
	store(s, req, &rec, tail, rep);
}

/* The inode has no name left: its record waits, as an orphan, for no
 * process to have it open (fe_srv_reap()). */
static void op_drop(struct fe_srv *s, const struct fe_req *req,
		    struct fe_rep *rep)
{
	struct fe_rec rec;

	if (!lookup_own(s, req, &rec))
		return;
	rep->flags = FE_R_FOUND;
	if (rec.flags & FE_REC_ORPHAN)
		return;
	rec.flags |= FE_REC_ORPHAN;
	if (put(s, req->dev, req->ino, &rec, NULL) == 0)
		s->orphans++;
}

static void op_rename(struct fe_srv *s, const struct fe_req *req,
		      const char *tail, struct fe_rep *rep)
{
	struct fe_rec rec;

	if (lookup_own(s, req, &rec))
		store(s, req, &rec, tail, rep);
	else
		reply_rec(s, req, NULL, rep);
}

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
		if (put(s, keys[i].dev, keys[i].ino, &rec, np) < 0)
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
static void op_renamedir(struct fe_srv *s, const struct fe_req *req,
			 const char *tail, struct fe_rep *rep)
{
	char from[FE_PATH_MAX + 1], to[FE_PATH_MAX + 1];
	struct pmove m[2];
	struct fe_rec rec;
	size_t nm = 0;
	int err;

	norm_path(tail, from);
	norm_path(tail + strlen(tail) + 1, to);
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
	if (lookup_own(s, req, &rec))
		store(s, req, &rec, to, rep);
	else
		reply_rec(s, req, NULL, rep);
	if (err && !rep->err)
		rep->err = err;
}

/* ---- xattrs ---- */

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

/* Store rec, with its xattrs less the one named name when it has it. */
static void store_without(struct fe_srv *s, const struct fe_req *req,
			  const struct fe_rec *rec, const char *tail,
			  const char *name, struct fe_rep *rep)
{
	const unsigned char *blk;
	struct xent e;
	size_t len;
	int r;

	fe_tab_xattrs(&s->tab, rec, &blk, &len);
	/* (A journal may have held more than xbuf takes: kept whole.) */
	if (!blk || len > FE_XATTR_REC_MAX ||
	    !blk_find(blk, len, name, strlen(name), &e)) {
		store(s, req, rec, tail, rep);
		return;
	}
	len = blk_without(blk, len, &e, s->xbuf);
	r = put_x(s, req->dev, req->ino, rec, tail, s->xbuf, len);
	if (r < 0)
		rep->err = r;
	else
		reply_rec(s, req, rec, rep);
}

/* Store rec after a chmod: a kept access ACL follows the new bits. */
static void store_chmod(struct fe_srv *s, const struct fe_req *req,
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
		store(s, req, rec, tail, rep);
		return;
	}
	memcpy(s->xbuf, blk, len);
	fe_acl_chmod(s->xbuf + (e.val - blk), e.vlen, shown_mode(s, req, rec) & PERM_BITS);
	r = put_x(s, req->dev, req->ino, rec, tail, s->xbuf, len);
	if (r < 0)
		rep->err = r;
	else
		reply_rec(s, req, rec, rep);
}

/* The parts of an xattr op's tail, which fe_req_check() passed. */
struct xreq {
	struct fe_xhdr h;
	const char *name;         /* NUL-terminated */
	size_t nlen;              /* strlen(name) */
	const unsigned char *val; /* h.value_len bytes */
	const char *path;         /* XSET's path, or NULL */
};

static void xreq_of(const struct fe_req *req, const char *tail,
		    struct xreq *x)
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

static void op_xset(struct fe_srv *s, const struct fe_req *req,
		    const char *tail, struct fe_rep *rep)
{
	const unsigned char *blk;
	struct fe_rec rec;
	struct xreq x;
	struct xent e;
	size_t len, n;
	bool found, keep = true;
	int r;

	xreq_of(req, tail, &x);
	if (!lookup(s, req, &rec))
		new_rec(s, req, &rec);
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
		    !S_ISDIR(shown_mode(s, req, &rec))) {
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
				   (shown_mode(s, req, &rec) & 07000) | perm;
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
	r = put_x(s, req->dev, req->ino, &rec, x.path, s->xbuf, n);
	if (r < 0)
		rep->err = r;
	else
		reply_rec(s, req, &rec, rep);
}

/* The kept xattr a request names: its record, the record's block and the
 * entry.  False (rep->err -ENODATA) when there is none. */
static bool find_kept(struct fe_srv *s, const struct fe_req *req,
		      const char *tail, struct xreq *x, struct fe_rec *rec,
		      const unsigned char **blk, size_t *len, struct xent *e,
		      struct fe_rep *rep)
{
	*blk = NULL;
	*len = 0;
	xreq_of(req, tail, x);
	if (lookup(s, req, rec))
		fe_tab_xattrs(&s->tab, rec, blk, len);
	if (!*blk || !blk_find(*blk, *len, x->name, x->nlen, e)) {
		rep->err = -ENODATA;
		return false;
	}
	return true;
}

static void op_xget(struct fe_srv *s, const struct fe_req *req,
		    const char *tail, struct fe_rep *rep)
{
	const unsigned char *blk;
	struct fe_rec rec;
	struct xreq x;
	struct xent e;
	size_t len;

	if (find_kept(s, req, tail, &x, &rec, &blk, &len, &e, rep))
		reply_bytes(s, e.val, e.vlen, x.h.size, rep);
}

static void op_xlist(struct fe_srv *s, const struct fe_req *req,
		     const char *tail, struct fe_rep *rep)
{
	const unsigned char *blk = NULL, *v;
	size_t len = 0, pos = 0, n = 0, nl, vl;
	struct fe_rec rec;
	const char *name;
	struct xreq x;

	xreq_of(req, tail, &x);
	if (lookup(s, req, &rec))
		fe_tab_xattrs(&s->tab, &rec, &blk, &len);
	while (blk && fe_jnl_xattr_next(blk, len, &pos, &name, &nl, &v, &vl) &&
	       n + nl + 1 <= FE_XATTR_LIST_MAX) {
		memcpy(s->xbuf + n, name, nl);
		s->xbuf[n + nl] = '\0';
		n += nl + 1;
	}
	reply_bytes(s, s->xbuf, n, x.h.size, rep);
}

static void op_xdel(struct fe_srv *s, const struct fe_req *req,
		    const char *tail, struct fe_rep *rep)
{
	const unsigned char *blk;
	struct fe_rec rec;
	struct xreq x;
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
	r = put_x(s, req->dev, req->ino, &rec, NULL, s->xbuf, len);
	if (r < 0)
		rep->err = r;
}

static void serve_req(struct fe_srv *s, struct fe_sess *sess,
		      const struct fe_req *req, const char *tail,
		      struct fe_rep *rep)
{
	memset(rep, 0, sizeof(*rep));
	s->rep_data = NULL;
	s->rep_len = 0;
	switch (req->op) {
	case FE_OP_GET:
		op_get(s, req, rep);
		break;
	case FE_OP_CHOWN:
		op_chown(s, req, tail, rep);
		break;
	case FE_OP_CHMOD:
		op_chmod(s, req, tail, rep);
		break;
	case FE_OP_MKNOD:
		op_mknod(s, req, tail, rep);
		break;
	case FE_OP_CREATE:
		op_create(s, req, tail, rep);
		break;
	case FE_OP_DROP:
		op_drop(s, req, rep);
		break;
	case FE_OP_RENAME:
		op_rename(s, req, tail, rep);
		break;
	case FE_OP_RENAMEDIR:
		op_renamedir(s, req, tail, rep);
		break;
	case FE_OP_SESSION:
		sess->pid = (pid_t)req->ino;
		sess->pgid = (pid_t)req->dev;
		sess->attached = true;
		break;
	case FE_OP_DETACH:
		sess->attached = false;
		break;
	case FE_OP_STATS:
		rep->count[0] = fe_tab_count(&s->tab);
		rep->count[1] = s->clients;
		break;
	case FE_OP_MAP: {
		int fds[FE_MAP_FDS];
		int n = fe_tab_map_fds(&s->tab, fds);

		if (n < 0)
			rep->err = n;
		else
			rep->count[0] = (uint64_t)n;
		break;
	}
	case FE_OP_XSET:
		op_xset(s, req, tail, rep);
		break;
	case FE_OP_XGET:
		op_xget(s, req, tail, rep);
		break;
	case FE_OP_XLIST:
		op_xlist(s, req, tail, rep);
		break;
	case FE_OP_XDEL:
		op_xdel(s, req, tail, rep);
		break;
	default:
		/* fe_req_check() let no other op through. */
		rep->err = -EPROTO;
	}
	if (req->flags & FE_F_ONEWAY) {
		/* Lowered even for a change that failed: its readers must
		 * not wait on it for ever.  Nobody hears of the failure but
		 * the count. */
		if (fe_op_pends(req->op))
			fe_tab_pend_done(&s->tab, req->dev, req->ino);
		if (rep->err)
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
	reply_rec(s, req, found ? &rec : NULL, &v);
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
	struct xreq x;

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
		xreq_of(req, tail, &x);
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

void fe_serve_req(struct fe_srv *s, struct fe_sess *sess,
		  const struct fe_req *req, const char *tail,
		  struct fe_rep *rep)
{
	struct fe_trace_side old;
	uint64_t changes = s->changes;
	bool tr = s->trace && traced(req->op);

	if (tr)
		trace_side(s, req, &old, s->trace->xold, s->trace->pold);
	serve_req(s, sess, req, tail, rep);
	if (tr && !rep->err && s->changes != changes)
		trace_line(s, sess, req, tail, &old, s->changes - changes);
}
