/*
 * fakeenv ls; see ls.h.  Asks the session's daemon (GET, then XLIST) for
 * each path, or reads a --state directory's journal when no daemon serves
 * it, keyed as export keys it (export.c).  It changes nothing: no record
 * is made by asking, and the journal is only read.
 */
#include "ls.h"
#include "fakeenv/libc.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/util.h"
#include "fakeenv/env.h"
#include "fakeenv/map.h"
#include "fakeenv/proto.h"
#include "held.h"
#include "journal/journal.h"
#include "session.h"
#include "sockdir.h"
#include "utils.h"

#define USAGE "Usage: fakeenv ls [--state DIR] PATH...\n"

/* What one path shows: the record, or none. */
struct shown {
	bool rec;      /* the session holds a record */
	uint32_t uid;
	uint32_t gid;
	uint32_t mode; /* type and permission bits */
	uint64_t rdev; /* for a device */
	char *names;   /* kept xattr names, each NUL-terminated */
	size_t nlen;   /* bytes of names */
};

static int usage(const char *what, const char *arg)
{
	if (what)
		fe_msg(0, "ls: %s%s%s", what, arg ? " " : "", arg ? arg : "");
	fputs(USAGE "Try 'fakeenv ls --help' for more information.\n", stderr);
	return 2;
}

static int help(void)
{
	fputs(USAGE
	      "Print what the session holds for each PATH (not followed if a\n"
	      "symbolic link), as ls -ln does, one line each:\n"
	      "  MODE UID GID RDEV PATH [XATTR]...\n"
	      "RDEV is MAJOR,MINOR for a device and - otherwise; XATTR are the\n"
	      "names of the xattrs the session keeps.  A file the session\n"
	      "holds nothing for prints \"PATH: no record\".  PATH and the\n"
	      "names show space, backslash and unprintable bytes as \\ooo.\n\n"
	      "  --state DIR  the session of DIR: its daemon, or its journal\n"
	      "               when none runs (default: the session this runs\n"
	      "               in, else $FAKEENV_STATE)\n\n"
	      "Exit status: 0; 1 when a PATH does not exist; 2 for a usage\n"
	      "error; 125 when there is no session to ask.\n",
	      stdout);
	return 0;
}

/* s as one field, as the trace writes it. */
static void put_esc(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c > ' ' && c < 0x7f && c != '\\')
			putchar(c);
		else
			printf("\\%03o", c);
	}
}

/* ls's mode string: "crwsr-sr-T". */
static void mode_str(uint32_t mode, char out[11])
{
	static const char rwx[] = "rwxrwxrwx";

	out[0] = fe_type_char(mode);
	for (int i = 0; i < 9; i++)
		out[1 + i] = (mode & (0400u >> i)) ? rwx[i] : '-';
	if (mode & S_ISUID)
		out[3] = (mode & S_IXUSR) ? 's' : 'S';
	if (mode & S_ISGID)
		out[6] = (mode & S_IXGRP) ? 's' : 'S';
	if (mode & S_ISVTX)
		out[9] = (mode & S_IXOTH) ? 't' : 'T';
	out[10] = '\0';
}

static void print(const char *path, const struct shown *w)
{
	char m[11];

	if (!w->rec) {
		put_esc(path, strlen(path));
		fputs(": no record\n", stdout);
		return;
	}
	mode_str(w->mode, m);
	printf("%s %u %u ", m, w->uid, w->gid);
	if (S_ISCHR(w->mode) || S_ISBLK(w->mode))
		printf("%u,%u ", major(w->rdev), minor(w->rdev));
	else
		fputs("- ", stdout);
	put_esc(path, strlen(path));
	for (size_t i = 0; i < w->nlen;) {
		size_t n = strnlen(w->names + i, w->nlen - i);

		putchar(' ');
		put_esc(w->names + i, n);
		i += n + 1;
	}
	putchar('\n');
}

/* ---- a daemon ---- */

/*
 * The file's key as the shim would send it.  Inside a session our own
 * stat is the shim's, which shows the faked owner and mode: the daemon's
 * view of a record does not depend on them (the type it checks may be
 * the faked one, fakeenv/map.h), and the key and birth time are real.
 */
static int key_of(const char *path, struct fe_req *req)
{
	struct statx stx;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
		  STATX_BASIC_STATS | STATX_BTIME, &stx) < 0)
		return -errno;
	req->version = FE_PROTO_VERSION;
	req->dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	req->ino = stx.stx_ino;
	req->real_mode = stx.stx_mode & (S_IFMT | 07777);
	req->real_uid = stx.stx_uid;
	req->real_gid = stx.stx_gid;
	req->btag = (stx.stx_mask & STATX_BTIME) ?
			    fe_btag(stx.stx_btime.tv_sec, stx.stx_btime.tv_nsec) :
			    0;
	return 0;
}

