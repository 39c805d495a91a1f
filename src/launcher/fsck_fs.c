/*
 * fakeenv fsck --against-fs; see fsck_fs.h.  Every decision is the
 * load's own (fe_jnl_rec_place() through fe_jnl_rec_check(),
 * src/journal/recheck.c); this file only says what it decided and why.
 */
#include "fsck_fs.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "daemon/load.h"
#include "fakeenv/daemon.h"
#include "fakeenv/map.h"
#include "journal/journal.h"
#include "journal/recheck.h"
#include "sockdir.h"
#include "utils.h"

typedef unsigned long long ull;

static const char *type_name(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFLNK:
		return "a symbolic link";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFIFO:
		return "a fifo";
	case S_IFSOCK:
		return "a socket";
	default:
		return "a file of unknown type";
	}
}

/* What the load does with a record whose file is not at its path:
 * keyed, one with a birth time (fe_jnl_rec_check()). */
static const char *then(bool keyed)
{
	if (!keyed)
		return "the load drops it";
	return "the load keeps it by its inode number, where it applies only "
	       "if its file lives on under another name (renamed outside any "
	       "session: see fakeenv state relocate)";
}

/* The line for a record the load does not keep as it is. */
static void say(const struct fe_jnl_rec *r, const struct fe_jnl_place *p,
		bool keyed)
{
	const struct fe_jnl_seen *s = &p->seen;

	if (r->path_len)
		printf("%s: ", r->path);
	else
		printf("(no path, st_dev %u:%u inode %llu): ", major(r->dev),
		       minor(r->dev), (ull)r->ino);
	switch (p->fate) {
	case FE_JNL_KEPT:
		break;
	case FE_JNL_REKEYED:
		printf("re-keyed: its filesystem is st_dev %u:%u now, was "
		       "%u:%u; the load keeps it there\n",
		       major(p->dev), minor(p->dev), major(r->dev),
		       minor(r->dev));
		break;
	case FE_JNL_MOVED:
		printf("relocated: found at its path (inode %llu); the load "
		       "keeps it for that file\n",
		       (ull)p->ino);
		break;
	case FE_JNL_GONE:
		printf("gone: %s; %s\n",
		       r->path_len && r->path[0] == '/'
			   ? "nothing at its path"
			   : "no path to find its file by",
		       then(keyed));
		break;
	case FE_JNL_REPLACED:
		if (s->dev == (keyed ? p->dev : r->dev) && s->ino == r->ino)
			printf("replaced: another file at its path, at the "
			       "same inode number %llu but of another birth "
			       "time; %s\n",
			       (ull)s->ino,
			       keyed ? "the session drops the record when "
				       "it meets that file"
				     : "the load drops it");
		else
			printf("replaced: another file at its path (st_dev "
			       "%u:%u inode %llu, the record's is inode "
			       "%llu); %s\n",
			       major(s->dev), minor(s->dev), (ull)s->ino,
			       (ull)r->ino, then(keyed));
		break;
	case FE_JNL_RETYPED:
		printf("type changed: %s at its path, the record is of %s; "
		       "%s\n",
		       type_name(s->mode), type_name(r->mode), then(keyed));
		break;
	case FE_JNL_BADDEV:
		if (r->rdev > FE_DEV_MAX)
			printf("bad device number: a faked st_rdev of %#llx, "
			       "which no mknod makes; the load drops it\n",
			       (ull)r->rdev);
		else
			printf("bad device number: an st_dev of %#llx, which "
			       "no filesystem has; the load drops it\n",
			       (ull)r->dev);
		break;
	}
}

int fe_fsck_against_fs(const char *state, const char *file)
{
	ull n[FE_JNL_BADDEV + 1] = {0}, orphans = 0, unchecked = 0;
	char msg[PATH_MAX * 2 + 256], *jpath;
	struct fe_jnl_devmaps dm;
	struct fe_jnl_view v;
	unsigned char *buf;
	size_t len;
	int r;

	if (state) {
		int lock = fe_sockdir_lock_state(state, false);

		if (lock == -EWOULDBLOCK)
			fe_msg(0,
			       "fsck: a daemon runs on %s: its journal may "
			       "be older than what it holds (fakeenv "
			       "checkpoint --state %s writes it)",
			       state, state);
		else if (lock >= 0)
			close(lock);
		jpath = xasprintf("%s/" FE_DIR_JOURNAL, state);
	} else {
		jpath = xstrdup(file);
	}
	r = fe_jnl_load(jpath, state ? 0 : FE_JNL_FOLLOW, &buf, &len, &v, msg,
			sizeof(msg));
	if (r) {
		fe_load_say(r, msg, "nothing checked against the files");
		free(jpath);
		return 2;
	}
	if (fe_jnl_devmap_build(&v, &dm) < 0)
		die("fsck: journal %s: %s", jpath, strerror(ENOMEM));
	for (uint64_t i = 0; i < v.nrec; i++) {
		struct fe_jnl_place p;
		struct fe_jnl_rec rec;
		bool keyed;

		fe_jnl_get(&v, i, &rec);
		fe_jnl_rec_check(&rec, &dm, &p, &keyed);
		n[p.fate]++;
		if (fe_jnl_fate_kept(p.fate) && !p.looked) {
			/* Kept by its inode number, with no path to
			 * check it by (an orphan, or a path too long to
			 * keep). */
			if (rec.flags & FE_JNL_ORPHAN)
				orphans++;
			else
				unchecked++;
		}
		if (p.fate != FE_JNL_KEPT)
			say(&rec, &p, keyed);
	}
	printf("%s: %llu records: %llu kept as they are, %llu re-keyed "
	       "(st_dev changed), %llu relocated, %llu gone, %llu replaced, "
	       "%llu of another type, %llu with a bad device number",
	       jpath, (ull)v.nrec, n[FE_JNL_KEPT], n[FE_JNL_REKEYED],
	       n[FE_JNL_MOVED], n[FE_JNL_GONE], n[FE_JNL_REPLACED],
	       n[FE_JNL_RETYPED], n[FE_JNL_BADDEV]);
	if (orphans || unchecked)
		printf(" (of those kept, %llu orphans and %llu without a "
		       "path: not looked at)",
		       orphans, unchecked);
	putchar('\n');
	fe_jnl_devmap_free(&dm);
	free(buf);
	free(jpath);
	return n[FE_JNL_GONE] || n[FE_JNL_REPLACED] || n[FE_JNL_RETYPED] ||
		       n[FE_JNL_BADDEV]
		   ? 1
		   : 0;
}
