/*
 * timeit: run a command (and optionally a second one after it), print the
 * whole wall time in seconds from CLOCK_MONOTONIC.  Used by bench/run so
 * that the timing includes process start, the tool's daemon and its
 * shutdown, and nothing of the shell that drives the benchmark.
 *
 *   timeit [-o FILE] -- CMD ARGS... [---then CMD2 ARGS...]
 *
 * timeit is a child subreaper: the clock stops when every descendant has
 * exited, so a daemon the tool started (faked, the pseudo server, fakeenvd)
 * is counted until it is gone, its shutdown and state writing included.
 * It waits at most TIMEIT_WAIT seconds (default 120) for them.
 *
 * The time goes to FILE (or stderr) as "%.6f\n".  Exit status: CMD's
 * (128+N when it died of signal N); a failing CMD2 makes it 1 if CMD
 * succeeded; 124 when descendants outlived the wait.  CMD2 runs even when
 * CMD failed (it is a shutdown step).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t timed_out;

static void on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Runs argv to completion; returns its exit status as a shell would. */
static int run(char **argv)
{
	pid_t pid = fork();
	int st;

	if (pid < 0) {
		perror("timeit: fork");
		return 125;
	}
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "timeit: %s: %s\n", argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			perror("timeit: waitpid");
			return 125;
		}
	}
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
	const char *out = NULL;
	char **cmd2 = NULL;
	double t0, t1;
	int i = 1, r;
	FILE *f;

	if (i + 1 < argc && strcmp(argv[i], "-o") == 0) {
		out = argv[i + 1];
		i += 2;
	}
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (i >= argc) {
		fprintf(stderr,
			"usage: timeit [-o FILE] -- CMD... [---then CMD2...]\n");
		return 125;
	}
	for (int j = i; j < argc; j++) {
		if (strcmp(argv[j], "---then") == 0) {
			argv[j] = NULL;
			cmd2 = &argv[j + 1];
			break;
		}
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
		perror("timeit: PR_SET_CHILD_SUBREAPER");
	t0 = now();
	r = run(&argv[i]);
	if (cmd2 && *cmd2) {
		int r2 = run(cmd2);

		if (r == 0 && r2 != 0)
			r = 1;
	}
	/* Reap the orphans (daemons) until none is left. */
	{
		struct sigaction sa = { .sa_handler = on_alarm };
		const char *w = getenv("TIMEIT_WAIT");

		sigaction(SIGALRM, &sa, NULL);
		alarm(w ? (unsigned)atoi(w) : 120);
		while (!timed_out && (wait(NULL) > 0 || errno == EINTR))
			;
		alarm(0);
		if (timed_out) {
			fprintf(stderr, "timeit: descendants still running\n");
			r = 124;
		}
	}
	t1 = now();
	f = out ? fopen(out, "w") : stderr;
	if (!f) {
		perror(out);
		return 125;
	}
	fprintf(f, "%.6f\n", t1 - t0);
	if (f != stderr && fclose(f) != 0) {
		perror(out);
		return 125;
	}
	return r;
}
