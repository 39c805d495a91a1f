/*
 * order: the ordering guarantee of recorded changes.  Once a change call
 * (the chown and chmod families, mknod, setxattr of a kept name, rename
 * and unlink of a recorded file) has returned in one process, a read that
 * starts afterwards in any process sees it, however the reader learnt of
 * the change; a process always reads its own changes.
 *   order pipe DIR N ROUNDS    a writer process changes DIR/f0..f(N-1)
 *                              round by round and names each file on a
 *                              pipe once its changes returned; a reader
 *                              process stats it at once
 *   order thread DIR N ROUNDS  the same with the reader a thread
 *   order fork DIR N           a child changes DIR/x and exits (every 8th
 *                              execs this program to do it); the parent
 *                              stats right after waitpid()
 *   order signal DIR N         a child changes DIR/x, then SIGUSR1 to the
 *                              parent, which stats in its handler or right
 *                              after sigwaitinfo(), in turn
 *   order many DIR NPROC ROUNDS  NPROC processes chown DIR/m0..m3, each
 *                              chown and its ticket under a process-shared
 *                              mutex; each stat after its own chown must
 *                              show a ticket at least its own, the end the
 *                              last ticket's
 *   order self DIR N           one process reads its own changes
 * A step of pipe, fork and signal is a chown, a chmod (every other step),
 * a device node and a kept xattr (some steps), in one of four orders:
 * each kind is sometimes the last change before the reader is told.
 * Every entry point of the chown family and of the stat family is used in
 * turn.
 * Each prints up to 20 "stale ..." lines, "ERR ..." for a change call that
 * failed, then "checks N stale M" (and "errors E" before it when E > 0);
 * exit 0 only when M and E are 0 and N > 0, else 1.  A watchdog alarm
 * (ORDER_TIMEOUT seconds, default 120) ends a hung run with exit 2.
 * Kept xattrs (trusted.fe_order) are checked only where setxattr of that
 * name works: in a session, or natively as root on a filesystem with
 * trusted xattrs.  A plain program: run natively as root, where chown is
 * real, it passes too, so it asserts nothing the kernel does not.
 */
#include "helper.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#define SHOWN_MAX 20
#define XNAME	  "trusted.fe_order"
/* Device majors 240-254 are for local use: no driver behind the nodes
 * the native run makes for real. */
#define DEV_MAJOR(r) (240 + (unsigned)(r) % 15)
#define MANY_FILES   4

/* In MAP_SHARED memory: every process of a run counts here. */
struct tally {
	atomic_long checks; /* reads compared with what they must show */
	atomic_long stale;  /* reads that showed an older state */
	atomic_long errors; /* change or read calls that failed */
	atomic_int shown;   /* stale or error lines printed so far */
};

/* What a read showed. */
struct seen {
	uint32_t uid;
	uint32_t gid;
	uint32_t mode; /* type bits included */
	dev_t rdev;
};

static struct tally *tally;
static const char *dir; /* DIR as given */
static int dfd = -1;	/* DIR, opened before any fork */
static bool xattrs;	/* XNAME can be set here */
static unsigned timeout_s = 120;

static const char *const look_name[] = {"stat", "lstat", "fstatat", "statx",
					"fstat"};
static const char *const own_name[] = {"fchownat", "chown", "lchown", "fchown"};

/* One line on stdout in one write: lines of several processes never mix. */
__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(1, buf, (size_t)n) < 0)
		return;
}

__attribute__((format(printf, 1, 2))) static void stale(const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	atomic_fetch_add(&tally->stale, 1);
	if (atomic_fetch_add(&tally->shown, 1) >= SHOWN_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	say("stale: %s", buf);
}

/* A failed call: e is an errno value. */
static void error(const char *what, const char *name, int e)
{
	atomic_fetch_add(&tally->errors, 1);
	if (atomic_fetch_add(&tally->shown, 1) >= SHOWN_MAX)
		return;
	say("ERR %s %s: %s", what, name,
	    strerrorname_np(e) ? strerrorname_np(e) : "?");
}

static void check(void)
{
	atomic_fetch_add(&tally->checks, 1);
}

static void watchdog(int sig)
{
	static const char m[] = "order: watchdog: still running after "
				"ORDER_TIMEOUT seconds, ended\n";

	(void)sig;
	if (write(2, m, sizeof(m) - 1) < 0)
		_exit(2);
	_exit(2);
}

/* Every process of a run arms its own: fork clears a pending alarm. */
static void arm(void)
{
	alarm(timeout_s);
}

static void path_of(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", dir, name);
}

/*
 * Read name (relative to DIR; path is DIR/name) by entry point how (see
 * look_name; fstat falls back to fstatat when fd < 0).  0 or -errno.
 * Async-signal-safe: the signal test calls it in a handler.
 */
static int look(int how, const char *path, const char *name, int fd,
		struct seen *s)
{
	struct statx sx;
	struct stat st;
	int r;

	switch (how % 5) {
	case 0:
		r = stat(path, &st);
		break;
	case 1:
		r = lstat(path, &st);
		break;
	case 2:
		r = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW);
		break;
	case 3:
		if (statx(dfd, name, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS,
			  &sx) != 0)
			return -errno;
		s->uid = sx.stx_uid;
		s->gid = sx.stx_gid;
		s->mode = sx.stx_mode;
		s->rdev = makedev(sx.stx_rdev_major, sx.stx_rdev_minor);
		return 0;
	default:
		r = fd >= 0 ? fstat(fd, &st)
			    : fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW);
		break;
	}
	if (r != 0)
		return -errno;
	s->uid = st.st_uid;
	s->gid = st.st_gid;
	s->mode = st.st_mode;
	s->rdev = st.st_rdev;
	return 0;
}

