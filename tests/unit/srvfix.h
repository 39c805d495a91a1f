/*
 * What test_serve and test_xattr share: a request with the usual file,
 * and a server to serve it with (each test makes its own).
 */
#ifndef FE_TEST_SRVFIX_H
#define FE_TEST_SRVFIX_H

#define REG(perm) (S_IFREG | (perm))
#define DIR_(perm) (S_IFDIR | (perm))

__attribute__((unused)) static struct fe_req req_of(uint16_t op)
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

/* A message in a byte buffer, one spare byte past the longest. */
static unsigned char msg[sizeof(struct fe_req) + FE_PATH_MAX + 2];


/* Lay out r and its tail of n bytes (copied from tail) in msg; returns
 * the message length.  tail_len is set to n unless keep_len. */
__attribute__((unused)) static size_t build(struct fe_req r, const char *tail, size_t n, int keep_len)
{
	if (!keep_len)
		r.tail_len = (uint32_t)n;
	memcpy(msg, &r, sizeof(r));
	memcpy(msg + sizeof(r), tail, n);
	return sizeof(r) + n;
}

__attribute__((unused)) static int check(size_t len)
{
	const char *why = "unset";
	int r = fe_req_check(msg, len, &why);

	if (r == 0 && why != NULL)
		return 1000;
	if (r < 0 && (why == NULL || r != -EPROTO))
		return 1001;
	return r;
}

static struct fe_srv srv;
static struct fe_sess sess;
static struct fe_rep rep;

__attribute__((unused)) static void serve(const struct fe_req *r, const char *tail)
{
	fe_serve_req(&srv, &sess, r, tail, &rep);
}

__attribute__((unused)) static void get(uint32_t real_mode)
{
	struct fe_req r = req_of(FE_OP_GET);

	r.real_mode = real_mode;
	serve(&r, NULL);
}

__attribute__((unused)) static void chown_(uint32_t flags, uint32_t uid, uint32_t gid,
		   uint32_t real_mode)
{
	struct fe_req r = req_of(FE_OP_CHOWN);

	r.flags = flags;
	r.uid = uid;
	r.gid = gid;
	r.real_mode = real_mode;
	serve(&r, NULL);
}

__attribute__((unused)) static void chmod_(uint32_t mode, uint32_t real_mode)
{
	struct fe_req r = req_of(FE_OP_CHMOD);

	r.flags = FE_F_MODE;
	r.mode = mode;
	r.real_mode = real_mode;
	serve(&r, NULL);
}

/* DROP, then the reap that finds the (made-up) inode open nowhere. */
__attribute__((unused)) static void drop(void)
{
	struct fe_req r = req_of(FE_OP_DROP);
	struct fe_rep keep;

	serve(&r, NULL);
	keep = rep;
	(void)fe_reap_orphans(&srv);
	rep = keep;
}

__attribute__((unused)) static int rep_is(uint32_t flags, uint32_t uid, uint32_t gid, uint32_t mode,
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

__attribute__((unused)) static const char *path_at(uint64_t dev, uint64_t ino)
{
	struct fe_rec rec;

	if (!fe_tab_find(&srv.tab, dev, ino, &rec))
		return "(no record)";
	return fe_tab_path(&srv.tab, &rec) ? fe_tab_path(&srv.tab, &rec) :
					     "(no path)";
}

#endif
