/*
 * Removal and renaming.  A record lives as long as its inode has a name:
 * the last unlink of a file (or the rmdir of a directory, or a rename
 * over it) drops it, so that the next file given the same inode number
 * starts clean.  A rename keeps the record and tells the daemon the new
 * path.  The link count is read before the call; a racing link(2) from
 * another process can only leave a record behind, which the creation of
 * the next inode at that number clears anyway.
 */
#include "shim.h"

#include <stdio.h>
#include <string.h>

/* Tell the daemon that the inode of st lost its last name, unless the
 * shared table shows it has no record: then DROP would change nothing. */
static void dropped(const struct stat *st)
{
	struct fe_req req;
	struct fe_rep rep;
	struct fe_view v;

	if (fe_map_view_st(st, &v) == 0)
		return;
	fe_req_init(&req, FE_OP_DROP, st);
	(void)fe_conn_call(&req, NULL, &rep);
}

static bool last_link(const struct stat *st)
{
	return S_ISDIR(st->st_mode) || st->st_nlink <= 1;
}

int unlink(const char *path)
{
	struct stat st;
	bool known;
	int r;

	if (!fe_faking())
		return REAL(unlink, path);
	known = fe_sys_fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
	r = REAL(unlink, path);
	if (r == 0 && known && last_link(&st))
		dropped(&st);
	return r;
}

int unlinkat(int dirfd, const char *path, int flags)
{
	struct stat st;
	bool known;
	int r;

	if (!fe_faking())
		return REAL(unlinkat, dirfd, path, flags);
	known = fe_sys_fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
	r = REAL(unlinkat, dirfd, path, flags);
	if (r == 0 && known && last_link(&st))
		dropped(&st);
	return r;
}

int rmdir(const char *path)
{
	struct stat st;
	bool known;
	int r;

	if (!fe_faking())
		return REAL(rmdir, path);
	known = fe_sys_fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
	r = REAL(rmdir, path);
	if (r == 0 && known)
		dropped(&st);
	return r;
}

/* glibc's remove() calls unlink and rmdir past the PLT. */
int remove(const char *path)
{
	struct stat st;
	bool known;
	int r;

	if (!fe_faking())
		return REAL(remove, path);
	known = fe_sys_fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
	r = REAL(remove, path);
	if (r == 0 && known && last_link(&st))
		dropped(&st);
	return r;
}

/* The inode at newdirfd+new before a rename that may replace it. */
struct victim {
	bool known;
	struct stat st;
};