/* chown by entry point how (see own_name; fchown without an fd is
 * fchownat with AT_SYMLINK_NOFOLLOW).  0 or -errno. */
static int own(int how, const char *name, int fd, uid_t u, gid_t g)
{
	char p[PATH_MAX];
	int r;

	path_of(p, sizeof(p), name);
	switch (how % 4) {
	case 0:
		r = fchownat(dfd, name, u, g, 0);
		break;
	case 1:
		r = chown(p, u, g);
		break;
	case 2:
		r = lchown(p, u, g);
		break;
	default:
		r = fd >= 0 ? fchown(fd, u, g)
			    : fchownat(dfd, name, u, g, AT_SYMLINK_NOFOLLOW);
		break;
	}
	return r ? -errno : 0;
}

/* chmod, fchmodat, fchmod (chmod without an fd).  0 or -errno. */
static int mode(int how, const char *name, int fd, mode_t m)
{
	char p[PATH_MAX];
	int r;

	path_of(p, sizeof(p), name);
	switch (how % 3) {
	case 0:
		r = chmod(p, m);
		break;
	case 1:
		r = fchmodat(dfd, name, m, 0);
		break;
	default:
		r = fd >= 0 ? fchmod(fd, m) : chmod(p, m);
		break;
	}
	return r ? -errno : 0;
}

/* A character device node, 0600 (umask 022), by mknodat or mknod. */
static int node(int how, const char *name, dev_t d)
{
	char p[PATH_MAX];
	int r;

	path_of(p, sizeof(p), name);
	r = how % 2 ? mknod(p, S_IFCHR | 0600, d)
		    : mknodat(dfd, name, S_IFCHR | 0600, d);
	return r ? -errno : 0;
}

/* setxattr, lsetxattr, fsetxattr (setxattr without an fd) of XNAME. */
static int xset(int how, const char *name, int fd, const char *val)
{
	size_t n = strlen(val);
	char p[PATH_MAX];
	int r;

	path_of(p, sizeof(p), name);
	switch (how % 3) {
	case 0:
		r = setxattr(p, XNAME, val, n, 0);
		break;
	case 1:
		r = lsetxattr(p, XNAME, val, n, 0);
		break;
	default:
		r = fd >= 0 ? fsetxattr(fd, XNAME, val, n, 0)
			    : setxattr(p, XNAME, val, n, 0);
		break;
	}
	return r ? -errno : 0;
}

/* The value of XNAME, NUL-terminated, by getxattr, lgetxattr, fgetxattr.
 * Its length or -errno. */
static long xget(int how, const char *name, int fd, char *buf, size_t n)
{
	char p[PATH_MAX];
	ssize_t r;

	path_of(p, sizeof(p), name);
	switch (how % 3) {
	case 0:
		r = getxattr(p, XNAME, buf, n - 1);
		break;
	case 1:
		r = lgetxattr(p, XNAME, buf, n - 1);
		break;
	default:
		r = fd >= 0 ? fgetxattr(fd, XNAME, buf, n - 1)
			    : getxattr(p, XNAME, buf, n - 1);
		break;
	}
	if (r < 0)
		return -errno;
	buf[r] = '\0';
	return r;
}

/* XNAME of name must be want; how picks the entry point. */
static void check_x(int how, const char *name, int fd, const char *want,
		    const char *ctx)
{
	char got[64];
	long r = xget(how, name, fd, got, sizeof(got));

	if (r < 0 && r != -ENODATA) {
		error("getxattr", name, (int)-r);
		return;
	}
	check();
	if (r < 0 || strcmp(got, want))
		stale("%s %s: %s '%s', want '%s'", ctx, name, XNAME,
		      r < 0 ? "(none)" : got, want);
}

/* Is XNAME settable here?  Natively it takes root and a filesystem with
 * trusted xattrs; in a session the daemon keeps it. */
static bool probe_xattrs(void)
{
	const char *name = ".order-xprobe";
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	bool ok;

	if (fd < 0)
		return false;
	ok = fsetxattr(fd, XNAME, "1", 1, 0) == 0;
	if (!ok)
		fprintf(stderr,
			"order: %s cannot be set here (%s): not "
			"checked\n",
			XNAME, strerrorname_np(errno));
	close(fd);
	unlinkat(dfd, name, 0);
	return ok;
}

