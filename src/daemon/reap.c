/*
 * Orphan reaping; see reap.h.  O(orphans log orphans + fds of the user's
 * processes), with one allocation, run at checkpoints and when orphans
 * pile up: never per request.
 */
#include "reap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct okey {
	uint64_t dev, ino;
	uint32_t btag;
	bool open;
};

static int cmp_key(const void *a, const void *b)
{
	const struct okey *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return 0;
}

static void mark(struct okey *keys, size_t n, const struct stat *st)
{
	struct okey k = { .dev = st->st_dev, .ino = st->st_ino };
	struct okey *hit = bsearch(&k, keys, n, sizeof(k), cmp_key);

	if (hit)
		hit->open = true;
}

/* Whether the process of /proc/<pid> (pfd) is a zombie: it has no fds
 * left, and its fd directory refuses everyone. */
static bool zombie(int pfd)
{
	char buf[512];
	const char *p;
	ssize_t n;
	int fd = openat(pfd, "stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "pid (comm) S ...": comm may hold anything, ')' included. */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/* Mark what the process of /proc/<name> has open.  Returns 0, or -EACCES
 * when a process of ours could not be looked into. */
static int scan_pid(int procfd, const char *name, uid_t me, struct okey *keys,
		    size_t n)
{
	struct stat st;
	struct dirent *e;
	int pfd, ffd;
	DIR *d;

	pfd = openat(procfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return 0; /* gone */
	if (fstat(pfd, &st) < 0 || st.st_uid != me) {
		close(pfd);
		return 0;
	}
	if (fstatat(pfd, "cwd", &st, 0) == 0)
		mark(keys, n, &st);
	if (fstatat(pfd, "root", &st, 0) == 0)
		mark(keys, n, &st);
	ffd = openat(pfd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ffd < 0) {
		int err = errno;
		bool z = zombie(pfd);

		close(pfd);
		return err == ENOENT || z ? 0 : -EACCES;
	}
	close(pfd);
	d = fdopendir(ffd);
	if (!d) {
		close(ffd);
		return -EACCES;
	}
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' &&
		    fstatat(dirfd(d), e->d_name, &st, 0) == 0)
			mark(keys, n, &st);
	closedir(d);
	return 0;
}

long fe_reap_orphans(struct fe_srv *s)
{
	size_t n = 0, pos = 0, cap = s->orphans;
	struct okey *keys;
	struct fe_rec rec;
	uint64_t dev, ino;
	struct dirent *e;
	long dropped = 0;
	int r = 0, procfd;
	DIR *d;

	if (!cap)
		return 0;
	/* Whatever happens, the next try waits for twice as many. */
	s->reap_kept = s->orphans;
	keys = malloc(cap * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	while (n < cap && fe_tab_next(&s->tab, &pos, &dev, &ino, &rec))
		if (rec.flags & FE_REC_ORPHAN)
			keys[n++] = (struct okey){ dev, ino, rec.btag, false };
	qsort(keys, n, sizeof(*keys), cmp_key);
	procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = procfd >= 0 ? fdopendir(procfd) : NULL;
	if (!d) {
		r = -errno;
		if (procfd >= 0)
			close(procfd);
		free(keys);
		return r;
	}
	while (r == 0 && (e = readdir(d)))
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
			r = scan_pid(dirfd(d), e->d_name, geteuid(), keys, n);
	closedir(d);
	for (size_t i = 0; r == 0 && i < n; i++) {
		if (keys[i].open ||
		    !fe_tab_find(&s->tab, keys[i].dev, keys[i].ino, &rec) ||
		    !(rec.flags & FE_REC_ORPHAN) || rec.btag != keys[i].btag)
			continue;
		fe_tab_del(&s->tab, keys[i].dev, keys[i].ino);
		s->orphans--;
		s->changes++;
		dropped++;
	}
	free(keys);
	s->reaped += (uint64_t)dropped;
	s->reap_kept = s->orphans;
	return r < 0 ? r : dropped;
}

uint64_t fe_reap_next(const struct fe_srv *s)
{
	uint64_t kept2 = 2 * s->reap_kept;

	return kept2 > 4096 ? kept2 : 4096;
}
