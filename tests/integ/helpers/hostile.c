/*
 * hostile: programs that make life hard for a preload shim.  Each
 * subcommand works in DIR and prints "ok" or what went wrong.
 *   hostile closeloop|closerange|closefrom DIR
 *                  chown a file (the shim connects), close every fd from
 *                  3 (a loop to 1023, close_range(3, ~0U, 0), closefrom),
 *                  then chown and stat again
 *   hostile dup2shim|dup3shim DIR
 *                  dup2/dup3 a regular file over the shim's socket fd
 *                  (found in /proc/self/fd), then chown: the file is left
 *                  as it was and the chown is recorded
 *   hostile rawclone DIR  a child made by syscall(SYS_clone) chowns and
 *                  stats; then the parent
 *   hostile threads DIR   16 threads chown, chmod and stat their own file
 *                  and 4 shared ones at once; every stat exact
 *   hostile signals DIR   a 20 kHz SIGALRM handler does lstat and chown
 *                  of one file while the main loop chowns and stats
 *                  another; every result exact
 *   hostile seccomp-prctl|seccomp-syscall FILE
 *                  install a seccomp filter (prctl, or syscall(SYS_seccomp))
 *                  allowing little more than read, write and fstat, that
 *                  kills the process on anything else; then stat and
 *                  lstat FILE: prints "uid gid mode" twice
 *   hostile system|popen CMD   system(CMD) / popen(CMD, "r"), copying its
 *                  output; exits with CMD's status
 *   hostile until-fail FILE   chown+stat FILE until a call fails; prints
 *                  "stopped: <call> ERR <name>" (or what stat showed)
 *                  and exits 1
 *   hostile open-filter-until-fail FILE   the same under a seccomp filter
 *                  that allows everything (the shim talks with writev
 *                  and read, as under any filter), pausing 20 ms a round
 *   hostile mixed OPS DIR K   process K of many: OPS chown/chmod/stat on
 *                  DIR/pK.0..3 (each checked at once, and all at the end)
 *                  and on DIR/shared.0..3, which must exist (uid 7000+j
 *                  by even K, gid 8000+j by odd K, mode 0640 by all: no
 *                  update may be lost)
 */
#include "helper.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "chown_stat.h"

static int owner_is(const char *name, uid_t u, gid_t g)
{
	char p[4096];
	struct stat st;

	path(p, sizeof(p), name);
	return stat(p, &st) == 0 && st.st_uid == u && st.st_gid == g;
}

static int closing(const char *how)
{
	if (cs("c1", 11, 12) != 0)
		return printf("chown before closing failed\n"), 1;
	if (shim_fd() < 0)
		return printf("the shim has no socket to lose\n"), 1;
	if (!strcmp(how, "closeloop")) {
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
	} else if (!strcmp(how, "closerange")) {
		if (close_range(3, ~0U, 0) != 0)
			return err_out(errno);
	} else {
		closefrom(3);
	}
	if (shim_fd() >= 0)
		return printf("the shim's socket survived %s\n", how), 1;
	if (cs("c2", 13, 14) != 0)
		return printf("chown+stat after %s failed\n", how), 1;
	if (!owner_is("c1", 11, 12))
		return printf("the record before %s is lost\n", how), 1;
	return printf("ok\n"), 0;
}

static int dup_over(const char *how)
{
	static const char text[] = "the program's own data\n";
	char p[4096], back[64];
	struct stat st;
	int fd, shim;

	if (cs("d1", 15, 16) != 0)
		return printf("chown before dup failed\n"), 1;
	shim = shim_fd();
	if (shim < 0)
		return printf("no shim socket found\n"), 1;
	path(p, sizeof(p), "precious");
	fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, sizeof(text) - 1) != sizeof(text) - 1)
		return err_out(errno);
	if ((!strcmp(how, "dup3shim") ? dup3(fd, shim, 0) : dup2(fd, shim)) != shim)
		return err_out(errno);
	if (cs("d2", 17, 18) != 0)
		return printf("chown+stat after %s over fd %d failed\n", how, shim), 1;
	if (!owner_is("d1", 15, 16))
		return printf("the record before the %s is lost\n", how), 1;
	/* The program's fd still works and its file is untouched. */
	if (fstat(shim, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size != sizeof(text) - 1)
		return printf("fd %d: the file changed size or type\n", shim), 1;
	if (pread(fd, back, sizeof(back), 0) != sizeof(text) - 1 ||
	    memcmp(back, text, sizeof(text) - 1))
		return printf("the shim wrote into the program's file\n"), 1;
	return printf("ok\n"), 0;
}