/* The mode odd rounds set: set-uid, which the next round's chown must
 * be seen to clear.  No set-gid: whether a chown clears it without group
 * execute depends on the kernel's version. */
static mode_t round_mode(long r, long i)
{
	return S_ISUID | 0600 | (mode_t)((r + i) & 077);
}

static void check_file(const struct seen *s, uid_t u, gid_t g, mode_t m,
		       const char *ctx, const char *name, int how);
static void check_node(const struct seen *s, dev_t d, const char *ctx,
		       const char *name, int how);
static bool get(int how, const char *name, int fd, struct seen *s);

/*
 * One step of the pipe, fork and signal tests: the changes one file gets
 * before the reader is told, in one of four orders, so that each kind of
 * change is sometimes the last.  A change whose only check came after
 * another round trip of the same process would pass even if it were
 * never waited for: that round trip would have flushed it.
 */
enum { OP_OWN, OP_MODE, OP_NODE, OP_XATTR };
static const int step_order[4][4] = {
    {OP_NODE, OP_XATTR, OP_OWN, OP_MODE},
    {OP_XATTR, OP_OWN, OP_MODE, OP_NODE},
    {OP_NODE, OP_XATTR, OP_MODE, OP_OWN}, /* chmod before chown */
    {OP_OWN, OP_MODE, OP_NODE, OP_XATTR},
};

struct step {
	int order;     /* row of step_order */
	int how;       /* picks each call's entry point */
	char file[32]; /* chowned (uid:uid+7), maybe chmodded, XNAME set */
	int fd;	       /* file's, opened before, or -1 */
	uid_t uid;
	bool chmod; /* chmod to mode */
	mode_t mode;
	char node[48]; /* a device node to make, rdev; "" none */
	dev_t rdev;
	char xval[48]; /* XNAME's new value; "" none */
};

/* Make s's changes; failed calls counted as errors. */
static void do_step(const struct step *s)
{
	int e;

	for (int k = 0; k < 4; k++) {
		switch (step_order[s->order][k]) {
		case OP_OWN:
			e = own(s->how, s->file, s->fd, s->uid, s->uid + 7);
			if (e < 0)
				error(own_name[s->how % 4], s->file, -e);
			break;
		case OP_MODE:
			if (s->chmod &&
			    (e = mode(s->how, s->file, s->fd, s->mode)) < 0)
				error("chmod", s->file, -e);
			break;
		case OP_NODE:
			if (s->node[0] &&
			    (e = node(s->how, s->node, s->rdev)) < 0)
				error("mknod", s->node, -e);
			break;
		default:
			if (s->xval[0] &&
			    (e = xset(s->how, s->file, s->fd, s->xval)) < 0)
				error("setxattr", s->file, -e);
			break;
		}
	}
}

/* The permission bits after step s, m before it: a chown clears set-uid
 * on a regular file (after or before the chmod, as s's order says). */
static mode_t mode_step(mode_t m, const struct step *s)
{
	bool first = s->chmod && s->order == 2;

	if (first)
		m = s->mode;
	m &= ~(mode_t)S_ISUID;
	if (s->chmod && !first)
		m = s->mode;
	return m;
}

/* The reads after step s (by entry point how): what each change made.
 * m: the file's permission bits now.  pre: the file as already read (in
 * a signal handler), or NULL. */
static void check_step(const struct step *s, int how, mode_t m, const char *ctx,
		       const struct seen *pre)
{
	struct seen sn;

	if (pre)
		check_file(pre, s->uid, s->uid + 7, m, ctx, s->file, how);
	else if (get(how, s->file, s->fd, &sn))
		check_file(&sn, s->uid, s->uid + 7, m, ctx, s->file, how);
	/* Never an fd of a device node: natively that opens the device. */
	if (s->node[0] && get(how % 4, s->node, -1, &sn))
		check_node(&sn, s->rdev, ctx, s->node, how % 4);
	if (s->xval[0])
		check_x(how, s->file, s->fd, s->xval, ctx);
}

/* s must show u:g and a regular file of permission bits m. */
static void check_file(const struct seen *s, uid_t u, gid_t g, mode_t m,
		       const char *ctx, const char *name, int how)
{
	check();
	if (s->uid != u || s->gid != g || s->mode != (S_IFREG | m))
		stale("%s %s by %s: %u:%u mode %o, want %u:%u mode %o", ctx,
		      name, look_name[how % 5], s->uid, s->gid, s->mode,
		      (unsigned)u, (unsigned)g, (unsigned)(S_IFREG | m));
}

/* s must show the device node made by node(): ours, 0600, rdev d. */
static void check_node(const struct seen *s, dev_t d, const char *ctx,
		       const char *name, int how)
{
	check();
	if (s->mode != (S_IFCHR | 0600) || s->rdev != d ||
	    s->uid != geteuid() || s->gid != getegid())
		stale("%s %s by %s: mode %o rdev %u,%u owner %u:%u, want "
		      "mode %o rdev %u,%u owner %u:%u",
		      ctx, name, look_name[how % 5], s->mode, major(s->rdev),
		      minor(s->rdev), s->uid, s->gid, S_IFCHR | 0600, major(d),
		      minor(d), (unsigned)geteuid(), (unsigned)getegid());
}

