/*
 * The xattr ops: fe_req_check() on XSET, XGET, XLIST and XDEL, and
 * fe_serve_req() keeping the names a real filesystem refuses, as proto.h
 * says, and their growth.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "daemon/reap.h"
#include "daemon/serve.h"
#include "unit.h"

#include "srvfix.h"

static unsigned char xmsg[FE_REQ_BUF + 8];

/* An xattr op's message in xmsg: the header h, then name_len bytes of
 * name (name as given, its NUL included unless name_len says otherwise),
 * vlen bytes of value, then extra (extra_len bytes).  Returns its length. */
static size_t xbuild(struct fe_req r, struct fe_xhdr h, const char *name,
		     const void *value, const void *extra, size_t extra_len)
{
	size_t n = sizeof(r);

	memcpy(xmsg + n, &h, sizeof(h));
	n += sizeof(h);
	if (h.name_len)
		memcpy(xmsg + n, name, h.name_len);
	n += h.name_len;
	if (h.value_len)
		memcpy(xmsg + n, value, h.value_len);
	n += h.value_len;
	memcpy(xmsg + n, extra, extra_len);
	n += extra_len;
	r.tail_len = (uint32_t)(n - sizeof(r));
	memcpy(xmsg, &r, sizeof(r));
	return n;
}

static int xcheck(size_t len)
{
	const char *why = NULL;
	int r = fe_req_check(xmsg, len, &why);

	return r == 0 ? 0 : why ? r : 1001;
}

static struct fe_xhdr xh(const char *name, uint32_t vlen, uint32_t size)
{
	struct fe_xhdr h = { 0 };

	h.name_len = name ? (uint32_t)strlen(name) + 1 : 0;
	h.value_len = vlen;
	h.size = size;
	return h;
}

/* test_xattr_check's longest value (zeros), and its name: 255 bytes once
 * xc_ok has made it. */
static char xc_big[FE_XATTR_SIZE_MAX + 2];
static char xc_name[FE_XATTR_NAME_MAX + 2];

/* Every xattr op well formed, up to the longest XSET. */
static void xc_ok(void)
{
	struct fe_req set = req_of(FE_OP_XSET), get = req_of(FE_OP_XGET);
	struct fe_req list = req_of(FE_OP_XLIST), del = req_of(FE_OP_XDEL);
	size_t len;

	CHECK("ok: XSET", xcheck(xbuild(set, xh("security.a", 3, 0),
					"security.a", "abc", "", 0)) == 0);
	CHECK("ok: XSET with a path",
	      xcheck(xbuild(set, xh("security.a", 3, 0), "security.a", "abc",
			    "/a/b", 5)) == 0);
	set.flags = FE_F_XCREATE | FE_F_XREPLACE;
	CHECK("ok: XSET with both flags",
	      xcheck(xbuild(set, xh("security.a", 0, 0), "security.a", "", "",
			    0)) == 0);
	set.flags = 0;
	CHECK("ok: XSET of a 64 KiB value with the longest path",
	      xcheck(xbuild(set, xh("security.a", FE_XATTR_SIZE_MAX, 0),
			    "security.a", xc_big, xc_big, 0)) == 0);
	memset(xc_name, 'n', FE_XATTR_NAME_MAX);
	memcpy(xc_name, "trusted.", 8);
	CHECK("ok: XGET of a 255-byte name, size 64 KiB",
	      xcheck(xbuild(get, xh(xc_name, 0, FE_XATTR_SIZE_MAX), xc_name,
			    "", "", 0)) == 0);
	CHECK("ok: XLIST", xcheck(xbuild(list, xh(NULL, 0, 100), NULL, "", "",
					 0)) == 0);
	CHECK("ok: XDEL", xcheck(xbuild(del, xh("security.a", 0, 0),
					"security.a", "", "", 0)) == 0);

	/* The longest XSET: the receive buffer holds it. */
	{
		static char path[FE_PATH_MAX];

		memset(path, 'p', sizeof(path));
		path[0] = '/';
		path[FE_PATH_MAX - 1] = '\0';
		len = xbuild(set, xh(xc_name, FE_XATTR_SIZE_MAX, 0), xc_name,
			     xc_big, path, FE_PATH_MAX);
		CHECK("ok: the longest XSET fits FE_REQ_BUF",
		      xcheck(len) == 0 && len < FE_REQ_BUF);
	}
}

