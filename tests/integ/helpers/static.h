/*
 * static.h: forced (-include) into the static builds of the helpers
 * ($(BUILD)/tests/static/NAME), and into every helper built against a
 * libc other than glibc (musl), and into nothing else.  The static builds
 * are programs the preload cannot reach, for the seccomp tests; their
 * source is the dynamic helpers', unchanged, so both builds make the same
 * calls.
 *
 * What musl lacks: glibc's LFS64 names are macros of its headers, but its
 * fortify, internal and old versioned names do not exist at all; each is
 * the plain call here, so that a helper's glibc-only subcommand makes the
 * call a musl program makes.
 *
 * What a static link lacks: the old __xstat and __xmknod entry points
 * exist only as versioned symbols of the shared libc, and initgroups goes
 * through NSS, which a static program may not load.  Each is renamed here
 * to a definition over the call an old static libc made for it.
 */
#ifndef FE_TESTS_STATIC_H
#define FE_TESTS_STATIC_H

#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* The .symver lines of st.c and node.c then name symbols nobody uses,
 * and the assembler emits nothing for them. */
#define __xstat fe_old_xstat
#define __lxstat fe_old_lxstat
#define __fxstat fe_old_fxstat
#define __fxstatat fe_old_fxstatat
#define __xstat64 fe_old_xstat64
#define __lxstat64 fe_old_lxstat64
#define __fxstat64 fe_old_fxstat64
#define __fxstatat64 fe_old_fxstatat64
#define __xmknod fe_old_xmknod
#define __xmknodat fe_old_xmknodat
#define initgroups fe_file_initgroups

static inline int fe_old_xstat(int v, const char *p, struct stat *st)
{
	(void)v;
	return stat(p, st);
}

static inline int fe_old_lxstat(int v, const char *p, struct stat *st)
{
	(void)v;
	return lstat(p, st);
}

static inline int fe_old_fxstat(int v, int fd, struct stat *st)
{
	(void)v;
	return fstat(fd, st);
}

static inline int fe_old_fxstatat(int v, int dfd, const char *p,
				  struct stat *st, int fl)
{
	(void)v;
	return fstatat(dfd, p, st, fl);
}

static inline int fe_old_xstat64(int v, const char *p, struct stat64 *st)
{
	(void)v;
	return stat64(p, st);
}

static inline int fe_old_lxstat64(int v, const char *p, struct stat64 *st)
{
	(void)v;
	return lstat64(p, st);
}

static inline int fe_old_fxstat64(int v, int fd, struct stat64 *st)
{
	(void)v;
	return fstat64(fd, st);
}

static inline int fe_old_fxstatat64(int v, int dfd, const char *p,
				    struct stat64 *st, int fl)
{
	(void)v;
	return fstatat64(dfd, p, st, fl);
}

static inline int fe_old_xmknod(int v, const char *p, mode_t m, dev_t *dev)
{
	(void)v;
	return mknod(p, m, *dev);
}

static inline int fe_old_xmknodat(int v, int dfd, const char *p, mode_t m,
				  dev_t *dev)
{
	(void)v;
	return mknodat(dfd, p, m, *dev);
}

#ifndef __GLIBC__
#define __open_2 fe_open_2
#define __open64_2 fe_open_2
#define __openat_2 fe_openat_2
#define __openat64_2 fe_openat_2
#define __close fe_plain_close
#define __dup2 fe_plain_dup2
#define _IO_fclose fe_plain_fclose
#define FTS64 FTS
#define FTSENT64 FTSENT
#define fts64_open fts_open
#define fts64_read fts_read
#define fts64_children fts_children
#define fts64_close fts_close

static inline int fe_open_2(const char *p, int fl)
{
	return open(p, fl);
}

static inline int fe_openat_2(int dfd, const char *p, int fl)
{
	return openat(dfd, p, fl);
}

static inline int fe_plain_close(int fd)
{
	return close(fd);
}

static inline int fe_plain_dup2(int o, int n)
{
	return dup2(o, n);
}

static inline int fe_plain_fclose(FILE *f)
{
	return fclose(f);
}
#endif

/* /etc/group read as a file (fgetgrent needs no NSS). */
static inline int fe_file_initgroups(const char *user, gid_t g)
{
	gid_t gs[256];
	size_t n = 0;
	struct group *gr;
	FILE *f = fopen("/etc/group", "re");

	gs[n++] = g;
	while (f && n < 256 && (gr = fgetgrent(f)))
		for (char **m = gr->gr_mem; *m && n < 256; m++)
			if (!strcmp(*m, user) && gr->gr_gid != g) {
				gs[n++] = gr->gr_gid;
				break;
			}
	if (f)
		fclose(f);
	return setgroups(n, gs);
}

#endif
