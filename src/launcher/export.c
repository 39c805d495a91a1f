/*
 * fakeenv export; see export.h.  Loads a journal as a session's daemon
 * would (held.h), walks ROOT in sorted order and prints each entry as a
 * session would show it.  It never writes to ROOT or to the state
 * directory.
 */
#include "export.h"

#include <errno.h>
#include <fts.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "fakeenv/env.h"
#include "export_fmt.h"
#include "held.h"
#include "utils.h"

#define USAGE                                                                  \
	"Usage: fakeenv export --format mtree|devtable|squashfs-pseudo\n"      \
	"         [--state DIR | -i FILE] [-u] [--mtime SECONDS] [-o OUT] "    \
	"[ROOT]\n"

struct xopts {
	enum fe_xfmt fmt;
	const char *state; /* --state DIR or $FAKEENV_STATE, or NULL */
	const char *load;  /* -i FILE, or NULL */
	const char *out;   /* -o OUT, or NULL for stdout */
	const char *root;  /* ROOT, default "." */
	bool unknown_real; /* -u: unrecorded files keep their real owner */
	bool clamp;	   /* --mtime or SOURCE_DATE_EPOCH given */
	int64_t mtime;	   /* with clamp: no time later than this */
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
		    struct fe_xentry *e)
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

/* Byte order of names, so that the output does not depend on the order
 * readdir returns them in. */
static int by_name(const FTSENT **a, const FTSENT **b)
{
	return strcmp((*a)->fts_name, (*b)->fts_name);
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
	fe_xfmt_header(f, o->fmt);
	while (r == 0) {
		struct fe_xentry e;

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
		e = (struct fe_xentry){
		    .rel = p->fts_level ? p->fts_path + base : "",
		    .path = p->fts_path,
		    .st = p->fts_statp,
		};
		view_of(h, o, &e);
		r = fe_xfmt_put(f, o->fmt, &e);
	}
	fts_close(fts);
	return r;
}

/* ---- the command ---- */

/* What the options leave to the environment and to defaults, and the
 * combinations they refuse.  0, or 2 after the usage message. */
static int settle(struct xopts *o)
{
	const char *sde;

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
	const char *fmt = NULL;
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
	if (!fe_xfmt_by_name(fmt, &o->fmt))
		return usage("unknown format (mtree, devtable or "
			     "squashfs-pseudo): ",
			     fmt);
	if (optind < argc)
		o->root = argv[optind++];
	if (optind < argc)
		return usage("one ROOT only, not also ", argv[optind]);
	return settle(o);
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
	h = fe_held_open(o.state, o.load, "refusing to export");
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