/* --- threads ------------------------------------------------------------ */

#define NTHREADS 16
#define NSHARED 4

static void *thread_main(void *arg)
{
	long k = (long)arg;
	char own[32], p[4096], sp[4096];
	struct stat st;

	snprintf(own, sizeof(own), "t%ld", k);
	for (int i = 0; i < 300; i++) {
		uid_t u = (uid_t)(1000 * k + i);
		int s = (int)((k + i) % NSHARED);
		char sname[32];

		if (cs(own, u, u + 1) != 0)
			return "own chown/stat inexact";
		path(p, sizeof(p), own);
		if (chmod(p, 0600 | (i & 7)) != 0 || lstat(p, &st) != 0 ||
		    (st.st_mode & 07777) != (mode_t)(0600 | (i & 7)))
			return "own chmod/lstat inexact";
		/* Every thread gives shared.S the same owner. */
		snprintf(sname, sizeof(sname), "shared.%d", s);
		path(sp, sizeof(sp), sname);
		if (chown(sp, 500 + s, 600 + s) != 0 || stat(sp, &st) != 0 ||
		    st.st_uid != (uid_t)(500 + s) || st.st_gid != (gid_t)(600 + s))
			return "shared chown/stat inexact";
	}
	return NULL;
}

static int threads(void)
{
	pthread_t t[NTHREADS];
	char name[32];
	const char *bad = NULL;

	for (int s = 0; s < NSHARED; s++) {
		snprintf(name, sizeof(name), "shared.%d", s);
		if (cs(name, 500 + s, 600 + s) != 0)
			return printf("setup chown failed\n"), 1;
	}
	for (long k = 0; k < NTHREADS; k++)
		if (pthread_create(&t[k], NULL, thread_main, (void *)k) != 0)
			return printf("pthread_create failed\n"), 1;
	for (int k = 0; k < NTHREADS; k++) {
		void *r;

		pthread_join(t[k], &r);
		if (r)
			bad = r;
	}
	if (bad)
		return printf("a thread: %s\n", bad), 1;
	for (long k = 0; k < NTHREADS; k++) {
		snprintf(name, sizeof(name), "t%ld", k);
		if (!owner_is(name, (uid_t)(1000 * k + 299), (gid_t)(1000 * k + 300)))
			return printf("%s: final owner wrong\n", name), 1;
	}
	return printf("ok\n"), 0;
}

/* --- signals ------------------------------------------------------------ */

static volatile sig_atomic_t h_calls, h_bad, h_stop;
static char h_path[4096];

/* One shot, 50 us from now.  Re-armed at the end of each handler rather
 * than periodic: with a slow daemon (valgrind, a loaded machine) a
 * handler can take longer than the period, and a periodic timer would
 * then run handler after handler and never the interrupted code. */
static void arm(void)
{
	struct itimerval it = { { 0, 0 }, { 0, 50 } };

	setitimer(ITIMER_REAL, &it, NULL);
}

static void on_alarm(int sig)
{
	struct stat st;
	int saved = errno;
	uid_t u = (uid_t)(h_calls % 1000);

	(void)sig;
	if (chown(h_path, u, u + 1) != 0 || lstat(h_path, &st) != 0 ||
	    st.st_uid != u || st.st_gid != u + 1)
		h_bad = 1;
	h_calls++;
	if (!h_stop)
		arm();
	errno = saved;
}

static int signals(void)
{
	struct itimerval it;
	struct sigaction sa;
	int calls;

	if (cs("h", 0, 1) != 0)
		return printf("setup chown failed\n"), 1;
	path(h_path, sizeof(h_path), "h");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	arm();
	for (int i = 0; i < 3000; i++)
		if (cs("m", 10 + i % 7, 20 + i % 5) != 0)
			return printf("main chown/stat inexact at %d\n", i), 1;
	h_stop = 1;
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	calls = h_calls;
	if (h_bad)
		return printf("the handler's chown/lstat was inexact\n"), 1;
	if (calls < 10)
		return printf("the handler ran only %d times\n", calls), 1;
	if (!owner_is("h", (uid_t)((calls - 1) % 1000), (gid_t)((calls - 1) % 1000 + 1)))
		return printf("the handler's last chown is lost\n"), 1;
	return printf("ok\n"), 0;
}

