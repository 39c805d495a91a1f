/*
 * Requests: fe_req_check() refuses every malformed form and accepts the
 * good ones; fe_serve_req() does what proto.h says each op does.  No
 * sockets: bytes in, struct fe_rep out.
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

#define REG(perm) (S_IFREG | (perm))
#define DIR_(perm) (S_IFDIR | (perm))

/* A message in a byte buffer, one spare byte past the longest. */
static unsigned char msg[sizeof(struct fe_req) + FE_PATH_MAX + 2];

static struct fe_req req_of(uint16_t op)
{
	struct fe_req r;

	memset(&r, 0, sizeof(r));
	r.op = op;
	r.version = FE_PROTO_VERSION;
	r.dev = 0x803;
	r.ino = 4242;
	r.real_mode = REG(0644);
	r.real_uid = 1000;
	r.real_gid = 100;
	return r;
}

/* Lay out r and its tail of n bytes (copied from tail) in msg; returns
 * the message length.  tail_len is set to n unless keep_len. */
static size_t build(struct fe_req r, const char *tail, size_t n, int keep_len)
{
	if (!keep_len)
		r.tail_len = (uint32_t)n;
	memcpy(msg, &r, sizeof(r));
	memcpy(msg + sizeof(r), tail, n);
	return sizeof(r) + n;
}

static int check(size_t len)
{
	const char *why = "unset";
	int r = fe_req_check(msg, len, &why);

	if (r == 0 && why != NULL)
		return 1000;
	if (r < 0 && (why == NULL || r != -EPROTO))
		return 1001;
	return r;
}

/* Is r (built with a tail of n bytes) refused? */
static int refused(struct fe_req r, const char *tail, size_t n)
{
	return check(build(r, tail, n, 0)) == -EPROTO;
}

static int accepted(struct fe_req r, const char *tail, size_t n)
{
	return check(build(r, tail, n, 0)) == 0;
}

