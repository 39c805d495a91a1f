/*
 * forkexec: N times fork, child execs /bin/true, parent waitpid.  The exec
 * loads the preloaded library again each time.
 *
 *   forkexec [N]         N defaults to 5,000
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
	long n = argc > 1 ? atol(argv[1]) : 5000;
	double t0 = now();
	int st;

	for (long i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0) {
			fprintf(stderr, "forkexec: child failed\n");
			return 1;
		}
	}
	printf("Average per process fork+exec time is %.0f usecs\n",
	       n ? (now() - t0) * 1e6 / n : 0.0);
	return 0;
}
