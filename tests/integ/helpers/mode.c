/*
 * mode: the chmod family.
 *   mode chmod|fchmod|fchmodat|fchmodat-nofollow PATH MODE(octal)
 * Prints "ok" on success.
 */
#include "helper.h"

#include <fcntl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *call, *path;
	mode_t m;
	int r, fd;

	if (argc != 4)
		return usage("mode CALL PATH MODE");
	call = argv[1];
	path = argv[2];
	m = omode(argv[3]);
	if (!strcmp(call, "chmod")) {
		r = chmod(path, m);
	} else if (!strcmp(call, "fchmod")) {
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			return err_out(errno);
		r = fchmod(fd, m);
	} else if (!strcmp(call, "fchmodat")) {
		r = fchmodat(AT_FDCWD, path, m, 0);
	} else if (!strcmp(call, "fchmodat-nofollow")) {
		r = fchmodat(AT_FDCWD, path, m, AT_SYMLINK_NOFOLLOW);
	} else {
		return usage("mode: unknown CALL");
	}
	if (r != 0)
		return err_out(errno);
	printf("ok\n");
	return 0;
}
