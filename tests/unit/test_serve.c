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

#include "srvfix.h"

/* Is r (built with a tail of n bytes) refused? */
static int refused(struct fe_req r, const char *tail, size_t n)
{
	return check(build(r, tail, n, 0)) == -EPROTO;
}

static int accepted(struct fe_req r, const char *tail, size_t n)
{
	return check(build(r, tail, n, 0)) == 0;
}

/* Every op, well formed. */
static void check_ok(void)
{
	static char long_path[FE_PATH_MAX + 1];
	struct fe_req r;
	unsigned char copy[sizeof(msg) + 1];
	size_t len;

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
}

/* Lengths: the message's against tail_len's. */
static void check_length(void)
{
	struct fe_req r;
	size_t len;

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
}

/* Header fields: version, op, flags, birth-time tag. */
static void check_header(void)
{
	struct fe_req r;

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
}

/* Tails: one NUL-terminated path where the op takes one. */
static void check_tails(void)
{
	static char long_path[FE_PATH_MAX + 1];
	struct fe_req r;

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
}

/* Modes: the types each op may name, the bits past them. */
static void check_modes(void)
{
	struct fe_req r;

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
}

/* Ranges: session ids within an int, dev and rdev within 32 bits. */
static void check_ranges(void)
{
	struct fe_req r;

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

static void test_check(void)
{
	check_ok();
	check_length();
	check_header();
	check_tails();
	check_modes();
	check_ranges();
}

/* GET without a record, then CHOWN of the uid, the gid, neither. */
static void gcc_owner(void)
{
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
}

/* CHMOD, and what CHOWN does to set-uid and set-gid bits, faked or real. */
static void gcc_setid(void)
{
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
}

/* A directory's faked mode and a type change; the paths CHOWN, CHMOD
 * and RENAME store, and DROP. */
static void gcc_paths(void)
{
	struct fe_req r;

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

static void test_get_chown_chmod(void)
{
	gcc_owner();
	gcc_setid();
	gcc_paths();
}

/* MKNOD of each type: the faked type and rdev GET shows, CHOWN and CHMOD
 * keep, a real type change drops. */
static void mc_mknod(void)
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
}

/* CREATE at a reused inode. */
static void mc_create(void)
{
	struct fe_req r;

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

static void test_mknod_create(void)
{
	mc_mknod();
	mc_create();
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
	r = req_of(FE_OP_SYNC);
	r.real_mode = 0;
	serve(&r, NULL);
	CHECK("SYNC without a loop: -ENOSYS", rep.err == -ENOSYS);
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
	CHECK("pending counters: CHOWN, CHMOD, MKNOD, CREATE",
	      pends == (1u << FE_OP_CHOWN | 1u << FE_OP_CHMOD |
			1u << FE_OP_MKNOD | 1u << FE_OP_CREATE));
	CHECK("no drain: MAP, RING, WAKE, SESSION, DETACH (and no op)",
	      nodrain == (1u << FE_OP_NONE | 1u << FE_OP_MAP |
			  1u << FE_OP_RING | 1u << FE_OP_WAKE |
			  1u << FE_OP_SESSION | 1u << FE_OP_DETACH |
			  1u << FE_OP_COUNT));
	CHECK("no file: the session's and the daemon's ops",
	      nofile == (1u << FE_OP_NONE | 1u << FE_OP_SESSION |
			 1u << FE_OP_DETACH | 1u << FE_OP_STATS |
			 1u << FE_OP_CHECKPOINT | 1u << FE_OP_STATUS |
			 1u << FE_OP_MAP | 1u << FE_OP_RING | 1u << FE_OP_WAKE |
			 1u << FE_OP_SYNC | 1u << FE_OP_COUNT));
}

/* ---- xattrs ---- */

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

int main(void)
{
	test_orphans();
	test_check();
	test_get_chown_chmod();
	test_mknod_create();
	test_unknown_is_real();
	test_session_stats();
	test_op_kinds();
	UNIT_EXIT();
}
