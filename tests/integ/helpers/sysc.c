/*
 * sysc: the faked calls made through syscall(3) instead of libc, one
 * subcommand per routed number.
 *   sysc chown|lchown PATH U G     sysc fchown PATH U G (opens PATH)
 *   sysc fchownat|fchownat-nofollow PATH U G
 *   sysc chmod|fchmodat|fchmodat2|fchmodat2-empty PATH MODE
 *   sysc fchmod PATH MODE
 *   sysc stat|lstat|fstat|newfstatat|statx PATH   "uid gid mode maj min"
 *   sysc mknod|mknodat PATH MODE MAJOR MINOR
 *   sysc openat2|open|openat|creat PATH MODE  (creating; O_CREAT)
 *   sysc mkdir|mkdirat PATH MODE     sysc symlink|symlinkat PATH TARGET
 *   sysc access|faccessat|faccessat2 PATH   may the caller write PATH?
 *   sysc execve PROG [ARG...]   exec PROG with an empty envp
 *   sysc unlink|unlinkat|rmdir PATH
 *   sysc rename|renameat|renameat2 OLD NEW
 *   sysc creds     set groups, gids, uids through syscall() and print
 *                  what the get* numbers say after each step
 *   sysc getpid    a number nobody fakes: prints "ok" when it matches
 * Prints "ok" (or the stat line) on success, "ERR <name>" on failure.
 */
#include "helper.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

/* The kernel's 32-bit dev_t of mknod(2) (new_encode_dev). */
static unsigned long kdev(unsigned maj, unsigned min)
{
	return (min & 0xff) | (maj << 8) | ((min & ~0xffu) << 12);
}

static int done(long r)
{
	if (r < 0)
		return err_out(errno);
	printf("ok\n");
	return 0;
}

static int show(const struct stat *st)
{
	print_meta(st->st_uid, st->st_gid, st->st_mode, st->st_rdev);
	return 0;
}

static void ids(const char *step)
{
	long u = syscall(SYS_getuid), eu = syscall(SYS_geteuid);
	long g = syscall(SYS_getgid), eg = syscall(SYS_getegid);
	uid_t r, e, s;
	gid_t rg, egid, sg, list[8];
	long n;

	printf("%s: uid %ld euid %ld gid %ld egid %ld", step, u, eu, g, eg);
	if (syscall(SYS_getresuid, &r, &e, &s) == 0)
		printf(" resuid %u,%u,%u", r, e, s);
	if (syscall(SYS_getresgid, &rg, &egid, &sg) == 0)
		printf(" resgid %u,%u,%u", rg, egid, sg);
	n = syscall(SYS_getgroups, 8, list);
	printf(" groups");
	for (long i = 0; i < n; i++)
		printf("%c%u", i ? ',' : ' ', list[i]);
	printf("\n");
}

static int creds(void)
{
	gid_t g[2] = { 7, 8 };

	ids("start");
	if (syscall(SYS_setgroups, 2, g) < 0)
		return err_out(errno);
	if (syscall(SYS_setresgid, 10, 11, 12) < 0)
		return err_out(errno);
	ids("setgroups 7,8 setresgid 10,11,12");
	if (syscall(SYS_setregid, 20, 21) < 0 || syscall(SYS_setgid, 30) < 0)
		return err_out(errno);
	ids("setregid 20,21 setgid 30");
	printf("setfsgid 31: old %ld\n", syscall(SYS_setfsgid, 31));
	if (syscall(SYS_setresuid, 1, 2, 3) < 0)
		return err_out(errno);
	ids("setresuid 1,2,3");
	/* No longer root: the kernel's rules apply to the fake ids. */
	printf("setuid 0: %s\n",
	       syscall(SYS_setuid, 0) < 0 ? strerrorname_np(errno) : "allowed");
	printf("setreuid 3,1: %s\n",
	       syscall(SYS_setreuid, 3, 1) < 0 ? strerrorname_np(errno) : "allowed");
	if (syscall(SYS_setreuid, 2, 1) < 0)
		return err_out(errno);
	ids("setreuid 2,1");
	printf("setfsuid 2: old %ld\n", syscall(SYS_setfsuid, 2));
	printf("setfsuid -1: old %ld\n", syscall(SYS_setfsuid, -1));
	printf("setuid 3: %s\n",
	       syscall(SYS_setuid, 3) < 0 ? strerrorname_np(errno) : "allowed");
	if (syscall(SYS_setuid, 2) < 0)
		return err_out(errno);
	ids("setuid 2");
	return 0;
}

