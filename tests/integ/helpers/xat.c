/*
 * xat: the xattr family and capget/capset, one entry point a subcommand.
 *   xat set|lset|fset|sys-set PATH NAME VALUE [create|replace]   "ok"
 *   xat setn|fsetn PATH NAME N     a value of N bytes 'v'         "ok"
 *   xat get|lget|fget|sys-get PATH NAME [SIZE]   the value (SIZE: the
 *                                  buffer; 0: prints the size query's)
 *   xat list|llist|flist|sys-list PATH [SIZE]    the names, sorted,
 *                                  comma-separated (SIZE as for get)
 *   xat rm|lrm|frm|sys-rm PATH NAME                              "ok"
 *   xat caps        capget: "eff PERM_HEX perm PERM_HEX"
 *   xat capset-drop capset with an empty effective set, then capget
 *   xat capset-raise capset of effective = permitted after a drop, then
 *                   capget
 * Errors print "ERR <errno name>" (helper.h).
 */
#include "helper.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

/* In libc, declared by no glibc header. */
int capget(cap_user_header_t hdr, cap_user_data_t data);
int capset(cap_user_header_t hdr, const cap_user_data_t data);

static int fd_of(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		err_out(errno);
		exit(1);
	}
	return fd;
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int print_list(char *buf, ssize_t n)
{
	char *names[4096];
	size_t k = 0;

	for (ssize_t i = 0; i < n && k < 4096;
	     i += (ssize_t)strlen(buf + i) + 1)
		names[k++] = buf + i;
	qsort(names, k, sizeof(*names), cmpstr);
	for (size_t i = 0; i < k; i++)
		printf("%s%s", i ? "," : "", names[i]);
	printf("\n");
	return 0;
}

static int caps(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return err_out(errno);
	printf("eff %08x%08x perm %08x%08x\n", d[1].effective, d[0].effective,
	       d[1].permitted, d[0].permitted);
	return 0;
}

static int capset_eff(int raise)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];

	if (capget(&h, d) < 0)
		return err_out(errno);
	for (int i = 0; i < 2; i++)
		d[i].effective = 0;
	if (capset(&h, d) < 0)
		return err_out(errno);
	if (raise) {
		for (int i = 0; i < 2; i++)
			d[i].effective = d[i].permitted;
		if (capset(&h, d) < 0)
			return err_out(errno);
	}
	return caps();
}

/* Values and lists, and setn's value: 128 KiB, past any xattr. */
static char buf[1 << 17];

/* main's exit status for a call's result n. */
static int done(ssize_t n)
{
	if (n < 0)
		return err_out(errno);
	printf("ok\n");
	return 0;
}

static int x_set(const char *call, const char *path, int argc, char **argv)
{
	const char *v;
	int flags = 0;
	ssize_t n;

	if (argc < 5)
		return usage("xat set PATH NAME VALUE [create|replace]");
	v = argv[4];
	if (argc > 5)
		flags = !strcmp(argv[5], "create")    ? XATTR_CREATE
			: !strcmp(argv[5], "replace") ? XATTR_REPLACE
						      : atoi(argv[5]);
	if (!strcmp(call, "set"))
		n = setxattr(path, argv[3], v, strlen(v), flags);
	else if (!strcmp(call, "lset"))
		n = lsetxattr(path, argv[3], v, strlen(v), flags);
	else if (!strcmp(call, "fset"))
		n = fsetxattr(fd_of(path), argv[3], v, strlen(v), flags);
	else
		n = syscall(SYS_setxattr, path, argv[3], v, strlen(v), flags);
	return done(n);
}

static int x_setn(const char *call, const char *path, int argc, char **argv)
{
	size_t len;

	if (argc != 5)
		return usage("xat setn PATH NAME N");
	len = (size_t)num(argv[4]);
	if (len > sizeof(buf))
		return usage("xat setn: N too large");
	memset(buf, 'v', len);
	return done(call[0] == 'f'
			    ? fsetxattr(fd_of(path), argv[3], buf, len, 0)
			    : setxattr(path, argv[3], buf, len, 0));
}

static int x_get(const char *call, const char *path, int argc, char **argv)
{
	size_t size = sizeof(buf) - 1;
	ssize_t n;

	if (argc < 4)
		return usage("xat get PATH NAME [SIZE]");
	if (argc > 4)
		size = (size_t)num(argv[4]);
	if (!strcmp(call, "get"))
		n = getxattr(path, argv[3], size ? buf : NULL, size);
	else if (!strcmp(call, "lget"))
		n = lgetxattr(path, argv[3], size ? buf : NULL, size);
	else if (!strcmp(call, "fget"))
		n = fgetxattr(fd_of(path), argv[3], size ? buf : NULL, size);
	else
		n = syscall(SYS_getxattr, path, argv[3], size ? buf : NULL,
			    size);
	if (n < 0)
		return err_out(errno);
	if (size == 0)
		printf("%zd\n", n);
	else if (n > 200)
		printf("%zd bytes\n", n);
	else
		printf("%.*s\n", (int)n, buf);
	return 0;
}

static int x_list(const char *call, const char *path, int argc, char **argv)
{
	size_t size = sizeof(buf);
	ssize_t n;

	if (argc > 3)
		size = (size_t)num(argv[3]);
	if (!strcmp(call, "list"))
		n = listxattr(path, size ? buf : NULL, size);
	else if (!strcmp(call, "llist"))
		n = llistxattr(path, size ? buf : NULL, size);
	else if (!strcmp(call, "flist"))
		n = flistxattr(fd_of(path), size ? buf : NULL, size);
	else
		n = syscall(SYS_listxattr, path, size ? buf : NULL, size);
	if (n < 0)
		return err_out(errno);
	if (size == 0) {
		printf("%zd\n", n);
		return 0;
	}
	return print_list(buf, n);
}

static int x_rm(const char *call, const char *path, int argc, char **argv)
{
	ssize_t n;

	if (argc != 4)
		return usage("xat rm PATH NAME");
	if (!strcmp(call, "rm"))
		n = removexattr(path, argv[3]);
	else if (!strcmp(call, "lrm"))
		n = lremovexattr(path, argv[3]);
	else if (!strcmp(call, "frm"))
		n = fremovexattr(fd_of(path), argv[3]);
	else
		n = syscall(SYS_removexattr, path, argv[3]);
	return done(n);
}

/* The calls on a PATH, by name. */
static const struct {
	const char *name;
	int (*run)(const char *call, const char *path, int argc, char **argv);
} calls[] = {
	{ "set", x_set },
	{ "lset", x_set },
	{ "fset", x_set },
	{ "sys-set", x_set },
	{ "setn", x_setn },
	{ "fsetn", x_setn },
	{ "get", x_get },
	{ "lget", x_get },
	{ "fget", x_get },
	{ "sys-get", x_get },
	{ "list", x_list },
	{ "llist", x_list },
	{ "flist", x_list },
	{ "sys-list", x_list },
	{ "rm", x_rm },
	{ "lrm", x_rm },
	{ "frm", x_rm },
	{ "sys-rm", x_rm },
};

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "caps"))
		return caps();
	if (argc == 2 && !strcmp(argv[1], "capset-drop"))
		return capset_eff(0);
	if (argc == 2 && !strcmp(argv[1], "capset-raise"))
		return capset_eff(1);
	if (argc < 3)
		return usage("xat CALL PATH [ARGS...]");
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (!strcmp(argv[1], calls[i].name))
			return calls[i].run(argv[1], argv[2], argc, argv);
	return usage("xat: unknown CALL");
}
