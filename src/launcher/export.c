/*
 * fakeenv export; see export.h.  Loads a journal as a session's daemon
 * would (held.h), walks ROOT in sorted order and prints each entry as a
 * session would show it.  It never writes to ROOT or to the state
 * directory.
 */
#include "export.h"

#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "fakeenv/env.h"
#include "held.h"
#include "utils.h"

#define USAGE                                                                  \
	"Usage: fakeenv export --format mtree|devtable|squashfs-pseudo\n"      \
	"         [--state DIR | -i FILE] [-u] [--mtime SECONDS] [-o OUT] "    \
	"[ROOT]\n"

enum fmt { FMT_MTREE, FMT_DEVTABLE, FMT_PSEUDO };

static const char *const fmt_names[] = {
    [FMT_MTREE] = "mtree",
    [FMT_DEVTABLE] = "devtable",
    [FMT_PSEUDO] = "squashfs-pseudo",
};

struct xopts {
	enum fmt fmt;
	const char *state; /* --state DIR or $FAKEENV_STATE, or NULL */
	const char *load;  /* -i FILE, or NULL */
	const char *out;   /* -o OUT, or NULL for stdout */
	const char *root;  /* ROOT, default "." */
	bool unknown_real; /* -u: unrecorded files keep their real owner */
	bool clamp;	   /* --mtime or SOURCE_DATE_EPOCH given */
	int64_t mtime;	   /* with clamp: no time later than this */
};

/* One entry of ROOT as a session shows it. */
struct entry {
	const char *rel;       /* path relative to ROOT, "" for ROOT itself */
	const char *path;      /* path as walked: ROOT as given, then rel */
	const struct stat *st; /* the real lstat */
	uint32_t uid;
	uint32_t gid;
	uint32_t mode; /* type and permission bits */
	uint64_t rdev; /* st_rdev shown (faked for a faked device) */
	int64_t mtime; /* seconds, clamped */
	long mtime_ns;
};

static int usage(const char *fmt, const char *arg)
{
	fe_msg(0, "export: %s%s", fmt, arg ? arg : "");
	fputs(USAGE "Try 'fakeenv export --help' for more information.\n",
	      stderr);
	return 2;
}

static int help(void)
{
	fputs(
	    USAGE
	    "Print the files under ROOT (default: the current directory)\n"
	    "with the owners, modes and device nodes a session shows, read\n"
	    "from a journal, for image builders that run without fakeenv.\n"
	    "\n"
	    "  --format FORMAT  mtree: every entry, for bsdtar -cf OUT @FILE;\n"
	    "                   devtable: a genext2fs -D / makedevs table,\n"
	    "                   squashfs-pseudo: mksquashfs -pf definitions,\n"
	    "                   both of the entries that differ from the\n"
	    "                   real files\n"
	    "  --state DIR      the journal of a --state directory (a\n"
	    "                   running daemon writes it first); default\n"
	    "                   $FAKEENV_STATE\n"
	    "  -i, --load FILE  a journal written with -s FILE\n"
	    "  -u, --unknown-is-real\n"
	    "                   files without a record keep their real\n"
	    "                   owner (default 0:0, as in a session)\n"
	    "  --mtime SECONDS  no time later than SECONDS (default\n"
	    "                   $SOURCE_DATE_EPOCH when set)\n"
	    "  -o, --output OUT write to OUT, not standard output\n"
	    "  -h, --help       show this help and exit\n"
	    "\n"
	    "Exit status: 0; 2 for a usage error; 125 when the journal is\n"
	    "missing, unreadable or refused, or ROOT cannot be walked.\n",
	    stdout);
	return 0;
}

/* A count of seconds since the epoch: digits only, no sign, no overflow. */
static bool parse_time(const char *s, int64_t *out)
{
	uint64_t n = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || n > (uint64_t)(INT64_MAX - 9) / 10)
			return false;
		n = n * 10 + (uint64_t)(*s - '0');
	}
	*out = (int64_t)n;
	return true;
}

/* ---- the view of one entry ---- */

static void view_of(const struct fe_held *h, const struct xopts *o,
		    struct entry *e)
{
	const struct stat *st = e->st;
	const unsigned char *xattrs;
	struct fe_view v;
	size_t xlen;

