/*
 * spawn: run a program through one exec or spawn entry point with an
 * environment of the test's choosing.
 *   spawn [OPTS] HOW PROG [ARG...]
 *     HOW: execve execv execvp execvpe execl execlp execle fexecve
 *          execveat posix_spawn posix_spawnp
 *     -u UID, -g GID, -G G1,G2  setgroups, setgid, setuid first (in that
 *                               order), as a program dropping root does
 *     -e NAME=VALUE  an entry of the child's environment (repeatable);
 *                    the environment is only these (none: empty)
 *     -n             envp NULL for the forms that take one
 *     -v             exec from a vfork child (exec forms only)
 *   execl, execlp and execle pass PROG and at most one ARG.
 *   The forms without envp (execv, execvp, execl, execlp) run with environ
 *   cleared and refilled with the -e entries.  The forms that search PATH
 *   read the PATH this helper was started with (execvpe, posix_spawnp) or
 *   the -e one (execvp, execlp, whose environ is the -e list).  A spawn or
 *   vfork waits for the child and exits with its status.  A failure
 *   prints "ERR <errno name>" and exits 1.
 *   spawn show     prints "uid U gid G groups A,B" (getuid, getgid,
 *                  getgroups), then the environment, one entry a line
 */
#include "helper.h"

#include <fcntl.h>
#include <grp.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MAX_ENV 64

static int show(void)
{
	gid_t g[256];
	int n = getgroups(256, g);

	if (n < 0)
		return err_out(errno);
	printf("uid %u gid %u groups ", (unsigned)getuid(), (unsigned)getgid());
	for (int i = 0; i < n; i++)
		printf(i ? ",%u" : "%u", (unsigned)g[i]);
	printf("\n");
	for (char **e = environ; e && *e; e++)
		printf("%s\n", *e);
	return 0;
}

static int set_groups(const char *list)
{
	gid_t g[64];
	size_t n = 0;
	char buf[1024], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, ",", &save); t && n < 64;
	     t = strtok_r(NULL, ",", &save))
		g[n++] = (gid_t)num(t);
	return setgroups(n, g);
}

static int wait_status(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) < 0)
		return err_out(errno);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Only returns on failure, with errno set (the spawn forms: by us). */
static int run(const char *how, char **args, char **envp, int vforked)
{
	const char *prog = args[0];
	pid_t pid;
	int r, fd;

	if (!strcmp(how, "execve"))
		return execve(prog, args, envp);
	if (!strcmp(how, "execvpe"))
		return execvpe(prog, args, envp);
	if (!strcmp(how, "execveat"))
		return execveat(AT_FDCWD, prog, args, envp, 0);
	if (!strcmp(how, "fexecve")) {
		fd = open(prog, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		return fexecve(fd, args, envp);
	}
	if (!strcmp(how, "execle"))
		return execle(prog, args[0], args[1], (char *)NULL, envp);
	if (!strcmp(how, "posix_spawn") || !strcmp(how, "posix_spawnp")) {
		if (vforked)
			return errno = EINVAL, -1;
		r = how[11] ? posix_spawnp(&pid, prog, NULL, NULL, args, envp) :
			      posix_spawn(&pid, prog, NULL, NULL, args, envp);
		if (r)
			return errno = r, -1;
		exit(wait_status(pid));
	}
	/* The environ forms: environ is the -e list. */
	if (!vforked) {
		clearenv();
		for (char **e = envp; e && *e; e++)
			putenv(*e);
	}
	if (!strcmp(how, "execv"))
		return execv(prog, args);
	if (!strcmp(how, "execvp"))
		return execvp(prog, args);
	if (!strcmp(how, "execl"))
		return execl(prog, args[0], args[1], (char *)NULL);
	if (!strcmp(how, "execlp"))
		return execlp(prog, args[0], args[1], (char *)NULL);
	errno = EINVAL;
	return -1;
}

/* run() in a vfork child; the parent waits.  environ is refilled here,
 * not in the child: a vfork child shares our memory and may not call the
 * allocator. */
static __attribute__((noinline)) int vfork_run(const char *how, char **args,
					       char **envp)
{
	volatile int err = 0;
	pid_t pid;

	if (strncmp(how, "execve", 6) && strcmp(how, "execvpe") &&
	    strcmp(how, "execle") && strcmp(how, "fexecve")) {
		clearenv();
		for (char **e = envp; e && *e; e++)
			putenv(*e);
	}
	pid = vfork();
	if (pid < 0)
		return err_out(errno);
	if (pid == 0) {
		run(how, args, envp, 1);
		err = errno;
		_exit(127);
	}
	if (err)
		return err_out(err);
	return wait_status(pid);
}

int main(int argc, char **argv)
{
	char *envp[MAX_ENV + 1];
	const char *uid = NULL, *gid = NULL, *groups = NULL;
	int n = 0, null_env = 0, use_vfork = 0, opt;

	if (argc == 2 && !strcmp(argv[1], "show"))
		return show();
	while ((opt = getopt(argc, argv, "+u:g:G:e:nv")) != -1) {
		switch (opt) {
		case 'u': uid = optarg; break;
		case 'g': gid = optarg; break;
		case 'G': groups = optarg; break;
		case 'e':
			if (n == MAX_ENV)
				return usage("spawn: too many -e");
			envp[n++] = optarg;
			break;
		case 'n': null_env = 1; break;
		case 'v': use_vfork = 1; break;
		default:
			return usage("spawn [-u U] [-g G] [-G A,B] [-e N=V]... "
				     "[-n] [-v] HOW PROG [ARG...] | spawn show");
		}
	}
	envp[n] = NULL;
	if (argc - optind < 2)
		return usage("spawn [OPTS] HOW PROG [ARG...]");
	if (groups && set_groups(groups) < 0)
		return err_out(errno);
	if (gid && setgid((gid_t)num(gid)) < 0)
		return err_out(errno);
	if (uid && setuid((uid_t)num(uid)) < 0)
		return err_out(errno);
	fflush(stdout);
	if (use_vfork)
		return vfork_run(argv[optind], argv + optind + 1,
				 null_env ? NULL : envp);
	run(argv[optind], argv + optind + 1, null_env ? NULL : envp, 0);
	return err_out(errno);
}
