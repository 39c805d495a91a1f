/*
 * The trace's writer; see trace.h.  It never decides what changed (serve.c
 * hands it both sides) and never stops the daemon: a line that cannot be
 * built whole is cut short with " ...", a file that cannot be written is
 * given up.
 */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "fakeenv/proto.h"
#include "journal/journal.h"

/* One line at most: two escaped paths fit, a long list of xattr names
 * is cut. */
#define LINE_CAP (40 * 1024)
/* Lines kept before a write: a chown -R of thousands of files takes a
 * write every few hundred lines. */
#define BUF_CAP (64 * 1024)
/* Room kept at a line's end for " ...\n". */
#define LINE_TAIL 8

struct lb {
	char *p;
	size_t n;
	bool cut; /* something did not fit */
};

static void put_raw(struct lb *b, const char *s, size_t n)
{
	if (b->cut || b->n + n > LINE_CAP - LINE_TAIL) {
		b->cut = true;
		return;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

static void put(struct lb *b, const char *s)
{
	put_raw(b, s, strlen(s));
}

__attribute__((format(printf, 2, 3)))
static void putf(struct lb *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		put_raw(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n :
							  sizeof(tmp) - 1);
}

/* s as one field: every byte outside '!'..'~', and '\\', as \ooo, so
 * that a name with spaces or newlines cannot split a field or a line. */
static void put_esc(struct lb *b, const char *s, size_t n)
{
	size_t start = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char o[5];

		if (c > ' ' && c < 0x7f && c != '\\')
			continue;
		put_raw(b, s + start, i - start);
		snprintf(o, sizeof(o), "\\%03o", c);
		put_raw(b, o, 4);
		start = i + 1;
	}
	put_raw(b, s + start, n - start);
	if (!n)
		put_raw(b, "\\000", 4); /* never an empty field */
}

int fe_trace_init(struct fe_trace *t, const char *path, int fd)
{
	struct stat st;

	memset(t, 0, sizeof(*t));
	t->path = path;
	t->buf = malloc(BUF_CAP);
	t->line = malloc(LINE_CAP);
	t->xold = malloc(FE_XATTR_REC_MAX);
	t->pold = malloc(FE_PATH_MAX + 1);
	if (!t->buf || !t->line || !t->xold || !t->pold) {
		fe_trace_free(t);
		close(fd);
		t->fd = -1;
		return -ENOMEM;
	}
	t->fd = fd;
	t->end = fstat(fd, &st) == 0 ? (int64_t)st.st_size : -1;
	return 0;
}

static uint64_t lines_in(const char *buf, size_t len)
{
	uint64_t n = 0;

	for (const char *p = buf; (p = memchr(p, '\n', len - (size_t)(p - buf)));
	     p++)
		n++;
	return n;
}

/* Give up after a failed write: a line cut by the failure goes (when
 * the file is as we left it plus those bytes: nobody else appended), so
 * that every line in the file is whole. */
static void stop(struct fe_trace *t, int err, size_t written)
{
	struct stat st;
	size_t whole = written;

	while (whole && t->buf[whole - 1] != '\n')
		whole--;
	if (whole < written && t->end >= 0 && fstat(t->fd, &st) == 0 &&
	    st.st_size == t->end + (int64_t)written)
		(void)ftruncate(t->fd, t->end + (off_t)whole);
	t->lines += lines_in(t->buf, whole);
	t->lost += lines_in(t->buf + whole, t->len - whole);
	fe_log("trace %s: cannot write: %s; the trace stops here (%llu "
	       "lines written, %llu lost); the session goes on",
	       t->path, fe_strerror(err), (unsigned long long)t->lines,
	       (unsigned long long)t->lost);
	close(t->fd);
	t->fd = -1;
	t->len = 0;
}

void fe_trace_flush(struct fe_trace *t)
{
	size_t done = 0;

	if (!t->len)
		return;
	if (t->fd < 0) {
		t->len = 0;
		return;
	}
	while (done < t->len) {
		ssize_t n = write(t->fd, t->buf + done, t->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			stop(t, n < 0 ? errno : ENOSPC, done);
			return;
		}
		done += (size_t)n;
	}
	t->lines += lines_in(t->buf, t->len);
	if (t->end >= 0)
		t->end += (int64_t)t->len;
	t->len = 0;
}

void fe_trace_free(struct fe_trace *t)
{
	if (t->fd >= 0) {
		fe_trace_flush(t);
		if (t->fd >= 0)
			close(t->fd);
		t->fd = -1;
	}
	free(t->buf);
	free(t->line);
	free(t->xold);
	free(t->pold);
	t->buf = t->line = t->pold = NULL;
	t->xold = NULL;
}

void fe_trace_comm(pid_t pid, char *comm)
{
	char path[64];
	ssize_t n;
	int fd;

	comm[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, comm, FE_TRACE_COMM - 1);
	close(fd);
	if (n <= 0)
		return;
	if (comm[n - 1] == '\n')
		n--;
	comm[n] = '\0';
}

static bool is_dev(const struct fe_trace_side *s)
{
	return S_ISCHR(s->mode) || S_ISBLK(s->mode);
}

static void put_rdev(struct lb *b, const struct fe_trace_side *s)
{
	if (is_dev(s))
		putf(b, "%u,%u", major(s->rdev), minor(s->rdev));
	else
		put(b, "-");
}

static bool has_name(const unsigned char *blk, size_t len, const char *name,
		     size_t nlen)
{
	const unsigned char *v;
	size_t pos = 0, nl, vl;
	const char *n;

	while (blk && fe_jnl_xattr_next(blk, len, &pos, &n, &nl, &v, &vl))
		if (nl == nlen && !memcmp(n, name, nlen))
			return true;
	return false;
}

/* "xattr SIGN NAME" for each name of from that to lacks. */
static void put_names_not_in(struct lb *b, char sign,
			     const struct fe_trace_side *from,
			     const struct fe_trace_side *to)
{
	const unsigned char *v;
	size_t pos = 0, nl, vl;
	const char *n;
	char head[] = " xattr ?";

	head[sizeof(head) - 2] = sign;
	while (from->xattrs && fe_jnl_xattr_next(from->xattrs, from->xattrs_len,
						 &pos, &n, &nl, &v, &vl)) {
		if (has_name(to->xattrs, to->xattrs_len, n, nl))
			continue;
		put(b, head);
		put_esc(b, n, nl);
	}
}

/* "TIME PID COMM OP WHAT": the head of every line. */
static void put_head(struct lb *b, const struct fe_trace_change *c,
		     const struct fe_trace_side *old,
		     const struct fe_trace_side *new)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	putf(b, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ %d ", tm.tm_year + 1900,
	     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
	     ts.tv_nsec / 1000, (int)c->pid);
	put_esc(b, c->comm ? c->comm : "", c->comm ? strlen(c->comm) : 0);
	put(b, " ");
	put(b, c->op);
	put(b, " ");
	if (c->path || new->path || old->path) {
		const char *p = c->path ? c->path : new->path ? new->path :
							       old->path;

		put_esc(b, p, strlen(p));
	} else {
		putf(b, "%llu:%llu", (unsigned long long)c->dev,
		     (unsigned long long)c->ino);
	}
}

