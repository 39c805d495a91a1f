/*
 * The one reply check both clients use: a reply the daemon may send is
 * taken, every other shape (short, long, an err out of range, bytes
 * after a reply that carries none, a data length the reply does not
 * announce) is -EPROTO, and errno is never touched.
 */
#include <errno.h>
#include <string.h>

#include "common/reply.h"
#include "fakeenv/proto.h"
#include "unit.h"

int main(void)
{
	unsigned char buf[sizeof(struct fe_rep) + 16] = { 0 };
	struct fe_status st = { 0 };
	struct fe_rep rep = { 0 };
	const size_t n = sizeof(rep);

	memcpy(buf, &rep, n);
	CHECK("a plain reply", fe_rep_check(FE_OP_GET, buf, n) == 0);
	CHECK("a short one", fe_rep_check(FE_OP_GET, buf, n - 1) == -EPROTO);
	CHECK("bytes after a reply that carries none",
	      fe_rep_check(FE_OP_GET, buf, n + 4) == -EPROTO);
	rep.err = -ENOENT;
	memcpy(buf, &rep, n);
	CHECK("a -errno is an answer", fe_rep_check(FE_OP_GET, buf, n) == 0);
	rep.err = 1;
	memcpy(buf, &rep, n);
	CHECK("a positive err", fe_rep_check(FE_OP_GET, buf, n) == -EPROTO);
	rep.err = -4096;
	memcpy(buf, &rep, n);
	CHECK("an err past -4095", fe_rep_check(FE_OP_GET, buf, n) == -EPROTO);
	rep.err = 0;
	rep.count[0] = 16;
	memcpy(buf, &rep, n);
	CHECK("XGET with the bytes it announces",
	      fe_rep_check(FE_OP_XGET, buf, n + 16) == 0);
	CHECK("XLIST with none (the caller asked for the size)",
	      fe_rep_check(FE_OP_XLIST, buf, n) == 0);
	CHECK("XGET with fewer bytes than announced",
	      fe_rep_check(FE_OP_XGET, buf, n + 8) == -EPROTO);
	CHECK("MAP's count is fds, never bytes",
	      fe_rep_check(FE_OP_MAP, buf, n + 16) == -EPROTO);
	CHECK("a STATUS reply is an fe_status",
	      fe_rep_check(FE_OP_STATUS, &st, sizeof(st)) == 0 &&
		      fe_rep_check(FE_OP_STATUS, &st, n) == -EPROTO);
	st.err = 5;
	CHECK("a STATUS reply's err is checked too",
	      fe_rep_check(FE_OP_STATUS, &st, sizeof(st)) == -EPROTO);
	CHECK("errno is kept", (errno = EXDEV,
				fe_rep_check(FE_OP_GET, buf, 1), errno == EXDEV));
	UNIT_EXIT();
}
