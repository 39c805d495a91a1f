/*
 * proc: the shim across process and thread boundaries.  Each subcommand
 * chowns files in DIR and checks with stat; prints "ok" or what went wrong.
 *   proc fork DIR         chown in the parent, fork; the child chowns and
 *                         stats; the parent stats what the child did
 *   proc fork-quiet DIR   fork before the process ever talked to the
 *                         daemon; the child chowns and stats and keeps a
 *                         connection of its own, then the parent does and
 *                         sees the child's file
 *   proc vfork-quiet DIR  vfork before the process ever talked to the
 *                         daemon; the child chowns and stats and keeps no
 *                         connection (the memory is its parent's), then
 *                         the parent does, keeping one, and sees the
 *                         child's file
 *   proc fork-busy DIR    4 threads chown and stat without pause while
 *                         the main thread forks 200 times; each child
 *                         chowns and stats (a child still there after
 *                         10 s hung: killed, and the test fails)
 *   proc rawfork-busy DIR the same with a raw fork (clone, SIGCHLD), which
 *                         glibc's fork handlers and robust list miss
 *   proc vfork-busy DIR   the same with vfork: the child shares the lock
 *                         the threads take, and must wait for it
 *   proc fork-vfork-busy DIR  the same with fork, whose child vforks at
 *                         once: the vfork child chowns and stats first,
 *                         in memory whose lock a busy thread may have
 *                         held at the fork, then the fork child does
 *   proc fork-vfork DIR   the parent chowns, forks; the child vforks
 *                         before its own first call, the vfork child
 *                         chowns and stats and keeps no connection, then
 *                         the fork child does and keeps one of its own
 *   proc vfork-call DIR   the parent chowns; a vfork child chowns and
 *                         stats before _exit; the parent chowns again on
 *                         its own connection and sees the child's file
 *   proc vfork-exec DIR ST  vfork, the child execs ST stat DIR/v
 *   proc spawn DIR ST     posix_spawn ST stat DIR/s
 *   proc threads DIR      8 threads, each chowning and stat-checking its
 *                         own file 200 times
 *   proc signal DIR       a SIGALRM handler calls stat every ms while the
 *                         main thread chowns and stats 2000 times
 *   proc closefrom DIR    close_range(3, ~0) (closefrom), then chown+stat
 *   proc dup2 DIR         dup2 /dev/null over fds 3..63, then chown+stat
 */
#include "helper.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#include "chown_stat.h"

static int show(const char *name, unsigned long *u, unsigned long *g)
{
	char p[4096];
	struct stat st;

	path(p, sizeof(p), name);
	if (stat(p, &st) != 0)
		return -1;
	*u = st.st_uid;
	*g = st.st_gid;
	return 0;
}

static void *thread_main(void *arg)
{
	long k = (long)arg;
	char name[32];

	snprintf(name, sizeof(name), "t%ld", k);
	for (int i = 0; i < 200; i++)
		if (cs(name, 100 + k, 200 + k) != 0)
			return (void *)1;
	return NULL;
}

static volatile sig_atomic_t handler_calls, handler_bad;

static void on_alarm(int sig)
{
	char p[4096];
	struct stat st;
	int saved = errno;

	(void)sig;
	path(p, sizeof(p), "sig");
	if (stat(p, &st) != 0)
		handler_bad = 1;
	handler_calls++;
	errno = saved;
}

static atomic_int busy_stop;

static void *busy_main(void *arg)
{
	char name[32];
	long k = (long)arg;

	snprintf(name, sizeof(name), "b%ld", k);
	for (long i = 0; !atomic_load(&busy_stop); i++)
		if (cs(name, 300 + i % 7, 400 + k) != 0)
			return (void *)1;
	return NULL;
}