static void test_check(void)
{
	static char long_path[FE_PATH_MAX + 1];
	struct fe_req r;
	unsigned char copy[sizeof(msg) + 1];
	size_t len;

	/* Every op, well formed. */
	CHECK("ok: GET", accepted(req_of(FE_OP_GET), "", 0));
	r = req_of(FE_OP_CHOWN);
	r.flags = FE_F_UID | FE_F_GID;
	CHECK("ok: CHOWN with path", accepted(r, "/a", 3));
	CHECK("ok: CHOWN without path", accepted(r, "", 0));
	r = req_of(FE_OP_CHMOD);
	r.flags = FE_F_MODE;
	r.mode = 07777;
	CHECK("ok: CHMOD 07777", accepted(r, "", 0));
	r = req_of(FE_OP_MKNOD);
	r.flags = FE_F_UID | FE_F_GID | FE_F_MODE | FE_F_RDEV;
	r.mode = S_IFCHR | 0660;
	CHECK("ok: MKNOD chr", accepted(r, "/dev/null", 10));
	r.mode = S_IFBLK | 0660;
	CHECK("ok: MKNOD blk", accepted(r, "", 0));
	r.mode = S_IFIFO | 0644;
	CHECK("ok: MKNOD fifo", accepted(r, "", 0));
	r.mode = S_IFSOCK | 0644;
	CHECK("ok: MKNOD sock", accepted(r, "", 0));
	r.mode = S_IFREG | 0644;
	CHECK("ok: MKNOD reg", accepted(r, "", 0));
	r = req_of(FE_OP_CREATE);
	r.flags = FE_F_UID | FE_F_GID | FE_F_MODE;
	r.mode = 0755;
	CHECK("ok: CREATE", accepted(r, "/x", 3));
	CHECK("ok: DROP", accepted(req_of(FE_OP_DROP), "", 0));
	CHECK("ok: RENAME", accepted(req_of(FE_OP_RENAME), "/new", 5));
	r = req_of(FE_OP_SESSION);
	r.real_mode = 0;
	CHECK("ok: SESSION, real_mode 0", accepted(r, "", 0));
	r = req_of(FE_OP_DETACH);
	r.real_mode = 0;
	CHECK("ok: DETACH, real_mode 0", accepted(r, "", 0));
	r = req_of(FE_OP_STATS);
	r.real_mode = 0;
	CHECK("ok: STATS, real_mode 0", accepted(r, "", 0));
	memset(long_path, 'a', sizeof(long_path));
	long_path[FE_PATH_MAX - 1] = '\0';
	CHECK("ok: path of exactly FE_PATH_MAX",
	      accepted(req_of(FE_OP_RENAME), long_path, FE_PATH_MAX));
	len = build(req_of(FE_OP_RENAME), "/unaligned", 11, 0);
	memcpy(copy + 1, msg, len);
	CHECK("ok: unaligned buffer", fe_req_check(copy + 1, len, NULL) == 0);

	/* Length. */
	len = build(req_of(FE_OP_GET), "", 0, 0);
	CHECK("bad: empty", check(0) == -EPROTO);
	CHECK("bad: short", check(len - 1) == -EPROTO);
	CHECK("bad: one byte long", check(len + 1) == -EPROTO);
	len = build(req_of(FE_OP_RENAME), "/p", 3, 0);
	CHECK("bad: shorter than tail_len", check(len - 1) == -EPROTO);
	CHECK("bad: longer than tail_len", check(len + 1) == -EPROTO);
	r = req_of(FE_OP_RENAME);
	r.tail_len = 3;
	CHECK("bad: tail_len without tail",
	      check(build(r, "", 0, 1)) == -EPROTO);
	r.tail_len = UINT32_MAX;
	CHECK("bad: huge tail_len", check(build(r, "/p", 3, 1)) == -EPROTO);

	/* Header fields. */
	r = req_of(FE_OP_GET);
	r.version = 0;
	CHECK("bad: version 0", refused(r, "", 0));
	r.version = FE_PROTO_VERSION + 1;
	CHECK("bad: version + 1", refused(r, "", 0));
	r = req_of(FE_OP_NONE);
	CHECK("bad: op 0", refused(r, "", 0));
	r.op = FE_OP_COUNT;
	CHECK("bad: op FE_OP_COUNT", refused(r, "", 0));
	r.op = 0xffff;
	CHECK("bad: op 0xffff", refused(r, "", 0));
	r = req_of(FE_OP_GET);
	r.flags = FE_F_UID;
	CHECK("bad: GET with a flag", refused(r, "", 0));
	r = req_of(FE_OP_CHOWN);
	r.flags = FE_F_MODE;
	CHECK("bad: CHOWN with FE_F_MODE", refused(r, "", 0));
	r = req_of(FE_OP_CHMOD);
	r.flags = FE_F_MODE | 0x100;
	CHECK("bad: unknown flag bit", refused(r, "", 0));
	r = req_of(FE_OP_CREATE);
	r.flags = FE_F_RDEV;
	CHECK("bad: CREATE with FE_F_RDEV", refused(r, "", 0));
	r = req_of(FE_OP_STATS);
	r.real_mode = 0;
	r.btag = 1;
	CHECK("bad: a birth-time tag on an op that names no file",
	      refused(r, "", 0));
	r = req_of(FE_OP_GET);
	r.btag = 0xffffffffu;
	CHECK("good: any birth-time tag on GET", fe_req_check(&r, sizeof(r),
							      NULL) == 0);

	/* Tails. */
	CHECK("bad: unterminated tail", refused(req_of(FE_OP_RENAME), "/ab", 3));
	CHECK("bad: interior NUL", refused(req_of(FE_OP_RENAME), "/a\0b", 5));
	CHECK("bad: NUL first", refused(req_of(FE_OP_RENAME), "\0ab", 4));
	CHECK("bad: tail on GET", refused(req_of(FE_OP_GET), "/a", 3));
	CHECK("bad: tail on DROP", refused(req_of(FE_OP_DROP), "/a", 3));
	r = req_of(FE_OP_STATS);
	r.real_mode = 0;
	CHECK("bad: tail on STATS", refused(r, "/a", 3));
	CHECK("bad: RENAME without tail", refused(req_of(FE_OP_RENAME), "", 0));
	CHECK("bad: RENAME with empty path",
	      refused(req_of(FE_OP_RENAME), "", 1));
	r = req_of(FE_OP_CHOWN);
	CHECK("bad: CHOWN with empty path", refused(r, "", 1));
	memset(long_path, 'a', sizeof(long_path));
	long_path[FE_PATH_MAX] = '\0';
	CHECK("bad: path longer than FE_PATH_MAX",
	      refused(req_of(FE_OP_RENAME), long_path, FE_PATH_MAX + 1));

	/* Modes. */
	r = req_of(FE_OP_MKNOD);
	r.flags = FE_F_MODE;
	r.mode = S_IFDIR | 0755;
	CHECK("bad: MKNOD of a directory", refused(r, "", 0));
	r.mode = S_IFLNK | 0777;
	CHECK("bad: MKNOD of a symlink", refused(r, "", 0));
	r.mode = 0644;
	CHECK("bad: MKNOD without a type", refused(r, "", 0));
	r.mode = S_IFMT | 0644;
	CHECK("bad: MKNOD with type bits all set", refused(r, "", 0));
	r.mode = S_IFCHR | 0x10000 | 0644;
	CHECK("bad: MKNOD mode past S_IFMT", refused(r, "", 0));
	r = req_of(FE_OP_CHMOD);
	r.flags = FE_F_MODE;
	r.mode = 010000;
	CHECK("bad: CHMOD past 07777", refused(r, "", 0));
	r.mode = REG(0644);
	CHECK("bad: CHMOD with type bits", refused(r, "", 0));
	r = req_of(FE_OP_CREATE);
	r.flags = FE_F_MODE;
	r.mode = DIR_(0755);
	CHECK("bad: CREATE with type bits", refused(r, "", 0));
	r = req_of(FE_OP_GET);
	r.real_mode = 0644;
	CHECK("bad: GET with real type 0", refused(r, "", 0));
	r.real_mode = 0170644;
	CHECK("bad: GET with real type 017", refused(r, "", 0));
	r.real_mode = 0x10000 | REG(0644);
	CHECK("bad: real_mode past S_IFMT", refused(r, "", 0));
	r = req_of(FE_OP_DROP);
	r.real_mode = 0;
	CHECK("bad: DROP with real_mode 0", refused(r, "", 0));

	/* Sessions: a pid that turns negative would reach kill(-1). */
	r = req_of(FE_OP_SESSION);
	r.ino = 0xffffffffu;
	CHECK("bad: SESSION pid past INT_MAX", refused(r, "", 0));
	r = req_of(FE_OP_SESSION);
	r.dev = 1ull << 40;
	CHECK("bad: SESSION group past INT_MAX", refused(r, "", 0));

	/* The slots keep 32 bits of dev and rdev, as the kernel's dev_t. */
	r = req_of(FE_OP_GET);
	r.dev = 1ull << 32;
	CHECK("bad: dev past 32 bits", refused(r, "", 0));
	r.dev = 0xffffffffu;
	CHECK("ok: dev of 32 bits", accepted(r, "", 0));
	r = req_of(FE_OP_MKNOD);
	r.flags = FE_F_MODE | FE_F_RDEV;
	r.mode = S_IFCHR | 0600;
	r.rdev = 1ull << 32;
	CHECK("bad: MKNOD rdev past 32 bits", refused(r, "", 0));
	r.rdev = makedev(4095, 1048575);
	CHECK("ok: MKNOD rdev of the largest major and minor",
	      accepted(r, "", 0));
}

