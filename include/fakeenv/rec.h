/*
 * What a change that shows in stat (fe_op_pends(): CHOWN, CHMOD, MKNOD,
 * CREATE) does to the record at its key, as the daemon's handlers do it
 * (src/daemon/serve.c), on a copy of a slot of the shared table.  The
 * shim lays its own changes still in its ring over the table with it, so
 * that a read of a change it made needs not wait for the daemon to take
 * it.  tests/unit/test_overlay.c holds this and the daemon to the same
 * results.
 *
 * What it leaves out shows in no stat: paths, and the xattrs a CHOWN
 * drops (security.capability) or a CHMOD rewrites.  FE_REC_XATTR stays
 * as it was, so a reader that trusts it asks the daemon, as it would
 * have, where the daemon may since have dropped the last one.
 */
#ifndef FAKEENV_REC_H
#define FAKEENV_REC_H

#include "fakeenv/map.h"
#include "fakeenv/proto.h"

/* The record a file without one gets when a change makes it one. */
static inline void fe_rec_fresh(struct fe_slot *rec, const struct fe_req *req,
				bool unknown_is_real)
{
	rec->uid = unknown_is_real ? req->real_uid : 0;
	rec->gid = unknown_is_real ? req->real_gid : 0;
	rec->mode = (uint16_t)(req->real_mode & S_IFMT);
	rec->rdev = 0;
	rec->btag = req->btag;
	rec->flags = FE_SLOT_USED;
}

/* The daemon's lookup: a stale record is no record, and a record of
 * unknown birth time learns req's. */
static inline void fe_rec_live(struct fe_slot *rec, const struct fe_req *req,
			       bool unknown_is_real)
{
	if ((rec->flags & FE_SLOT_USED) &&
	    fe_rec_stale(rec->mode, rec->flags, rec->btag, req->real_mode,
			 req->btag))
		rec->flags = 0;
	if (!(rec->flags & FE_SLOT_USED))
		fe_rec_fresh(rec, req, unknown_is_real);
	else if (!rec->btag)
		rec->btag = req->btag;
}

/* chown as the kernel does it: a non-directory loses setuid, and setgid
 * with group-exec; a directory set-gid for real keeps that recorded. */
static inline void fe_rec_chown(struct fe_slot *rec, const struct fe_req *req,
				bool unknown_is_real)
{
	struct fe_view v;

	fe_rec_live(rec, req, unknown_is_real);
	if (req->flags & FE_F_UID)
		rec->uid = req->uid;
	if (req->flags & FE_F_GID)
		rec->gid = req->gid;
	fe_rec_view(rec, req->real_mode, req->real_uid, req->real_gid,
		    unknown_is_real, &v);
	if (!S_ISDIR(v.mode)) {
		uint32_t perm = v.mode & FE_MAP_PERM_BITS;
		uint32_t kept = perm & ~(uint32_t)S_ISUID;

		if (kept & S_IXGRP)
			kept &= ~(uint32_t)S_ISGID;
		if (kept != perm) {
			rec->mode = (uint16_t)((rec->mode & S_IFMT) | kept);
			rec->flags |= FE_REC_MODE_SET;
		}
	} else if ((req->real_mode & S_ISGID) &&
		   !(rec->flags & FE_REC_MODE_SET)) {
		rec->mode = (uint16_t)((rec->mode & S_IFMT) |
				       (req->real_mode & FE_MAP_PERM_BITS));
		rec->flags |= FE_REC_MODE_SET;
	}
}

/* A new inode at the key (MKNOD, CREATE): what was there goes.  A CREATE
 * that fakes nothing leaves no record. */
static inline void fe_rec_new(struct fe_slot *rec, const struct fe_req *req,
			      bool unknown_is_real)
{
	uint32_t type = req->mode & S_IFMT;

	fe_rec_fresh(rec, req, unknown_is_real);
	if (req->flags & FE_F_UID)
		rec->uid = req->uid;
	if (req->flags & FE_F_GID)
		rec->gid = req->gid;
	if (req->op == FE_OP_MKNOD) {
		if (!(req->flags & FE_F_MODE))
			return;
		rec->mode = (uint16_t)req->mode;
		rec->flags |= FE_REC_MODE_SET;
		if (type == S_IFCHR || type == S_IFBLK) {
			rec->flags |= FE_REC_DEV_SET;
			if (req->flags & FE_F_RDEV)
				rec->rdev = (uint32_t)req->rdev;
		}
		return;
	}
	if (req->flags & FE_F_MODE) {
		rec->mode |= (uint16_t)(req->mode & FE_MAP_PERM_BITS);
		rec->flags |= FE_REC_MODE_SET;
	}
	if (rec->uid == (unknown_is_real ? req->real_uid : 0) &&
	    rec->gid == (unknown_is_real ? req->real_gid : 0) &&
	    !(rec->flags & FE_REC_FLAGS))
		rec->flags = 0;
}

/* req (fe_op_pends()) applied to rec: FE_SLOT_USED in rec->flags says
 * whether there is a record, before and after. */
static inline void fe_rec_apply(struct fe_slot *rec, const struct fe_req *req,
				bool unknown_is_real)
{
	switch (req->op) {
	case FE_OP_CHOWN:
		fe_rec_chown(rec, req, unknown_is_real);
		break;
	case FE_OP_CHMOD:
		fe_rec_live(rec, req, unknown_is_real);
		if (req->flags & FE_F_MODE) {
			rec->mode = (uint16_t)((rec->mode & S_IFMT) |
					       (req->mode & FE_MAP_PERM_BITS));
			rec->flags |= FE_REC_MODE_SET;
		}
		break;
	case FE_OP_MKNOD:
	case FE_OP_CREATE:
		fe_rec_new(rec, req, unknown_is_real);
		break;
	default:
		break;
	}
}

#endif
