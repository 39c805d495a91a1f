/*
 * fakeenv fsck; see fsck.h.  A thin shell around the journal codec: all
 * the rules live in src/journal, this file only reports.  The salvaged
 * journal appears whole or not at all (temp file, fsync, link), and link()
 * rather than rename() so that an OUT created meanwhile is never replaced.
 */
#include "fsck.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fakeenv/env.h"
#include "fsck_fs.h"
#include "journal/journal.h"
#include "utils.h"

typedef unsigned long long ull;

#define USAGE                                                                  \
	"Usage: fakeenv fsck [--salvage [-o OUT]] FILE\n"                      \
	"  or:  fakeenv fsck --against-fs [--state DIR | FILE]\n"

static int usage(const char *problem, const char *arg)
{
	fe_msg(0, "fsck: %s%s", problem, arg ? arg : "");
	fputs(USAGE "Try 'fakeenv fsck --help' for more information.\n",
	      stderr);
	return 2;
}

static int help(void)
{
	fputs(USAGE
	      "Check the fakeenv journal FILE: exit 0 and report its contents\n"
	      "when it is sound, exit 1 and say why when it is not.\n\n"
	      "  --salvage   write the records of FILE that can be trusted\n"
	      "              to OUT, a new file; FILE is left as it is\n"
	      "  -o OUT      where --salvage writes (default FILE.salvaged);\n"
	      "              an existing OUT is never replaced\n"
	      "  --against-fs  compare each record with the file at its path\n"
	      "              as the next load would, changing nothing: one\n"
	      "              line per record not kept as it is (gone,\n"
	      "              replaced, of another type, re-keyed, relocated),\n"
	      "              a summary; exit 0 when every record is kept and\n"
	      "              its file found, 1 when not, 2 when the journal\n"
	      "              cannot be read\n"
	      "  --state DIR with --against-fs: DIR/journal (default\n"
	      "              $FAKEENV_STATE when no FILE is given)\n"
	      "  -h, --help  show this help and exit\n",
	      stdout);
	return 0;
}

static void report(const char *file, const struct fe_jnl_view *v)
{
	ull regular = 0, dir = 0, symlink = 0, chr = 0, blk = 0, fifo = 0,
	    sock = 0, faked = 0, with_xattrs = 0, no_path = 0;
	time_t t = (time_t)v->written;
	char when[64];
	struct tm tm;

	for (uint64_t i = 0; i < v->nrec; i++) {
		struct fe_jnl_rec r;

		fe_jnl_get(v, i, &r);
		switch (r.mode & S_IFMT) {
		case S_IFREG:
			regular++;
			break;
		case S_IFDIR:
			dir++;
			break;
		case S_IFLNK:
			symlink++;
			break;
		case S_IFCHR:
			chr++;
			break;
		case S_IFBLK:
			blk++;
			break;
		case S_IFIFO:
			fifo++;
			break;
		case S_IFSOCK:
			sock++;
			break;
		}
		faked += !!(r.flags & FE_JNL_MODE_SET);
		with_xattrs += r.xattrs_len > 0;
		no_path += r.path_len == 0;
	}
	/* written is informational: a value no calendar holds is shown
	 * as it is, not refused. */
	if (!gmtime_r(&t, &tm) ||
	    !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(when, sizeof(when), "at unix time %lld",
			 (long long)v->written);
	printf("%s: ok, %llu records, %llu bytes of strings, written %s\n",
	       file, (ull)v->nrec, (ull)v->str_size, when);
	printf("  regular %llu, directory %llu, symlink %llu, char %llu, "
	       "block %llu, fifo %llu, socket %llu\n",
	       regular, dir, symlink, chr, blk, fifo, sock);
	printf("  faked mode %llu, with xattrs %llu, without a path %llu\n",
	       faked, with_xattrs, no_path);
}

static int check(const char *file)
{
	struct fe_jnl_view v;
	unsigned char *buf;
	char msg[PATH_MAX * 2 + 256];
	size_t len;
	int r;

	r = fe_jnl_load(file, FE_JNL_FOLLOW, &buf, &len, &v, msg, sizeof(msg));
	if (r) {
		/* Damaged: 1; not checked at all (missing, not a regular
		 * file of ours, unreadable): 2. */
		fe_msg(0, "%s", msg);
		return r == -EBADMSG ? 1 : 2;
	}
	report(file, &v);
	free(buf);
	return 0;
}

/* fsync the directory of path, so that the new name lasts. */
static int sync_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = !slash ? xstrdup(".")
		    : slash == path
			? xstrdup("/")
			: xasprintf("%.*s", (int)(slash - path), path);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r = 0;

	if (fd < 0 || fsync(fd))
		r = -errno;
	if (fd >= 0)
		close(fd);
	free(dir);
	return r;
}