static struct fe_srv srv;
static struct fe_sess sess;
static struct fe_rep rep;

static void serve(const struct fe_req *r, const char *tail)
{
	fe_serve_req(&srv, &sess, r, tail, &rep);
}

static void get(uint32_t real_mode)
{
	struct fe_req r = req_of(FE_OP_GET);

	r.real_mode = real_mode;
	serve(&r, NULL);
}

static void chown_(uint32_t flags, uint32_t uid, uint32_t gid,
		   uint32_t real_mode)
{
	struct fe_req r = req_of(FE_OP_CHOWN);

	r.flags = flags;
	r.uid = uid;
	r.gid = gid;
	r.real_mode = real_mode;
	serve(&r, NULL);
}

static void chmod_(uint32_t mode, uint32_t real_mode)
{
	struct fe_req r = req_of(FE_OP_CHMOD);

	r.flags = FE_F_MODE;
	r.mode = mode;
	r.real_mode = real_mode;
	serve(&r, NULL);
}

/* DROP, then the reap that finds the (made-up) inode open nowhere. */
static void drop(void)
{
	struct fe_req r = req_of(FE_OP_DROP);
	struct fe_rep keep;

	serve(&r, NULL);
	keep = rep;
	(void)fe_reap_orphans(&srv);
	rep = keep;
}