/* Malformed xattr tails, lengths and flags, each refused. */
static void xc_bad(void)
{
	struct fe_req set = req_of(FE_OP_XSET), get = req_of(FE_OP_XGET);
	struct fe_req list = req_of(FE_OP_XLIST), del = req_of(FE_OP_XDEL);
	struct fe_xhdr h;
	size_t len;

	CHECK("bad: xattr tail shorter than its header",
	      check(build(req_of(FE_OP_XGET), "abcdefgh", 8, 0)) == -EPROTO);
	h = xh("security.a", 0, 0);
	h.pad = 1;
	CHECK("bad: xattr pad", xcheck(xbuild(get, h, "security.a", "", "",
					       0)) == -EPROTO);
	h = xh("", 0, 0);
	CHECK("bad: empty name", xcheck(xbuild(get, h, "", "", "", 0)) ==
					 -EPROTO);
	xc_name[FE_XATTR_NAME_MAX] = 'n';
	CHECK("bad: 256-byte name",
	      xcheck(xbuild(get, xh(xc_name, 0, 0), xc_name, "", "", 0)) ==
		      -EPROTO);
	xc_name[FE_XATTR_NAME_MAX] = '\0';
	CHECK("bad: a value on XGET",
	      xcheck(xbuild(get, xh("security.a", 1, 0), "security.a", "x", "",
			    0)) == -EPROTO);
	CHECK("bad: a value past 64 KiB",
	      xcheck(xbuild(set, xh("security.a", FE_XATTR_SIZE_MAX + 1, 0),
			    "security.a", xc_big, "", 0)) == -EPROTO);
	CHECK("bad: size on XSET",
	      xcheck(xbuild(set, xh("security.a", 1, 1), "security.a", "x", "",
			    0)) == -EPROTO);
	CHECK("bad: XGET size past 64 KiB",
	      xcheck(xbuild(get, xh("security.a", 0, FE_XATTR_SIZE_MAX + 1),
			    "security.a", "", "", 0)) == -EPROTO);
	CHECK("bad: XLIST with a name",
	      xcheck(xbuild(list, xh("security.a", 0, 0), "security.a", "", "",
			    0)) == -EPROTO);
	CHECK("bad: XLIST size past 64 KiB",
	      xcheck(xbuild(list, xh(NULL, 0, FE_XATTR_LIST_MAX + 1), NULL, "",
			    "", 0)) == -EPROTO);
	CHECK("bad: bytes after XLIST's header",
	      xcheck(xbuild(list, xh(NULL, 0, 0), NULL, "", "x", 1)) ==
		      -EPROTO);
	h = xh("security.a", 0, 0);
	CHECK("bad: unterminated name",
	      xcheck(xbuild(get, h, "security.ab", "", "", 0)) == -EPROTO);
	CHECK("bad: NUL inside the name",
	      xcheck(xbuild(get, h, "secu\0ity.a", "", "", 0)) == -EPROTO);
	CHECK("bad: bytes after XGET's name",
	      xcheck(xbuild(get, h, "security.a", "", "/p", 3)) == -EPROTO);
	CHECK("bad: bytes after XDEL's name",
	      xcheck(xbuild(del, h, "security.a", "", "/p", 3)) == -EPROTO);
	CHECK("bad: XSET path without NUL",
	      xcheck(xbuild(set, h, "security.a", "", "/p", 2)) == -EPROTO);
	CHECK("bad: XSET path with NUL inside",
	      xcheck(xbuild(set, h, "security.a", "", "/\0p", 4)) == -EPROTO);
	len = xbuild(set, xh("security.a", 10, 0), "security.a", "0123456789",
		     "", 0);
	CHECK("bad: lengths past the tail", xcheck(len - 5) == -EPROTO);
	get.flags = FE_F_XCREATE;
	CHECK("bad: XCREATE on XGET",
	      xcheck(xbuild(get, h, "security.a", "", "", 0)) == -EPROTO);
	set.flags = FE_F_UID;
	CHECK("bad: UID on XSET",
	      xcheck(xbuild(set, h, "security.a", "", "", 0)) == -EPROTO);
	CHECK("bad: XGET without a tail", check(build(req_of(FE_OP_XGET), "",
						      0, 0)) == -EPROTO);
}

static void test_xattr_check(void)
{
	xc_ok();
	xc_bad();
}

/* Serve the xattr message in xmsg. */
static void xserve(void)
{
	struct fe_req r;

	memcpy(&r, xmsg, sizeof(r));
	serve(&r, (const char *)xmsg + sizeof(r));
}

