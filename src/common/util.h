/*
 * Helpers shared by every room.  Linked into the shim, so written to shim
 * rules: no malloc, no stdio, errno left alone (actions return 0 or
 * -errno), async-signal-safe.
 */
#ifndef FE_COMMON_UTIL_H
#define FE_COMMON_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define FE_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The code each process of a session runs while it loads, and a fork
 * child on its way to exec: kept together (.text.hot).  A fork child
 * has none of the library's code mapped, and each 64 KiB of it touched
 * is a page fault. */
#define FE_HOT __attribute__((hot))

/* Write all of buf to fd, looping on EINTR and short writes.
 * Returns 0 or -errno. */
int fe_write_full(int fd, const void *buf, size_t len);

/* Format into buf (always NUL-terminated, truncated to fit) with a tiny
 * async-signal-safe printf: %s %d %u %ld %lu %lld %llu %x %lx %c %%.
 * Returns the length written, excluding the NUL. */
size_t fe_vfmt(char *buf, size_t size, const char *fmt, va_list ap);
size_t fe_fmt(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Write "fakeenv: <message>\n" to stderr in one write(2); errno is kept. */
void fe_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The C locale's description of an errno value, async-signal-safe:
 * "No such file or directory", "error N" for a number libc does not know. */
const char *fe_strerror(int err);

/* The absolute path s, in place, cleaned as the kernel would walk it if no
 * component were a symbolic link: no empty or "." component, each ".."
 * taking the one before it, no trailing slash; "/" stays "/".  No link is
 * resolved ("/a/link/.." is "/a").  s must start with '/'; the result is
 * never longer.  Returns its length. */
size_t fe_path_lexical(char *s);

/* ls's letter for the file type in mode: '-', 'd', 'l', 'c', 'b', 'p',
 * 's', or '?'. */
char fe_type_char(uint32_t mode);

/* Parse a decimal uint32 from s up to the first char in stops (or NUL).
 * Returns 0 and sets *out, *end; -EINVAL when there is no digit or the
 * value overflows. */
int fe_parse_u32(const char *s, uint32_t *out, const char **end);

/* FAKEENV_UIDS/GIDS: "r:e:s:fs", four decimal ids, nothing after.  Fills
 * v[4] and returns true, or leaves it alone and returns false. */
bool fe_parse_ids(const char *s, uint32_t v[4]);

/* FAKEENV_GROUPS: "g1,g2,...", possibly empty, at most max.  Fills g and
 * returns the count, or -1 (g partly written) when malformed or longer. */
int fe_parse_groups(const char *s, uint32_t *g, int max);

/* Whether type (st_mode & S_IFMT) is one of the seven file types. */
static inline bool fe_type_valid(uint32_t type)
{
	switch (type) {
	case S_IFREG:
	case S_IFDIR:
	case S_IFLNK:
	case S_IFCHR:
	case S_IFBLK:
	case S_IFIFO:
	case S_IFSOCK:
		return true;
	}
	return false;
}

#endif