static int rep_is(uint32_t flags, uint32_t uid, uint32_t gid, uint32_t mode,
		  uint64_t rdev)
{
	if (rep.err == 0 && rep.flags == flags && rep.uid == uid &&
	    rep.gid == gid && rep.mode == mode && rep.rdev == rdev &&
	    rep.pad == 0 && rep.count[0] == 0 && rep.count[1] == 0)
		return 1;
	printf("# rep: err %d flags %u uid %u gid %u mode 0%o rdev %llu\n",
	       (int)rep.err, (unsigned)rep.flags, (unsigned)rep.uid,
	       (unsigned)rep.gid, (unsigned)rep.mode,
	       (unsigned long long)rep.rdev);
	return 0;
}

static const char *path_at(uint64_t dev, uint64_t ino)
{
	struct fe_rec rec;

	if (!fe_tab_find(&srv.tab, dev, ino, &rec))
		return "(no record)";
	return fe_tab_path(&srv.tab, &rec) ? fe_tab_path(&srv.tab, &rec) :
					     "(no path)";
}

static void test_get_chown_chmod(void)
{
	struct fe_req r;

	CHECK("srv init", fe_srv_init(&srv, false) == 0);
	get(REG(0644));
	CHECK("GET no record: 0:0, real mode", rep_is(0, 0, 0, REG(0644), 0));

	chown_(FE_F_UID, 1234, 0, REG(0644));
	CHECK("CHOWN uid only: gid stays 0",
	      rep_is(FE_R_FOUND, 1234, 0, REG(0644), 0));
	get(REG(0600));
	CHECK("GET after CHOWN: owner faked, perm real",
	      rep_is(FE_R_FOUND, 1234, 0, REG(0600), 0));
	chown_(FE_F_GID, 0, 55, REG(0644));
	CHECK("CHOWN gid only: uid kept", rep_is(FE_R_FOUND, 1234, 55, REG(0644), 0));
	chown_(0, 7, 7, REG(0644));
	CHECK("CHOWN -1 -1: nothing changes",
	      rep_is(FE_R_FOUND, 1234, 55, REG(0644), 0));
	CHECK("one record", fe_tab_count(&srv.tab) == 1);

	chmod_(04755, REG(0644));
	CHECK("CHMOD 4755", rep_is(FE_R_FOUND, 1234, 55, REG(04755), 0));
	get(REG(0700));
	CHECK("GET after CHMOD: perm faked whatever the real perm",
	      rep_is(FE_R_FOUND, 1234, 55, REG(04755), 0));
	chown_(FE_F_UID, 0, 0, REG(0700));
	CHECK("CHOWN clears setuid on a file",
	      rep_is(FE_R_FOUND, 0, 55, REG(0755), 0));
	chmod_(06755, REG(0700));
	chown_(FE_F_GID, 0, 0, REG(0700));
	CHECK("CHOWN clears setuid and setgid with g+x",
	      rep_is(FE_R_FOUND, 0, 0, REG(0755), 0));
	chmod_(06745, REG(0700));
	chown_(FE_F_GID, 0, 0, REG(0700));
	CHECK("CHOWN keeps setgid without g+x",
	      rep_is(FE_R_FOUND, 0, 0, REG(02745), 0));
	drop();

	chown_(FE_F_UID, 0, 0, REG(04711));
	CHECK("CHOWN clears a real setuid bit on a file without record",
	      rep_is(FE_R_FOUND, 0, 0, REG(0711), 0));
	get(REG(04711));
	CHECK("... and it stays cleared", rep_is(FE_R_FOUND, 0, 0, REG(0711), 0));
	drop();

	chmod_(06755, DIR_(0755));
	chown_(FE_F_UID, 5, 0, DIR_(0755));
	CHECK("CHOWN keeps setuid and setgid on a directory",
	      rep_is(FE_R_FOUND, 5, 0, DIR_(06755), 0));
	drop();

	chown_(FE_F_GID, 0, 50, DIR_(02775));
	CHECK("CHOWN of a directory set-gid for real records its mode",
	      rep_is(FE_R_FOUND, 0, 50, DIR_(02775), 0) &&
		  srv.tab.root->nsgid == 1);
	get(DIR_(0775));
	CHECK("... and shows it whatever the real mode",
	      rep_is(FE_R_FOUND, 0, 50, DIR_(02775), 0));
	drop();
	chown_(FE_F_GID, 0, 50, DIR_(0775));
	CHECK("CHOWN of a plain directory records no mode",
	      rep_is(FE_R_FOUND, 0, 50, DIR_(0775), 0) &&
		  srv.tab.root->nsgid == 0);
	drop();

	chmod_(0600, DIR_(0755));
	CHECK("CHMOD on a directory", rep_is(FE_R_FOUND, 0, 0, DIR_(0600), 0));
	get(DIR_(0700));
	CHECK("GET: directory with faked perm",
	      rep_is(FE_R_FOUND, 0, 0, DIR_(0600), 0));
	get(REG(0644));
	CHECK("GET: type changed, stale record dropped",
	      rep_is(0, 0, 0, REG(0644), 0) && fe_tab_count(&srv.tab) == 0);

	r = req_of(FE_OP_CHOWN);
	r.flags = FE_F_UID;
	r.uid = 9;
	serve(&r, "/tree/file");
	CHECK("CHOWN stores the path", !strcmp(path_at(r.dev, r.ino), "/tree/file"));
	r = req_of(FE_OP_CHMOD);
	r.flags = FE_F_MODE;
	r.mode = 0640;
	serve(&r, "/tree/file2");
	CHECK("CHMOD stores the path",
	      !strcmp(path_at(r.dev, r.ino), "/tree/file2") &&
		      rep_is(FE_R_FOUND, 9, 0, REG(0640), 0));
	r = req_of(FE_OP_RENAME);
	serve(&r, "/tree/moved");
	CHECK("RENAME replaces the path",
	      !strcmp(path_at(r.dev, r.ino), "/tree/moved") &&
		      rep_is(FE_R_FOUND, 9, 0, REG(0640), 0));
	drop();
	CHECK("DROP replies found", rep.flags == FE_R_FOUND && rep.err == 0);
	get(REG(0644));
	CHECK("DROP forgets", rep_is(0, 0, 0, REG(0644), 0));
	drop();
	CHECK("DROP of nothing", rep.flags == 0 && rep.err == 0);
	r = req_of(FE_OP_RENAME);
	serve(&r, "/tree/ghost");
	CHECK("RENAME without a record stores nothing",
	      rep_is(0, 0, 0, REG(0644), 0) && fe_tab_count(&srv.tab) == 0);
	fe_srv_free(&srv);
}