/*
 * Each group of calls returns main's exit status, or -1 when call (with
 * argc arguments) is none of its own.
 */

/* The chown family. */
static int sc_own(const char *call, const char *path, int argc,
		  char **argv)
{
	int fd;

	if (!strcmp(call, "chown") && argc == 5)
		return done(syscall(SYS_chown, path, num(argv[3]), num(argv[4])));
	if (!strcmp(call, "lchown") && argc == 5)
		return done(syscall(SYS_lchown, path, num(argv[3]), num(argv[4])));
	if (!strcmp(call, "fchown") && argc == 5) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return err_out(errno);
		return done(syscall(SYS_fchown, fd, num(argv[3]), num(argv[4])));
	}
	if (!strcmp(call, "fchownat") && argc == 5)
		return done(syscall(SYS_fchownat, AT_FDCWD, path, num(argv[3]),
				    num(argv[4]), 0));
	if (!strcmp(call, "fchownat-nofollow") && argc == 5)
		return done(syscall(SYS_fchownat, AT_FDCWD, path, num(argv[3]),
				    num(argv[4]), AT_SYMLINK_NOFOLLOW));
	return -1;
}

/* The chmod family, and the stat family (which prints the stat line). */
static int sc_mode(const char *call, const char *path, int argc,
		   char **argv)
{
	struct stat st;
	struct statx stx;
	long r;
	int fd;

	if (!strcmp(call, "chmod") && argc == 4)
		return done(syscall(SYS_chmod, path, omode(argv[3])));
	if (!strcmp(call, "fchmod") && argc == 4) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return err_out(errno);
		return done(syscall(SYS_fchmod, fd, omode(argv[3])));
	}
	if (!strcmp(call, "fchmodat") && argc == 4)
		return done(syscall(SYS_fchmodat, AT_FDCWD, path, omode(argv[3])));
	if (!strcmp(call, "fchmodat2") && argc == 4)
		return done(syscall(SYS_fchmodat2, AT_FDCWD, path,
				    omode(argv[3]), 0));
	if (!strcmp(call, "fchmodat2-empty") && argc == 4) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return err_out(errno);
		return done(syscall(SYS_fchmodat2, fd, "", omode(argv[3]),
				    AT_EMPTY_PATH));
	}
	if (!strcmp(call, "stat") && argc == 3)
		return syscall(SYS_stat, path, &st) < 0 ? err_out(errno) : show(&st);
	if (!strcmp(call, "lstat") && argc == 3)
		return syscall(SYS_lstat, path, &st) < 0 ? err_out(errno) : show(&st);
	if (!strcmp(call, "newfstatat") && argc == 3)
		return syscall(SYS_newfstatat, AT_FDCWD, path, &st,
			       AT_SYMLINK_NOFOLLOW) < 0 ? err_out(errno) : show(&st);
	if (!strcmp(call, "fstat") && argc == 3) {
		fd = open(path, O_PATH | O_NOFOLLOW);
		if (fd < 0)
			return err_out(errno);
		return syscall(SYS_fstat, fd, &st) < 0 ? err_out(errno) : show(&st);
	}
	if (!strcmp(call, "statx") && argc == 3) {
		r = syscall(SYS_statx, AT_FDCWD, path, AT_SYMLINK_NOFOLLOW,
			    STATX_BASIC_STATS, &stx);
		if (r < 0)
			return err_out(errno);
		print_meta(stx.stx_uid, stx.stx_gid, stx.stx_mode,
			   makedev(stx.stx_rdev_major, stx.stx_rdev_minor));
		return 0;
	}
	return -1;
}

