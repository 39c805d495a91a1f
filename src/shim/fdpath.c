/*
 * Paths of open fds and dirfd+path pairs, for the daemon's path hints,
 * and what this thread learnt last of its fds (a path, a stat, a device)
 * so that a tree walker does not pay a readlink or an fstat per entry.
 * Paths inside a chroot are given as the host sees them.
 */
#include "shim.h"

#include <string.h>

#include "common/util.h"

static const char *join(char *buf, size_t size, size_t len, const char *path)
{
	size_t plen = strlen(path);

	if (len + 1 + plen + 1 > size)
		return NULL;
	if (len == 0 || buf[len - 1] != '/')
		buf[len++] = '/';
	memcpy(buf + len, path, plen + 1);
	return buf;
}

/* A path seen inside a chroot as the host sees it: the session's paths
 * are the host's. */
static const char *outside(char *buf, size_t size)
{
	if (fe_root_fd() < 0)
		return buf;
	fe_root_outside(buf, size);
	return buf[0] ? buf : NULL;
}

const char *fe_fdpath(int fd, char *buf, size_t size)
{
	char link[32];
	int saved = errno;
	ssize_t n;

	fe_fmt(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, size - 1);
	errno = saved;
	if (n <= 0 || buf[0] != '/')
		return NULL;
	buf[n] = '\0';
	return outside(buf, size);
}

/*
 * What this thread learnt last of an fd: its path, as fe_fdpath() gives
 * it, and the statx of its file.  A tree walker (fts: chown -R, tar x)
 * names every entry relative to one directory fd, and tar x chowns and
 * chmods each file through the fd it created it by: a readlink of
 * /proc/self/fd costs more than a stat, and a stat as much as the chown
 * we fake.  An fd the program opened through us is checked by its token
 * (fdlife.c), no system call; any other by an fstat that must show the
 * same inode.  Two path entries, a directory's and a file's, and one
 * stat entry.  A file renamed meanwhile leaves a stale path, as a rename
 * racing the readlink would.
 *
 * A signal handler may use them between two of our stores: an entry is
 * emptied (fd -1) before it is written and given its fd last, and a
 * reader checks fd and token again after its copy.
 */
#define FDPATH_MAX 512

struct fdpath {
	int fd;       /* -1: empty */
	uint32_t tok; /* fe_fd_token(fd) when kept, 0: none */
	uint32_t gen; /* paths_gen when kept */
	dev_t dev;
	ino_t ino;
	size_t len;
	char path[FDPATH_MAX];
};

struct fdstat {
	int fd; /* -1: empty */
	uint32_t tok;
	uint32_t btag;
	struct stat st;
};

/* Moved on when this process renames a directory: every path kept
 * before may be under it. */
static _Atomic uint32_t paths_gen;

void fe_fd_paths_moved(void)
{
	__atomic_fetch_add(&paths_gen, 1, __ATOMIC_RELEASE);
}

static _Thread_local struct fdpath dircache = { .fd = -1 };
static _Thread_local struct fdpath filecache = { .fd = -1 };
static _Thread_local struct fdstat statcache = { .fd = -1 };
/* A directory fd's device, for readdir (fe_fd_dev()). */
static _Thread_local struct {
	int fd; /* -1: empty */
	uint32_t tok;
	dev_t dev;
} devcache = { .fd = -1 };

#define FENCE() __atomic_signal_fence(__ATOMIC_SEQ_CST)

/* c's path, if c is fd's and fd is still the open file c was kept for:
 * its token unchanged (tok, read by the caller), or else st's inode. */
static const char *cached(const struct fdpath *c, int fd, uint32_t tok,
			  const struct stat *st, char *buf, size_t size)
{
	size_t len = c->len;
	uint32_t ctok = c->tok, gen = c->gen;

	if (c->fd != fd || len >= size ||
	    gen != __atomic_load_n(&paths_gen, __ATOMIC_ACQUIRE))
		return NULL;
	if (!(tok && ctok == tok) &&
	    (!st || c->dev != st->st_dev || c->ino != st->st_ino))
		return NULL;
	FENCE();
	memcpy(buf, c->path, len);
	buf[len] = '\0';
	FENCE();
	/* Rewritten meanwhile (a signal handler): not to be trusted. */
	return c->fd == fd && c->len == len && c->tok == ctok &&
			       c->gen == gen ?
		       buf :
		       NULL;
}

static void keep(struct fdpath *c, int fd, uint32_t tok,
		 const struct stat *st, const char *path)
{
	size_t n = strlen(path);

	if (n >= FDPATH_MAX)
		return;
	c->fd = -1;
	FENCE();
	memcpy(c->path, path, n + 1);
	c->len = n;
	c->tok = tok;
	c->gen = __atomic_load_n(&paths_gen, __ATOMIC_ACQUIRE);
	c->dev = st ? st->st_dev : 0;
	c->ino = st ? st->st_ino : 0;
	FENCE();
	c->fd = fd;
}