/* --- seccomp ------------------------------------------------------------ */

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#endif

#define ALLOW(nr)                                                  \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),           \
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

static int seccomp_run(const char *how, const char *file)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		ALLOW(SYS_read), ALLOW(SYS_write), ALLOW(SYS_readv),
		ALLOW(SYS_writev), ALLOW(SYS_close), ALLOW(SYS_fstat),

		ALLOW(SYS_newfstatat), ALLOW(SYS_statx), ALLOW(SYS_lseek),
		ALLOW(SYS_exit_group), ALLOW(SYS_rt_sigreturn),
		ALLOW(SYS_rt_sigprocmask), ALLOW(SYS_futex), ALLOW(SYS_getpid),
		ALLOW(SYS_brk), ALLOW(SYS_mmap), ALLOW(SYS_munmap),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	struct stat st;
	char out[128];
	int n;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return err_out(errno);
	/* Nothing faked has run yet: the shim has no connection. */
	if (!strcmp(how, "seccomp-prctl")) {
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
			return err_out(errno);
	} else if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
		return err_out(errno);
	}
	/* No stdio from here: its first use allocates, and malloc's first
	 * use asks for getrandom, which the filter forbids. */
	if (stat(file, &st) != 0)
		return 3;
	n = snprintf(out, sizeof(out), "%u %u %o\n", st.st_uid, st.st_gid,
		     st.st_mode);
	if (lstat(file, &st) != 0)
		return 4;
	n += snprintf(out + n, sizeof(out) - n, "%u %u %o\n", st.st_uid,
		      st.st_gid, st.st_mode);
	return write(1, out, n) == n ? 0 : 5;
}

/* A child made by the raw clone system call: no atfork handler runs in
 * it, so it shares the parent's connection globals; the shim must tell by
 * its pid and not talk on the parent's socket. */
static int rawclone(void)
{
	int ws;
	long pid;

	if (cs("r", 1, 2) != 0) /* the parent connects first */
		return printf("parent chown failed\n"), 1;
	pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	if (pid < 0)
		return err_out(errno);
	if (pid == 0)
		_exit(cs("r", 3, 4) == 0 && cs("rc", 5, 6) == 0 ? 0 : 1);
	if (waitpid((pid_t)pid, &ws, 0) != pid || !WIFEXITED(ws) ||
	    WEXITSTATUS(ws) != 0)
		return printf("the raw clone child's chown/stat failed\n"), 1;
	if (!owner_is("r", 3, 4) || !owner_is("rc", 5, 6))
		return printf("the parent does not see the child's chowns\n"), 1;
	if (cs("r", 7, 8) != 0)
		return printf("the parent's connection broke\n"), 1;
	return printf("ok\n"), 0;
}

/* --- system, popen ------------------------------------------------------ */