/* Read name by how and check it; a failed read is an error. */
static bool get(int how, const char *name, int fd, struct seen *s)
{
	char p[PATH_MAX];
	int r;

	path_of(p, sizeof(p), name);
	r = look(how, p, name, fd, s);
	if (r < 0)
		error(look_name[how % 5], name, -r);
	return r == 0;
}

/* How many fds a test may keep open: the soft limit raised to the hard
 * one, less some for the rest (the shim's socket among them). */
static long fd_budget(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 0;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	return rl.rlim_cur > 1000000 ? 1000000 - 64 : (long)rl.rlim_cur - 64;
}

/* Create DIR/name empty, mode 0644; its fd (O_RDONLY) or -1. */
static int make_file(const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0) {
		error("create", name, errno);
		return -1;
	}
	if (fchmod(fd, 0644) != 0)
		error("fchmod", name, errno);
	return fd;
}

static int totals(void)
{
	long c = atomic_load(&tally->checks), s = atomic_load(&tally->stale);
	long e = atomic_load(&tally->errors);

	if (e)
		say("errors %ld", e);
	say("checks %ld stale %ld", c, s);
	return c > 0 && s == 0 && e == 0 ? 0 : 1;
}

/* A child's end: one that died or failed is an error of the run. */
static void reap(pid_t pid, const char *who)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		error("waitpid", who, errno);
	else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		error("exit of", who, WIFSIGNALED(st) ? EINTR : ECHILD);
}

static bool read_byte(int fd)
{
	char c;
	ssize_t r;

	do
		r = read(fd, &c, 1);
	while (r < 0 && errno == EINTR);
	return r == 1;
}

static void write_byte(int fd)
{
	ssize_t r;

	do
		r = write(fd, "a", 1);
	while (r < 0 && errno == EINTR);
	if (r != 1)
		error("write", "ack", errno);
}

/* --- pipe, thread ---------------------------------------------------- */

struct pipe_run {
	long n, rounds;
	int *fds;  /* fds[i]: DIR/fi, opened before the fork, or -1 */
	int lines; /* the reader's end of the line pipe */
	int acks;  /* the reader's end of the ack pipe */
};

static void fname(char *buf, size_t n, long i)
{
	snprintf(buf, n, "f%ld", i);
}

static void dname(char *buf, size_t n, long r, long i)
{
	snprintf(buf, n, "dev%ld/d%ld", r, i);
}

/* The owner file i gets in round r: unique per (round, file). */
static uid_t pipe_uid(const struct pipe_run *p, long r, long i)
{
	return (uid_t)(1000 + r * p->n + i);
}

/*
 * How far the writer may run ahead of the reader, in lines: even rounds
 * in lockstep (the reader stats while the change is fresh), odd ones 64
 * ahead (the changes pile up in flight while the reader reads).  At most
 * n: round r+1 never touches a file before its line of round r is read.
 */
static long pipe_window(const struct pipe_run *p, long r)
{
	return r & 1 ? (p->n < 64 ? p->n : 64) : 1;
}

/* Round r of file i: a chown, a chmod in odd rounds, a device node
 * dev<r>/d<i>, XNAME on every third file. */
static void pipe_step(const struct pipe_run *p, long r, long i, struct step *s)
{
	*s = (struct step){.order = (int)((i / 3 + r) % 4),
			   .how = (int)((r + i) % 12),
			   .fd = p->fds[i],
			   .uid = pipe_uid(p, r, i),
			   .chmod = r & 1,
			   .mode = round_mode(r, i),
			   .rdev = makedev(DEV_MAJOR(r), (unsigned)i)};
	fname(s->file, sizeof(s->file), i);
	dname(s->node, sizeof(s->node), r, i);
	if (xattrs && i % 3 == 0)
		snprintf(s->xval, sizeof(s->xval), "%ld %ld", r, i);
}

/* File i's permission bits after rounds 0..r. */
static mode_t pipe_mode_after(const struct pipe_run *p, long r, long i)
{
	mode_t m = 0644;
	struct step s;

	for (long k = 0; k <= r; k++) {
		pipe_step(p, k, i, &s);
		m = mode_step(m, &s);
	}
	return m;
}

/* readdir of dev<r> after its d0..d<i> were made: each says DT_CHR. */
static void pipe_dtypes(long r, long i)
{
	char sub[32], ctx[80];
	struct dirent *de;
	DIR *dp;
	int fd;

	snprintf(sub, sizeof(sub), "dev%ld", r);
	fd = openat(dfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(dp = fdopendir(fd))) {
		error("opendir", sub, errno);
		if (fd >= 0)
			close(fd);
		return;
	}
	snprintf(ctx, sizeof(ctx), "round %ld after d%ld: readdir", r, i);
	while ((de = readdir(dp))) {
		char *end;
		long j;

		if (de->d_name[0] != 'd')
			continue;
		j = strtol(de->d_name + 1, &end, 10);
		/* Files the writer may have made since, in a window. */
		if (*end || j > i || de->d_type == DT_UNKNOWN)
			continue;
		check();
		if (de->d_type != DT_CHR)
			stale("%s %s/%s: d_type %u, want DT_CHR", ctx, sub,
			      de->d_name, de->d_type);
	}
	closedir(dp);
}