static int ask(struct fe_sess *s, const char *path, struct shown *w)
{
	static char names[FE_XATTR_LIST_MAX];
	struct fe_req req = { 0 };
	struct fe_xhdr x = { .size = FE_XATTR_LIST_MAX };
	struct fe_rep rep;
	int r = key_of(path, &req);

	if (r < 0)
		return r;
	req.op = FE_OP_GET;
	r = fe_sess_call(s, &req, &rep);
	if (r < 0)
		return r;
	w->rec = rep.flags & FE_R_FOUND;
	w->uid = rep.uid;
	w->gid = rep.gid;
	w->mode = rep.mode;
	w->rdev = rep.rdev;
	if (!w->rec)
		return 0;
	req.op = FE_OP_XLIST;
	req.tail_len = sizeof(x);
	r = fe_sess_call_data(s, &req, &x, &rep, names, sizeof(names),
			      &w->nlen);
	if (r < 0)
		return r;
	w->names = names;
	return 0;
}

/* ---- a journal ---- */

static int read_rec(const struct fe_held *h, const char *path,
		    struct shown *w)
{
	static char names[FE_XATTR_LIST_MAX];
	const unsigned char *blk, *v;
	struct fe_view view;
	struct stat st;
	const char *name;
	size_t pos = 0, nl, vl, blen;

	if (lstat(path, &st) < 0)
		return -errno;
	if (!fe_held_view(h, path, &st, false, &view, &blk, &blen))
		return 0;
	w->rec = true;
	w->uid = view.uid;
	w->gid = view.gid;
	w->mode = view.mode & (S_IFMT | 07777);
	if (view.dev)
		w->rdev = view.rdev;
	w->names = names;
	while (blk &&
	       fe_jnl_xattr_next(blk, blen, &pos, &name, &nl, &v, &vl) &&
	       w->nlen + nl + 1 <= sizeof(names)) {
		memcpy(names + w->nlen, name, nl);
		names[w->nlen + nl] = '\0';
		w->nlen += nl + 1;
	}
	return 0;
}

/* Whether a daemon answers at DIR's socket: s is then connected. */
static bool daemon_of(const char *dir, struct fe_sess *s)
{
	char *sock = fe_sess_state_sock(dir);
	int r = fe_sess_connect(s, sock);

	free(sock);
	if (r < 0)
		return false;
	if (fe_sess_ping(s) < 0) {
		close(s->ctl);
		s->ctl = -1;
		return false;
	}
	return true;
}

int fe_ls_main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "state", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct fe_held *x = NULL;
	const char *state = NULL, *sock = getenv(FE_ENV_SOCKET);
	struct fe_sess s = { .ctl = -1 };
	int c, status = 0;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:h", longs, NULL)) != -1) {
		switch (c) {
		case 's':
			state = optarg;
			break;
		case 'h':
			return help();
		case ':':
			return usage("option needs an argument:",
				     argv[optind - 1]);
		default:
			return usage("unknown option", argv[optind - 1]);
		}
	}
	if (optind == argc)
		return usage("which files?", NULL);
	if (state && !*state)
		return usage("--state: empty directory name", NULL);
	if (!state && !(sock && *sock)) {
		state = getenv(FE_ENV_STATE);
		if (!state || !*state) {
			fe_msg(0, "ls: not in a session: give --state DIR");
			return FE_EXIT_FAIL;
		}
	}
	if (state) {
		fe_sockdir_check_state(state);
		if (!daemon_of(state, &s))
			x = fe_held_open(state, NULL, "nothing listed");
	} else {
		int r = fe_sess_connect(&s, sock);

		if (r < 0) {
			fe_msg(-r, "ls: the session's daemon at %s", sock);
			return FE_EXIT_FAIL;
		}
	}
	for (int i = optind; i < argc; i++) {
		struct shown w = { 0 };
		struct stat st;
		int r;

		if (lstat(argv[i], &st) < 0) {
			fe_msg(errno, "ls: %s", argv[i]);
			status = status ? status : 1;
			continue;
		}
		r = x ? read_rec(x, argv[i], &w) : ask(&s, argv[i], &w);
		if (r < 0) {
			fe_msg(-r, "ls: %s", argv[i]);
			status = FE_EXIT_FAIL;
			continue;
		}
		print(argv[i], &w);
	}
	if (x)
		fe_held_close(x);
	if (s.ctl >= 0)
		close(s.ctl);
	if (fflush(stdout) == EOF) {
		fe_msg(errno, "ls: stdout");
		status = FE_EXIT_FAIL;
	}
	return status;
}
