/*
 * mk: entry points that create a file, one subcommand each.
 *   mk [-f U:G] [-e U:G] CALL ARGS
 *   open|open64|openat|openat64|open-excl|creat|creat64 PATH [MODE]
 *   fopen|fopen64|freopen|freopen64 PATH      (mode "w")
 *   fopen-x PATH                              (mode "wx")
 *   __open_2|__open64_2|__openat_2|__openat64_2 PATH  (O_RDWR, no O_CREAT:
 *       the fortified forms abort on O_CREAT; prints the fd's fstat)
 *   mkdir|mkdirat PATH [MODE]
 *   symlink|symlinkat TARGET PATH
 *   link|linkat|linkat-follow OLD NEW
 *   mkstemp TEMPLATE                          (prints the name)
 *   tmpfile DIR NAME      open(DIR, O_TMPFILE), then linked in as NAME
 * -f sets the fs ids (setfsgid, setfsuid), -e the effective ids (setegid,
 * seteuid) before the call.  Prints "ok" on success.
 */
#include "helper.h"

#include <fcntl.h>
#include <stdbool.h>
#include <sys/fsuid.h>
#include <unistd.h>

int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

static void ids(const char *s, long *u, long *g)
{
	char *end;

	*u = strtol(s, &end, 10);
	if (*end != ':') {
		fprintf(stderr, "bad U:G: %s\n", s);
		exit(2);
	}
	*g = num(end + 1);
}

/* -f and -e: the ids to take before the call; *i is the first argument
 * past them.  0, or main's exit status. */
static int take_ids(int argc, char **argv, int *i)
{
	long u, g;

	while (*i + 1 < argc && argv[*i][0] == '-') {
		ids(argv[*i + 1], &u, &g);
		if (!strcmp(argv[*i], "-f")) {
			setfsgid((gid_t)g);
			setfsuid((uid_t)u);
		} else if (!strcmp(argv[*i], "-e")) {
			if (setegid((gid_t)g) != 0 || seteuid((uid_t)u) != 0)
				return err_out(errno);
		} else {
			return usage("mk [-f U:G] [-e U:G] CALL ARGS");
		}
		*i += 2;
	}
	return 0;
}

/* main's exit status for a call's result r. */
static int result(int r)
{
	if (r < 0)
		return err_out(errno);
	printf("ok\n");
	return 0;
}

/* The open family that creates (O_CREAT): true and *r set when call is
 * one of them. */
static bool mk_open(const char *call, const char *path, mode_t m, int *r)
{
	const int cf = O_WRONLY | O_CREAT | O_CLOEXEC;

	if (!strcmp(call, "open"))
		*r = open(path, cf, m);
	else if (!strcmp(call, "open-excl"))
		*r = open(path, cf | O_EXCL, m);
	else if (!strcmp(call, "open64"))
		*r = open64(path, cf, m);
	else if (!strcmp(call, "openat"))
		*r = openat(AT_FDCWD, path, cf, m);
	else if (!strcmp(call, "openat64"))
		*r = openat64(AT_FDCWD, path, cf, m);
	else if (!strcmp(call, "creat"))
		*r = creat(path, m);
	else if (!strcmp(call, "creat64"))
		*r = creat64(path, m);
	else
		return false;
	return true;
}

/* The fortified opens, which never create: prints the fd's fstat. */
static int mk_fortified(const char *call, const char *path)
{
	struct stat st;
	int fd;

	if (!strcmp(call, "__open_2"))
		fd = __open_2(path, O_RDWR);
	else if (!strcmp(call, "__open64_2"))
		fd = __open64_2(path, O_RDWR);
	else if (!strcmp(call, "__openat_2"))
		fd = __openat_2(AT_FDCWD, path, O_RDWR);
	else if (!strcmp(call, "__openat64_2"))
		fd = __openat64_2(AT_FDCWD, path, O_RDWR);
	else
		return usage("mk: unknown CALL");
	if (fd < 0 || fstat(fd, &st) != 0)
		return err_out(errno);
	print_meta(st.st_uid, st.st_gid, st.st_mode, st.st_rdev);
	return 0;
}

static int mk_stdio(const char *call, const char *path)
{
	FILE *fp;

	if (!strcmp(call, "fopen"))
		fp = fopen(path, "w");
	else if (!strcmp(call, "fopen-x"))
		fp = fopen(path, "wx");
	else if (!strcmp(call, "fopen64"))
		fp = fopen64(path, "w");
	else if (!strcmp(call, "freopen") ||
		 !strcmp(call, "freopen64")) {
		fp = fopen("/dev/null", "r");
		if (!fp)
			return err_out(errno);
		if (!strcmp(call, "freopen"))
			fp = freopen(path, "w", fp);
		else
			fp = freopen64(path, "w", fp);
	} else {
		return usage("mk: unknown CALL");
	}
	if (!fp)
		return err_out(errno);
	return result(fclose(fp));
}

static int mk_stemp(const char *path)
{
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s", path);
	if (mkstemp(buf) < 0)
		return err_out(errno);
	printf("%s\n", buf);
	return 0;
}

/* open(dir, O_TMPFILE), then linked in as name. */
static int mk_tmpfile(const char *dir, const char *name)
{
	char proc[64];
	int r, fd;

	r = fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	if (r >= 0) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		r = linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW);
	}
	return result(r);
}

static int mk_link(const char *call, const char *path, const char *b)
{
	int r;

	if (!strcmp(call, "symlink"))
		r = symlink(path, b);
	else if (!strcmp(call, "symlinkat"))
		r = symlinkat(path, AT_FDCWD, b);
	else if (!strcmp(call, "link"))
		r = link(path, b);
	else if (!strcmp(call, "linkat"))
		r = linkat(AT_FDCWD, path, AT_FDCWD, b, 0);
	else if (!strcmp(call, "linkat-follow"))
		r = linkat(AT_FDCWD, path, AT_FDCWD, b, AT_SYMLINK_FOLLOW);
	else
		return usage("mk: unknown CALL");
	return result(r);
}

int main(int argc, char **argv)
{
	const char *call, *path;
	mode_t m;
	int r, i = 1;

	r = take_ids(argc, argv, &i);
	if (r)
		return r;
	if (argc - i < 2)
		return usage("mk [-f U:G] [-e U:G] CALL ARGS");
	call = argv[i];
	path = argv[i + 1];
	/* A third argument is a mode, except for the link calls. */
	int is_link = strstr(call, "link") != NULL || !strcmp(call, "tmpfile");

	m = argc - i > 2 && !is_link ? omode(argv[i + 2]) : 0644;
	if (mk_open(call, path, m, &r))
		return result(r);
	if (!strncmp(call, "__open", 6))
		return mk_fortified(call, path);
	if (!strncmp(call, "fopen", 5) || !strncmp(call, "freopen", 7))
		return mk_stdio(call, path);
	if (!strcmp(call, "mkdir"))
		return result(mkdir(path, argc - i > 2 ? m : 0755));
	if (!strcmp(call, "mkdirat"))
		return result(mkdirat(AT_FDCWD, path, argc - i > 2 ? m : 0755));
	if (!strcmp(call, "mkstemp"))
		return mk_stemp(path);
	if (!strcmp(call, "tmpfile")) {
		if (argc - i != 3)
			return usage("mk tmpfile DIR NAME");
		return mk_tmpfile(path, argv[i + 2]);
	}
	if (argc - i != 3)
		return usage("mk CALL A B");
	return mk_link(call, path, argv[i + 2]);
}
