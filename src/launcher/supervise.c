/*
 * The supervisor's home in the launcher (supervise.h).  The launcher is
 * the ancestor of every process of the session, which is what Yama's
 * ptrace_scope 1 asks of a process that reads another's memory; the work
 * itself is the shim's (src/shim/supervise.c), loaded here with dlopen so
 * that its wrappers answer for the targets and never for the launcher's
 * own calls, which still go to libc.
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/secarm.h"
#include "common/util.h"
#include "fakeenv/env.h"
#include "run.h"
#include "supervise.h"
#include "utils.h"

static int (*supervise_fn)(int sock);

int fe_sup_listen(void)
{
	struct sockaddr_un sa;
	unsigned char rnd[8];
	char name[64];
	unsigned len;
	int fd;

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		memset(rnd, 0, sizeof(rnd));
	/* Abstract: nothing to clean up after a launcher killed.  Any user
	 * may connect; the supervisor hands out nothing but to its own uid,
	 * and an armed process hands its listener to ours only. */
	snprintf(name, sizeof(name),
		 "@fakeenv-sup-%d-%02x%02x%02x%02x%02x%02x%02x%02x",
		 (int)getpid(), rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5],
		 rnd[6], rnd[7]);
	len = fe_sec_addr(name, &sa);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, len) < 0 ||
	    listen(fd, 128) < 0) {
		fe_msg(errno, "--seccomp: cannot listen for the supervisor; "
			      "static programs run unfaked");
		if (fd >= 0)
			close(fd);
		unsetenv(FE_ENV_SUPERVISOR);
		return -1;
	}
	if (setenv(FE_ENV_SUPERVISOR, name, 1) < 0)
		die_errno("cannot set %s", FE_ENV_SUPERVISOR);
	return fd;
}

bool fe_sup_load(int fd, const char *lib)
{
	struct seccomp_notif_sizes sizes;
	void *h;

	/* Where the kernel (or valgrind, or a container) has no user
	 * notification, no process is to try; a program that would have
	 * been armed says so when it runs (fe_sec_arm()'s reason), and a
	 * session that runs none says nothing. */
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0) {
		close(fd);
		unsetenv(FE_ENV_SUPERVISOR);
		return false;
	}
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

	supervise_fn = h ? (int (*)(int))dlsym(h, "fakeenv_supervise") : NULL;
	if (supervise_fn)
		return true;
	fe_msg(0, "--seccomp: %s has no supervisor (%s); static programs run "
		  "unfaked", lib, h ? "fakeenv_supervise" : dlerror());
	close(fd);
	unsetenv(FE_ENV_SUPERVISOR);
	return false;
}

static void *sup_main(void *arg)
{
	int fd = (int)(intptr_t)arg;
	int r = supervise_fn(fd);

	/* Only before any target: armed processes then fail to connect. */
	fe_msg(-r, "--seccomp: the supervisor cannot run; static programs "
		   "run unfaked");
	close(fd);
	return NULL;
}

void fe_sup_start(int fd)
{
	sigset_t all, old;
	pthread_attr_t at;
	pthread_t t;
	int r;

	/* Signals stay the main thread's: it forwards them to CMD. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&t, &at, sup_main, (void *)(intptr_t)fd);
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		fe_msg(r, "--seccomp: no supervisor thread; static programs "
			  "run unfaked");
		close(fd);
	}
}

/* CMD runs another libc's loader, which cannot load the shim: CMD goes
 * without it (the filter fakes it and all it runs), and so do its
 * children, which inherit the list. */
static void leave_out_lib(void)
{
	const char *pre = getenv("LD_PRELOAD");
	char *rest;

	if (!pre)
		return;
	rest = fe_run_preload_without(pre, getenv(FE_ENV_LIB));
	if (*rest ? setenv("LD_PRELOAD", rest, 1) : unsetenv("LD_PRELOAD"))
		fe_msg(errno, "cannot take the shim out of LD_PRELOAD");
	free(rest);
}

void fe_sup_arm_cmd(const char *file)
{
	enum fe_sec_mode mode = fe_sec_mode_of(getenv(FE_ENV_SECCOMP));
	const char *sock = getenv(FE_ENV_SUPERVISOR), *why;
	struct fe_sec_hello h = { .magic = FE_SEC_MAGIC, .ngroups = 1 };
	enum fe_sec_reach reach = FE_SEC_REACHED;
	char path[4096];
	int r;

	if (mode == FE_SEC_NEVER || !sock)
		return;
	if (fe_sec_which(syscall, file, getenv("PATH"), path, sizeof(path)))
		reach = fe_sec_reach(syscall, path);
	if (reach == FE_SEC_FOREIGN)
		leave_out_lib();
	if (mode == FE_SEC_AUTO && reach == FE_SEC_REACHED)
		return;
	/* CMD starts as root, its groups root's alone. */
	h.pid = getpid();
	r = fe_sec_arm(syscall, sock, &h, &why);
	if (r < 0)
		fe_msg(-r, "--seccomp: %s; %s runs unfaked below libc", why,
		       file);
}

/* libc's syscall(): here the shim may be preloaded, whose syscall() would
 * route some of arming's calls to its wrappers. */
static fe_sys_fn *libc_syscall(void)
{
	void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	fe_sys_fn *f = h ? (fe_sys_fn *)dlsym(h, "syscall") : NULL;

	return f ? f : syscall;
}

int fe_sup_exec(const char *path, char **argv)
{
	struct fe_sec_hello h = { .magic = FE_SEC_MAGIC, .ngroups = 1 };
	const char *why;
	int r, n;

	/* As the shim reads them at load: absent or malformed is root. */
	fe_parse_ids(getenv(FE_ENV_UIDS), h.uids);
	fe_parse_ids(getenv(FE_ENV_GIDS), h.gids);
	n = fe_parse_groups(getenv(FE_ENV_GROUPS), h.groups, FE_GROUPS_MAX);
	if (n >= 0)
		h.ngroups = (uint32_t)n;
	else
		h.groups[0] = 0;
	h.pid = getpid();
	r = fe_sec_arm(libc_syscall(), getenv(FE_ENV_SUPERVISOR), &h, &why);
	if (r < 0)
		fe_msg(-r, "--seccomp: %s; %s runs unfaked below libc", why,
		       path);
	execv(path, argv);
	r = errno;
	fe_msg(r, "%s", path);
	return r == ENOENT ? FE_EXIT_NOTFOUND : FE_EXIT_NOEXEC;
}