static void look(int dirfd, const char *path, struct victim *v)
{
	v->known = fe_sys_fstatat(dirfd, path, &v->st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void renamed(const struct victim *src, int dirfd, const char *path)
{
	char pbuf[FE_PATH_MAX];
	struct fe_req req;
	struct fe_rep rep;
	const char *hint;

	struct fe_view v;

	if (!src->known)
		return;
	/* A file with no record has no path to update.  Directories always
	 * go to the daemon: their renames move the paths beneath them. */
	if (!S_ISDIR(src->st.st_mode) && fe_map_view_st(&src->st, &v) == 0)
		return;
	hint = fe_abspath(dirfd, path, pbuf, sizeof(pbuf));
	if (!hint)
		return;
	fe_req_init(&req, FE_OP_RENAME, &src->st);
	(void)fe_conn_call(&req, hint, &rep);
}

/* A directory moved: the daemon moves every record under its old path
 * too, so that the journal's check at load finds them.  Both paths go in
 * one tail, each NUL-terminated.  flags: FE_F_XCHG for an exchange. */
static void renamed_dir(const struct victim *src, int olddirfd,
			const char *old, int newdirfd, const char *path,
			uint32_t flags)
{
	char tail[2 * FE_PATH_MAX];
	struct fe_req req;
	struct fe_rep rep;
	size_t n;

	if (!fe_abspath(olddirfd, old, tail, FE_PATH_MAX))
		return;
	n = strlen(tail) + 1;
	if (!fe_abspath(newdirfd, path, tail + n, FE_PATH_MAX))
		return;
	fe_req_init(&req, FE_OP_RENAMEDIR, &src->st);
	req.flags = flags;
	(void)fe_conn_call_tail(&req, tail, n + strlen(tail + n) + 1, &rep);
}

/*
 * After a successful RENAME_EXCHANGE: both inodes live on, each under the
 * other's path.  When one is a directory, one RENAMEDIR with FE_F_XCHG,
 * keyed on it, swaps the two prefixes of every record below either path
 * (two moves would take each record there and back) and renames the
 * directory's own record; the other inode's own record follows by key.
 */
static void exchanged(const struct victim *src, const struct victim *dst,
		      int olddirfd, const char *old, int newdirfd,
		      const char *path)
{
	if (src->known && S_ISDIR(src->st.st_mode)) {
		renamed_dir(src, olddirfd, old, newdirfd, path, FE_F_XCHG);
		renamed(dst, olddirfd, old);
	} else if (dst->known && S_ISDIR(dst->st.st_mode)) {
		renamed_dir(dst, newdirfd, path, olddirfd, old, FE_F_XCHG);
		renamed(src, newdirfd, path);
	} else {
		renamed(src, newdirfd, path);
		renamed(dst, olddirfd, old);
	}
}

/*
 * After a successful rename(old -> new): the moved inode keeps its record
 * under its new path; an inode that new named before, if it was another
 * inode, lost that name.
 */
static void after_rename(const struct victim *src, const struct victim *dst,
			 int olddirfd, const char *old, int newdirfd,
			 const char *path, unsigned int flags)
{
	if (flags & RENAME_EXCHANGE) {
		exchanged(src, dst, olddirfd, old, newdirfd, path);
		return;
	}
	if (src->known && S_ISDIR(src->st.st_mode))
		renamed_dir(src, olddirfd, old, newdirfd, path, 0);
	else
		renamed(src, newdirfd, path);
	if (!dst->known)
		return;
	if (src->known && src->st.st_dev == dst->st.st_dev &&
	    src->st.st_ino == dst->st.st_ino)
		return; /* two names of one inode: rename does nothing */
	if (last_link(&dst->st))
		dropped(&dst->st);
}

static int rename_core(int olddirfd, const char *old, int newdirfd,
		       const char *path, unsigned int flags,
		       int (*real)(int, const char *, int, const char *,
				   unsigned int))
{
	struct victim src, dst;
	int r;

	look(olddirfd, old, &src);
	look(newdirfd, path, &dst);
	r = real(olddirfd, old, newdirfd, path, flags);
	if (r == 0)
		after_rename(&src, &dst, olddirfd, old, newdirfd, path, flags);
	return r;
}

static int call_rename(int olddirfd, const char *old, int newdirfd,
		       const char *path, unsigned int flags)
{
	(void)olddirfd;
	(void)newdirfd;
	(void)flags;
	return REAL(rename, old, path);
}

static int call_renameat(int olddirfd, const char *old, int newdirfd,
			 const char *path, unsigned int flags)
{
	(void)flags;
	return REAL(renameat, olddirfd, old, newdirfd, path);
}

static int call_renameat2(int olddirfd, const char *old, int newdirfd,
			  const char *path, unsigned int flags)
{
	return REAL(renameat2, olddirfd, old, newdirfd, path, flags);
}

int rename(const char *old, const char *path)
{
	if (!fe_faking())
		return REAL(rename, old, path);
	return rename_core(AT_FDCWD, old, AT_FDCWD, path, 0, call_rename);
}

int renameat(int olddirfd, const char *old, int newdirfd, const char *path)
{
	if (!fe_faking())
		return REAL(renameat, olddirfd, old, newdirfd, path);
	return rename_core(olddirfd, old, newdirfd, path, 0, call_renameat);
}

int renameat2(int olddirfd, const char *old, int newdirfd, const char *path,
	      unsigned int flags)
{
	if (!fe_faking())
		return REAL(renameat2, olddirfd, old, newdirfd, path, flags);
	return rename_core(olddirfd, old, newdirfd, path, flags,
			   call_renameat2);
}

/* Second names for syscall() (wrap_syscall.c). */
FE_SELF(unlink);
FE_SELF(unlinkat);
FE_SELF(rmdir);
FE_SELF(rename);
FE_SELF(renameat);
FE_SELF(renameat2);
