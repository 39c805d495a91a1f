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

#include "order_pipe.h"
#include "order_fork.h"
#include "order_many.h"

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