static void test_mknod_create(void)
{
	struct fe_req r;

	CHECK("srv init 2", fe_srv_init(&srv, false) == 0);
	r = req_of(FE_OP_MKNOD);
	r.flags = FE_F_MODE | FE_F_RDEV | FE_F_GID;
	r.mode = S_IFCHR | 0620;
	r.rdev = makedev(4, 1);
	r.gid = 5;
	r.real_mode = REG(0600);
	serve(&r, "/dev/tty1");
	CHECK("MKNOD chr", rep_is(FE_R_FOUND | FE_R_DEV, 0, 5, S_IFCHR | 0620,
				  makedev(4, 1)));
	get(REG(0600));
	CHECK("GET of a faked chr: regular file shows chr + rdev",
	      rep_is(FE_R_FOUND | FE_R_DEV, 0, 5, S_IFCHR | 0620, makedev(4, 1)));
	CHECK("MKNOD stores the path", !strcmp(path_at(r.dev, r.ino), "/dev/tty1"));
	chown_(FE_F_UID, 3, 0, REG(0600));
	CHECK("CHOWN of a faked chr keeps type and rdev",
	      rep_is(FE_R_FOUND | FE_R_DEV, 3, 5, S_IFCHR | 0620, makedev(4, 1)));
	chmod_(0666, REG(0600));
	CHECK("CHMOD of a faked chr keeps type and rdev",
	      rep_is(FE_R_FOUND | FE_R_DEV, 3, 5, S_IFCHR | 0666, makedev(4, 1)));
	get(S_IFCHR | 0666);
	CHECK("GET of a faked chr with its faked type (fts twice) keeps it",
	      rep_is(FE_R_FOUND | FE_R_DEV, 3, 5, S_IFCHR | 0666, makedev(4, 1)));
	get(S_IFBLK | 0666);
	CHECK("GET of a faked chr seen as blk is stale",
	      rep_is(0, 0, 0, S_IFBLK | 0666, 0) && fe_tab_count(&srv.tab) == 0);
	r.real_mode = REG(0600);
	serve(&r, "/dev/tty1");
	chown_(FE_F_UID, 3, 0, REG(0600));
	chmod_(0666, REG(0600));
	get(DIR_(0755));
	CHECK("GET: a faked chr whose file became a directory is stale",
	      rep_is(0, 0, 0, DIR_(0755), 0) && fe_tab_count(&srv.tab) == 0);

	r.mode = S_IFBLK | 0660;
	r.rdev = makedev(8, 0);
	serve(&r, NULL);
	get(REG(0600));
	CHECK("MKNOD blk", rep_is(FE_R_FOUND | FE_R_DEV, 0, 5, S_IFBLK | 0660,
				  makedev(8, 0)));
	r.mode = S_IFIFO | 0640;
	r.real_mode = S_IFIFO | 0600;
	serve(&r, NULL);
	get(S_IFIFO | 0600);
	CHECK("MKNOD fifo over a blk record: a fifo, no rdev",
	      rep_is(FE_R_FOUND, 0, 5, S_IFIFO | 0640, 0));
	drop();

	/* CREATE at a reused inode. */
	chown_(FE_F_UID | FE_F_GID, 1000, 1000, REG(0644));
	chmod_(04755, REG(0644));
	r = req_of(FE_OP_CREATE);
	r.flags = FE_F_UID | FE_F_GID;
	serve(&r, "/new");
	CHECK("CREATE as 0:0 clears the old record and stores nothing",
	      rep_is(0, 0, 0, REG(0644), 0) && fe_tab_count(&srv.tab) == 0);
	get(REG(0644));
	CHECK("GET after CREATE: a fresh file", rep_is(0, 0, 0, REG(0644), 0));
	r.flags = 0;
	serve(&r, NULL);
	CHECK("CREATE without ids stores nothing", fe_tab_count(&srv.tab) == 0);
	r.flags = FE_F_UID;
	r.uid = 1000;
	serve(&r, "/mine");
	CHECK("CREATE as another uid stores a record",
	      rep_is(FE_R_FOUND, 1000, 0, REG(0644), 0) &&
		      fe_tab_count(&srv.tab) == 1 &&
		      !strcmp(path_at(r.dev, r.ino), "/mine"));
	r.flags = FE_F_MODE;
	r.mode = 02750;
	serve(&r, NULL);
	CHECK("CREATE with a mode stores it (and forgets the old owner)",
	      rep_is(FE_R_FOUND, 0, 0, REG(02750), 0) &&
		      fe_tab_count(&srv.tab) == 1);
	drop();
	fe_srv_free(&srv);
}