	fe_held_view(h, e->path, st, o->unknown_real, &v, &xattrs, &xlen);
	e->uid = v.uid;
	e->gid = v.gid;
	e->mode = v.mode & (S_IFMT | 07777);
	e->rdev = v.dev ? v.rdev : st->st_rdev;
	e->mtime = st->st_mtim.tv_sec;
	e->mtime_ns = st->st_mtim.tv_nsec;
	if (o->clamp &&
	    (e->mtime > o->mtime || (e->mtime == o->mtime && e->mtime_ns))) {
		e->mtime = o->mtime;
		e->mtime_ns = 0;
	}
}

/* Whether the view differs from the real file in anything a builder
 * copies from it: owner, group, type, permission bits, device number. */
static bool differs(const struct entry *e)
{
	const struct stat *st = e->st;

	return e->uid != st->st_uid || e->gid != st->st_gid ||
	       e->mode != (st->st_mode & (S_IFMT | 07777)) ||
	       ((S_ISCHR(e->mode) || S_ISBLK(e->mode)) &&
		e->rdev != st->st_rdev);
}

/* A faked device node: a regular file in ROOT. */
static bool faked_dev(const struct entry *e)
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
static void skipped(FILE *f, const struct entry *e, const char *fmt,
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

static int put_mtree(FILE *f, const struct entry *e)
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

static int put_devtable(FILE *f, const struct entry *e)
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

static int put_pseudo(FILE *f, const struct entry *e)
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

/* Byte order of names, so that the output does not depend on the order
 * readdir returns them in. */
static int by_name(const FTSENT **a, const FTSENT **b)
{
	return strcmp((*a)->fts_name, (*b)->fts_name);
}

static void header(FILE *f, const struct xopts *o)
{
	switch (o->fmt) {
	case FMT_MTREE:
		fputs("#mtree\n", f);
		break;
	case FMT_DEVTABLE:
		fputs("# fakeenv export: genext2fs -D / makedevs device table\n"
		      "# <name> <type> <mode> <uid> <gid> <major> <minor> "
		      "<start> <inc> <count>\n",
		      f);
		break;
	case FMT_PSEUDO:
		fputs("# fakeenv export: mksquashfs -pf pseudo definitions\n",
		      f);
		break;
	}
}

/* Walk ROOT and print every entry.  Returns 0, or -1 after a message. */
static int walk(FILE *f, const struct fe_held *h, const struct xopts *o)
{
	char *paths[] = {(char *)o->root, NULL};
	size_t rl = strlen(o->root);
	size_t base = rl && o->root[rl - 1] == '/' ? rl : rl + 1;
	FTS *fts;
	FTSENT *p;
	int r = 0;

	/* ROOT itself may be a symlink to the tree; nothing under it is
	 * followed. */
	fts = fts_open(paths, FTS_PHYSICAL | FTS_COMFOLLOW | FTS_NOCHDIR,
		       by_name);
	if (!fts) {
		fe_msg(errno, "export: %s", o->root);
		return -1;
	}
	header(f, o);
	while (r == 0) {
		struct entry e;

		errno = 0;
		p = fts_read(fts);
		if (!p) {
			/* NULL with errno 0: the end of the walk. */
			if (errno) {
				fe_msg(errno, "export: %s", o->root);
				r = -1;
			}
			break;
		}

		switch (p->fts_info) {
		case FTS_DP:
			continue;
		case FTS_DNR:
		case FTS_ERR:
		case FTS_NS:
			fe_msg(p->fts_errno, "export: %s", p->fts_path);
			r = -1;
			continue;
		case FTS_DC:
			fe_msg(0, "export: %s: a directory cycle", p->fts_path);
			r = -1;
			continue;
		}
		if (p->fts_level == 0 && !S_ISDIR(p->fts_statp->st_mode)) {
			fe_msg(0, "export: %s: not a directory", o->root);
			r = -1;
			continue;
		}
		e = (struct entry){
		    .rel = p->fts_level ? p->fts_path + base : "",
		    .path = p->fts_path,
		    .st = p->fts_statp,
		};
		view_of(h, o, &e);
		switch (o->fmt) {
		case FMT_MTREE:
			r = put_mtree(f, &e);
			break;
		case FMT_DEVTABLE:
			r = put_devtable(f, &e);
			break;
		case FMT_PSEUDO:
			r = put_pseudo(f, &e);
			break;
		}
	}
	fts_close(fts);
	return r;
}

/* ---- the command ---- */

static int parse(int argc, char **argv, struct xopts *o)
{
	enum { OPT_FORMAT = 256, OPT_STATE, OPT_MTIME };
	static const struct option longs[] = {
	    {"format", required_argument, NULL, OPT_FORMAT},
	    {"state", required_argument, NULL, OPT_STATE},
	    {"load", required_argument, NULL, 'i'},
	    {"mtime", required_argument, NULL, OPT_MTIME},
	    {"output", required_argument, NULL, 'o'},
	    {"unknown-is-real", no_argument, NULL, 'u'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *fmt = NULL, *sde;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":i:o:uh", longs, NULL)) != -1) {
		switch (c) {
		case OPT_FORMAT:
			fmt = optarg;
			break;
		case OPT_STATE:
			o->state = optarg;
			break;
		case 'i':
			o->load = optarg;
			break;
		case OPT_MTIME:
			if (!parse_time(optarg, &o->mtime))
				return usage("--mtime: not a number of "
					     "seconds: ",
					     optarg);
			o->clamp = true;
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'u':
			o->unknown_real = true;
			break;
		case 'h':
			exit(help());
		case ':':
			return usage("option needs an argument: ",
				     argv[optind - 1]);
		default:
			return usage("unknown option ", argv[optind - 1]);
		}
	}
	if (!fmt)
		return usage("--format is required", NULL);
	for (o->fmt = 0; o->fmt < FE_ARRAY_LEN(fmt_names); o->fmt++)
		if (!strcmp(fmt, fmt_names[o->fmt]))
			break;
	if (o->fmt == FE_ARRAY_LEN(fmt_names))
		return usage("unknown format (mtree, devtable or "
			     "squashfs-pseudo): ",
			     fmt);
	if (optind < argc)
		o->root = argv[optind++];
	if (optind < argc)
		return usage("one ROOT only, not also ", argv[optind]);
	if (o->root && !*o->root)
		return usage("an empty ROOT", NULL);
	if (!o->root)
		o->root = ".";
	if (o->state && o->load)
		return usage("--state and -i do not go together", NULL);
	if (o->state && !*o->state)
		return usage("--state: empty directory name", NULL);
	if (!o->state && !o->load) {
		const char *env = getenv(FE_ENV_STATE);

		if (!env || !*env)
			return usage("which state?  Give --state DIR or "
				     "-i FILE, or set ",
				     FE_ENV_STATE);
		o->state = env;
	}
	sde = getenv("SOURCE_DATE_EPOCH");
	if (!o->clamp && sde && *sde) {
		if (!parse_time(sde, &o->mtime))
			return usage("SOURCE_DATE_EPOCH: not a number of "
				     "seconds: ",
				     sde);
		o->clamp = true;
	}
	return 0;
}

