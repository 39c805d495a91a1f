/*
 * What test_journal and test_jfile share: the layout's offsets as a reader
 * outside the codec knows them, a temporary directory, journals built
 * from record sets, and a small journal of every kind of record.
 */
#ifndef FE_TEST_JNLFIX_H
#define FE_TEST_JNLFIX_H

/* Offsets of the layout in journal.h, as a reader outside the codec
 * would know them. */
#define HDR    64
#define REC(i) (HDR + (size_t)(i)*64)
enum {
	R_RDEV = 16,
	R_STR_OFF = 24,
	R_RESERVED = 36,
	R_STR_LEN = 44,
	R_MODE = 56,
	R_FLAGS = 60
};

static char dir[64];

__attribute__((unused)) static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> 8 * i);
}

__attribute__((unused)) static void put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

__attribute__((unused)) static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Make the trailer right again after an edit. */
__attribute__((unused)) static void recrc(unsigned char *b, size_t len)
{
	put32(b + len - 8, fe_crc32c(0, b, len - 8));
}

__attribute__((unused)) static enum fe_jnl_err parse(const unsigned char *b, size_t len)
{
	struct fe_jnl_view v;
	char why[256];

	return fe_jnl_parse(b, len, &v, why, sizeof(why));
}

__attribute__((unused)) static char *file_in_dir(const char *name)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return buf;
}

/* Save s to dir/name and read it back; NULL on failure. */
__attribute__((unused)) static unsigned char *build(const struct jnl_set *s, const char *name, size_t *len)
{
	unsigned char *b;
	const char *path = file_in_dir(name);

	if (fe_jnl_save(path, jnl_set_emit, (void *)s) ||
	    fe_jnl_read_file(path, &b, len))
		return NULL;
	return b;
}

__attribute__((unused)) static int rec_eq(const struct fe_jnl_rec *a, const struct fe_jnl_rec *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->rdev == b->rdev &&
	       a->btag == b->btag && a->reserved == b->reserved &&
	       a->uid == b->uid && a->gid == b->gid && a->mode == b->mode &&
	       a->flags == b->flags && a->path_len == b->path_len &&
	       !memcmp(a->path, b->path, a->path_len) &&
	       !a->path[a->path_len] && !b->path[b->path_len] &&
	       a->xattrs_len == b->xattrs_len &&
	       (!a->xattrs_len || !memcmp(a->xattrs, b->xattrs, a->xattrs_len));
}

/* Entries left in dir: a failed save must leave no temporary file. */
__attribute__((unused)) static int dir_entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

__attribute__((unused)) static void set_path(struct fe_jnl_rec *r, const char *p)
{
	r->path = p;
	r->path_len = strlen(p);
}

/* ---- CRC-32C ---- */

static struct fe_jnl_rec small[8];
static size_t n_small;

__attribute__((unused)) static unsigned char *small_journal(size_t *len)
{
	struct jnl_set s = {small, 0, 1000};
	static unsigned char xa[128];
	size_t xl = 0;

	fe_jnl_xattr_put(xa, sizeof(xa), &xl, "security.selinux",
			 "system_u:object_r:usr_t:s0", 26);
	fe_jnl_xattr_put(xa, sizeof(xa), &xl, "trusted.x", "v", 1);
	n_small = 0;
	small[n_small] = (struct fe_jnl_rec){
	    .dev = 9, .ino = 1, .mode = 0100644, .flags = FE_JNL_MODE_SET};
	set_path(&small[n_small++], "/etc/passwd");
	small[n_small] =
	    (struct fe_jnl_rec){.dev = 9, .ino = 2, .mode = 040755};
	set_path(&small[n_small], "/usr/share/doc");
	small[n_small].xattrs = xa;
	small[n_small++].xattrs_len = xl;
	small[n_small] = (struct fe_jnl_rec){.dev = 9,
					     .ino = 3,
					     .mode = 020666,
					     .rdev = 0x103,
					     .flags = FE_JNL_DEV_SET};
	set_path(&small[n_small++], "/dev/null");
	small[n_small] =
	    (struct fe_jnl_rec){.dev = 9, .ino = 4, .mode = 0120777};
	set_path(&small[n_small++], "");
	small[n_small] =
	    (struct fe_jnl_rec){.dev = 9, .ino = 5, .mode = 010644, .uid = 7};
	set_path(&small[n_small++], "/run/fifo");
	s.n = n_small;
	return build(&s, "small", len);
}

/* The temporary directory, made once by main(). */
__attribute__((unused)) static int make_dir(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/fe-jnl-XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return -1;
	}
	return 0;
}

#endif
