/*
 * libFuzzer target: the daemon's request decoder.  Any bytes go through
 * fe_req_check(); those it accepts are served by fe_serve_req() on one
 * shared table, as the daemon would, so that sequences of requests build
 * up state.  The table is started afresh past 100,000 records to keep a
 * long run's memory bounded.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_RECORDS 100000

static struct fe_srv srv;
static bool ready;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fe_sess sess = {0};
	struct fe_req req;
	struct fe_rep rep;
	const char *why = NULL;

	if (!ready || fe_tab_count(&srv.tab) > MAX_RECORDS) {
		if (ready)
			fe_srv_free(&srv);
		if (fe_srv_init(&srv, false))
			abort();
		ready = true;
	}
	if (fe_req_check(data, size, &why)) {
		if (!why)
			__builtin_trap(); /* a refusal always says why */
		return 0;
	}
	memcpy(&req, data, sizeof(req));
	fe_serve_req(&srv, &sess, &req,
		     req.tail_len ? (const char *)data + sizeof(req) : NULL,
		     &rep);
	return 0;
}
