/*
 * The session's socket directory and whom things belong to; see
 * sockdir.h.  Everything here refuses what another user could have put in
 * our way, and dies (125) saying which path failed and how.
 */
#include "sockdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fakeenv/daemon.h"
#include "utils.h"

#define DIR_TEMPLATE "fakeenv.XXXXXX"

bool fe_sockdir_addr(struct sockaddr_un *sa, const char *path)
{
	size_t len = strlen(path);

	if (len >= FE_SUN_PATH_MAX)
		return false;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, path, len + 1);
	return true;
}

uid_t fe_sockdir_real_uid(void)
{
	return (uid_t)getauxval(AT_UID);
}

bool fe_sockdir_is_us(uid_t uid)
{
	return uid == fe_sockdir_real_uid() || uid == getuid();
}

bool fe_sockdir_peer_ours(int fd, uid_t *uid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		die_errno("cannot check the daemon's user: SO_PEERCRED");
	*uid = cred.uid;
	return cred.uid == fe_sockdir_real_uid();
}

void fe_sockdir_die_not_ours(const char *path, uid_t uid)
{
	die("refused the daemon at %s: it runs as uid %u, not as you "
	    "(uid %u)",
	    path, (unsigned)uid, (unsigned)fe_sockdir_real_uid());
}

/*
 * Whether nobody but us (and root) can replace what lies at DIR, an
 * existing directory: every directory above its real path must be
 * root's or ours and not writable by group or others, unless it is
 * sticky and the entry below it on the way is ours (ssh's secure_path
 * rule, with the exception that makes /tmp usable).  DIR itself is the
 * caller's to check.  Returns 0, or -1 with why (of size bytes) saying
 * which directory fails and how.
 */
