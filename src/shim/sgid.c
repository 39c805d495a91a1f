/*
 * Set-gid directories: a new inode takes the group of a parent that shows
 * S_ISGID in the session, as the kernel's inode_init_owner() does for a
 * real one.  Creation is a hot path, so the parent is looked up only when
 * the shared table holds a set-gid directory at all, or when the new
 * inode shows that its real parent is set-gid.  Never touches errno.
 */
#include "shim.h"

#include <string.h>
#include <sys/auxv.h>

/* Real stat of the directory the inode at dirfd+path (or fd) was made in.
 * For an fd, the name /proc gives: an O_TMPFILE file's is "DIR/#N
 * (deleted)", a file made through a dangling symlink's is its target's.
 * Returns 0 or -errno. */
static int parent_stat(int dirfd, const char *path, int fd, struct stat *st,
		       uint32_t *btag)
{
	char buf[FE_PATH_MAX];
	char *slash;
	size_t n;

	if (path) {
		n = strlen(path);
		if (n >= sizeof(buf))
			return -ENAMETOOLONG;
		memcpy(buf, path, n + 1);
	} else {
		if (!fe_fdpath(fd, buf, sizeof(buf)))
			return -ENOENT;
		dirfd = AT_FDCWD;
		n = strlen(buf);
	}
	/* mkdir("a/b/") made b. */
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash)
		return dirfd == AT_FDCWD ?
			       fe_sys_statat(AT_FDCWD, ".", 0, st, btag) :
			       fe_sys_statat(dirfd, "", AT_EMPTY_PATH, st, btag);
	slash[slash == buf] = '\0';
	return fe_sys_statat(dirfd, buf, 0, st, btag);
}

/*
 * The kernel gave the new inode its real parent's group and, to a
 * directory, S_ISGID: a group other than the process's real one says so.
 * The real ids are those of the exec (the shim fakes every set*id call),
 * so the auxiliary vector has them without a system call.
 */
static bool real_sgid_parent(const struct stat *st)
{
	int saved = errno;
	gid_t egid = (gid_t)getauxval(AT_EGID);

	errno = saved;
	return st->st_gid != egid ||
	       (S_ISDIR(st->st_mode) && (st->st_mode & S_ISGID));
}

void fe_sgid_inherit(int dirfd, const char *path, int fd, const struct stat *st,
		     uint32_t *gid, mode_t *perm)
{
	bool dir = S_ISDIR(st->st_mode);
	struct fe_meta m;
	struct stat pst;
	uint32_t pbtag;

	/* With -u a creation is sent anyway: a parent's stat is no cost
	 * next to it, and a parent without a record shows its real group,
	 * which may be the process's own. */
	if (fe_map_sgid_dirs() == 0 && !real_sgid_parent(st) &&
	    !fe_unknown_is_real())
		return;
	if (parent_stat(dirfd, path, fd, &pst, &pbtag) < 0)
		return;
	fe_meta_faked(&pst, pbtag, &m);
	if (!S_ISDIR(m.mode) || !(m.mode & S_ISGID)) {
		/* A real set-gid bit the session does not show. */
		if (dir)
			*perm &= ~(mode_t)S_ISGID;
		return;
	}
	*gid = m.gid;
	if (dir) {
		*perm |= S_ISGID;
		return;
	}
	/* mode_strip_sgid(): S_ISGID without group-exec is mandatory
	 * locking and stays; otherwise it takes CAP_FSETID (the fake fsuid
	 * 0 has it) or membership of the group. */
	if ((*perm & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) &&
	    fe_cred_fsuid() != 0 && m.gid != fe_cred_fsgid() &&
	    !fe_cred_in_group(m.gid))
		*perm &= ~(mode_t)S_ISGID;
}
