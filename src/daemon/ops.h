/*
 * The daemon's ops: one handler per line of FE_OPS, found by name
 * (fe_op_GET for FE_OP_GET, ...), so that an op without its handler fails
 * the link, and what the op's handlers share about records.  serve.c holds
 * the record ops and the dispatch, xattr.c the xattr ops, status.c STATUS,
 * ckpt.c CHECKPOINT.  What the loop must do around a handler (drain first,
 * send fds or extra bytes, wait) is the op's kind (proto.h) and what the
 * handler put in its struct fe_call.
 */
#ifndef FE_DAEMON_OPS_H
#define FE_DAEMON_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "serve.h"

/* Carry out call->req on s and fill call's reply (fe_serve_call()). */
typedef void fe_op_fn(struct fe_srv *s, struct fe_call *call);

#define FE_OP_DECL(name, flags, tail, kind) fe_op_fn fe_op_##name;
FE_OPS(FE_OP_DECL)
#undef FE_OP_DECL

/* The live record at req's key into *rec; a stale one (a dead file's, at
 * a reused inode number) is deleted, counted and reported absent.  A
 * record of unknown birth time learns it from the first request that
 * knows it and agrees on the type: from then on it is checked. */
bool fe_srv_lookup(struct fe_srv *s, const struct fe_req *req,
		   struct fe_rec *rec);

/* The record at req's key if it is req's file, for the ops that may come
 * late, one-way and with no pending counter to order them (DROP, RENAME,
 * RENAMEDIR): a birth time that differs says the request is stale, not
 * the record, and nothing is deleted.  Else as fe_srv_lookup(). */
bool fe_srv_lookup_own(struct fe_srv *s, const struct fe_req *req,
		       struct fe_rec *rec);

/* A path hint in, in its lexical normal form, into out (room for
 * strlen(in) + 1 bytes); a relative one is copied. */
void fe_srv_norm_path(const char *in, char *out);

/* A fresh record for req's file: default owner, the real type, nothing
 * faked. */
void fe_srv_new_rec(const struct fe_srv *s, const struct fe_req *req,
		    struct fe_rec *rec);

/* The st_mode stat shows with rec (NULL: none) over req's file, by
 * fe_rec_view(), the rule the shim's reader applies too. */
uint32_t fe_srv_shown_mode(const struct fe_srv *s, const struct fe_req *req,
			   const struct fe_rec *rec);

/* Every change to the table goes through fe_srv_put() and serve.c's
 * del(), which count it for the checkpoints.  fe_srv_put() stores rec at
 * (dev, ino) with path as its hint (NULL: keep the old one), normalised
 * lexically; with set_x, its xattrs become the block blk of len bytes
 * (0: none).  Returns 0 or -errno (table.h). */
int fe_srv_put(struct fe_srv *s, uint64_t dev, uint64_t ino,
	       const struct fe_rec *rec, const char *path, bool set_x,
	       const void *blk, size_t len);

/* Fill rep with what stat shows of req's file with rec (NULL: none). */
void fe_srv_reply_rec(const struct fe_srv *s, const struct fe_req *req,
		      const struct fe_rec *rec, struct fe_rep *rep);

/* fe_srv_put() rec at req's key, then reply its effective values, or the
 * error. */
void fe_srv_store(struct fe_srv *s, const struct fe_req *req,
		  const struct fe_rec *rec, const char *path,
		  struct fe_rep *rep);

/* A chown or chmod's record stored, with the xattrs those change (xattr.c):
 * a chown of a non-directory loses security.capability (the kernel's
 * killpriv), a chmod rewrites a kept access ACL to the new bits. */
void fe_xattr_store_chown(struct fe_srv *s, const struct fe_req *req,
			  const struct fe_rec *rec, const char *tail,
			  struct fe_rep *rep);
void fe_xattr_store_chmod(struct fe_srv *s, const struct fe_req *req,
			  const struct fe_rec *rec, const char *tail,
			  struct fe_rep *rep);

/* The parts of an xattr op's tail, which fe_req_check() passed. */
struct fe_xreq {
	struct fe_xhdr h;
	const char *name;         /* NUL-terminated */
	size_t nlen;              /* strlen(name) */
	const unsigned char *val; /* h.value_len bytes */
	const char *path;         /* XSET's path, or NULL */
};

void fe_xreq_of(const struct fe_req *req, const char *tail,
		struct fe_xreq *x);

#endif