static void xset(struct fe_req r, const char *name, const void *v,
		 size_t vlen, uint32_t flags, const char *path)
{
	r.op = FE_OP_XSET;
	r.flags = flags;
	xbuild(r, xh(name, (uint32_t)vlen, 0), name, v, path ? path : "",
	       path ? strlen(path) + 1 : 0);
	xserve();
}

static void xget(struct fe_req r, const char *name, uint32_t size)
{
	r.op = FE_OP_XGET;
	xbuild(r, xh(name, 0, size), name, "", "", 0);
	xserve();
}

static void xop(struct fe_req r, uint16_t op, const char *name, uint32_t size)
{
	r.op = op;
	xbuild(r, xh(name, 0, size), name, "", "", 0);
	xserve();
}

static bool gotn(const char *v, size_t n)
{
	return rep.err == 0 && rep.count[0] == n && srv.rep_len == n &&
	       !memcmp(srv.rep_data, v, n);
}

static bool got(const char *v)
{
	size_t n = strlen(v);

	return rep.err == 0 && rep.count[0] == n && srv.rep_len == n &&
	       !memcmp(srv.rep_data, v, n);
}

static uint32_t slot_flags(uint64_t ino)
{
	struct fe_rec rec;

	return fe_tab_find(&srv.tab, 0x803, ino, &rec) ? rec.flags | 0x100 : 0;
}

/* A POSIX ACL value: user::rwx user:1000:rwx group::r-x mask::rwx
 * other::r-x. */
static const unsigned char acl_ext[] = {
	2, 0, 0, 0,
	0x01, 0, 7, 0, 0xff, 0xff, 0xff, 0xff,
	0x02, 0, 7, 0, 0xe8, 0x03, 0, 0,
	0x04, 0, 5, 0, 0xff, 0xff, 0xff, 0xff,
	0x10, 0, 7, 0, 0xff, 0xff, 0xff, 0xff,
	0x20, 0, 5, 0, 0xff, 0xff, 0xff, 0xff,
};

/* The XSET request test_xattr_ops starts from for its file (key 10)
 * and for its directory (key 11). */
static struct fe_req xset_file(void)
{
	struct fe_req f = req_of(FE_OP_XSET);

	f.ino = 10;
	return f;
}

static struct fe_req xset_dir(void)
{
	struct fe_req d = req_of(FE_OP_XSET);

	d.ino = 11;
	d.real_mode = DIR_(0755);
	return d;
}

/* XSET, XGET and XLIST of a file's names, with their size queries and
 * refusals. */
static void xo_set_get(void)
{
	struct fe_req f = xset_file();

	CHECK("srv init x", fe_srv_init(&srv, false) == 0);
	xset(f, "security.a", "one", 3, 0, "/w/f");
	CHECK("XSET on a file without a record: a default record with "
	      "FE_REC_XATTR",
	      rep_is(FE_R_FOUND, 0, 0, REG(0644), 0) &&
		      slot_flags(10) == (0x100 | FE_REC_XATTR) &&
		      srv.tab.root->nxattr == 1 &&
		      !strcmp(path_at(0x803, 10), "/w/f"));
	xget(f, "security.a", 0);
	CHECK("XGET size 0: the length, no bytes",
	      rep.err == 0 && rep.count[0] == 3 && srv.rep_len == 0);
	xget(f, "security.a", 100);
	CHECK("XGET: the value", got("one"));
	xget(f, "security.a", 2);
	CHECK("XGET into 2 bytes: ERANGE",
	      rep.err == -ERANGE && srv.rep_len == 0);
	xget(f, "security.b", 100);
	CHECK("XGET of an absent name: ENODATA", rep.err == -ENODATA);
	xset(f, "security.a", "x", 1, FE_F_XCREATE, NULL);
	CHECK("XCREATE of an existing name: EEXIST", rep.err == -EEXIST);
	xset(f, "security.b", "x", 1, FE_F_XREPLACE, NULL);
	CHECK("XREPLACE of an absent name: ENODATA", rep.err == -ENODATA);
	xset(f, "security.a", "two", 3, FE_F_XREPLACE, NULL);
	xget(f, "security.a", 100);
	CHECK("XREPLACE", got("two"));
	xset(f, "trusted.b", "", 0, FE_F_XCREATE, NULL);
	xop(f, FE_OP_XLIST, NULL, 100);
	CHECK("XLIST", gotn("security.a\0trusted.b", 21));
	xop(f, FE_OP_XLIST, NULL, 0);
	CHECK("XLIST size 0", rep.err == 0 && rep.count[0] == 21 &&
				      srv.rep_len == 0);
	xget(f, "trusted.b", 100);
	CHECK("an empty value", rep.err == 0 && rep.count[0] == 0 &&
					srv.rep_len == 0);
}