static int secure_path(const char *dir, char *why, size_t size)
{
	char *path = realpath(dir, NULL);
	struct stat st;
	uid_t below;
	int r = -1;

	if (!path || lstat(path, &st) < 0) {
		snprintf(why, size, "%s", strerror(errno));
		free(path);
		return -1;
	}
	below = st.st_uid;
	while (strcmp(path, "/")) {
		char *slash = strrchr(path, '/');

		slash[slash == path] = '\0'; /* "/a" becomes "/" */
		if (lstat(path, &st) < 0) {
			snprintf(why, size, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (!S_ISDIR(st.st_mode)) {
			snprintf(why, size, "%s: not a directory", path);
			goto out;
		}
		if (st.st_uid != 0 && !fe_sockdir_is_us(st.st_uid)) {
			snprintf(why, size,
				 "the directory %s above it is owned by uid "
				 "%u, who could replace what is in it",
				 path, (unsigned)st.st_uid);
			goto out;
		}
		if ((st.st_mode & 022) &&
		    !((st.st_mode & S_ISVTX) && fe_sockdir_is_us(below))) {
			snprintf(why, size,
				 "the directory %s above it is writable by "
				 "%s (mode %04o)%s, so another user could "
				 "replace what is in it",
				 path, st.st_mode & 002 ? "others" : "its group",
				 (unsigned)(st.st_mode & 07777),
				 st.st_mode & S_ISVTX ?
					 " and what is below it there is not "
					 "ours" :
					 "");
			goto out;
		}
		below = st.st_uid;
	}
	r = 0;
out:
	free(path);
	return r;
}

/* A base directory mkdtemp may work in: absolute (FAKEENV_SOCKET must be
 * absolute), a directory, writable and searchable.  0 or -errno. */
static int check_base(const char *base)
{
	struct stat st;

	if (base[0] != '/')
		return -EINVAL;
	if (stat(base, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (access(base, W_OK | X_OK) < 0)
		return -errno;
	return 0;
}

/* A private directory older than this with no daemon answering on its
 * socket is a leftover: a launcher between mkdtemp and listen holds one
 * for microseconds, never for this long. */
#define STALE_DIR_AGE 10

/* Whether a daemon listens on SOCK; a full backlog counts as listening.
 * Never blocks. */
static bool sock_answers(int dfd, const char *sock)
{
	struct sockaddr_un sa;
	char path[64];
	int fd, r;

	/* Connect through /proc/self/fd: BASE's path may be too long for
	 * sun_path when the socket's own path is not. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dfd, sock);
	if (!fe_sockdir_addr(&sa, path))
		return true;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return true;
	r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (r < 0 && (errno == ECONNREFUSED || errno == ENOENT))
		r = -1;
	else
		r = 0;
	close(fd);
	return r == 0;
}

/*
 * Remove what launchers of ours killed before their command started left
 * in BASE: directories named like ours, owned by us, 0700, older than
 * STALE_DIR_AGE, holding at most a socket no daemon answers on.  A daemon
 * removes its directory when it exits; a launcher killed by SIGKILL
 * before the daemon ran cannot.  Errors are ignored: this is tidying.
 */
static void remove_stale_dirs(const char *base)
{
	const size_t plen = sizeof(DIR_TEMPLATE) - 7;
	time_t now = time(NULL);
	DIR *d = opendir(base);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct stat st;
		int dfd;

		if (strncmp(e->d_name, DIR_TEMPLATE, plen) != 0 ||
		    strlen(e->d_name) != sizeof(DIR_TEMPLATE) - 1 ||
		    (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
			continue;
		dfd = openat(dirfd(d), e->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			continue;
		if (fstat(dfd, &st) == 0 && st.st_uid == fe_sockdir_real_uid() &&
		    (st.st_mode & 07777) == 0700 &&
		    st.st_mtime < now - STALE_DIR_AGE &&
		    !sock_answers(dfd, FE_DIR_SOCK)) {
			(void)unlinkat(dfd, FE_DIR_SOCK, 0);
			(void)unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
		}
		close(dfd);
	}
	closedir(d);
}

char *fe_sockdir_make(void)
{
	const char *bases[] = { getenv("XDG_RUNTIME_DIR"), getenv("TMPDIR"),
				"/tmp" };
	const char *last = "/tmp";
	char why[PATH_MAX + 256];
	int err = 0;

	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		const char *base = bases[i];
		size_t len;
		char *dir;

		if (!base || !*base)
			continue;
		last = base;
		err = -check_base(base);
		if (err)
			continue;
		remove_stale_dirs(base);
		len = strlen(base);
		dir = xasprintf("%s%s" DIR_TEMPLATE, base,
				base[len - 1] == '/' ? "" : "/");
		if (strlen(dir) + sizeof("/" FE_DIR_SOCK) > FE_SUN_PATH_MAX) {
			err = ENAMETOOLONG;
		} else if (mkdtemp(dir)) {
			/* Ours and 0700, but the place it is in must be
			 * safe too: the next base if it is not. */
			if (secure_path(dir, why, sizeof(why)) == 0)
				return dir;
			rmdir(dir);
			err = EPERM;
		} else {
			err = errno;
		}
		free(dir);
	}
	if (err == ENAMETOOLONG)
		die("cannot make the socket directory in %s: the socket path "
		    "would exceed %zu bytes",
		    last, FE_SUN_PATH_MAX - 1);
	if (err == EPERM)
		die("cannot make the socket directory in %s: %s", last, why);
	errno = err;
	die_errno("cannot make the socket directory in %s", last);
}

void fe_sockdir_check_state(const char *dir)
{
	char why[PATH_MAX + 256];
	struct stat st;

	if (lstat(dir, &st) < 0)
		die_errno("state directory %s", dir);
	if (!S_ISDIR(st.st_mode))
		die("state directory %s: not a directory", dir);
	if (!fe_sockdir_is_us(st.st_uid))
		die("state directory %s: owned by uid %u, not by us (%u)", dir,
		    (unsigned)st.st_uid, (unsigned)fe_sockdir_real_uid());
	if (st.st_mode & 022)
		die("state directory %s: writable by others (mode %04o); "
		    "chmod go-w it",
		    dir, (unsigned)(st.st_mode & 07777));
	if (secure_path(dir, why, sizeof(why)) < 0)
		die("state directory %s: %s", dir, why);
}

int fe_sockdir_lock_state(const char *dir, bool create)
{
	char *path = xasprintf("%s/" FE_DIR_LOCK, dir);
	/* As the daemon opens it (src/daemon/main.c); O_NONBLOCK so that
	 * a FIFO put there cannot hang us. */
	int fd = open(path,
		      O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
			  (create ? O_CREAT : 0),
		      0600);
	int r;

	free(path);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}