static int run_wait(pid_t pid)
{
	int ws;

	if (waitpid(pid, &ws, 0) != pid)
		return -1;
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* The parent's side once a child chowned child to cid:cid+1: the child
 * succeeded, the parent can chown and stat mine to id:id+1 (with its own
 * connection or a new one), and it sees the child's change.  Prints what
 * failed; 0 when nothing did. */
static int after_child(pid_t pid, const char *mine, unsigned long id,
		       const char *child, unsigned long cid)
{
	unsigned long u, g;

	if (run_wait(pid) != 0)
		return printf("child: chown/stat failed\n"), 1;
	if (cs(mine, id, id + 1) != 0)
		return printf("parent: chown/stat after the child failed\n"), 1;
	if (show(child, &u, &g) != 0 || u != cid || g != cid + 1)
		return printf("parent sees the child's file as %lu:%lu\n", u, g), 1;
	return 0;
}

/* run_wait, but a child still running after secs is killed (a shim
 * that hangs blocks every signal around its round trip). */
static int run_wait_max(pid_t pid, int secs)
{
	struct timespec ms = { 0, 1000000 };

	for (long i = 0; i < secs * 1000L; i++) {
		int ws;
		pid_t r = waitpid(pid, &ws, WNOHANG);

		if (r == pid)
			return WIFEXITED(ws) ? WEXITSTATUS(ws) :
					       128 + WTERMSIG(ws);
		if (r < 0)
			return -1;
		nanosleep(&ms, NULL);
	}
	kill(pid, SIGKILL);
	return run_wait(pid);
}

/* main's arguments, for the calls that take more than DIR. */
static int ac;
static char **av;

static int p_fork(void)
{
	unsigned long u, g;

	if (cs("parent", 1, 2) != 0) /* connects before fork */
		return printf("parent chown failed\n"), 1;
	pid_t pid = fork();

	if (pid == 0)
		_exit(cs("child", 3, 4) == 0 && show("parent", &u, &g) == 0 &&
			      u == 1 && g == 2 ? 0 : 1);
	if (run_wait(pid) != 0)
		return printf("child: chown/stat after fork failed\n"), 1;
	if (show("child", &u, &g) != 0 || u != 3 || g != 4)
		return printf("parent sees child's file as %lu:%lu\n", u, g), 1;
	if (cs("parent2", 5, 6) != 0)
		return printf("parent chown after fork failed\n"), 1;
	return 0;
}

static int p_fork_quiet(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(cs("qchild", 21, 22) != 0 ? 1 : shim_fd() < 0 ? 2 : 0);
	if (after_child(pid, "qparent", 23, "qchild", 21) != 0)
		return 1;
	return 0;
}

static int p_vfork_quiet(void)
{
	unsigned long u, g;
	pid_t pid = vfork();
	int st;

	if (pid == 0)
		_exit(cs("wchild", 41, 42) != 0 ? 1 : shim_fd() >= 0 ? 2 : 0);
	st = run_wait(pid);
	if (st != 0)
		return printf("child: %s\n", st == 2 ? "kept a connection" :
					      "chown/stat failed"), 1;
	if (cs("wparent", 43, 44) != 0)
		return printf("parent: chown/stat after the child failed\n"), 1;
	if (shim_fd() < 0)
		return printf("parent: no connection of its own\n"), 1;
	if (show("wchild", &u, &g) != 0 || u != 41 || g != 42)
		return printf("parent sees the child's file as %lu:%lu\n", u, g), 1;
	return 0;
}

/* A child by fork, a raw fork or vfork, that chowns name to id:id+100
 * and stats it, then exits; SIGALRM ends it after 10 s (a vfork parent
 * cannot kill a child that hung: it waits in vfork). */
static pid_t child_cs(const char *how, const char *name, unsigned long id)
{
	pid_t pid = !strcmp(how, "rawfork-busy") ?
			    (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0) :
		    !strcmp(how, "vfork-busy") ? vfork() :
						 fork();

	if (pid == 0) {
		alarm(10);
		if (!strcmp(how, "fork-vfork-busy")) {
			pid_t v = vfork();

			if (v == 0) {
				alarm(10);
				_exit(cs(name, id, id + 100) == 0 ? 0 : 1);
			}
			if (run_wait(v) != 0)
				_exit(1);
		}
		_exit(cs(name, id, id + 100) == 0 ? 0 : 1);
	}
	return pid;
}

static int p_fork_busy(void)
{
	unsigned long u, g;
	pthread_t t[4];
	void *r;
	int bad = 0;

	for (long k = 0; k < 4; k++)
		pthread_create(&t[k], NULL, busy_main, (void *)k);
	for (int i = 0; i < 200 && !bad; i++) {
		char name[32];
		pid_t pid;

		snprintf(name, sizeof(name), "f%d", i);
		pid = child_cs(av[1], name, 500 + i);
		int st = run_wait_max(pid, 10);

		if (st != 0) {
			printf("child %d: %s\n", i,
			       st == 128 + SIGKILL || st == 128 + SIGALRM ?
				       "hung" :
				       "chown/stat failed");
			bad = 1;
		} else if (show(name, &u, &g) != 0 || u != 500u + i ||
			   g != 600u + i) {
			printf("parent sees child %d's file as %lu:%lu\n", i, u, g);
			bad = 1;
		}
	}
	atomic_store(&busy_stop, 1);
	for (int k = 0; k < 4; k++) {
		pthread_join(t[k], &r);
		if (r != NULL && !bad)
			bad = printf("a busy thread saw a wrong owner\n");
	}
	if (bad)
		return 1;
	return 0;
}

/* The inode of the shim's socket ("socket:[N]"), or 0. */
static unsigned long shim_ino(void)
{
	char p[64], l[64];
	int fd = shim_fd();
	ssize_t n;

	if (fd < 0)
		return 0;
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	n = readlink(p, l, sizeof(l) - 1);
	if (n <= 8)
		return 0;
	l[n] = '\0';
	return strtoul(l + 8, NULL, 10);
}

/* The fork child of p_fork_vfork: its exit status says what failed. */
static int fork_then_vfork(void)
{
	unsigned long u, g, ino = shim_ino(); /* the parent's, inherited */
	pid_t pid = vfork();
	int st;

	if (pid == 0)
		_exit(cs("fvv", 53, 54) != 0 ? 1 : shim_ino() != ino ? 2 : 0);
	st = run_wait(pid);
	if (st != 0)
		return st;
	if (cs("fvc", 55, 56) != 0)
		return 3;
	if (shim_ino() == ino)
		return 4;
	if (show("fvv", &u, &g) != 0 || u != 53 || g != 54)
		return 5;
	return 0;
}

static int p_fork_vfork(void)
{
	static const char *const what[] = {
		"ok", "the vfork child's chown/stat failed",
		"the vfork child kept a connection",
		"the fork child's chown/stat failed",
		"the fork child has no connection of its own",
		"the fork child sees the vfork child's file wrongly",
	};
	unsigned long u, g;
	pid_t pid;
	int st;

	if (cs("fvp", 51, 52) != 0)
		return printf("parent chown failed\n"), 1;
	pid = fork();
	if (pid == 0)
		_exit(fork_then_vfork());
	st = run_wait(pid);
	if (st != 0)
		return printf("%s\n", st > 0 && st < 6 ? what[st] :
					  "the fork child died"), 1;
	if (show("fvc", &u, &g) != 0 || u != 55 || g != 56)
		return printf("parent sees the child's file as %lu:%lu\n", u, g), 1;
	return 0;
}

static int p_vfork_call(void)
{
	pid_t pid;

	if (cs("vp", 31, 32) != 0)
		return printf("parent chown failed\n"), 1;
	pid = vfork();
	if (pid == 0)
		_exit(cs("vc", 33, 34) == 0 ? 0 : 1);
	if (after_child(pid, "vp2", 35, "vc", 33) != 0)
		return 1;
	return 0;
}

static int p_exec(void)
{
	const char *call = av[1];
	char p[4096];
	char *args[] = { av[3], "stat", p, NULL };
	int fds[2];
	pid_t pid;

	if (ac != 4)
		return usage("proc vfork-exec|spawn DIR ST");
	if (cs("v", 7, 8) != 0)
		return printf("chown failed\n"), 1;
	path(p, sizeof(p), "v");
	fflush(stdout);
	if (pipe(fds) != 0)
		return err_out(errno);
	if (!strcmp(call, "spawn")) {
		posix_spawn_file_actions_t fa;

		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
		if (posix_spawn(&pid, av[3], &fa, NULL, args, environ))
			return printf("posix_spawn failed\n"), 1;
	} else {
		pid = vfork();
		if (pid == 0) {
			dup2(fds[1], 1);
			execve(av[3], args, environ);
			_exit(127);
		}
	}
	close(fds[1]);
	char out[256] = "";
	ssize_t n = read(fds[0], out, sizeof(out) - 1);

	if (run_wait(pid) != 0 || n <= 0)
		return printf("child failed\n"), 1;
	out[n] = '\0';
	if (strcmp(out, "7 8 100644 0 0\n"))
		return printf("child saw %s", out), 1;
	return 0;
}

static int p_threads(void)
{
	pthread_t t[8];
	void *r;
	int bad = 0;

	for (long k = 0; k < 8; k++)
		pthread_create(&t[k], NULL, thread_main, (void *)k);
	for (int k = 0; k < 8; k++) {
		pthread_join(t[k], &r);
		bad |= r != NULL;
	}
	if (bad)
		return printf("a thread saw a wrong owner\n"), 1;
	return 0;
}

static int p_signal(void)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };

	if (cs("sig", 9, 9) != 0)
		return printf("chown failed\n"), 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (int i = 0; i < 2000; i++)
		if (cs("main", 10 + i % 5, 20 + i % 5) != 0)
			return printf("main chown/stat failed at %d\n", i), 1;
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	if (handler_bad)
		return printf("stat in the handler failed\n"), 1;
	if (handler_calls == 0)
		return printf("the handler never ran\n"), 1;
	return 0;
}

