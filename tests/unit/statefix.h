/*
 * What test_rename and test_state share: a request for a file as stat
 * saw it, served through the daemon's own check, and the CHOWN that
 * gives a file its record.
 */
#ifndef FE_TEST_STATEFIX_H
#define FE_TEST_STATEFIX_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "daemon/serve.h"

/* A request of op for the file as st shows it (NULL: a regular file,
 * key 0). */
static struct fe_req req_of(uint16_t op, const struct stat *st)
{
	struct fe_req r;

	memset(&r, 0, sizeof(r));
	r.op = op;
	r.version = FE_PROTO_VERSION;
	if (st) {
		r.dev = st->st_dev;
		r.ino = st->st_ino;
		r.real_mode = st->st_mode;
		r.real_uid = st->st_uid;
		r.real_gid = st->st_gid;
	} else {
		r.real_mode = S_IFREG | 0644;
	}
	return r;
}

/* Check then serve one request with its tail of n bytes. */
static int serve(struct fe_srv *s, struct fe_req r, const char *tail,
		 size_t n, struct fe_rep *rep)
{
	static unsigned char buf[FE_REQ_BUF];
	struct fe_sess sess = { 0 };

	r.tail_len = (uint32_t)n;
	memcpy(buf, &r, sizeof(r));
	memcpy(buf + sizeof(r), tail, n);
	if (fe_req_check(buf, sizeof(r) + n, NULL) < 0)
		return -EPROTO;
	fe_serve_req(s, &sess, &r, n ? tail : NULL, rep);
	return rep->err;
}

/* CHOWN of the file at path (stat st) to uid:uid; 0 or -errno. */
static int chown_path(struct fe_srv *s, const char *path, uint32_t uid,
		      const struct stat *st)
{
	struct fe_req r = req_of(FE_OP_CHOWN, st);
	struct fe_rep rep;

	r.flags = FE_F_UID | FE_F_GID;
	r.uid = r.gid = uid;
	return serve(s, r, path, strlen(path) + 1, &rep);
}

#endif