static int salvage(const char *file, const char *out)
{
	uint64_t kept, lost;
	unsigned char *buf;
	struct stat st;
	char why[PATH_MAX * 2 + 256], *tmp;
	size_t len;
	int fd, r, status = 2;

	r = fe_jnl_load(file, FE_JNL_FOLLOW | FE_JNL_RAW, &buf, &len, NULL, why,
			sizeof(why));
	if (r == -EBADMSG) {
		fe_msg(0, "%s: nothing can be trusted", why);
		return 1;
	}
	if (r) {
		fe_msg(0, "%s", why);
		return 2;
	}
	if (!lstat(out, &st)) {
		fe_msg(0, "%s: exists, not replacing it (try -o)", out);
		goto out_free;
	}
	if (errno != ENOENT) {
		fe_msg(errno, "%s", out);
		goto out_free;
	}
	tmp = xasprintf("%s.tmp.XXXXXX", out);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		fe_msg(errno, "%s: a temporary file beside it", out);
		goto out_free_tmp;
	}
	r = fe_jnl_salvage(buf, len, fd, &kept, &lost, why, sizeof(why));
	if (r == -EINVAL) {
		fe_msg(0, "%s: nothing can be trusted: %s", file, why);
		status = 1;
	} else if (r) {
		fe_msg(-r, "%s: writing %s", file, tmp);
	} else if (!kept && lost) {
		fe_msg(0,
		       "%s: kept 0, lost %llu: nothing could be trusted, "
		       "%s not written",
		       file, (ull)lost, out);
		status = 1;
	} else if (fsync(fd)) {
		fe_msg(errno, "%s", tmp);
	} else if (link(tmp, out)) {
		fe_msg(errno, "%s", out);
	} else {
		status = 0;
	}
	close(fd);
	unlink(tmp);
	if (!status) {
		r = sync_dir_of(out);
		if (r)
			fe_msg(-r, "%s: its directory was not synced", out);
		printf("%s: kept %llu, lost %llu, written to %s\n", file,
		       (ull)kept, (ull)lost, out);
	}
out_free_tmp:
	free(tmp);
out_free:
	free(buf);
	return status;
}

/* fsck's command line. */
struct fargs {
	const char *file;  /* FILE, or NULL */
	const char *out;   /* -o OUT, or NULL */
	const char *state; /* --state DIR, or NULL */
	bool salv;         /* --salvage */
	bool against;      /* --against-fs */
};

/* argv into *f.  0, or the status of a usage error; exits after
 * --help. */
static int parse(int argc, char **argv, struct fargs *f)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (!strcmp(a, "--salvage")) {
			f->salv = true;
		} else if (!strcmp(a, "--against-fs")) {
			f->against = true;
		} else if (!strcmp(a, "--state")) {
			if (++i == argc)
				return usage("--state needs a directory", NULL);
			f->state = argv[i];
		} else if (!strcmp(a, "-o")) {
			if (++i == argc)
				return usage("-o needs a file name", NULL);
			f->out = argv[i];
		} else if (!strncmp(a, "-o", 2)) {
			f->out = a + 2;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			exit(help());
		} else if (a[0] == '-' && a[1]) {
			return usage("unknown option ", a);
		} else if (f->file) {
			return usage("one FILE only, not also ", a);
		} else {
			f->file = a;
		}
	}
	for (; i < argc; i++) {
		if (f->file)
			return usage("one FILE only, not also ", argv[i]);
		f->file = argv[i];
	}
	if (f->state && !f->against)
		return usage("--state goes with --against-fs", NULL);
	return 0;
}

/* --against-fs: the journal to check, then the check's status. */
static int against_fs(struct fargs *f)
{
	if (f->salv || f->out)
		return usage("--against-fs and --salvage do not go together",
			     NULL);
	if (f->state && f->file)
		return usage("--state and FILE do not go together", NULL);
	if (!f->state && !f->file)
		f->state = getenv(FE_ENV_STATE);
	if (f->state && !*f->state)
		return usage("--state: empty directory name", NULL);
	if (!f->state && !f->file)
		return usage("which journal?  Give --state DIR or FILE, or "
			     "set ",
			     FE_ENV_STATE);
	return fe_fsck_against_fs(f->state, f->file);
}

int fe_fsck_main(int argc, char **argv)
{
	struct fargs f = { 0 };
	char *def_out;
	int status = parse(argc, argv, &f);

	if (status)
		return status;
	if (f.against) {
		status = against_fs(&f);
	} else if (!f.file) {
		return usage("no FILE", NULL);
	} else if (f.out && !f.salv) {
		return usage("-o goes with --salvage", NULL);
	} else if (!f.salv) {
		status = check(f.file);
	} else {
		def_out = f.out ? NULL : xasprintf("%s.salvaged", f.file);
		status = salvage(f.file, f.out ? f.out : def_out);
		free(def_out);
	}
	if (fflush(stdout) == EOF) {
		fe_msg(errno, "stdout");
		return 2;
	}
	return status;
}
