/*
 * export's three writers; see export_fmt.h.  Each prints one entry, or a
 * "# skipped" line and a note on stderr for an entry its format cannot
 * hold: never a silent loss.
 */
#include "export_fmt.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/util.h"
#include "utils.h"

static const char *const names[] = {
    [FE_XFMT_MTREE] = "mtree",
    [FE_XFMT_DEVTABLE] = "devtable",
    [FE_XFMT_PSEUDO] = "squashfs-pseudo",
};

bool fe_xfmt_by_name(const char *name, enum fe_xfmt *fmt)
{
	for (size_t i = 0; i < FE_ARRAY_LEN(names); i++) {
		if (!strcmp(name, names[i])) {
			*fmt = (enum fe_xfmt)i;
			return true;
		}
	}
	return false;
}

/* Whether the view differs from the real file in anything a builder
 * copies from it: owner, group, type, permission bits, device number. */
static bool differs(const struct fe_xentry *e)
{
	const struct stat *st = e->st;

	return e->uid != st->st_uid || e->gid != st->st_gid ||
	       e->mode != (st->st_mode & (S_IFMT | 07777)) ||
	       ((S_ISCHR(e->mode) || S_ISBLK(e->mode)) &&
		e->rdev != st->st_rdev);
}

/* A faked device node: a regular file in ROOT. */
static bool faked_dev(const struct fe_xentry *e)
{
	return (S_ISCHR(e->mode) || S_ISBLK(e->mode)) &&
	       S_ISREG(e->st->st_mode);
}

/* ---- names ---- */

/* mtree's escaping, as libarchive writes and reads it: every byte that
 * is not a printable, non-space ASCII character, and '\\', '#' and '=',
 * as a backslash and three octal digits. */
static void put_mtree_name(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p <= ' ' || *p >= 0x7f || *p == '\\' || *p == '#' ||
		    *p == '=')
			fprintf(f, "\\%03o", *p);
		else
			putc(*p, f);
	}
}

/* Whether a name has a byte that a line-based table cannot carry: a
 * control character (a newline above all), and for the device table,
 * which splits on blanks, a space. */
static bool inexpressible(const char *s, bool space_too)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < ' ' || *p == 0x7f || (space_too && *p == ' '))
			return true;
	return false;
}

/* mksquashfs pseudo file names: a backslash before a space, a quote or a
 * backslash. */
static void put_pseudo_name(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == ' ' || *s == '"' || *s == '\\')
			putc('\\', f);
		putc(*s, f);
	}
}

/* A "# skipped" line for an entry a format cannot hold, and a note on
 * stderr: never a silent loss. */
static void skipped(FILE *f, const struct fe_xentry *e, const char *fmt,
		    const char *why)
{
	fputs("# skipped: ./", f);
	put_mtree_name(f, e->rel);
	fprintf(f, ": %s\n", why);
	fe_msg(0, "export: %s: ./%s: %s", fmt, e->rel, why);
}

/* ---- the formats ---- */

static const char *mtree_type(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "file";
	case S_IFDIR:
		return "dir";
	case S_IFLNK:
		return "link";
	case S_IFCHR:
		return "char";
	case S_IFBLK:
		return "block";
	case S_IFIFO:
		return "fifo";
	default:
		return "socket";
	}
}

/* The target of the symlink at path (malloc'd), or NULL and errno. */
static char *link_target(const char *path, off_t size)
{
	size_t cap = size > 0 && size < PATH_MAX ? (size_t)size + 1 : PATH_MAX;

	for (;;) {
		char *buf = xmalloc(cap);
		ssize_t n = readlink(path, buf, cap);

		if (n < 0) {
			free(buf);
			return NULL;
		}
		if ((size_t)n < cap) {
			buf[n] = '\0';
			return buf;
		}
		free(buf);
		cap *= 2;
	}
}