static void test_unknown_is_real(void)
{
	struct fe_req r;

	CHECK("srv init -u", fe_srv_init(&srv, true) == 0);
	get(REG(0644));
	CHECK("-u: GET no record shows the real owner",
	      rep_is(0, 1000, 100, REG(0644), 0));
	chown_(FE_F_UID, 0, 0, REG(0644));
	CHECK("-u: CHOWN uid only keeps the real gid",
	      rep_is(FE_R_FOUND, 0, 100, REG(0644), 0));
	drop();
	r = req_of(FE_OP_CREATE);
	r.flags = FE_F_UID | FE_F_GID;
	r.uid = 1000;
	r.gid = 100;
	serve(&r, NULL);
	CHECK("-u: CREATE as the real owner stores nothing",
	      rep_is(0, 1000, 100, REG(0644), 0) && fe_tab_count(&srv.tab) == 0);
	r.uid = 0;
	r.gid = 0;
	serve(&r, NULL);
	CHECK("-u: CREATE as 0:0 stores a record",
	      rep_is(FE_R_FOUND, 0, 0, REG(0644), 0) &&
		      fe_tab_count(&srv.tab) == 1);
	fe_srv_free(&srv);
}

static void test_session_stats(void)
{
	struct fe_req r;

	CHECK("srv init 3", fe_srv_init(&srv, false) == 0);
	memset(&sess, 0, sizeof(sess));
	r = req_of(FE_OP_SESSION);
	r.ino = 4321;
	r.dev = 4320;
	serve(&r, NULL);
	CHECK("SESSION remembers pid and group",
	      rep.err == 0 && sess.attached && sess.pid == 4321 &&
		      sess.pgid == 4320);
	r = req_of(FE_OP_DETACH);
	serve(&r, NULL);
	CHECK("DETACH", rep.err == 0 && !sess.attached);
	chown_(FE_F_UID, 1, 1, REG(0644));
	r = req_of(FE_OP_STATS);
	r.real_mode = 0;
	srv.clients = 3;
	serve(&r, NULL);
	CHECK("STATS", rep.err == 0 && rep.count[0] == 1 && rep.count[1] == 3);
	/* The ops that answer from the loop's state, served with no loop. */
	r = req_of(FE_OP_STATUS);
	r.real_mode = 0;
	serve(&r, NULL);
	CHECK("STATUS without a loop: -ENOSYS", rep.err == -ENOSYS);
	r = req_of(FE_OP_CHECKPOINT);
	r.real_mode = 0;
	serve(&r, NULL);
	CHECK("CHECKPOINT without a loop: -ENOSYS", rep.err == -ENOSYS);
	fe_srv_free(&srv);
}

