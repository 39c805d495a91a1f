/*
 * Directory entries: a faked device is a regular file for real, and
 * readdir says DT_REG; find -type c and other d_type users would miss
 * it.  An entry that says DT_REG is looked up in the shared table by
 * (st_dev of the directory, d_ino) and given the faked type.  Only while
 * the table holds a device record at all (root's ndev), so a session
 * without faked devices pays one load per entry; with some, the
 * directory's device, which takes an fstat per regular entry unless the
 * directory's fd has a token (fe_fd_dev(): a device kept by DIR address
 * could belong to a DIR closed and reopened there on another
 * filesystem; a token ends when its fd is closed).
 * Without the mapping (FAKEENV_NO_MAP=1) entries keep their real type.
 */
#include "shim.h"

#include <dirent.h>

/* The d_type to report for a regular-file entry name of dir with inode
 * ino, once the table is known to hold devices (the daemon's answer when
 * the mapping cannot tell, or a change to the entry's bucket is on its
 * way: readdir reads in order too).  A device record is
 * trusted once the entry's own birth time matches it (a dead device's
 * record at a reused inode number must not make a file a device).  errno
 * untouched. */
static unsigned char dtype_of(DIR *dir, const char *name, uint64_t ino,
			      unsigned char real)
{
	struct fe_view v;
	struct stat st;
	uint32_t btag;
	dev_t dev;
	int r;

	if (fe_fd_dev(dirfd(dir), &dev) < 0)
		return real;
	r = fe_map_view(dev, ino, 0, S_IFREG, 0, 0, &v);
	if (r < 0) {
		/* A change on its way (or a record the mapping cannot
		 * tell): the daemon's answer, after it. */
		struct fe_restat re = { dirfd(dir), name, AT_SYMLINK_NOFOLLOW };
		struct fe_meta m = { .dev = dev, .ino = ino,
				     .mode = S_IFREG, .re = &re };

		fe_meta_get(&m);
		return (unsigned char)IFTODT(m.mode & S_IFMT);
	}
	if (r != 1 || !v.dev)
		return real;
	if (v.btag &&
	    (fe_sys_statat(dirfd(dir), name, AT_SYMLINK_NOFOLLOW, &st,
			   &btag) < 0 ||
	     st.st_ino != ino || (btag && btag != v.btag)))
		return real;
	return (unsigned char)IFTODT(v.mode & S_IFMT);
}

struct dirent *readdir(DIR *dir)
{
	struct dirent *e = REAL_PTR(readdir, dir);

	if (e && e->d_type == DT_REG && fe_faking() && fe_map_has_dev())
		e->d_type = dtype_of(dir, e->d_name, e->d_ino, e->d_type);
	return e;
}

#ifdef FE_GLIBC
struct dirent64 *readdir64(DIR *dir)
{
	struct dirent64 *e = REAL_PTR(readdir64, dir);

	if (e && e->d_type == DT_REG && fe_faking() && fe_map_has_dev())
		e->d_type = dtype_of(dir, e->d_name, e->d_ino, e->d_type);
	return e;
}
#endif

int readdir_r(DIR *dir, struct dirent *entry, struct dirent **result)
{
	int r = REAL(readdir_r, dir, entry, result);

	if (r == 0 && *result && (*result)->d_type == DT_REG && fe_faking() &&
	    fe_map_has_dev())
		(*result)->d_type =
		    dtype_of(dir, (*result)->d_name, (*result)->d_ino,
			     (*result)->d_type);
	return r;
}

#ifdef FE_GLIBC
int readdir64_r(DIR *dir, struct dirent64 *entry, struct dirent64 **result)
{
	int r = REAL(readdir64_r, dir, entry, result);

	if (r == 0 && *result && (*result)->d_type == DT_REG && fe_faking() &&
	    fe_map_has_dev())
		(*result)->d_type =
		    dtype_of(dir, (*result)->d_name, (*result)->d_ino,
			     (*result)->d_type);
	return r;
}
#endif