static int exit_of(int ws)
{
	if (ws == -1)
		return err_out(errno);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static int run_popen(const char *cmd)
{
	char buf[4096];
	size_t n;
	FILE *p = popen(cmd, "r");

	if (!p)
		return err_out(errno);
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		fwrite(buf, 1, n, stdout);
	return exit_of(pclose(p));
}

/* --- a killed daemon ---------------------------------------------------- */

/* pause_ms between rounds: the daemon then dies between two calls, and
 * the next one writes to a closed socket rather than reading EOF. */
static int until_fail(const char *file, int pause_ms)
{
	struct timespec ts = { 0, pause_ms * 1000000L };
	struct stat st;
	const char *what;

	for (unsigned long n = 0;; n++) {
		uid_t u = (uid_t)(n % 1000);

		if (pause_ms)
			nanosleep(&ts, NULL);

		what = "chown";
		if (chown(file, u, u) != 0)
			break;
		what = "stat";
		if (stat(file, &st) != 0)
			break;
		if (st.st_uid != u) {
			printf("stopped after %lu: stat shows %u, not %u\n", n,
			       st.st_uid, u);
			return 1;
		}
	}
	printf("stopped: %s ", what);
	return err_out(errno);
}

/* --- many processes ----------------------------------------------------- */

static int mixed(long ops, long k)
{
	char own[4][32], sh[4][32], p[4096];
	uid_t want_u[4];
	gid_t want_g[4];
	mode_t want_m[4];
	struct stat st;

	for (int j = 0; j < 4; j++) {
		snprintf(own[j], sizeof(own[j]), "p%ld.%d", k, j);
		snprintf(sh[j], sizeof(sh[j]), "shared.%d", j);
		if (cs(own[j], (uid_t)k, (gid_t)j) != 0)
			return printf("K%ld: setup chown inexact\n", k), 1;
		path(p, sizeof(p), own[j]);
		if (chmod(p, 0600) != 0)
			return printf("K%ld: setup chmod failed\n", k), 1;
		want_u[j] = (uid_t)k;
		want_g[j] = (gid_t)j;
		want_m[j] = 0600;
	}
	for (long i = 0; i < ops; i++) {
		int j = (int)(i % 4);
		mode_t m = 04700 | (mode_t)(i & 077);

		path(p, sizeof(p), i % 5 < 2 ? own[j] : sh[j]);
		switch (i % 5) {
		case 0: /* own: chown, checked; it clears setuid */
			if (cs(own[j], (uid_t)(k * 100 + j), (gid_t)i) != 0)
				return printf("K%ld op %ld: own chown inexact\n", k, i), 1;
			want_u[j] = (uid_t)(k * 100 + j);
			want_g[j] = (gid_t)i;
			want_m[j] &= ~(mode_t)04000;
			break;
		case 1: /* own: chmod, checked */
			if (chmod(p, m) != 0 || stat(p, &st) != 0 ||
			    (st.st_mode & 07777) != m)
				return printf("K%ld op %ld: own chmod inexact\n", k, i), 1;
			want_m[j] = m;
			break;
		case 2: /* shared: uid or gid, by parity */
			if (k % 2 == 0 ? chown(p, 7000 + j, -1) : chown(p, -1, 8000 + j))
				return printf("K%ld op %ld: shared chown failed\n", k, i), 1;
			break;
		case 3: /* shared: the same mode from everyone */
			if (chmod(p, 0640) != 0)
				return printf("K%ld op %ld: shared chmod failed\n", k, i), 1;
			break;
		default: /* shared: stat */
			if (stat(p, &st) != 0)
				return printf("K%ld op %ld: shared stat failed\n", k, i), 1;
			break;
		}
	}
	for (int j = 0; j < 4; j++) {
		path(p, sizeof(p), own[j]);
		if (stat(p, &st) != 0 || st.st_uid != want_u[j] ||
		    st.st_gid != want_g[j] || (st.st_mode & 07777) != want_m[j])
			return printf("K%ld: %s ends wrong\n", k, own[j]), 1;
	}
	return printf("ok\n"), 0;
}

int main(int argc, char **argv)
{
	const char *call;

	if (argc < 3)
		return usage("hostile CALL ARG...");
	call = argv[1];
	snprintf(dir, sizeof(dir), "%s", argv[2]);
	if (!strcmp(call, "closeloop") || !strcmp(call, "closerange") ||
	    !strcmp(call, "closefrom"))
		return closing(call);
	if (!strcmp(call, "dup2shim") || !strcmp(call, "dup3shim"))
		return dup_over(call);
	if (!strcmp(call, "threads"))
		return threads();
	if (!strcmp(call, "rawclone"))
		return rawclone();
	if (!strcmp(call, "signals"))
		return signals();
	if (!strncmp(call, "seccomp-", 8))
		return seccomp_run(call, argv[2]);
	if (!strcmp(call, "system")) {
		fflush(stdout);
		return exit_of(system(argv[2]));
	}
	if (!strcmp(call, "popen"))
		return run_popen(argv[2]);
	if (!strcmp(call, "until-fail"))
		return until_fail(argv[2], 0);
	if (!strcmp(call, "open-filter-until-fail")) {
		struct sock_filter f[] = {
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = { 1, f };

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
			return err_out(errno);
		return until_fail(argv[2], 20);
	}
	if (!strcmp(call, "mixed") && argc == 5) {
		snprintf(dir, sizeof(dir), "%s", argv[3]);
		return mixed(num(argv[2]), num(argv[4]));
	}
	return usage("hostile: unknown CALL");
}