/* The kinds in FE_OPS say what proto.h's text promises: which ops pend,
 * drain and name a file. */
static void test_op_kinds(void)
{
	unsigned pends = 0, nodrain = 0, nofile = 0;

	for (unsigned op = 0; op <= FE_OP_COUNT; op++) {
		unsigned k = fe_op_kind(op);

		if (k & FE_OPK_PENDS)
			pends |= 1u << op;
		if (!(k & FE_OPK_DRAIN))
			nodrain |= 1u << op;
		if (!(k & FE_OPK_FILE))
			nofile |= 1u << op;
	}
	CHECK("pending counters: CHOWN, CHMOD, CREATE",
	      pends == (1u << FE_OP_CHOWN | 1u << FE_OP_CHMOD |
			1u << FE_OP_CREATE));
	CHECK("no drain: MAP, SESSION, DETACH (and no op)",
	      nodrain == (1u << FE_OP_NONE | 1u << FE_OP_MAP |
			  1u << FE_OP_SESSION | 1u << FE_OP_DETACH |
			  1u << FE_OP_COUNT));
	CHECK("no file: the session's and the daemon's ops",
	      nofile == (1u << FE_OP_NONE | 1u << FE_OP_SESSION |
			 1u << FE_OP_DETACH | 1u << FE_OP_STATS |
			 1u << FE_OP_CHECKPOINT | 1u << FE_OP_STATUS |
			 1u << FE_OP_MAP | 1u << FE_OP_COUNT));
}

/* ---- xattrs ---- */

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

