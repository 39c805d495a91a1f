/*
 * Launcher messages and allocation; see utils.h.  Every message is built in
 * a buffer and written with one write(2), so lines from the launcher, the
 * daemon and CMD sharing one stderr do not interleave mid-line.
 */
#include "utils.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"

static void vmsg(int err, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

static void vmsg(int err, const char *fmt, va_list ap)
{
	char line[2048];
	size_t n, max = sizeof(line) - 1; /* room for the '\n' */
	int r;

	n = (size_t)snprintf(line, max, "fakeenv: ");
	r = vsnprintf(line + n, max - n, fmt, ap);
	n = r < 0 ? n : n + (size_t)r;
	if (n > max - 1)
		n = max - 1;
	if (err) {
		r = snprintf(line + n, max - n, ": %s", strerror(err));
		n = r < 0 ? n : n + (size_t)r;
		if (n > max - 1)
			n = max - 1;
	}
	line[n++] = '\n';
	(void)fe_write_full(STDERR_FILENO, line, n);
}

void fe_msg(int err, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vmsg(err, fmt, ap);
	va_end(ap);
	errno = saved;
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(0, fmt, ap);
	va_end(ap);
	exit(FE_EXIT_FAIL);
}

void die_errno(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vmsg(saved, fmt, ap);
	va_end(ap);
	exit(FE_EXIT_FAIL);
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		die("out of memory");
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		die("out of memory");
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (r < 0)
		die("out of memory");
	return p;
}
