/*
 * A reply's shape, checked once for every client; see reply.h.
 */
#include "reply.h"

#include <errno.h>
#include <string.h>

#include "fakeenv/proto.h"

int fe_rep_check(uint16_t op, const void *rep, size_t len)
{
	struct fe_rep r;
	size_t tail;

	if (op == FE_OP_STATUS) {
		int32_t err;

		if (len != sizeof(struct fe_status))
			return -EPROTO;
		memcpy(&err, rep, sizeof(err));
		return err > 0 || err < -4095 ? -EPROTO : 0;
	}
	if (len < sizeof(r))
		return -EPROTO;
	/* A copy: rep need not be aligned (the launcher's buffer). */
	memcpy(&r, rep, sizeof(r));
	if (r.err > 0 || r.err < -4095)
		return -EPROTO;
	tail = len - sizeof(r);
	if (tail && ((op != FE_OP_XGET && op != FE_OP_XLIST) ||
		     tail != r.count[0]))
		return -EPROTO;
	return 0;
}
