/*
 * jdump: the paths a journal keeps, for tests that check where records
 * went (renames of directories move them by path).
 *   jdump FILE [DIR]
 * Prints "PATH UID:GID" for each record, in the journal's order; with DIR,
 * only the records at DIR or below it, their paths relative to it ("." for
 * DIR itself).  An unknown path prints as "-".  A journal fe_jnl_parse()
 * refuses prints "ERR <why>" and exits 1.  Linked to the journal code,
 * not to the shim: run it outside a session.
 */
#include "helper.h"

#include "journal/journal.h"

/* p relative to dir (dlen bytes, no trailing slash), or NULL when p is
 * not dir nor below it. */
static const char *below(const char *p, const char *dir, size_t dlen)
{
	if (strncmp(p, dir, dlen))
		return NULL;
	if (p[dlen] == '\0')
		return ".";
	if (p[dlen] != '/')
		return NULL;
	return p + dlen + 1;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 2 ? argv[2] : NULL;
	size_t len, dlen = dir ? strlen(dir) : 0;
	struct fe_jnl_view v;
	struct fe_jnl_rec r;
	unsigned char *buf;
	char why[256];
	int e;

	if (argc < 2 || argc > 3)
		return usage("jdump FILE [DIR]");
	while (dlen > 0 && dir[dlen - 1] == '/')
		dlen--;
	e = fe_jnl_read_file(argv[1], &buf, &len);
	if (e)
		return err_out(-e);
	if (fe_jnl_parse(buf, len, &v, why, sizeof(why)) != FE_JNL_OK) {
		printf("ERR %s\n", why);
		free(buf);
		return 1;
	}
	for (uint64_t i = 0; i < v.nrec; i++) {
		const char *p;

		fe_jnl_get(&v, i, &r);
		p = r.path_len ? r.path : "-";
		if (dir && !(p = below(r.path, dir, dlen)))
			continue;
		printf("%s %u:%u\n", p, r.uid, r.gid);
	}
	free(buf);
	return 0;
}
