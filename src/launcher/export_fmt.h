/*
 * The formats `fakeenv export` writes, one entry at a time: mtree (every
 * entry, for bsdtar), a genext2fs/makedevs device table and mksquashfs
 * pseudo definitions (the entries that differ from the real files).  They
 * know nothing of journals: the caller hands each entry as a session
 * shows it.
 */
#ifndef FE_LAUNCHER_EXPORT_FMT_H
#define FE_LAUNCHER_EXPORT_FMT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

enum fe_xfmt { FE_XFMT_MTREE, FE_XFMT_DEVTABLE, FE_XFMT_PSEUDO };

/* One entry of ROOT as a session shows it. */
struct fe_xentry {
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

/* The format called name on the command line into *fmt; false for none. */
bool fe_xfmt_by_name(const char *name, enum fe_xfmt *fmt);

/* The lines a file of fmt opens with. */
void fe_xfmt_header(FILE *f, enum fe_xfmt fmt);

/* Print e in fmt (nothing for an entry fmt leaves out).  Returns 0, or -1
 * after a message (a symlink that cannot be read). */
int fe_xfmt_put(FILE *f, enum fe_xfmt fmt, const struct fe_xentry *e);

#endif