/* The line "i r": file i's round r has returned; read it at once. */
static void pipe_read_one(const struct pipe_run *p, long i, long r)
{
	char ctx[64];
	struct step s;

	pipe_step(p, r, i, &s);
	snprintf(ctx, sizeof(ctx), "round %ld (order %d)", r, s.order);
	check_step(&s, (int)((r + i) % 5), pipe_mode_after(p, r, i), ctx, NULL);
	if (i % 97 == 0 || i == p->n - 1)
		pipe_dtypes(r, i);
}

static void *pipe_reader(void *arg)
{
	const struct pipe_run *p = arg;
	long total = p->n * p->rounds, got = 0;
	FILE *in = fdopen(p->lines, "r");
	char line[64];

	if (!in) {
		error("fdopen", "lines", errno);
		return NULL;
	}
	while (got < total && fgets(line, sizeof(line), in)) {
		long i, r;

		if (sscanf(line, "%ld %ld", &i, &r) != 2 || i < 0 ||
		    i >= p->n || r < 0 || r >= p->rounds) {
			error("read", "line", EPROTO);
			break;
		}
		pipe_read_one(p, i, r);
		got++;
		write_byte(p->acks);
	}
	if (got < total)
		error("read", "lines", EPIPE);
	fclose(in);
	close(p->acks);
	return NULL;
}

static void pipe_writer(const struct pipe_run *p, int lines, int acks)
{
	long acked = 0;

	for (long r = 0; r < p->rounds; r++) {
		long w = pipe_window(p, r);

		for (long i = 0; i < p->n; i++) {
			long l = r * p->n + i;

			while (acked < l - w + 1) {
				if (!read_byte(acks)) {
					error("read", "acks", EPIPE);
					return;
				}
				acked++;
			}
			struct step s;

			pipe_step(p, r, i, &s);
			do_step(&s);
			if (dprintf(lines, "%ld %ld\n", i, r) < 0) {
				error("write", "lines", errno);
				return;
			}
		}
	}
	/* Every line read before the files are left to the caller. */
	while (acked < p->n * p->rounds && read_byte(acks))
		acked++;
}