/* " owner A -> B", " mode", " type", " rdev": what stat shows. */
static void put_attrs(struct lb *b, const struct fe_trace_change *c,
		      const struct fe_trace_side *old,
		      const struct fe_trace_side *new)
{
	if (c->always_owner || old->uid != new->uid || old->gid != new->gid)
		putf(b, " owner %u:%u -> %u:%u", old->uid, old->gid, new->uid,
		     new->gid);
	if (c->always_mode || (old->mode & 07777) != (new->mode & 07777))
		putf(b, " mode %04o -> %04o", old->mode & 07777,
		     new->mode & 07777);
	if (c->always_type || (old->mode & S_IFMT) != (new->mode & S_IFMT))
		putf(b, " type %c -> %c", fe_type_char(old->mode),
		     fe_type_char(new->mode));
	if ((c->always_type && (is_dev(old) || is_dev(new))) ||
	    is_dev(old) != is_dev(new) ||
	    (is_dev(new) && old->rdev != new->rdev)) {
		put(b, " rdev ");
		put_rdev(b, old);
		put(b, " -> ");
		put_rdev(b, new);
	}
}

/* " record", " path", the xattr names and " records N": the rest. */
static void put_record(struct lb *b, const struct fe_trace_change *c,
		       const struct fe_trace_side *old,
		       const struct fe_trace_side *new)
{
	if (old->rec && new->orphan != old->orphan)
		putf(b, " record %s -> %s", old->orphan ? "orphan" : "live",
		     new->orphan ? "orphan" : "live");
	if (c->always_path ||
	    (old->path && new->path && strcmp(old->path, new->path))) {
		const char *o = old->path ? old->path : "-";
		const char *n = new->path ? new->path : "-";

		put(b, " path ");
		put_esc(b, o, strlen(o));
		put(b, " -> ");
		put_esc(b, n, strlen(n));
	}
	put_names_not_in(b, '-', old, new);
	put_names_not_in(b, '+', new, old);
	if (c->xname &&
	    has_name(old->xattrs, old->xattrs_len, c->xname, strlen(c->xname)) &&
	    has_name(new->xattrs, new->xattrs_len, c->xname,
		     strlen(c->xname))) {
		put(b, " xattr ~");
		put_esc(b, c->xname, strlen(c->xname));
	}
	if (c->moved)
		putf(b, " records %llu", (unsigned long long)c->moved);
}

void fe_trace_add(struct fe_trace *t, const struct fe_trace_change *c,
		  const struct fe_trace_side *old,
		  const struct fe_trace_side *new)
{
	struct lb b = { t->line, 0, false };

	if (t->fd < 0) {
		t->lost++;
		return;
	}
	put_head(&b, c, old, new);
	put_attrs(&b, c, old, new);
	put_record(&b, c, old, new);
	if (b.cut) {
		memcpy(b.p + b.n, " ...", 4);
		b.n += 4;
	}
	b.p[b.n++] = '\n';
	if (t->len + b.n > BUF_CAP)
		fe_trace_flush(t);
	if (t->fd < 0) {
		t->lost++;
		return;
	}
	memcpy(t->buf + t->len, b.p, b.n);
	t->len += b.n;
}
