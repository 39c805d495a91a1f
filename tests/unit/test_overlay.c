/*
 * fakeenv/rec.h against the daemon: the shim's overlay of its own changes
 * in flight must leave a record exactly as the daemon's handlers do.
 * Random runs of CHOWN, CHMOD, MKNOD and CREATE on one key (real types
 * that change under it, set-id bits, birth times that come, go and
 * differ, both default owners) are served by the daemon and applied by
 * fe_rec_apply() to a copy; after each step the two must hold the same
 * record, and GET the same view.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/reap.h"
#include "daemon/serve.h"
#include "fakeenv/rec.h"
#include "unit.h"

#include "srvfix.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t pick(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static const uint32_t types[] = { S_IFREG, S_IFDIR, S_IFLNK, S_IFIFO };
static const uint32_t perms[] = { 0644, 0755, 04755, 02755, 02745, 06711,
				  0700, 02775, 01777, 0 };

static struct fe_req random_req(void)
{
	static const uint16_t ops[] = { FE_OP_CHOWN, FE_OP_CHMOD, FE_OP_MKNOD,
					FE_OP_CREATE };
	struct fe_req r = req_of(ops[pick(4)]);

	r.real_mode = types[pick(4)] | perms[pick(10)];
	r.real_uid = pick(3) + 1000;
	r.real_gid = pick(3) + 100;
	r.btag = pick(3);
	switch (r.op) {
	case FE_OP_CHOWN:
		r.flags = pick(3) + 1; /* UID, GID or both */
		r.uid = pick(3);
		r.gid = pick(3);
		break;
	case FE_OP_CHMOD:
		r.flags = pick(4) ? FE_F_MODE : 0;
		r.mode = perms[pick(10)];
		break;
	case FE_OP_MKNOD: {
		static const uint32_t nodes[] = { S_IFCHR, S_IFBLK, S_IFIFO,
						  S_IFSOCK, S_IFREG };

		r.flags = pick(2) ? FE_F_UID | FE_F_GID : 0;
		r.flags |= pick(4) ? FE_F_MODE | FE_F_RDEV : 0;
		r.uid = pick(2);
		r.gid = pick(2);
		r.mode = nodes[pick(5)] | perms[pick(10)];
		r.rdev = pick(2) ? 0x0501 : 0;
		break;
	}
	default:
		r.flags = FE_F_UID | FE_F_GID | (pick(2) ? FE_F_MODE : 0);
		r.uid = pick(2);
		r.gid = pick(2);
		r.mode = perms[pick(10)];
		break;
	}
	return r;
}

/* The daemon's record at the usual key, as a slot (flags 0: none). */
static struct fe_slot daemon_rec(void)
{
	struct fe_slot s = { 0 };
	struct fe_rec rec;
	struct fe_req k = req_of(FE_OP_GET);

	if (!fe_tab_find(&srv.tab, k.dev, k.ino, &rec))
		return s;
	s.uid = rec.uid;
	s.gid = rec.gid;
	s.mode = (uint16_t)rec.mode;
	s.rdev = (uint32_t)rec.rdev;
	s.btag = rec.btag;
	s.flags = (uint16_t)(FE_SLOT_USED | rec.flags);
	return s;
}

static bool same(const struct fe_slot *a, const struct fe_slot *b)
{
	if ((a->flags & FE_SLOT_USED) != (b->flags & FE_SLOT_USED))
		return false;
	if (!(a->flags & FE_SLOT_USED))
		return true;
	return a->uid == b->uid && a->gid == b->gid && a->mode == b->mode &&
	       a->btag == b->btag && a->flags == b->flags &&
	       (!(a->flags & FE_REC_DEV_SET) || a->rdev == b->rdev);
}

/* One run of n steps; the number of steps where the two differed. */
static int run(bool unknown_is_real, int n)
{
	struct fe_slot mine = { 0 };
	int bad = 0;

	if (fe_srv_init(&srv, unknown_is_real) != 0)
		return -1;
	for (int i = 0; i < n; i++) {
		struct fe_req r = random_req();
		struct fe_slot d;

		serve(&r, NULL);
		fe_rec_apply(&mine, &r, unknown_is_real);
		d = daemon_rec();
		if (!same(&d, &mine)) {
			bad++;
			QUIET_CHECK(0,
				    "step %d op %u: daemon %s %u:%u %o f%x, "
				    "overlay %s %u:%u %o f%x",
				    i, r.op, d.flags ? "rec" : "none", d.uid,
				    d.gid, d.mode, d.flags,
				    mine.flags ? "rec" : "none", mine.uid,
				    mine.gid, mine.mode, mine.flags);
			mine = d;
		}
	}
	fe_srv_free(&srv);
	return bad;
}

int main(void)
{
	CHECK("overlay = daemon over 20,000 random changes",
	      run(false, 20000) == 0);
	CHECK("overlay = daemon with unknown-is-real", run(true, 20000) == 0);
	UNIT_EXIT();
}
