/*
 * forkexit: N times fork, child _exit(0), parent waitpid.  Measures what a
 * preloaded library costs at process start and exit (the shim does
 * nothing at process start: README, "How it works").
 *
 *   forkexit [N]         N defaults to 20,000
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	double t0 = now();
	int st;

	for (long i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0)
			_exit(0);
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0) {
			fprintf(stderr, "forkexit: child failed\n");
			return 1;
		}
	}
	printf("Average per process fork+exit time is %.0f usecs\n",
	       n ? (now() - t0) * 1e6 / n : 0.0);
	return 0;
}
