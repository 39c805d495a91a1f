/*
 * mh: a program of another libc than the shim's (musl-gcc builds it,
 * dynamic and static), for t-musl: the calls a packaging step makes, one
 * subcommand each, and exec of another program to cross between the two
 * libcs.  Prints what helper.h's helpers print: "ok", "ERR <name>", or
 * print_meta()'s line.
 *   mh chown|lchown PATH U G     mh chmod PATH MODE
 *   mh mknod PATH MODE MAJ MIN   mh stat|lstat PATH
 *   mh setxattr PATH NAME VALUE  mh getxattr PATH NAME
 *   mh id                        "uid euid gid egid"
 *   mh exec PROG ARG...          execv (PATH searched by execvp)
 */
#include "../helpers/helper.h"

#include <sys/xattr.h>
#include <unistd.h>

static int meta(int (*fn)(const char *, struct stat *), const char *path)
{
	struct stat st;

	if (fn(path, &st) != 0)
		return err_out(errno);
	print_meta(st.st_uid, st.st_gid, st.st_mode, st.st_rdev);
	return 0;
}

static int done(int r)
{
	if (r != 0)
		return err_out(errno);
	printf("ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";
	char buf[256];
	ssize_t n;

	if (!strcmp(c, "id")) {
		printf("%lu %lu %lu %lu\n", (unsigned long)getuid(),
		       (unsigned long)geteuid(), (unsigned long)getgid(),
		       (unsigned long)getegid());
		return 0;
	}
	if (!strcmp(c, "exec") && argc > 2) {
		fflush(stdout);
		execvp(argv[2], argv + 2);
		return err_out(errno);
	}
	if ((!strcmp(c, "stat") || !strcmp(c, "lstat")) && argc == 3)
		return meta(c[0] == 's' ? stat : lstat, argv[2]);
	if ((!strcmp(c, "chown") || !strcmp(c, "lchown")) && argc == 5)
		return done((c[0] == 'c' ? chown : lchown)(
			argv[2], (uid_t)num(argv[3]), (gid_t)num(argv[4])));
	if (!strcmp(c, "chmod") && argc == 4)
		return done(chmod(argv[2], omode(argv[3])));
	if (!strcmp(c, "mknod") && argc == 6)
		return done(mknod(argv[2], omode(argv[3]),
				  makedev(num(argv[4]), num(argv[5]))));
	if (!strcmp(c, "setxattr") && argc == 5)
		return done(setxattr(argv[2], argv[3], argv[4],
				     strlen(argv[4]), 0));
	if (!strcmp(c, "getxattr") && argc == 4) {
		n = getxattr(argv[2], argv[3], buf, sizeof(buf) - 1);
		if (n < 0)
			return err_out(errno);
		printf("%.*s\n", (int)n, buf);
		return 0;
	}
	fprintf(stderr, "usage: mh id|exec|stat|lstat|chown|lchown|chmod|"
			"mknod|setxattr|getxattr ...\n");
	return 2;
}
