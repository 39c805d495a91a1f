/*
 * Removal and renaming.  A record lives as long as its inode: a removal
 * that takes a file's last name (unlink, rmdir, a rename over it) tells
 * the daemon, which keeps the record while a process may still have the
 * file open (an orphan) and drops it once none has.  Which inode lost its
 * last name is never guessed from a path, which other processes may move,
 * link or replace between our look and the call: a file with a record is
 * pinned by an O_PATH fd across the call, and its link count afterwards
 * says whether it lives on.  A rename keeps the record and tells the
 * daemon the new path.
 */
#include "shim.h"

#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

/* What a name held before a call that may take it away. */
struct victim {
	bool known;     /* st and btag describe it */
	struct stat st; /* the pinned inode when pin >= 0 */
	uint32_t btag;
	int pin;        /* O_PATH fd on it, or -1: no record, or no fd to
			   spare (a record then outlives its file, which is
			   harmless: its birth time matches no newer file) */
};

/* Look at dirfd+path and, if pin, pin it when it has a record. */
static void look(int dirfd, const char *path, struct victim *v, bool pin)
{
	struct fe_view view;
	int saved = errno;

	v->pin = -1;
	v->known = fe_sys_statat(dirfd, path, AT_SYMLINK_NOFOLLOW, &v->st,
				 &v->btag) == 0;
	if (!v->known || !pin || fe_map_view_st(&v->st, v->btag, &view) == 0)
		return;
	v->pin = (int)syscall(SYS_openat, dirfd, path,
			      O_PATH | O_NOFOLLOW | O_CLOEXEC);
	/* The pin is what counts: the name may have changed since. */
	if (v->pin >= 0 &&
	    fe_sys_statat(v->pin, "", AT_EMPTY_PATH, &v->st, &v->btag) < 0) {
		close(v->pin);
		v->pin = -1;
	}
	errno = saved;
}

/* After the call: the pinned inode has no name left, and its record
 * becomes an orphan.  Whatever else the call removed (a file that raced
 * into the name) keeps its record: never wrongly dropped. */
static void settle(struct victim *v)
{
	struct fe_req req;
	struct stat now;
	int saved = errno, err;

	if (v->pin < 0)
		return;
	if (fe_sys_fstat(v->pin, &now) == 0 && now.st_nlink == 0) {
		fe_req_init(&req, FE_OP_DROP, &v->st, v->btag);
		(void)fe_change(&req, NULL, 0, &err);
	}
	close(v->pin);
	v->pin = -1;
	errno = saved;
}

int unlink(const char *path)
{
	struct victim v;
	int r;

	if (!fe_faking_at(AT_FDCWD, path))
		return REAL(unlink, path);
	look(AT_FDCWD, path, &v, true);
	r = REAL(unlink, path);
	settle(&v);
	return r;
}

int unlinkat(int dirfd, const char *path, int flags)
{
	struct victim v;
	int r;

	if (!fe_faking_at(dirfd, path))
		return REAL(unlinkat, dirfd, path, flags);
	look(dirfd, path, &v, true);
	r = REAL(unlinkat, dirfd, path, flags);
	settle(&v);
	return r;
}

int rmdir(const char *path)
{
	struct victim v;
	int r;

	if (!fe_faking_at(AT_FDCWD, path))
		return REAL(rmdir, path);
	look(AT_FDCWD, path, &v, true);
	r = REAL(rmdir, path);
	settle(&v);
	return r;
}

/* glibc's remove() calls unlink and rmdir past the PLT. */
int remove(const char *path)
{
	struct victim v;
	int r;

	if (!fe_faking_at(AT_FDCWD, path))
		return REAL(remove, path);
	look(AT_FDCWD, path, &v, true);
	r = REAL(remove, path);
	settle(&v);
	return r;
}

static void renamed(const struct victim *src, int dirfd, const char *path)
{
	char pbuf[FE_PATH_MAX];
	struct fe_req req;
	const char *hint;
	struct fe_view v;
	int err;

	if (!src->known)
		return;
	/* A file with no record has no path to update.  Directories always
	 * go to the daemon: their renames move the paths beneath them. */
	if (!S_ISDIR(src->st.st_mode) &&
	    fe_map_view_st(&src->st, src->btag, &v) == 0)
		return;
	hint = fe_abspath(dirfd, path, pbuf, sizeof(pbuf));
	if (!hint)
		return;
	fe_req_init(&req, FE_OP_RENAME, &src->st, src->btag);
	(void)fe_change_hint(&req, hint, &err);
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
	size_t n;
	int err;

	/* Before anything can return: the move is done. */
	fe_fd_paths_moved();
	if (!fe_abspath(olddirfd, old, tail, FE_PATH_MAX))
		return;
	n = strlen(tail) + 1;
	if (!fe_abspath(newdirfd, path, tail + n, FE_PATH_MAX))
		return;
	fe_req_init(&req, FE_OP_RENAMEDIR, &src->st, src->btag);
	req.flags = flags;
	(void)fe_change(&req, tail, n + strlen(tail + n) + 1, &err);
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
 * under its new path; an inode that new named before may have lost its
 * last name (settle() tells).
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
}

static int rename_core(int olddirfd, const char *old, int newdirfd,
		       const char *path, unsigned int flags,
		       int (*real)(int, const char *, int, const char *,
				   unsigned int))
{
	struct victim src, dst;
	int r;

	/* The source keeps a name: only what new named may lose its last. */
	look(olddirfd, old, &src, false);
	look(newdirfd, path, &dst, !(flags & RENAME_EXCHANGE));
	r = real(olddirfd, old, newdirfd, path, flags);
	if (r == 0)
		after_rename(&src, &dst, olddirfd, old, newdirfd, path, flags);
	settle(&dst);
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

/* A rename within ignored trees moves nothing the session knows of; one
 * into or out of them keeps the record with its inode, as any rename. */
static bool both_ignored(int olddirfd, const char *old, int newdirfd,
			 const char *path)
{
	return fe_ignored(olddirfd, old) && fe_ignored(newdirfd, path);
}

int rename(const char *old, const char *path)
{
	if (!fe_faking() || both_ignored(AT_FDCWD, old, AT_FDCWD, path))
		return REAL(rename, old, path);
	return rename_core(AT_FDCWD, old, AT_FDCWD, path, 0, call_rename);
}

int renameat(int olddirfd, const char *old, int newdirfd, const char *path)
{
	if (!fe_faking() || both_ignored(olddirfd, old, newdirfd, path))
		return REAL(renameat, olddirfd, old, newdirfd, path);
	return rename_core(olddirfd, old, newdirfd, path, 0, call_renameat);
}

int renameat2(int olddirfd, const char *old, int newdirfd, const char *path,
	      unsigned int flags)
{
	if (!fe_faking() || both_ignored(olddirfd, old, newdirfd, path))
		return REAL(renameat2, olddirfd, old, newdirfd, path, flags);
	return rename_core(olddirfd, old, newdirfd, path, flags,
			   call_renameat2);
}

/* The second names syscall() reaches this file's wrappers by
 * (wrap.def's SYSCALL rows of family remove). */
#define FE_HERE_remove 1
#include "self.h"
