/*
 * mp: P processes at once, each N times chown(own file, getuid(),
 * getgid()) then stat it, checking that stat reports the owner just set.
 * Under a fake root getuid() is 0, natively it is the real user, so the
 * chown succeeds either way.  All start together (a pipe is the gate).
 *
 *   mp [P] [N] [DIR]     P defaults to 8, N to 10,000, DIR to "."
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int child(int gate, int k, long n, const char *dir)
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	char path[4096], c;
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/mp.%d", dir, k);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	close(fd);
	if (read(gate, &c, 1) < 0)
		return 1;
	for (long i = 0; i < n; i++) {
		if (chown(path, uid, gid) != 0 || stat(path, &st) != 0) {
			perror(path);
			return 1;
		}
		if (st.st_uid != uid || st.st_gid != gid) {
			fprintf(stderr, "%s: owner %u:%u, expected %u:%u\n",
				path, (unsigned)st.st_uid, (unsigned)st.st_gid,
				(unsigned)uid, (unsigned)gid);
			return 1;
		}
	}
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	int np = argc > 1 ? atoi(argv[1]) : 8;
	long n = argc > 2 ? atol(argv[2]) : 10000;
	const char *dir = argc > 3 ? argv[3] : ".";
	int gate[2], st, bad = 0;
	double t0;

	if (pipe(gate) != 0) {
		perror("pipe");
		return 1;
	}
	for (int k = 0; k < np; k++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			close(gate[1]);
			_exit(child(gate[0], k, n, dir));
		}
	}
	close(gate[0]);
	t0 = now();
	close(gate[1]); /* every child's read returns 0: go */
	while (wait(&st) > 0)
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad = 1;
	if (bad) {
		fprintf(stderr, "mp: a child failed\n");
		return 1;
	}
	printf("mp: %d x %ld chown+stat in %.6f s\n", np, n, now() - t0);
	return 0;
}