/* The calls that create a file, a directory or a symlink. */
static int sc_create(const char *call, const char *path, int argc,
		     char **argv)
{
	if ((!strcmp(call, "mknod") || !strcmp(call, "mknodat")) && argc == 6) {
		unsigned long d = kdev((unsigned)num(argv[4]), (unsigned)num(argv[5]));

		if (call[5])
			return done(syscall(SYS_mknodat, AT_FDCWD, path,
					    omode(argv[3]), d));
		return done(syscall(SYS_mknod, path, omode(argv[3]), d));
	}
	if (!strcmp(call, "openat2") && argc == 4) {
		struct open_how how = { .flags = O_CREAT | O_WRONLY | O_CLOEXEC,
					.mode = omode(argv[3]) };

		return done(syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how)));
	}
	if (!strcmp(call, "open") && argc == 4)
		return done(syscall(SYS_open, path, O_CREAT | O_WRONLY, omode(argv[3])));
	if (!strcmp(call, "openat") && argc == 4)
		return done(syscall(SYS_openat, AT_FDCWD, path, O_CREAT | O_WRONLY,
				    omode(argv[3])));
	if (!strcmp(call, "creat") && argc == 4)
		return done(syscall(SYS_creat, path, omode(argv[3])));
	if (!strcmp(call, "mkdir") && argc == 4)
		return done(syscall(SYS_mkdir, path, omode(argv[3])));
	if (!strcmp(call, "mkdirat") && argc == 4)
		return done(syscall(SYS_mkdirat, AT_FDCWD, path, omode(argv[3])));
	if (!strcmp(call, "symlink") && argc == 4)
		return done(syscall(SYS_symlink, argv[3], path));
	if (!strcmp(call, "symlinkat") && argc == 4)
		return done(syscall(SYS_symlinkat, argv[3], AT_FDCWD, path));
	return -1;
}

/* access, execve, unlink, rename. */
static int sc_path(const char *call, const char *path, int argc,
		   char **argv)
{
	if (!strcmp(call, "access") && argc == 3)
		return done(syscall(SYS_access, path, W_OK));
	if (!strcmp(call, "faccessat") && argc == 3)
		return done(syscall(SYS_faccessat, AT_FDCWD, path, W_OK));
	if (!strcmp(call, "faccessat2") && argc == 3)
		return done(syscall(SYS_faccessat2, AT_FDCWD, path, W_OK, AT_EACCESS));
	if (!strcmp(call, "execve") && argc >= 3) {
		char *none[] = { NULL };

		fflush(stdout);
		syscall(SYS_execve, path, argv + 2, none);
		return err_out(errno);
	}
	if (!strcmp(call, "unlink") && argc == 3)
		return done(syscall(SYS_unlink, path));
	if (!strcmp(call, "unlinkat") && argc == 3)
		return done(syscall(SYS_unlinkat, AT_FDCWD, path, 0));
	if (!strcmp(call, "rmdir") && argc == 3)
		return done(syscall(SYS_rmdir, path));
	if (!strcmp(call, "rename") && argc == 4)
		return done(syscall(SYS_rename, path, argv[3]));
	if (!strcmp(call, "renameat") && argc == 4)
		return done(syscall(SYS_renameat, AT_FDCWD, path, AT_FDCWD, argv[3]));
	if (!strcmp(call, "renameat2") && argc == 4)
		return done(syscall(SYS_renameat2, AT_FDCWD, path, AT_FDCWD,
				    argv[3], 0));
	return -1;
}

/* The groups of calls, each trying its own. */
static int (*const groups[])(const char *call, const char *path, int argc,
			     char **argv) = {
	sc_own, sc_mode, sc_create, sc_path,
};

int main(int argc, char **argv)
{
	const char *call, *path;

	if (argc == 2 && !strcmp(argv[1], "creds"))
		return creds();
	if (argc == 2 && !strcmp(argv[1], "getpid"))
		return syscall(SYS_getpid) == getpid() ? done(0) : 1;
	if (argc < 3)
		return usage("sysc CALL PATH [ARGS]");
	call = argv[1];
	path = argv[2];
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		int rc = groups[i](call, path, argc, argv);

		if (rc >= 0)
			return rc;
	}
	return usage("sysc: unknown CALL or wrong arguments");
}