static int cmd_pipe(long n, long rounds, bool thread)
{
	struct pipe_run p = {.n = n, .rounds = rounds};
	int lp[2], ap[2];
	long budget;
	pthread_t t;
	pid_t pid;

	if (n < 1 || rounds < 1)
		return usage("order pipe|thread DIR N ROUNDS (N, ROUNDS > 0)");
	budget = fd_budget();
	p.fds = calloc((size_t)n, sizeof(int));
	if (!p.fds)
		return err_out(ENOMEM);
	for (long i = 0; i < n; i++) {
		char f[32];

		fname(f, sizeof(f), i);
		p.fds[i] = make_file(f);
		/* Past the budget, the fd calls fall back to their *at
		 * forms. */
		if (i >= budget && p.fds[i] >= 0) {
			close(p.fds[i]);
			p.fds[i] = -1;
		}
	}
	for (long r = 0; r < rounds; r++) {
		char d[32];

		snprintf(d, sizeof(d), "dev%ld", r);
		if (mkdirat(dfd, d, 0755) != 0 && errno != EEXIST)
			error("mkdir", d, errno);
	}
	if (atomic_load(&tally->errors))
		return totals();
	if (pipe2(lp, O_CLOEXEC) || pipe2(ap, O_CLOEXEC))
		return err_out(errno);
	p.lines = lp[0];
	p.acks = ap[1];
	if (thread) {
		if ((errno = pthread_create(&t, NULL, pipe_reader, &p)))
			return err_out(errno);
		pipe_writer(&p, lp[1], ap[0]);
		close(lp[1]);
		pthread_join(t, NULL);
		close(ap[0]);
		return totals();
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return err_out(errno);
	if (pid == 0) {
		arm();
		close(lp[1]);
		close(ap[0]);
		pipe_reader(&p);
		_exit(0);
	}
	close(lp[0]);
	close(ap[1]);
	pipe_writer(&p, lp[1], ap[0]);
	close(lp[1]);
	reap(pid, "reader");
	close(ap[0]);
	return totals();
}

/* --- fork ------------------------------------------------------------ */

static uid_t fork_uid(long k)
{
	return (uid_t)(3000 + k);
}

/* Step k of the fork and signal tests, on x: a chmod in odd k, a device
 * node fk<k> in every third, XNAME in every fifth.  The order changes
 * every 4 steps, so that each order meets every chown entry point. */
static void fork_step(long k, int fd, struct step *s)
{
	*s = (struct step){.order = (int)(k / 4 % 4),
			   .how = (int)(k % 12),
			   .fd = fd,
			   .uid = fork_uid(k),
			   .chmod = k & 1,
			   .mode = round_mode(k, 0),
			   .rdev = makedev(DEV_MAJOR(1), (unsigned)k)};
	snprintf(s->file, sizeof(s->file), "x");
	if (k % 3 == 0)
		snprintf(s->node, sizeof(s->node), "fk%ld", k);
	if (xattrs && k % 5 == 1)
		snprintf(s->xval, sizeof(s->xval), "fork %ld", k);
}

/* Make step k; 0, or 1 when a call failed. */
static int fork_change(long k, int fd)
{
	struct step s;

	fork_step(k, fd, &s);
	do_step(&s);
	return atomic_load(&tally->errors) ? 1 : 0;
}

/* After step k, by entry point how; *m: x's mode before step k, then
 * after it.  pre as check_step's. */
static void fork_check(long k, int fd, int how, mode_t *m, const char *ctx,
		       const struct seen *pre)
{
	struct step s;

	fork_step(k, fd, &s);
	*m = mode_step(*m, &s);
	check_step(&s, how, *m, ctx, pre);
}

static int cmd_fork(const char *self, long n)
{
	mode_t m = 0644;
	int fd;

	if (n < 1)
		return usage("order fork DIR N (N > 0)");
	fd = make_file("x");
	if (fd < 0)
		return totals();
	for (long k = 0; k < n; k++) {
		char ctx[64];
		pid_t pid;

		fflush(stdout);
		pid = fork();
		if (pid < 0)
			return err_out(errno);
		if (pid == 0) {
			char ks[24];

			arm();
			if (k % 8 != 7)
				_exit(fork_change(k, fd));
			/* A new program: its own first connection. */
			snprintf(ks, sizeof(ks), "%ld", k);
			execl(self, "order", "_fork1", dir, ks,
			      xattrs ? "1" : "0", (char *)NULL);
			error("exec", self, errno);
			_exit(1);
		}
		reap(pid, "child");
		snprintf(ctx, sizeof(ctx), "after child %ld (order %d)", k,
			 (int)(k / 4 % 4));
		fork_check(k, fd, (int)(k % 5), &m, ctx, NULL);
	}
	close(fd);
	return totals();
}

/* --- signal ---------------------------------------------------------- */

static volatile sig_atomic_t sig_k = -1; /* the round the handler reads */
static char sig_path[PATH_MAX];
static int sig_fd = -1;
static struct seen sig_seen;
static volatile sig_atomic_t sig_r; /* look()'s result in the handler */
static volatile sig_atomic_t sig_done;

static void on_usr1(int sig)
{
	int saved = errno;

	(void)sig;
	sig_r = look((int)(sig_k % 5), sig_path, "x", sig_fd, &sig_seen);
	sig_done = 1;
	errno = saved;
}

static int cmd_signal(long n)
{
	struct sigaction sa = {.sa_handler = on_usr1};
	sigset_t usr1, old;
	mode_t m = 0644;
	int ap[2];
	pid_t pid;

	if (n < 1)
		return usage("order signal DIR N (N > 0)");
	sig_fd = make_file("x");
	if (sig_fd < 0)
		return totals();
	path_of(sig_path, sizeof(sig_path), "x");
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	sigdelset(&old, SIGUSR1);
	if (pipe2(ap, O_CLOEXEC))
		return err_out(errno);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return err_out(errno);
	if (pid == 0) {
		pid_t parent = getppid();

		arm();
		close(ap[1]);
		for (long k = 0; k < n; k++) {
			fork_change(k, sig_fd);
			kill(parent, SIGUSR1);
			if (!read_byte(ap[0]))
				_exit(1);
		}
		_exit(0);
	}
	close(ap[0]);
	for (long k = 0; k < n; k++) {
		char ctx[80];
		struct seen s;
		int r = 0;

		/* Not by k & 1, which picks the chmod. */
		if (k & 2) {
			sig_k = (sig_atomic_t)k;
			sig_done = 0;
			while (!sig_done)
				sigsuspend(&old);
			r = sig_r;
			s = sig_seen;
			snprintf(ctx, sizeof(ctx), "signal %ld, in the handler",
				 k);
		} else {
			while (sigwaitinfo(&usr1, NULL) < 0 && errno == EINTR)
				;
			snprintf(ctx, sizeof(ctx), "signal %ld, after sigwait",
				 k);
		}
		if (r < 0) {
			error(look_name[k % 5], "x", -r);
			fork_check(k, sig_fd, (int)(k % 5), &m, ctx, NULL);
		} else {
			fork_check(k, sig_fd, (int)(k % 5), &m, ctx,
				   k & 2 ? &s : NULL);
		}
		write_byte(ap[1]);
	}
	close(ap[1]);
	reap(pid, "child");
	return totals();
}

/* --- many ------------------------------------------------------------ */

/* One process's stat after one of its chowns. */
struct many_obs {
	uint32_t file;	   /* which m<file> */
	uint32_t ticket;   /* its own chown's */
	uint32_t uid, gid; /* what the stat showed */
};

struct many_shm {
	pthread_mutex_t mu[MANY_FILES]; /* one per file, process-shared */
	uint32_t next[MANY_FILES];	/* the next ticket, under mu */
	/* Then, per chown q = p * rounds + r: ticket[q], file[q], obs[q];
	 * per file and ticket: owner_at[f * total + t]. */
};

static uid_t many_uid(long q)
{
	return (uid_t)(20000 + q);
}

static int cmd_many(long nproc, long rounds)
{
	long total = nproc * rounds;
	size_t sz =
	    sizeof(struct many_shm) +
	    (size_t)total * (2 * sizeof(uint32_t) + sizeof(struct many_obs)) +
	    (size_t)(MANY_FILES * total) * sizeof(uint32_t);
	pthread_mutexattr_t ma;
	struct many_shm *m;
	struct many_obs *obs;
	uint32_t *ticket, *file, *owner_at;
	int fds[MANY_FILES];
	pid_t *pids;

	if (nproc < 1 || rounds < 1 || total > 1000000)
		return usage("order many DIR NPROC ROUNDS (NPROC*ROUNDS "
			     "1..1000000)");
	m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		 -1, 0);
	pids = calloc((size_t)nproc, sizeof(*pids));
	if (m == MAP_FAILED || !pids)
		return err_out(ENOMEM);
	ticket = (uint32_t *)(m + 1);
	file = ticket + total;
	obs = (struct many_obs *)(file + total);
	owner_at = (uint32_t *)(obs + total);
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	for (int f = 0; f < MANY_FILES; f++) {
		char nm[8];

		pthread_mutex_init(&m->mu[f], &ma);
		snprintf(nm, sizeof(nm), "m%d", f);
		fds[f] = make_file(nm);
	}
	if (atomic_load(&tally->errors))
		return totals();
	fflush(stdout);
	for (long p = 0; p < nproc; p++) {
		pids[p] = fork();
		if (pids[p] < 0)
			return err_out(errno);
		if (pids[p] > 0)
			continue;
		arm();
		for (long r = 0; r < rounds; r++) {
			long q = p * rounds + r;
			int f = (int)((p + r) % MANY_FILES);
			/* Not (p + r) % 4: each file would get one entry
			 * point only. */
			int ho = (int)((p + r / MANY_FILES) % 4);
			int hl = (int)((3 * p + r) % 5), e;
			char nm[8], pth[PATH_MAX];
			struct seen s;

			snprintf(nm, sizeof(nm), "m%d", f);
			pthread_mutex_lock(&m->mu[f]);
			e = own(ho, nm, fds[f], many_uid(q), many_uid(q) + 7);
			ticket[q] = m->next[f]++;
			file[q] = (uint32_t)f;
			owner_at[f * total + ticket[q]] =
			    e < 0 ? UINT32_MAX : many_uid(q);
			pthread_mutex_unlock(&m->mu[f]);
			if (e < 0)
				error(own_name[ho], nm, -e);
			path_of(pth, sizeof(pth), nm);
			e = look(hl, pth, nm, fds[f], &s);
			if (e < 0) {
				error(look_name[hl], nm, -e);
				s.uid = s.gid = UINT32_MAX;
			}
			obs[q] = (struct many_obs){.file = (uint32_t)f,
						   .ticket = ticket[q],
						   .uid = s.uid,
						   .gid = s.gid};
		}
		_exit(0);
	}
	for (long p = 0; p < nproc; p++)
		reap(pids[p], "worker");
	/*
	 * Every ticket is known now: judge each process's reads.  The uid
	 * and the gid each on their own: the kernel's stat does not read
	 * the two under the inode's lock, so natively a stat during
	 * another's chown may show the uid of one and the gid of another
	 * (never of an earlier one).
	 */
	for (long q = 0; q < total; q++) {
		const struct many_obs *o = &obs[q];
		long wu = (long)o->uid - 20000, wg = (long)o->gid - 20007;
		int tu = wu >= 0 && wu < total && file[wu] == o->file
			     ? (int)ticket[wu]
			     : -1;
		int tg = wg >= 0 && wg < total && file[wg] == o->file
			     ? (int)ticket[wg]
			     : -1;

		if (o->uid == UINT32_MAX)
			continue;
		check();
		if (tu < (int)o->ticket || tg < (int)o->ticket)
			stale("worker %ld round %ld: m%u after ticket %u "
			      "shows %u:%u (tickets %d:%d), want tickets >= "
			      "%u",
			      q / rounds, q % rounds, o->file, o->ticket,
			      o->uid, o->gid, tu, tg, o->ticket);
	}
	for (int f = 0; f < MANY_FILES; f++) {
		uint32_t last =
		    m->next[f] ? owner_at[f * total + m->next[f] - 1] : 0;
		char nm[8], ctx[64];
		struct seen s;

		snprintf(nm, sizeof(nm), "m%d", f);
		snprintf(ctx, sizeof(ctx), "at the end (%u tickets)",
			 m->next[f]);
		if (last == UINT32_MAX || !get(f, nm, fds[f], &s))
			continue;
		check_file(&s, last, last + 7, 0644, ctx, nm, f);
	}
	return totals();
}

