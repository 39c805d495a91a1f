/*
 * lstatall: lstat every entry under DIR (DIR included), walking with
 * opendir/readdir and recursing into what lstat says is a directory, so
 * that the measured call is the program's own lstat (not fts's or
 * nftw's internal one).  Prints the count and the time.
 *
 *   lstatall DIR
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static long count;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* lstat path (a buffer of 4096 bytes holding len bytes), then its
 * children if it is a directory.  Returns 0 or -1 after a message. */
static int walk(char *path, size_t len)
{
	struct stat st;
	struct dirent *de;
	DIR *d;

	if (lstat(path, &st) != 0) {
		perror(path);
		return -1;
	}
	count++;
	if (!S_ISDIR(st.st_mode))
		return 0;
	d = opendir(path);
	if (!d) {
		perror(path);
		return -1;
	}
	while ((de = readdir(d))) {
		size_t nl = strlen(de->d_name);

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (len + 1 + nl + 1 > 4096) {
			fprintf(stderr, "%s: path too long\n", path);
			closedir(d);
			return -1;
		}
		path[len] = '/';
		memcpy(path + len + 1, de->d_name, nl + 1);
		if (walk(path, len + 1 + nl) != 0) {
			closedir(d);
			return -1;
		}
		path[len] = '\0';
	}
	closedir(d);
	return 0;
}

int main(int argc, char **argv)
{
	char path[4096];
	size_t len;
	double t0;

	if (argc != 2 || (len = strlen(argv[1])) >= sizeof(path)) {
		fprintf(stderr, "usage: lstatall DIR\n");
		return 2;
	}
	memcpy(path, argv[1], len + 1);
	t0 = now();
	if (walk(path, len) != 0)
		return 1;
	printf("lstatall: %ld entries in %.6f s\n", count, now() - t0);
	return 0;
}
