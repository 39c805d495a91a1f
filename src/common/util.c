/*
 * Shared helpers; see util.h.  Everything here may run inside a signal
 * handler of a program we were preloaded into: no allocation, no stdio,
 * no locale, errno preserved.
 */
#include "util.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fe_write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

struct out {
	char *buf;
	size_t size;
	size_t len;
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void put_str(struct out *o, const char *s)
{
	while (*s)
		put(o, *s++);
}

static void put_num(struct out *o, unsigned long long v, unsigned base, int neg)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (neg)
		put(o, '-');
	while (n)
		put(o, tmp[--n]);
}

size_t fe_vfmt(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { buf, size, 0 };

	for (; *fmt; fmt++) {
		int lng = 0;

		if (*fmt != '%') {
			put(&o, *fmt);
			continue;
		}
		fmt++;
		while (*fmt == 'l') {
			lng++;
			fmt++;
		}
		switch (*fmt) {
		case 's': {
			const char *s = va_arg(ap, const char *);

			put_str(&o, s ? s : "(null)");
			break;
		}
		case 'c':
			put(&o, (char)va_arg(ap, int));
			break;
		case 'd': {
			long long v = lng >= 2 ? va_arg(ap, long long) :
				      lng     ? va_arg(ap, long) :
						va_arg(ap, int);
			unsigned long long u = v < 0 ? 0ull - (unsigned long long)v :
						       (unsigned long long)v;

			put_num(&o, u, 10, v < 0);
			break;
		}
		case 'u':
		case 'x': {
			unsigned long long v =
				lng >= 2 ? va_arg(ap, unsigned long long) :
				lng      ? va_arg(ap, unsigned long) :
					   va_arg(ap, unsigned);

			put_num(&o, v, *fmt == 'x' ? 16 : 10, 0);
			break;
		}
		case '%':
			put(&o, '%');
			break;
		case '\0':
			fmt--;
			break;
		default:
			put(&o, '%');
			put(&o, *fmt);
		}
	}
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return o.len < size ? o.len : (size ? size - 1 : 0);
}

size_t fe_fmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = fe_vfmt(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

void fe_log(const char *fmt, ...)
{
	char line[1024];
	int saved = errno;
	size_t n = fe_fmt(line, sizeof(line), "%s", "fakeenv: ");
	va_list ap;

	va_start(ap, fmt);
	n += fe_vfmt(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	line[n++] = '\n';
	(void)fe_write_full(2, line, n);
	errno = saved;
}

const char *fe_strerror(int err)
{
	/* strerrordesc_np, unlike glibc's strerror, neither translates nor
	 * allocates: safe in the shim and in signal handlers.  musl has no
	 * strerrordesc_np, and its strerror does neither; it gives an
	 * unknown number strerror(0)'s text. */
#ifdef __GLIBC__
	const char *msg = err > 0 ? strerrordesc_np(err) : NULL;
#else
	const char *msg = err > 0 ? strerror(err) : NULL;

	if (msg == strerror(0))
		msg = NULL;
#endif
	static _Thread_local char other[32];

	if (msg)
		return msg;
	fe_fmt(other, sizeof(other), "error %d", err);
	return other;
}

size_t fe_path_lexical(char *s)
{
	size_t w = 0, r = 0;

	while (s[r]) {
		size_t n = 0;

		while (s[r] == '/')
			r++;
		while (s[r + n] && s[r + n] != '/')
			n++;
		if (n == 2 && s[r] == '.' && s[r + 1] == '.') {
			while (w > 0 && s[--w] != '/')
				;
		} else if (n && !(n == 1 && s[r] == '.')) {
			/* Every component written had a '/' read before
			 * it: w never passes r. */
			s[w++] = '/';
			memmove(s + w, s + r, n);
			w += n;
		}
		r += n;
	}
	if (w == 0)
		s[w++] = '/';
	s[w] = '\0';
	return w;
}

char fe_type_char(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return '-';
	case S_IFDIR: return 'd';
	case S_IFLNK: return 'l';
	case S_IFCHR: return 'c';
	case S_IFBLK: return 'b';
	case S_IFIFO: return 'p';
	case S_IFSOCK: return 's';
	}
	return '?';
}

bool fe_parse_ids(const char *s, uint32_t v[4])
{
	uint32_t tmp[4];

	if (!s)
		return false;
	for (int i = 0; i < 4; i++) {
		if (fe_parse_u32(s, &tmp[i], &s) < 0)
			return false;
		if (*s != (i == 3 ? '\0' : ':'))
			return false;
		s++;
	}
	for (int i = 0; i < 4; i++)
		v[i] = tmp[i];
	return true;
}

int fe_parse_groups(const char *s, uint32_t *g, int max)
{
	int n = 0;

	if (!s)
		return -1;
	while (*s) {
		if (n == max || fe_parse_u32(s, &g[n], &s) < 0)
			return -1;
		n++;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return n;
}

int fe_parse_u32(const char *s, uint32_t *out, const char **end)
{
	uint64_t v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > UINT32_MAX)
			return -EINVAL;
		p++;
	}
	*out = (uint32_t)v;
	if (end)
		*end = p;
	return 0;
}