/* Which changes of a file keep its xattrs, which drop some; XDEL. */
static void xo_keep_drop(void)
{
	struct fe_req f = xset_file();

	/* A path change keeps them. */
	{
		struct fe_req r = req_of(FE_OP_RENAME);

		r.ino = 10;
		serve(&r, "/w/g");
		xget(f, "security.a", 100);
		CHECK("RENAME keeps the xattrs and takes the path",
		      got("two") && !strcmp(path_at(0x803, 10), "/w/g"));
	}

	/* chown of a file drops its capability; other names stay. */
	xset(f, "security.capability", "cap", 3, 0, NULL);
	{
		struct fe_req r = req_of(FE_OP_CHOWN);

		r.ino = 10;
		r.flags = FE_F_UID;
		r.uid = 5;
		serve(&r, NULL);
		xget(f, "security.capability", 100);
		CHECK("CHOWN of a file drops security.capability",
		      rep.err == -ENODATA);
		xget(f, "security.a", 100);
		CHECK("... and keeps the rest", got("two"));
	}

	xop(f, FE_OP_XDEL, "security.a", 0);
	CHECK("XDEL", rep.err == 0);
	xop(f, FE_OP_XDEL, "security.a", 0);
	CHECK("XDEL again: ENODATA", rep.err == -ENODATA);
	xop(f, FE_OP_XDEL, "trusted.b", 0);
	CHECK("XDEL of the last: the record stays, FE_REC_XATTR goes",
	      rep.err == 0 && slot_flags(10) == 0x100 &&
		      srv.tab.root->nxattr == 0 &&
		      !strcmp(path_at(0x803, 10), "/w/g"));
	xop(f, FE_OP_XLIST, NULL, 100);
	CHECK("XLIST of none", rep.err == 0 && rep.count[0] == 0);
}

/* ACLs. */
static void xo_acl(void)
{
	struct fe_req f = xset_file();
	struct fe_req d = xset_dir();
	const unsigned char *v;

	xset(d, "system.posix_acl_access", acl_ext, sizeof(acl_ext), 0, "/w/d");
	CHECK("an extended access ACL: group bits from its mask",
	      rep.err == 0 && rep.mode == DIR_(0775));
	chmod_(0750, DIR_(0755));
	memcpy(&f, &d, 0);
	{
		struct fe_req r = req_of(FE_OP_CHMOD);

		r.ino = 11;
		r.real_mode = DIR_(0755);
		r.flags = FE_F_MODE;
		r.mode = 0750;
		serve(&r, NULL);
	}
	xget(d, "system.posix_acl_access", 100);
	v = srv.rep_data;
	CHECK("CHMOD rewrites the kept ACL: owner, mask, other",
	      rep.err == 0 && rep.count[0] == sizeof(acl_ext) && v &&
		      v[4 + 2] == 7 && v[12 + 2] == 7 && v[20 + 2] == 5 &&
		      v[28 + 2] == 5 && v[36 + 2] == 0);
	xset(d, "system.posix_acl_access", "\2\0\0\0\1\0\7\0", 8, 0, NULL);
	CHECK("a malformed ACL: EINVAL", rep.err == -EINVAL);
	xset(f, "system.posix_acl_default", acl_ext, sizeof(acl_ext), 0, NULL);
	CHECK("a default ACL on a file: EACCES", rep.err == -EACCES);
	xset(d, "system.posix_acl_default", acl_ext, sizeof(acl_ext), 0, NULL);
	CHECK("a default ACL on a directory", rep.err == 0);
	{
		unsigned char min[] = { 2, 0, 0, 0, 1, 0, 6, 0, 0xff, 0xff,
					0xff, 0xff, 4, 0, 4, 0, 0xff, 0xff,
					0xff, 0xff, 0x20, 0, 0, 0, 0xff,
					0xff, 0xff, 0xff };

		xset(d, "system.posix_acl_access", min, sizeof(min), 0, NULL);
		CHECK("a minimal ACL is a chmod, not kept",
		      rep.err == 0 && rep.mode == DIR_(0640));
		xget(d, "system.posix_acl_access", 100);
		CHECK("... and replaced the extended one",
		      rep.err == -ENODATA);
		xset(d, "system.posix_acl_default", "\2\0\0\0", 4, 0, NULL);
		xget(d, "system.posix_acl_default", 100);
		CHECK("an empty ACL removes the kept one",
		      rep.err == -ENODATA);
	}
}