static int put_mtree(FILE *f, const struct fe_xentry *e)
{
	if (S_ISSOCK(e->mode)) {
		/* libarchive's reader refuses type=socket and stops there;
		 * tar leaves sockets out as well. */
		skipped(f, e, "mtree", "a socket, which archives do not hold");
		return 0;
	}
	if (*e->rel) {
		fputs("./", f);
		put_mtree_name(f, e->rel);
	} else {
		putc('.', f);
	}
	fprintf(f, " type=%s uid=%u gid=%u mode=%04o time=%lld.%09ld",
		mtree_type(e->mode), e->uid, e->gid, e->mode & 07777,
		(long long)e->mtime, e->mtime_ns);
	if (S_ISREG(e->mode)) {
		fprintf(f, " size=%lld contents=", (long long)e->st->st_size);
		put_mtree_name(f, e->path);
	} else if (S_ISLNK(e->mode)) {
		char *t = link_target(e->path, e->st->st_size);

		if (!t) {
			fe_msg(errno, "export: %s", e->path);
			return -1;
		}
		fputs(" link=", f);
		put_mtree_name(f, t);
		free(t);
	} else if (S_ISCHR(e->mode) || S_ISBLK(e->mode)) {
		fprintf(f, " device=native,%u,%u", major(e->rdev),
			minor(e->rdev));
	}
	putc('\n', f);
	return 0;
}

static int put_devtable(FILE *f, const struct fe_xentry *e)
{
	char type;

	if (!differs(e))
		return 0;
	switch (e->mode & S_IFMT) {
	case S_IFREG:
		type = 'f';
		break;
	case S_IFDIR:
		type = 'd';
		break;
	case S_IFCHR:
		type = 'c';
		break;
	case S_IFBLK:
		type = 'b';
		break;
	case S_IFIFO:
		type = 'p';
		break;
	default:
		skipped(f, e, "devtable",
			S_ISLNK(e->mode)
			    ? "a symlink, whose owner a device table "
			      "cannot set"
			    : "a socket, which a device table cannot make");
		return 0;
	}
	if (inexpressible(e->rel, true)) {
		skipped(f, e, "devtable",
			"a name with a blank or a control character");
		return 0;
	}
	fprintf(f, "/%s %c %o %u %u", e->rel, type, e->mode & 07777, e->uid,
		e->gid);
	if (type == 'c' || type == 'b')
		fprintf(f, " %u %u - - -\n", major(e->rdev), minor(e->rdev));
	else
		fputs(" - - - - -\n", f);
	return 0;
}

static int put_pseudo(FILE *f, const struct fe_xentry *e)
{
	bool dev = S_ISCHR(e->mode) || S_ISBLK(e->mode);

	if (!differs(e))
		return 0;
	if (inexpressible(e->rel, false)) {
		skipped(f, e, "squashfs-pseudo",
			"a name with a control character");
		return 0;
	}
	if (!*e->rel) {
		/* mksquashfs takes no pseudo definition of the root; it has
		 * options for it instead. */
		fprintf(f,
			"# the root: -root-mode %04o -root-uid %u "
			"-root-gid %u\n",
			e->mode & 07777, e->uid, e->gid);
		return 0;
	}
	put_pseudo_name(f, e->rel);
	if (dev && (faked_dev(e) || e->rdev != e->st->st_rdev))
		fprintf(f, " %c %o %u %u %u %u\n", S_ISCHR(e->mode) ? 'c' : 'b',
			e->mode & 07777, e->uid, e->gid, major(e->rdev),
			minor(e->rdev));
	else
		fprintf(f, " m %o %u %u\n", e->mode & 07777, e->uid, e->gid);
	return 0;
}

void fe_xfmt_header(FILE *f, enum fe_xfmt fmt)
{
	switch (fmt) {
	case FE_XFMT_MTREE:
		fputs("#mtree\n", f);
		break;
	case FE_XFMT_DEVTABLE:
		fputs("# fakeenv export: genext2fs -D / makedevs device table\n"
		      "# <name> <type> <mode> <uid> <gid> <major> <minor> "
		      "<start> <inc> <count>\n",
		      f);
		break;
	case FE_XFMT_PSEUDO:
		fputs("# fakeenv export: mksquashfs -pf pseudo definitions\n",
		      f);
		break;
	}
}

int fe_xfmt_put(FILE *f, enum fe_xfmt fmt, const struct fe_xentry *e)
{
	switch (fmt) {
	case FE_XFMT_MTREE:
		return put_mtree(f, e);
	case FE_XFMT_DEVTABLE:
		return put_devtable(f, e);
	case FE_XFMT_PSEUDO:
		return put_pseudo(f, e);
	}
	return 0;
}
