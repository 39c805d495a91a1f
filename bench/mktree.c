/*
 * mktree: make a tree of N empty files, 100 to a leaf directory, 32 leaf
 * directories to a middle one: DIR/dNN/dNN/fNN.  Run outside any session,
 * on the filesystem the benchmark uses.  Prints the number of entries made
 * (files and directories, DIR included).
 *
 *   mktree DIR [N]       N defaults to 100,000; DIR must not exist
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define PER_LEAF 100
#define PER_MID 32

static int mk(const char *path)
{
	if (mkdir(path, 0755) != 0) {
		perror(path);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long n, made = 0, entries = 1;
	char path[4096];

	if (argc < 2) {
		fprintf(stderr, "usage: mktree DIR [N]\n");
		return 2;
	}
	n = argc > 2 ? atol(argv[2]) : 100000;
	if (mk(argv[1]) != 0)
		return 1;
	for (long leaf = 0; made < n; leaf++) {
		if (leaf % PER_MID == 0) {
			snprintf(path, sizeof(path), "%s/d%ld", argv[1],
				 leaf / PER_MID);
			if (mk(path) != 0)
				return 1;
			entries++;
		}
		snprintf(path, sizeof(path), "%s/d%ld/d%ld", argv[1],
			 leaf / PER_MID, leaf % PER_MID);
		if (mk(path) != 0)
			return 1;
		entries++;
		for (int f = 0; f < PER_LEAF && made < n; f++, made++) {
			int fd;

			snprintf(path, sizeof(path), "%s/d%ld/d%ld/f%d",
				 argv[1], leaf / PER_MID, leaf % PER_MID, f);
			fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
			if (fd < 0) {
				perror(path);
				return 1;
			}
			close(fd);
			entries++;
		}
	}
	printf("%ld\n", entries);
	return 0;
}