static void test_xattr_check(void)
{
	static char big[FE_XATTR_SIZE_MAX + 2];
	static char longname[FE_XATTR_NAME_MAX + 2];
	struct fe_req set = req_of(FE_OP_XSET), get = req_of(FE_OP_XGET);
	struct fe_req list = req_of(FE_OP_XLIST), del = req_of(FE_OP_XDEL);
	struct fe_xhdr h;
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
			    "security.a", big, big, 0)) == 0);
	memset(longname, 'n', FE_XATTR_NAME_MAX);
	memcpy(longname, "trusted.", 8);
	CHECK("ok: XGET of a 255-byte name, size 64 KiB",
	      xcheck(xbuild(get, xh(longname, 0, FE_XATTR_SIZE_MAX), longname,
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
		len = xbuild(set, xh(longname, FE_XATTR_SIZE_MAX, 0), longname,
			     big, path, FE_PATH_MAX);
		CHECK("ok: the longest XSET fits FE_REQ_BUF",
		      xcheck(len) == 0 && len < FE_REQ_BUF);
	}

	CHECK("bad: xattr tail shorter than its header",
	      check(build(req_of(FE_OP_XGET), "abcdefgh", 8, 0)) == -EPROTO);
	h = xh("security.a", 0, 0);
	h.pad = 1;
	CHECK("bad: xattr pad", xcheck(xbuild(get, h, "security.a", "", "",
					       0)) == -EPROTO);
	h = xh("", 0, 0);
	CHECK("bad: empty name", xcheck(xbuild(get, h, "", "", "", 0)) ==
					 -EPROTO);
	longname[FE_XATTR_NAME_MAX] = 'n';
	CHECK("bad: 256-byte name",
	      xcheck(xbuild(get, xh(longname, 0, 0), longname, "", "", 0)) ==
		      -EPROTO);
	longname[FE_XATTR_NAME_MAX] = '\0';
	CHECK("bad: a value on XGET",
	      xcheck(xbuild(get, xh("security.a", 1, 0), "security.a", "x", "",
			    0)) == -EPROTO);
	CHECK("bad: a value past 64 KiB",
	      xcheck(xbuild(set, xh("security.a", FE_XATTR_SIZE_MAX + 1, 0),
			    "security.a", big, "", 0)) == -EPROTO);
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

static void test_xattr_ops(void)
{
	static char big[FE_XATTR_SIZE_MAX];
	struct fe_req f = req_of(FE_OP_XSET), d = req_of(FE_OP_XSET);
	const unsigned char *v;
	int nospc = 0;

	CHECK("srv init x", fe_srv_init(&srv, false) == 0);
	f.ino = 10;
	d.ino = 11;
	d.real_mode = DIR_(0755);

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

	/* ACLs. */
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

/* An orphan's record stays while its inode is open anywhere (here, in
 * this process), and goes with the last fd. */
static void test_orphans(void)
{
	char path[] = "/tmp/fakeenv-orphan.XXXXXX";
	struct fe_req r;
	struct stat st;
	int fd;

	CHECK("srv init o", fe_srv_init(&srv, false) == 0);
	fd = mkstemp(path);
	CHECK("a real file", fd >= 0 && fstat(fd, &st) == 0);
	r = req_of(FE_OP_CHOWN);
	r.dev = st.st_dev;
	r.ino = st.st_ino;
	r.btag = 77;
	r.flags = FE_F_UID;
	r.uid = 42;
	serve(&r, "/tmp/x");
	unlink(path);
	r.op = FE_OP_DROP;
	r.flags = 0;
	serve(&r, NULL);
	CHECK("DROP makes an orphan", rep.flags == FE_R_FOUND &&
					      srv.orphans == 1 &&
					      fe_tab_count(&srv.tab) == 1);
	CHECK("an open orphan is kept", fe_reap_orphans(&srv) == 0 &&
						srv.orphans == 1);
	r.op = FE_OP_GET;
	serve(&r, NULL);
	CHECK("... and still shows its owner", rep.uid == 42);
	r.btag = 78;
	serve(&r, NULL);
	CHECK("another birth time at the key: stale, dropped, counted",
	      rep.uid == 0 && fe_tab_count(&srv.tab) == 0 && srv.stale == 1 &&
		      srv.orphans == 0);
	r.op = FE_OP_CHOWN;
	r.flags = FE_F_UID;
	r.uid = 43;
	serve(&r, NULL);
	r.op = FE_OP_DROP;
	r.flags = 0;
	r.btag = 77;
	serve(&r, NULL);
	r.op = FE_OP_RENAME;
	serve(&r, "/tmp/late");
	r.op = FE_OP_GET;
	r.btag = 78;
	serve(&r, NULL);
	CHECK("a late DROP or RENAME of the dead file leaves the new one's "
	      "record alone",
	      rep.uid == 43 && fe_tab_count(&srv.tab) == 1 &&
		      srv.orphans == 0 && srv.stale == 1);
	r.op = FE_OP_DROP;
	serve(&r, NULL);
	close(fd);
	CHECK("a closed orphan is reaped", fe_reap_orphans(&srv) == 1 &&
						   srv.orphans == 0 &&
						   srv.reaped == 1 &&
						   fe_tab_count(&srv.tab) == 0);
	fe_srv_free(&srv);
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
	test_orphans();
	test_check();
	test_get_chown_chmod();
	test_mknod_create();
	test_unknown_is_real();
	test_session_stats();
	test_op_kinds();
	test_xattr_check();
	test_xattr_ops();
	test_xattr_growth();
	UNIT_EXIT();
}