int fe_export_main(int argc, char **argv)
{
	struct xopts o = {0};
	struct fe_held *h;
	struct stat st;
	FILE *f = stdout;
	int r;

	r = parse(argc, argv, &o);
	if (r)
		return r;
	if (stat(o.root, &st) < 0) {
		fe_msg(errno, "export: %s", o.root);
		return FE_EXIT_FAIL;
	}
	if (!S_ISDIR(st.st_mode)) {
		fe_msg(0, "export: %s: not a directory", o.root);
		return FE_EXIT_FAIL;
	}
	h = fe_held_open(o.state, o.load);
	if (o.out) {
		f = fopen(o.out, "w");
		if (!f) {
			fe_msg(errno, "export: %s", o.out);
			fe_held_close(h);
			return FE_EXIT_FAIL;
		}
	}
	r = walk(f, h, &o);
	if (fflush(f) == EOF || ferror(f)) {
		fe_msg(errno, "export: %s", o.out ? o.out : "stdout");
		r = -1;
	}
	if (o.out && fclose(f) == EOF && !r) {
		fe_msg(errno, "export: %s", o.out);
		r = -1;
	}
	if (r && o.out)
		unlink(o.out); /* never leave half a manifest behind */
	fe_held_close(h);
	return r ? FE_EXIT_FAIL : 0;
}
