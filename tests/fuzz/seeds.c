/*
 * The fuzzers' seed corpus: `seeds DIR` writes valid journals to
 * DIR/journal/ and valid requests to DIR/req/, each checked by the code
 * it seeds, so that the fuzzers start past the first checks.  Exits 1 if
 * a seed is not valid or cannot be written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "daemon/serve.h"
#include "journal/journal.h"
#include "../unit/jnlset.h"

static const char *top;
static int failed;

static void write_file(const char *sub, const char *name, const void *buf,
		       size_t len)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s/%s", top, sub, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || fe_write_full(fd, buf, len)) {
		fprintf(stderr, "seeds: %s: %s\n", path, strerror(errno));
		failed = 1;
	}
	if (fd >= 0)
		close(fd);
}

static void journal(const char *name, const struct fe_jnl_rec *r, size_t n)
{
	struct jnl_set s = {r, n, 1764762000};
	struct fe_jnl_view v;
	unsigned char *buf;
	char path[4096], why[256];
	size_t len;

	snprintf(path, sizeof(path), "%s/journal/%s", top, name);
	if (fe_jnl_save(path, jnl_set_emit, &s) ||
	    fe_jnl_read_file(path, &buf, &len)) {
		fprintf(stderr, "seeds: %s: cannot write\n", path);
		failed = 1;
		return;
	}
	if (fe_jnl_parse(buf, len, &v, why, sizeof(why))) {
		fprintf(stderr, "seeds: %s: %s\n", path, why);
		failed = 1;
	}
	free(buf);
}

static void journals(void)
{
	unsigned char xa[256];
	size_t xl = 0;
	struct fe_jnl_rec r[] = {
	    {.dev = 0x803,
	     .ino = 2,
	     .mode = 0104755,
	     .flags = FE_JNL_MODE_SET,
	     .path = "/usr/bin/su",
	     .path_len = 11},
	    {.dev = 0x803,
	     .ino = 3,
	     .mode = 040755,
	     .uid = 1000,
	     .gid = 100,
	     .btag = 0x12345678,
	     .path = "/a dir",
	     .path_len = 6},
	    {.dev = 0x803,
	     .ino = 4,
	     .mode = 020666,
	     .rdev = 0x103,
	     .flags = FE_JNL_MODE_SET | FE_JNL_DEV_SET,
	     .path = "",
	     .path_len = 0},
	    {.dev = 0x803,
	     .ino = 5,
	     .mode = 060660,
	     .rdev = 0x800,
	     .flags = FE_JNL_DEV_SET,
	     .path = "/dev/sda",
	     .path_len = 8},
	    {.dev = 0x803,
	     .ino = 6,
	     .mode = 0120777,
	     .path = "/l",
	     .path_len = 2},
	    {.dev = 0x803,
	     .ino = 7,
	     .mode = 010644,
	     .path = "/f",
	     .path_len = 2},
	    {.dev = 0x803,
	     .ino = 8,
	     .mode = 0140755,
	     .path = "/s",
	     .path_len = 2},
	};

	fe_jnl_xattr_put(xa, sizeof(xa), &xl, "security.selinux",
			 "system_u:object_r:bin_t:s0", 26);
	fe_jnl_xattr_put(xa, sizeof(xa), &xl, "trusted.empty", "", 0);
	r[1].xattrs = xa;
	r[1].xattrs_len = xl;
	journal("empty", r, 0);
	journal("one", r, 1);
	journal("every-type", r, FE_ARRAY_LEN(r));
}

static void req(const char *name, struct fe_req q, const char *tail)
{
	unsigned char msg[sizeof(q) + FE_PATH_MAX];
	size_t n = tail ? strlen(tail) + 1 : 0;
	const char *why = NULL;

	q.version = FE_PROTO_VERSION;
	q.tail_len = (uint32_t)n;
	memcpy(msg, &q, sizeof(q));
	if (n)
		memcpy(msg + sizeof(q), tail, n);
	if (fe_req_check(msg, sizeof(q) + n, &why)) {
		fprintf(stderr, "seeds: req/%s: %s\n", name, why);
		failed = 1;
		return;
	}
	write_file("req", name, msg, sizeof(q) + n);
}

static void xreqs(const struct fe_req *base);

static void reqs(void)
{
	const struct fe_req base = {.dev = 0x803,
				    .ino = 42,
				    .real_mode = S_IFREG | 0644,
				    .real_uid = 1000,
				    .real_gid = 100};
	struct fe_req q;

	q = base;
	q.op = FE_OP_GET;
	req("get", q, NULL);
	q = base;
	q.op = FE_OP_CHOWN;
	q.flags = FE_F_UID | FE_F_GID;
	q.uid = 0;
	q.gid = 5;
	req("chown", q, "/etc/shadow");
	q = base;
	q.op = FE_OP_CHMOD;
	q.flags = FE_F_MODE;
	q.mode = 04755;
	req("chmod", q, NULL);
	q = base;
	q.op = FE_OP_MKNOD;
	q.flags = FE_F_UID | FE_F_GID | FE_F_MODE | FE_F_RDEV;
	q.mode = S_IFCHR | 0666;
	q.rdev = 0x103;
	req("mknod", q, "/dev/null");
	q = base;
	q.op = FE_OP_CREATE;
	q.flags = FE_F_UID | FE_F_GID | FE_F_MODE;
	q.mode = 0600;
	req("create", q, "/new");
	q = base;
	q.op = FE_OP_DROP;
	req("drop", q, NULL);
	q = base;
	q.op = FE_OP_RENAME;
	req("rename", q, "/renamed");
	q = (struct fe_req){.op = FE_OP_SESSION, .ino = 1234, .dev = 1234};
	req("session", q, NULL);
	q = (struct fe_req){.op = FE_OP_DETACH};
	req("detach", q, NULL);
	q = (struct fe_req){.op = FE_OP_STATS};
	req("stats", q, NULL);
	xreqs(&base);
}

/* An xattr op's seed: header h, name, vlen bytes of value, path. */
static void xreq(const char *name, struct fe_req q, const char *xname,
		 const void *value, uint32_t vlen, uint32_t size,
		 const char *path)
{
	static unsigned char msg[FE_REQ_BUF];
	struct fe_xhdr h = {
		.name_len = xname ? (uint32_t)strlen(xname) + 1 : 0,
		.value_len = vlen,
		.size = size,
	};
	size_t n = sizeof(q);
	const char *why = NULL;

	memcpy(msg + n, &h, sizeof(h));
	n += sizeof(h);
	memcpy(msg + n, xname ? xname : "", h.name_len);
	n += h.name_len;
	memcpy(msg + n, value, vlen);
	n += vlen;
	if (path) {
		memcpy(msg + n, path, strlen(path) + 1);
		n += strlen(path) + 1;
	}
	q.version = FE_PROTO_VERSION;
	q.tail_len = (uint32_t)(n - sizeof(q));
	memcpy(msg, &q, sizeof(q));
	if (fe_req_check(msg, n, &why)) {
		fprintf(stderr, "seeds: req/%s: %s\n", name, why);
		failed = 1;
		return;
	}
	write_file("req", name, msg, n);
}

