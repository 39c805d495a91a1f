/*
 * Is a journal record still its file?  See recheck.h.  Linked into the
 * daemon and the launcher, never the shim.
 */
#include "recheck.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

bool fe_jnl_type_ok(uint32_t jmode, uint32_t jflags, uint32_t real_mode)
{
	uint32_t want = jmode & S_IFMT, got = real_mode & S_IFMT;

	if (jflags & FE_JNL_DEV_SET)
		return got == S_IFREG || got == want;
	return got == want;
}

bool fe_jnl_rec_seen(const struct fe_jnl_rec *r, const struct fe_jnl_seen *s,
		     uint64_t *dev, uint64_t *ino)
{
	if (!fe_jnl_type_ok(r->mode, r->flags, s->mode))
		return false;
	*dev = s->dev;
	*ino = s->ino;
	if (s->dev != r->dev)
		return true; /* another filesystem: inode numbers differ */
	if (s->ino != r->ino)
		return false;
	/* The birth time tells a reused inode number from the same file,
	 * where both the journal and the filesystem know it. */
	if ((r->btime_sec || r->btime_nsec) && s->has_btime &&
	    (s->btime_sec != r->btime_sec || s->btime_nsec != r->btime_nsec))
		return false;
	return true;
}

bool fe_jnl_rec_locate(const struct fe_jnl_rec *r, uint64_t *dev, uint64_t *ino)
{
	if (!r->path_len || r->path[0] != '/')
		return false;
	return fe_jnl_rec_locate_at(AT_FDCWD, r->path, r, dev, ino);
}

bool fe_jnl_rec_locate_at(int dirfd, const char *name,
			  const struct fe_jnl_rec *r, uint64_t *dev,
			  uint64_t *ino)
{
	struct fe_jnl_seen s;
	struct statx stx;

	if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
		  STATX_TYPE | STATX_INO | STATX_BTIME, &stx) < 0)
		return false;
	s = (struct fe_jnl_seen){
	    .dev = makedev(stx.stx_dev_major, stx.stx_dev_minor),
	    .ino = stx.stx_ino,
	    .mode = stx.stx_mode,
	    .has_btime = (stx.stx_mask & STATX_BTIME) != 0,
	    .btime_sec = stx.stx_btime.tv_sec,
	    .btime_nsec = stx.stx_btime.tv_nsec,
	};
	return fe_jnl_rec_seen(r, &s, dev, ino);
}