void fe_fd_hint_keep(int fd, uint32_t tok, const struct stat *st,
		     const char *hint)
{
	/* Without a stat only the token can tell it is still fd's. */
	if (fd >= 0 && hint && (st || tok))
		keep(st && S_ISDIR(st->st_mode) ? &dircache : &filecache, fd,
		     tok, st, hint);
}

const char *fe_fd_hint(int fd, uint32_t tok, const struct stat *st, char *buf,
		       size_t size)
{
	const char *p = cached(S_ISDIR(st->st_mode) ? &dircache : &filecache,
			       fd, tok, st, buf, size);

	if (!p && (p = fe_fdpath(fd, buf, size)))
		fe_fd_hint_keep(fd, tok, st, p);
	return p;
}

/* fd's path by its token alone, or NULL. */
static const char *token_hint(int fd, uint32_t tok, char *buf, size_t size)
{
	const char *p;

	if (!tok)
		return NULL;
	p = cached(&dircache, fd, tok, NULL, buf, size);
	return p ? p : cached(&filecache, fd, tok, NULL, buf, size);
}

static const char *dirfd_path(int dirfd, char *buf, size_t size)
{
	uint32_t tok = fe_fd_token(dirfd);
	const char *p = token_hint(dirfd, tok, buf, size);
	struct stat st;

	if (p)
		return p;
	if (fe_sys_fstat(dirfd, &st) < 0)
		return NULL;
	return fe_fd_hint(dirfd, tok, &st, buf, size);
}

FE_HOT void fe_fd_caches_drop(void)
{
	/* Stores only where needed: in a fork child each is a page
	 * copied. */
	if (dircache.fd != -1)
		dircache.fd = -1;
	if (filecache.fd != -1)
		filecache.fd = -1;
	if (statcache.fd != -1)
		statcache.fd = -1;
	if (devcache.fd != -1)
		devcache.fd = -1;
}

int fe_fd_dev(int fd, dev_t *dev)
{
	uint32_t tok = fe_fd_token(fd);
	struct stat st;
	int r;

	if (tok && devcache.fd == fd && devcache.tok == tok) {
		dev_t d = devcache.dev;

		FENCE();
		if (devcache.fd == fd && devcache.tok == tok) {
			*dev = d;
			return 0;
		}
	}
	r = fe_sys_fstat(fd, &st);
	if (r < 0)
		return r;
	*dev = st.st_dev;
	if (tok) {
		devcache.fd = -1;
		FENCE();
		devcache.tok = tok;
		devcache.dev = st.st_dev;
		FENCE();
		devcache.fd = fd;
	}
	return 0;
}

bool fe_fd_stat_cached(int fd, struct stat *st, uint32_t *btag)
{
	uint32_t tok = fe_fd_token(fd);

	if (!tok || statcache.fd != fd || statcache.tok != tok)
		return false;
	FENCE();
	*st = statcache.st;
	*btag = statcache.btag;
	FENCE();
	return statcache.fd == fd && statcache.tok == tok;
}

void fe_fd_stat_keep(int fd, uint32_t tok, const struct stat *st,
		     uint32_t btag)
{
	if (!tok)
		return;
	statcache.fd = -1;
	FENCE();
	statcache.tok = tok;
	statcache.st = *st;
	statcache.btag = btag;
	FENCE();
	statcache.fd = fd;
}

void fe_fd_stat_mode(dev_t dev, ino_t ino, mode_t mode)
{
	if (statcache.st.st_dev == dev && statcache.st.st_ino == ino)
		statcache.st.st_mode = mode;
}

const char *fe_abspath(int dirfd, const char *path, char *buf, size_t size)
{
	int saved = errno;

	if (!path)
		return NULL;
	if (path[0] == '/') {
		size_t n = strlen(path);

		if (n + 1 > size)
			return NULL;
		return outside(memcpy(buf, path, n + 1), size);
	}
	if (dirfd == AT_FDCWD) {
		if (!getcwd(buf, size) || !outside(buf, size)) {
			errno = saved;
			return NULL;
		}
	} else if (!dirfd_path(dirfd, buf, size)) {
		return NULL;
	}
	if (path[0] == '\0')
		return buf;
	return join(buf, size, strlen(buf), path);
}

const char *fe_cheap_abspath(int dirfd, const char *path, char *buf,
			     size_t size)
{
	if (path[0] != '/' && (dirfd == AT_FDCWD || !fe_fd_token(dirfd)))
		return NULL;
	return fe_abspath(dirfd, path, buf, size);
}
