/*
 * fopen: N times fp = fopen(DIR/fopen.out, "w"); fflush(fp); fclose(fp).
 * The file exists after the first pass: opening an existing file must cost
 * what it costs natively (README, "How it works").
 *
 *   fopen [N] [DIR]      N defaults to 1,000,000, DIR to "."
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	const char *dir = argc > 2 ? argv[2] : ".";
	char path[4096];
	double t0;

	snprintf(path, sizeof(path), "%s/fopen.out", dir);
	t0 = now();
	for (long i = 0; i < n; i++) {
		FILE *fp = fopen(path, "w");

		if (!fp) {
			perror(path);
			return 1;
		}
		fflush(fp);
		fclose(fp);
	}
	printf("fopen: %ld loops in %.6f s\n", n, now() - t0);
	return 0;
}