static int p_closefrom(void)
{
	unsigned long u, g;

	if (cs("c1", 11, 12) != 0)
		return printf("chown failed\n"), 1;
	closefrom(3);
	if (cs("c2", 13, 14) != 0 || show("c1", &u, &g) || u != 11)
		return printf("chown/stat after closefrom failed\n"), 1;
	return 0;
}

static int p_dup2(void)
{
	unsigned long u, g;
	char p[4096];
	int null;

	if (cs("d1", 15, 16) != 0)
		return printf("chown failed\n"), 1;
	null = open("/dev/null", O_WRONLY);
	path(p, sizeof(p), "sink");
	int sink = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	for (int fd = 3; fd < 64; fd++)
		if (fd != null && fd != sink)
			dup2(sink, fd);
	if (cs("d2", 17, 18) != 0 || show("d1", &u, &g) || u != 15)
		return printf("chown/stat after dup2 over fds failed\n"), 1;
	struct stat st;

	if (fstat(sink, &st) != 0 || st.st_size != 0)
		return printf("the shim wrote into the program's file\n"), 1;
	return 0;
}

/* The calls, by name: each returns 0 for "ok", else main's exit status
 * after saying what went wrong. */
static const struct {
	const char *name;
	int (*run)(void);
} calls[] = {
	{ "fork", p_fork },
	{ "fork-quiet", p_fork_quiet },
	{ "vfork-quiet", p_vfork_quiet },
	{ "fork-busy", p_fork_busy },
	{ "rawfork-busy", p_fork_busy },
	{ "vfork-busy", p_fork_busy },
	{ "fork-vfork-busy", p_fork_busy },
	{ "fork-vfork", p_fork_vfork },
	{ "vfork-call", p_vfork_call },
	{ "vfork-exec", p_exec },
	{ "spawn", p_exec },
	{ "threads", p_threads },
	{ "signal", p_signal },
	{ "closefrom", p_closefrom },
	{ "dup2", p_dup2 },
};

int main(int argc, char **argv)
{
	if (argc < 3)
		return usage("proc CALL DIR [ST]");
	ac = argc;
	av = argv;
	snprintf(dir, sizeof(dir), "%s", argv[2]);
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		int rc;

		if (strcmp(argv[1], calls[i].name))
			continue;
		rc = calls[i].run();
		if (rc)
			return rc;
		printf("ok\n");
		return 0;
	}
	return usage("proc: unknown CALL");
}
