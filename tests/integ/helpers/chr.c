/*
 * chroot(2) as programs make it, for t-chroot: the coreutils chroot
 * chdirs to the new root; these do not, so that the kernel's escapes can
 * be shown.
 *   chr in DIR CMD...      chroot(DIR), cwd left where it was, exec CMD
 *   chr up DIR CMD...      chroot(DIR), chdir("..") 64 times from the cwd
 *                          left outside, chroot("."), exec CMD
 *   chr fchdir DIR CMD...  an fd on the cwd, chroot(DIR), chdir("/"),
 *                          fchdir(fd), up as above, chroot("."), exec
 *   chr syscall DIR CMD... syscall(SYS_chroot, DIR), chdir("/"), exec
 */
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "helper.h"

static int up(void)
{
	for (int i = 0; i < 64; i++)
		if (chdir("..") < 0)
			return -1;
	return chroot(".");
}

int main(int argc, char **argv)
{
	const char *how = argc > 3 ? argv[1] : "";
	int fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), r = -1;

	if (argc < 4 || fd < 0) {
		fprintf(stderr, "usage: chr in|up|fchdir|syscall DIR CMD...\n");
		return 2;
	}
	if (!strcmp(how, "syscall"))
		r = (int)syscall(SYS_chroot, argv[2]);
	else
		r = chroot(argv[2]);
	if (r == 0 && !strcmp(how, "up"))
		r = up();
	else if (r == 0 && !strcmp(how, "fchdir"))
		r = chdir("/") || fchdir(fd) ? -1 : up();
	else if (r == 0 && !strcmp(how, "syscall"))
		r = chdir("/");
	if (r < 0)
		return err_out(errno);
	execvp(argv[3], argv + 3);
	return err_out(errno);
}
