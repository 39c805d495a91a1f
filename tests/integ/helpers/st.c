/*
 * st: the stat family, one subcommand per entry point.
 *   st CALL PATH    prints "uid gid mode major minor"
 * CALL: stat lstat fstat fstatat fstatat-nofollow fstatat-empty
 *       stat64 lstat64 fstat64 fstatat64 xstat lxstat fxstat fxstatat
 *       xstat64 lxstat64 fxstat64 fxstatat64 statx statx-nofollow
 *       cwd-empty (fstatat(AT_FDCWD, "", AT_EMPTY_PATH): the cwd; PATH
 *       unused)
 * Built without _FILE_OFFSET_BITS=64 so that stat and stat64 are distinct
 * symbols (_GNU_SOURCE gives the *64 declarations).
 */
#include "helper.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* glibc >= 2.33 no longer declares the old __xstat entry points; old
 * binaries still call them, bound to their first symbol version. */
#define FE_STAT_VER 1 /* _STAT_VER on x86_64 */
int __xstat(int ver, const char *path, struct stat *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __fxstat(int ver, int fd, struct stat *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st,
	       int flags);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstat64(int ver, int fd, struct stat64 *st);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st,
		 int flags);
#if defined(__x86_64__)
__asm__(".symver __xstat,__xstat@GLIBC_2.2.5");
__asm__(".symver __lxstat,__lxstat@GLIBC_2.2.5");
__asm__(".symver __fxstat,__fxstat@GLIBC_2.2.5");
__asm__(".symver __fxstatat,__fxstatat@GLIBC_2.4");
__asm__(".symver __xstat64,__xstat64@GLIBC_2.2.5");
__asm__(".symver __lxstat64,__lxstat64@GLIBC_2.2.5");
__asm__(".symver __fxstat64,__fxstat64@GLIBC_2.2.5");
__asm__(".symver __fxstatat64,__fxstatat64@GLIBC_2.4");
#endif

static int open_for_fstat(const char *path)
{
	/* O_PATH: works on any file type, as root would (no read needed). */
	return open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
}

int main(int argc, char **argv)
{
	struct stat st;
	struct stat64 st64;
	struct statx stx;
	const char *call, *path;
	int r, fd = -1, is64 = 0, isx = 0;

	if (argc != 3)
		return usage("st CALL PATH");
	call = argv[1];
	path = argv[2];
	memset(&st, 0, sizeof(st));
	memset(&st64, 0, sizeof(st64));
	if (!strcmp(call, "fstat") || !strcmp(call, "fstat64") ||
	    !strcmp(call, "fxstat") || !strcmp(call, "fxstat64")) {
		fd = open_for_fstat(path);
		if (fd < 0)
			return err_out(errno);
	}
	if (!strcmp(call, "stat"))
		r = stat(path, &st);
	else if (!strcmp(call, "lstat"))
		r = lstat(path, &st);
	else if (!strcmp(call, "fstat"))
		r = fstat(fd, &st);
	else if (!strcmp(call, "fstatat"))
		r = fstatat(AT_FDCWD, path, &st, 0);
	else if (!strcmp(call, "fstatat-nofollow"))
		r = fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW);
	else if (!strcmp(call, "fstatat-empty")) {
		fd = open_for_fstat(path);
		if (fd < 0)
			return err_out(errno);
		r = fstatat(fd, "", &st, AT_EMPTY_PATH);
	} else if (!strcmp(call, "cwd-empty"))
		r = fstatat(AT_FDCWD, "", &st, AT_EMPTY_PATH);
	else if (!strcmp(call, "stat64"))
		r = stat64(path, &st64), is64 = 1;
	else if (!strcmp(call, "lstat64"))
		r = lstat64(path, &st64), is64 = 1;
	else if (!strcmp(call, "fstat64"))
		r = fstat64(fd, &st64), is64 = 1;
	else if (!strcmp(call, "fstatat64"))
		r = fstatat64(AT_FDCWD, path, &st64, 0), is64 = 1;
	else if (!strcmp(call, "xstat"))
		r = __xstat(FE_STAT_VER, path, &st);
	else if (!strcmp(call, "lxstat"))
		r = __lxstat(FE_STAT_VER, path, &st);
	else if (!strcmp(call, "fxstat"))
		r = __fxstat(FE_STAT_VER, fd, &st);
	else if (!strcmp(call, "fxstatat"))
		r = __fxstatat(FE_STAT_VER, AT_FDCWD, path, &st, 0);
	else if (!strcmp(call, "xstat64"))
		r = __xstat64(FE_STAT_VER, path, &st64), is64 = 1;
	else if (!strcmp(call, "lxstat64"))
		r = __lxstat64(FE_STAT_VER, path, &st64), is64 = 1;
	else if (!strcmp(call, "fxstat64"))
		r = __fxstat64(FE_STAT_VER, fd, &st64), is64 = 1;
	else if (!strcmp(call, "fxstatat64"))
		r = __fxstatat64(FE_STAT_VER, AT_FDCWD, path, &st64, 0),
		is64 = 1;
	else if (!strcmp(call, "statx"))
		r = statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &stx), isx = 1;
	else if (!strcmp(call, "statx-nofollow"))
		r = statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW,
			  STATX_BASIC_STATS, &stx),
		isx = 1;
	else
		return usage("st: unknown CALL");
	if (r != 0)
		return err_out(errno);
	if (is64)
		print_meta(st64.st_uid, st64.st_gid, st64.st_mode,
			   st64.st_rdev);
	else if (isx)
		print_meta(stx.stx_uid, stx.stx_gid, stx.stx_mode,
			   makedev(stx.stx_rdev_major, stx.stx_rdev_minor));
	else
		print_meta(st.st_uid, st.st_gid, st.st_mode, st.st_rdev);
	return 0;
}
