/*
 * ccu: N times create a new file (open O_CREAT|O_EXCL, close), chmod it,
 * unlink it: a new inode, a change of faked state, a last link gone.
 *
 *   ccu [N] [DIR]        N defaults to 100,000, DIR to "."
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
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
	long n = argc > 1 ? atol(argv[1]) : 100000;
	const char *dir = argc > 2 ? argv[2] : ".";
	char path[4096];
	double t0 = now();

	for (long i = 0; i < n; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/ccu.%ld", dir, i);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0) {
			perror(path);
			return 1;
		}
		close(fd);
		if (chmod(path, 0600) != 0 || unlink(path) != 0) {
			perror(path);
			return 1;
		}
	}
	printf("ccu: %ld create+chmod+unlink in %.6f s\n", n, now() - t0);
	return 0;
}