/* user::rw- user:1000:rwx group::r-- mask::rwx other::r-- */
static const unsigned char acl[] = {
	2, 0, 0, 0,
	0x01, 0, 6, 0, 0xff, 0xff, 0xff, 0xff,
	0x02, 0, 7, 0, 0xe8, 0x03, 0, 0,
	0x04, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,
	0x10, 0, 7, 0, 0xff, 0xff, 0xff, 0xff,
	0x20, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,
};

static void xreqs(const struct fe_req *base)
{
	static const unsigned char cap[20] = { 1, 0, 0, 2, 0, 0x20 };
	struct fe_req q = *base;

	q.op = FE_OP_XSET;
	xreq("xset-cap", q, "security.capability", cap, sizeof(cap), 0,
	     "/bin/ping");
	xreq("xset-acl", q, "system.posix_acl_access", acl, sizeof(acl), 0,
	     NULL);
	q.flags = FE_F_XCREATE;
	xreq("xset-create", q, "trusted.x", "v", 1, 0, NULL);
	q.flags = FE_F_XREPLACE;
	xreq("xset-replace", q, "trusted.x", "w", 1, 0, NULL);
	q = *base;
	q.real_mode = S_IFDIR | 0755;
	q.op = FE_OP_XSET;
	xreq("xset-default", q, "system.posix_acl_default", acl, sizeof(acl),
	     0, "/d");
	q = *base;
	q.op = FE_OP_XGET;
	xreq("xget", q, "security.capability", "", 0, 100, NULL);
	xreq("xget-size", q, "security.capability", "", 0, 0, NULL);
	q.op = FE_OP_XLIST;
	xreq("xlist", q, NULL, "", 0, 1000, NULL);
	q.op = FE_OP_XDEL;
	xreq("xdel", q, "trusted.x", "", 0, 0, NULL);
}

int main(int argc, char **argv)
{
	char path[4096];

	if (argc != 2) {
		fprintf(stderr, "usage: seeds DIR\n");
		return 2;
	}
	top = argv[1];
	for (const char *const *d =
		 (const char *const[]){"", "/journal", "/req", NULL};
	     *d; d++) {
		snprintf(path, sizeof(path), "%s%s", top, *d);
		if (mkdir(path, 0755) && errno != EEXIST) {
			fprintf(stderr, "seeds: %s: %s\n", path,
				strerror(errno));
			return 1;
		}
	}
	journals();
	reqs();
	return failed;
}
