/*
 * nsroot: one process that looks at a path, moves its root to DIR (or
 * DIR under the path) by the kernel alone, and looks at the same path
 * again, for t-chroot: a static build is the supervisor's target, which
 * must not go on resolving its paths where it had seen them.
 *   nsroot chroot DIR PATH  unshare(CLONE_NEWUSER), chroot(DIR)
 *   nsroot pivot DIR PATH   unshare(CLONE_NEWUSER | CLONE_NEWNS), DIR
 *                           bound on itself, pivot_root there
 *   nsroot setns DIR PATH   a child does "pivot" and waits; this process
 *                           setns()es into its user and mount namespaces
 *   nsroot bind DIR PATH    unshare(CLONE_NEWUSER | CLONE_NEWNS), DIR
 *                           bound on PATH's directory (root unmoved)
 * Prints "uid gid mode major minor" (or ERR name) of lstat(PATH), once
 * before and once after.
 */
#include "helper.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void look(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		err_out(errno);
	else
		print_meta(st.st_uid, st.st_gid, st.st_mode, st.st_rdev);
	fflush(stdout);
}

static int pivot(const char *dir)
{
	if (syscall(SYS_unshare, CLONE_NEWUSER | CLONE_NEWNS) < 0 ||
	    mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(dir, dir, NULL, MS_BIND | MS_REC, NULL) < 0 ||
	    chdir(dir) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
	    umount2(".", MNT_DETACH) < 0)
		return -1;
	return chdir("/");
}

static int bind(const char *dir, const char *path)
{
	char on[4096];
	char *slash;

	snprintf(on, sizeof(on), "%s", path);
	slash = strrchr(on, '/');
	if (!slash || slash == on)
		return errno = EINVAL, -1;
	*slash = '\0';
	if (syscall(SYS_unshare, CLONE_NEWUSER | CLONE_NEWNS) < 0 ||
	    mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	return mount(dir, on, NULL, MS_BIND, NULL);
}

/* A child pivots and waits on a pipe; we enter its namespaces. */
static int enter(const char *dir)
{
	int go[2], done[2];
	char c = 0, ns[64];
	pid_t pid;
	int r = 0;

	if (pipe(go) < 0 || pipe(done) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		c = pivot(dir) < 0 ? 'e' : 'o';
		if (write(go[1], &c, 1) != 1 || read(done[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	if (read(go[0], &c, 1) != 1 || c != 'o')
		r = -1;
	for (int i = 0; i < 2 && r == 0; i++) {
		int fd;

		snprintf(ns, sizeof(ns), "/proc/%d/ns/%s", (int)pid,
			 i ? "mnt" : "user");
		fd = open(ns, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || syscall(SYS_setns, fd, 0) < 0)
			r = -1;
		if (fd >= 0)
			close(fd);
	}
	(void)!write(done[1], "x", 1);
	waitpid(pid, NULL, 0);
	return r;
}

int main(int argc, char **argv)
{
	const char *how = argc == 4 ? argv[1] : "";
	int r;

	if (argc != 4) {
		fprintf(stderr, "usage: nsroot chroot|pivot|setns|bind DIR PATH\n");
		return 2;
	}
	look(argv[3]);
	if (!strcmp(how, "chroot"))
		r = syscall(SYS_unshare, CLONE_NEWUSER) < 0 ||
				    syscall(SYS_chroot, argv[2]) < 0 ||
				    chdir("/") < 0 ? -1 : 0;
	else if (!strcmp(how, "pivot"))
		r = pivot(argv[2]);
	else if (!strcmp(how, "setns"))
		r = enter(argv[2]);
	else if (!strcmp(how, "bind"))
		r = bind(argv[2], argv[3]);
	else
		return fprintf(stderr, "nsroot: %s?\n", how), 2;
	if (r < 0)
		return err_out(errno);
	look(argv[3]);
	return 0;
}