/* The bytes a record may take, and the calls that take the record and
 * its xattrs. */
static void xo_bounds(void)
{
	static char big[FE_XATTR_SIZE_MAX];
	struct fe_req f = xset_file();
	int nospc = 0;

	/* The record's bytes are bounded. */
	for (int i = 0; i < 20 && !nospc; i++) {
		char name[32];

		snprintf(name, sizeof(name), "security.big%d", i);
		xset(f, name, big, sizeof(big), 0, NULL);
		nospc = rep.err == -ENOSPC ? i : rep.err ? -1 : 0;
	}
	CHECK("past FE_XATTR_REC_MAX: ENOSPC",
	      nospc == (int)(FE_XATTR_REC_MAX / (FE_XATTR_SIZE_MAX + 8 + 14)));

	/* Whatever takes the record takes them. */
	drop();
	f.op = FE_OP_DROP;
	serve(&f, NULL);
	(void)fe_reap_orphans(&srv);
	xget(f, "security.big0", 100);
	CHECK("DROP takes the xattrs", rep.err == -ENODATA &&
					       slot_flags(10) == 0);
	xset(f, "security.a", "1", 1, 0, NULL);
	{
		struct fe_req r = req_of(FE_OP_CREATE);

		r.ino = 10;
		serve(&r, NULL);
		xget(f, "security.a", 100);
		CHECK("CREATE at the key takes them", rep.err == -ENODATA);
	}
	xset(f, "security.a", "1", 1, 0, NULL);
	{
		struct fe_req r = req_of(FE_OP_GET);

		r.ino = 10;
		r.real_mode = S_IFIFO | 0644;
		serve(&r, NULL);
		xget(r, "security.a", 100);
		CHECK("a stale record goes with its xattrs",
		      rep.err == -ENODATA && slot_flags(10) == 0);
	}
	fe_srv_free(&srv);
}

static void test_xattr_ops(void)
{
	xo_set_get();
	xo_keep_drop();
	xo_acl();
	xo_bounds();
}

/* Many records with xattrs while the table grows and the arena compacts:
 * every value stays with its key. */
static void test_xattr_growth(void)
{
	static char v[1024];
	struct fe_req f = req_of(FE_OP_XSET);
	struct fe_tab_info info;
	int bad = 0, n = 6000;
	size_t caps = 0;

	CHECK("srv init g", fe_srv_init(&srv, false) == 0);
	for (int i = 0; i < n; i++) {
		char path[64];

		f.ino = 100000 + (uint64_t)i;
		snprintf(path, sizeof(path), "/g/%d", i);
		snprintf(v, sizeof(v), "value-%d", i);
		memset(v + strlen(v), 'x', 900);
		v[sizeof(v) - 1] = '\0';
		xset(f, "security.v", v, sizeof(v), 0, path);
		bad += rep.err != 0;
		fe_tab_info(&srv.tab, &info);
		if (info.old_cap)
			caps++;
	}
	CHECK("6000 XSETs", bad == 0 && srv.tab.root->nxattr == (uint64_t)n);
	CHECK("the table rehashed meanwhile", caps > 0);
	for (int i = 0; i < n; i++) {
		if (i % 3 == 0)
			continue;
		f.ino = 100000 + (uint64_t)i;
		f.op = FE_OP_DROP;
		serve(&f, NULL);
	}
	CHECK("4000 orphans reaped", fe_reap_orphans(&srv) == 2 * n / 3 &&
					     srv.orphans == 0);
	CHECK("two thirds dropped: the arena compacted",
	      srv.tab.arena.garbage < srv.tab.arena.len / 2);
	for (int i = 0; i < n; i++) {
		char want[32];

		f.ino = 100000 + (uint64_t)i;
		xget(f, "security.v", sizeof(v));
		snprintf(want, sizeof(want), "value-%d", i);
		if (i % 3 == 0)
			bad += !(rep.err == 0 && rep.count[0] == sizeof(v) &&
				 !strncmp(srv.rep_data, want, strlen(want)) &&
				 ((const char *)srv.rep_data)[strlen(want)] ==
					 'x');
		else
			bad += rep.err != -ENODATA;
	}
	CHECK("every value with its key after growth and compaction",
	      bad == 0 && srv.tab.root->nxattr == (uint64_t)n / 3);
	fe_srv_free(&srv);
}

int main(void)
{
	test_xattr_check();
	test_xattr_ops();
	test_xattr_growth();
	UNIT_EXIT();
}