/* --- self ------------------------------------------------------------ */

static int cmd_self(long n)
{
	char d[32], d2[32], v[32];
	int fd, e, r;
	struct seen s;

	if (n < 1)
		return usage("order self DIR N (N > 0)");
	fd = make_file("x");
	if (fd < 0)
		return totals();
	for (long k = 0; k < n; k++) {
		uid_t a = (uid_t)(5000 + 3 * k), b = a + 1, c = a + 2;
		mode_t mm = round_mode(k, 0);
		int how = (int)(k % 12);
		dev_t dv = makedev(DEV_MAJOR(2), (unsigned)k);

		if ((e = own(how, "x", fd, a, a + 7)) < 0)
			error(own_name[how % 4], "x", -e);
		if (get(1, "x", fd, &s))
			check_file(&s, a, a + 7, 0644, "chown then", "x", 1);
		if ((e = own(how + 1, "x", fd, b, b + 7)) < 0)
			error(own_name[(how + 1) % 4], "x", -e);
		if ((e = mode(how, "x", fd, mm)) < 0)
			error("chmod", "x", -e);
		if (get(0, "x", fd, &s))
			check_file(&s, b, b + 7, mm, "chown, chmod then", "x",
				   0);
		if (fchown(fd, c, c + 7) != 0)
			error("fchown", "x", errno);
		if (get(4, "x", fd, &s))
			check_file(&s, c, c + 7, mm & ~(mode_t)S_ISUID,
				   "fchown then", "x", 4);
		/* Back to 0644, what the next round's first check wants. */
		if ((e = mode(how + 1, "x", fd, 0644)) < 0)
			error("chmod", "x", -e);

		snprintf(d, sizeof(d), "s%ld", k);
		snprintf(d2, sizeof(d2), "t%ld", k);
		if ((e = node(how, d, dv)) < 0)
			error("mknod", d, -e);
		if (get(3, d, -1, &s))
			check_node(&s, dv, "mknod then", d, 3);
		if (renameat(dfd, d, dfd, d2) != 0)
			error("rename", d, errno);
		if (get(2, d2, -1, &s))
			check_node(&s, dv, "rename then", d2, 2);
		/* The device goes; a new file in its place (ext4 may give it
		 * the same inode number) is a plain file of ours. */
		if (unlinkat(dfd, d2, 0) != 0)
			error("unlink", d2, errno);
		r = openat(dfd, d2, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			   0644);
		if (r < 0) {
			error("create", d2, errno);
		} else {
			if (get(4, d2, r, &s))
				check_file(&s, geteuid(), getegid(), 0644,
					   "unlink, create then", d2, 4);
			close(r);
			if (unlinkat(dfd, d2, 0) != 0)
				error("unlink", d2, errno);
		}
		if (xattrs) {
			snprintf(v, sizeof(v), "self %ld", k);
			if ((e = xset(how, "x", fd, v)) < 0)
				error("setxattr", "x", -e);
			check_x(how + 1, "x", fd, v, "setxattr then");
		}
	}
	close(fd);
	return totals();
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = watchdog};
	const char *cmd = argc > 1 ? argv[1] : "";
	const char *t = getenv("ORDER_TIMEOUT");
	int want = 4;

	if (!strcmp(cmd, "pipe") || !strcmp(cmd, "thread") ||
	    !strcmp(cmd, "many"))
		want = 5;
	if (!strcmp(cmd, "_fork1"))
		want = 5;
	if (argc != want)
		return usage("order pipe|thread DIR N ROUNDS | fork|signal|"
			     "self DIR N | many DIR NPROC ROUNDS");
	if (t && *t)
		timeout_s = (unsigned)num(t);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	arm();
	umask(022);
	tally = mmap(NULL, sizeof(*tally), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (tally == MAP_FAILED)
		return err_out(errno);
	dir = argv[2];
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return err_out(errno);
	if (!strcmp(cmd, "_fork1")) {
		/* The exec'd child of cmd_fork: no tally to share. */
		xattrs = !strcmp(argv[4], "1");
		return fork_change(num(argv[3]), -1);
	}
	xattrs = probe_xattrs();
	if (!strcmp(cmd, "pipe"))
		return cmd_pipe(num(argv[3]), num(argv[4]), false);
	if (!strcmp(cmd, "thread"))
		return cmd_pipe(num(argv[3]), num(argv[4]), true);
	if (!strcmp(cmd, "fork"))
		return cmd_fork("/proc/self/exe", num(argv[3]));
	if (!strcmp(cmd, "signal"))
		return cmd_signal(num(argv[3]));
	if (!strcmp(cmd, "many"))
		return cmd_many(num(argv[3]), num(argv[4]));
	if (!strcmp(cmd, "self"))
		return cmd_self(num(argv[3]));
	return usage("order pipe|thread|fork|signal|many|self DIR ...");
}
