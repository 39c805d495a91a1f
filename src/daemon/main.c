/*
 * fakeenvd: the daemon behind one fakeenv session.  The launcher starts it
 * as `fakeenvd --listen-fd N --dir DIR [--unknown-is-real]` with N bound
 * and listening at DIR/sock; from then on DIR is ours, and it goes when we
 * do.  Bad options exit 2 before anything is touched.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/util.h"
#include "loop.h"

static void usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("fakeenvd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nusage: fakeenvd --listen-fd N --dir DIR [--unknown-is-real]\n",
	      stderr);
	exit(2);
}

/* The value of the option at argv[*i]; *i moves past it. */
static const char *value(char **argv, int *i)
{
	const char *opt = argv[*i];

	if (!argv[*i + 1])
		usage_error("%s needs a value", opt);
	return argv[++*i];
}

/* True when fd is a listening AF_UNIX SOCK_SEQPACKET socket. */
static bool is_listener(int fd)
{
	int v;
	socklen_t len = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) < 0 ||
	    v != AF_UNIX)
		return false;
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) < 0 ||
	    v != SOCK_SEQPACKET)
		return false;
	len = sizeof(v);
	return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == 0 && v;
}

int main(int argc, char **argv)
{
	char sock[PATH_MAX];
	const char *dir = NULL;
	const char *end;
	bool unknown_is_real = false;
	bool have_fd = false;
	uint32_t fd = 0;
	int flags, r;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--unknown-is-real")) {
			unknown_is_real = true;
		} else if (!strcmp(a, "--dir")) {
			dir = value(argv, &i);
		} else if (!strcmp(a, "--listen-fd")) {
			const char *v = value(argv, &i);

			if (fe_parse_u32(v, &fd, &end) < 0 || *end ||
			    fd > INT_MAX)
				usage_error("--listen-fd '%s': not an fd", v);
			have_fd = true;
		} else {
			usage_error("unknown option '%s'", a);
		}
	}
	if (!have_fd || !dir)
		usage_error("--listen-fd and --dir are required");
	if (!*dir || (size_t)fe_fmt(sock, sizeof(sock), "%s/sock", dir) >=
			     sizeof(sock) - 1)
		usage_error("--dir '%s': bad or too long a path", dir);
	if (!is_listener((int)fd))
		usage_error("--listen-fd %u: not a listening AF_UNIX "
			    "SOCK_SEQPACKET socket", (unsigned)fd);
	flags = fcntl((int)fd, F_GETFL);
	if (flags < 0 || fcntl((int)fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
	    fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0) {
		fe_log("daemon: --listen-fd %u: %s", (unsigned)fd,
		       fe_strerror(errno));
		return 1;
	}
	/* Out of the terminal's session, so that its Ctrl-C, hangup and
	 * job control never reach us; EPERM: the launcher already did it. */
	(void)setsid();
	r = fe_loop_run((int)fd, unknown_is_real);
	if (r < 0)
		fe_log("daemon: %s", fe_strerror(-r));
	/* Errors ignored: the launcher or a cleaner may have been first. */
	unlink(sock);
	rmdir(dir);
	return r < 0 ? 1 : 0;
}
