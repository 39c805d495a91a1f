/*
 * renfd: files made through the fd of a directory, before and after the
 * session renames that directory.
 *
 *   renfd OLD NEW
 *
 * opens OLD, makes OLD/before through the fd and chowns it to 3:3,
 * renames OLD to NEW, then makes "after" through the same fd and chowns
 * it to 3:3.  The record of "after" must say NEW/after.  Prints "done".
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int make(int dir, const char *name)
{
	int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			0644);

	if (fd < 0 || fchown(fd, 3, 3) != 0) {
		perror(name);
		return 1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	int dir;

	if (argc != 3) {
		fprintf(stderr, "usage: renfd OLD NEW\n");
		return 2;
	}
	/* A record of its own (0:5), so that it
	 * shows where the rename took it. */
	if (chown(argv[1], 0, 5) != 0) {
		perror(argv[1]);
		return 1;
	}
	dir = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0) {
		perror(argv[1]);
		return 1;
	}
	if (make(dir, "before"))
		return 1;
	if (rename(argv[1], argv[2]) != 0) {
		perror("rename");
		return 1;
	}
	if (make(dir, "after"))
		return 1;
	printf("done\n");
	return 0;
}
