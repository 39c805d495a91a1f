/*
 * dis: FAKEENV_DISABLED across the process boundaries a shell does not
 * show.
 *   dis fork PATH      in the parent, then in a fork child (no exec):
 *                      "parent|child uid U owner O chown R" with getuid,
 *                      stat's st_uid of PATH and chown(PATH, 0, 0)'s
 *                      result ("ok" or the errno name)
 *   dis setenv VALUE PROG [ARG...]   setenv("FAKEENV_DISABLED", VALUE)
 *                      (VALUE "-": unsetenv), then execvp PROG
 * And for ignored paths, the calls that name no path from the cwd:
 *   dis at DIR NAME    fchownat(dirfd of DIR, NAME, 0, 0, 0), then fstatat:
 *                      "chown R owner O"
 *   dis fd PATH        open PATH, fchown(fd, 0, 0), then fstat:
 *                      "chown R owner O"
 */
#include "helper.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

static void report(const char *who, const char *path)
{
	struct stat st;
	const char *r = "ok";
	long owner = -1;

	if (stat(path, &st) == 0)
		owner = (long)st.st_uid;
	if (chown(path, 0, 0) < 0)
		r = strerrorname_np(errno);
	printf("%s uid %lu owner %ld chown %s\n", who,
	       (unsigned long)getuid(), owner, r ? r : "?");
	fflush(stdout);
}

/* "chown R owner O" for fchownat(dirfd, name, 0, 0) and fstatat, or
 * with name NULL fchown(dirfd, 0, 0) and fstat. */
static int at_report(int dirfd, const char *name)
{
	struct stat st;
	const char *r = "ok";

	if ((name ? fchownat(dirfd, name, 0, 0, 0) : fchown(dirfd, 0, 0)) < 0)
		r = strerrorname_np(errno);
	if ((name ? fstatat(dirfd, name, &st, 0) : fstat(dirfd, &st)) < 0)
		return err_out(errno);
	printf("chown %s owner %lu\n", r ? r : "?", (unsigned long)st.st_uid);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "fork")) {
		int status;
		pid_t pid;

		report("parent", argv[2]);
		pid = fork();
		if (pid < 0)
			return err_out(errno);
		if (pid == 0) {
			report("child", argv[2]);
			_exit(0);
		}
		if (waitpid(pid, &status, 0) < 0)
			return err_out(errno);
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	if (argc >= 4 && !strcmp(argv[1], "setenv")) {
		if (!strcmp(argv[2], "-"))
			unsetenv("FAKEENV_DISABLED");
		else if (setenv("FAKEENV_DISABLED", argv[2], 1) < 0)
			return err_out(errno);
		execvp(argv[3], argv + 3);
		return err_out(errno);
	}
	if (argc == 4 && !strcmp(argv[1], "at")) {
		int dfd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (dfd < 0)
			return err_out(errno);
		return at_report(dfd, argv[3]);
	}
	if (argc == 3 && !strcmp(argv[1], "fd")) {
		int fd = open(argv[2], O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			return err_out(errno);
		return at_report(fd, NULL);
	}
	fprintf(stderr, "usage: dis fork|setenv|at|fd ...\n");
	return 2;
}
