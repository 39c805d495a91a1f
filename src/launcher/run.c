/*
 * CMD's life; see run.h.  The launcher is single-threaded and the signal
 * handler only calls kill(2), so forwarding is async-signal-safe.  Nothing
 * here loops over file descriptors: everything we open is close-on-exec.
 */
#include "run.h"
#include "supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "common/util.h"
#include "fakeenv/env.h"
#include "utils.h"

/* ld.so splits LD_PRELOAD on both. */
#define PRELOAD_SEPS ": "

/* Whether LD_PRELOAD list PRE already names LIB, by name or by inode. */
static bool preload_has(const char *pre, const char *lib)
{
	struct stat lst, st;
	bool have_lst = stat(lib, &lst) == 0;
	char *copy = xstrdup(pre), *save = NULL, *tok;
	bool found = false;

	for (tok = strtok_r(copy, PRELOAD_SEPS, &save); tok && !found;
	     tok = strtok_r(NULL, PRELOAD_SEPS, &save))
		found = !strcmp(tok, lib) ||
			(have_lst && stat(tok, &st) == 0 &&
			 st.st_dev == lst.st_dev && st.st_ino == lst.st_ino);
	free(copy);
	return found;
}

static bool is_our_lib(const char *entry, const char *lib)
{
	const char *base = strrchr(entry, '/');

	base = base ? base + 1 : entry;
	return (lib && !strcmp(entry, lib)) || !strcmp(base, FE_LIB_NAME);
}

char *fe_run_preload_without(const char *pre, const char *lib)
{
	char *copy = xstrdup(pre), *out = xmalloc(strlen(pre) + 1);
	char *save = NULL, *tok;
	size_t n = 0;

	for (tok = strtok_r(copy, PRELOAD_SEPS, &save); tok;
	     tok = strtok_r(NULL, PRELOAD_SEPS, &save)) {
		if (is_our_lib(tok, lib))
			continue;
		if (n)
			out[n++] = ':';
		memcpy(out + n, tok, strlen(tok));
		n += strlen(tok);
	}
	out[n] = '\0';
	free(copy);
	return out;
}

static void xsetenv(const char *name, const char *value)
{
	if (setenv(name, value, 1) < 0)
		die_errno("cannot set %s", name);
}

void fe_run_setenv(const char *sock, const char *lib, bool unknown_is_real)
{
	const char *pre = getenv("LD_PRELOAD");

	if (strpbrk(lib, PRELOAD_SEPS))
		die("cannot preload %s: LD_PRELOAD cannot hold a path "
		    "with ':' or ' '",
		    lib);
	xsetenv(FE_ENV_SOCKET, sock);
	xsetenv(FE_ENV_FAKEROOTKEY, sock);
	xsetenv(FE_ENV_LIB, lib);
	/* Appended, not prepended: a sanitizer runtime or another preload
	 * the user chose must stay first. */
	if (!pre || !*pre) {
		xsetenv("LD_PRELOAD", lib);
	} else if (!preload_has(pre, lib)) {
		char *both = xasprintf("%s:%s", pre, lib);

		xsetenv("LD_PRELOAD", both);
		free(both);
	}
	if (unknown_is_real)
		xsetenv(FE_ENV_UNKNOWN_REAL, "1");
	else
		unsetenv(FE_ENV_UNKNOWN_REAL);
	unsetenv(FE_ENV_UIDS);
	unsetenv(FE_ENV_GIDS);
	unsetenv(FE_ENV_GROUPS);
}

void fe_run_ignore_add(char **list, const char *prefix)
{
	char *p, *both;

	if (prefix[0] != '/')
		die("--ignore-path %s: not an absolute path", prefix);
	if (strchr(prefix, ':'))
		die("--ignore-path %s: a path with ':' cannot be put in %s",
		    prefix, FE_ENV_IGNORE_PATHS);
	p = xstrdup(prefix);
	fe_path_lexical(p);
	if (!*list) {
		*list = p;
		return;
	}
	both = xasprintf("%s:%s", *list, p);
	free(*list);
	free(p);
	*list = both;
}

void fe_run_ignore_setenv(const char *list)
{
	const char *old = getenv(FE_ENV_IGNORE_PATHS);
	char *both;

	if (!list)
		return;
	if (!old || !*old) {
		xsetenv(FE_ENV_IGNORE_PATHS, list);
		return;
	}
	both = xasprintf("%s:%s", old, list);
	xsetenv(FE_ENV_IGNORE_PATHS, both);
	free(both);
}

int fe_run_exec_status(const char *cmd, int err)
{
	/* As a shell says it; a path that does not exist gets strerror. */
	if (err == ENOENT && !strchr(cmd, '/'))
		fe_msg(0, "%s: command not found", cmd);
	else
		fe_msg(err, "%s", cmd);
	return err == ENOENT ? FE_EXIT_NOTFOUND : FE_EXIT_NOEXEC;
}

void fe_run_exec(char *const argv[])
{
	execvp(argv[0], argv);
	exit(fe_run_exec_status(argv[0], errno));
}

static const int fwd_sigs[] = { SIGTERM, SIGINT,  SIGHUP,
				SIGQUIT, SIGUSR1, SIGUSR2 };

/* Dispositions found at start, given back to CMD before exec so that a
 * signal our caller ignores (nohup) stays ignored in CMD. */
static struct sigaction old_acts[FE_ARRAY_LEN(fwd_sigs)];

/* Where forwarded signals go: -pgid, pid, or 0 (nowhere) before CMD
 * exists and once it is reaped, so a recycled pid is never hit. */
static volatile sig_atomic_t fwd_target;

static void forward(int sig)
{
	int saved = errno;
	pid_t target = fwd_target;

	if (target)
		kill(target, sig);
	errno = saved;
}

static void fwd_set(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < FE_ARRAY_LEN(fwd_sigs); i++)
		sigaddset(set, fwd_sigs[i]);
}

static void install_forwarding(bool interactive)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sa.sa_flags = SA_RESTART;
	fwd_set(&sa.sa_mask);
	for (size_t i = 0; i < FE_ARRAY_LEN(fwd_sigs); i++) {
		int sig = fwd_sigs[i];
		struct sigaction ign = { .sa_handler = SIG_IGN };

		sigaction(sig, NULL, &old_acts[i]);
		/* Ignored by our caller: keep ignoring, CMD inherits it. */
		if (old_acts[i].sa_handler == SIG_IGN)
			continue;
		/* The terminal sends these to the whole foreground group,
		 * CMD included: forwarding would deliver them twice. */
		if (interactive && (sig == SIGINT || sig == SIGQUIT))
			sigaction(sig, &ign, NULL);
		else
			sigaction(sig, &sa, NULL);
	}
}

static void restore_signals(void)
{
	for (size_t i = 0; i < FE_ARRAY_LEN(fwd_sigs); i++)
		sigaction(fwd_sigs[i], &old_acts[i], NULL);
}

/* Interactive: stdin is a terminal and we are its foreground group. */
static bool is_interactive(void)
{
	pid_t fg;

	if (!isatty(STDIN_FILENO))
		return false;
	fg = tcgetpgrp(STDIN_FILENO);
	return fg > 0 && fg == getpgrp();
}

/* In the forked child: become CMD.  Only the errno of a failed exec goes
 * back, through the close-on-exec pipe; the parent prints the message. */
__attribute__((noreturn))
static void exec_cmd(char *const argv[], bool own_group, pid_t parent,
		     int err_fd, const sigset_t *mask)
{
	int err;

	if (own_group)
		setpgid(0, 0);
	/* If the launcher is SIGKILLed before the daemon has CMD's pid,
	 * this is what stops CMD; getppid() closes the race with a parent
	 * that died before the prctl. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(FE_EXIT_FAIL);
	restore_signals();
	sigprocmask(SIG_SETMASK, mask, NULL);
	fe_sup_arm_cmd(argv[0]);
	execvp(argv[0], argv);
	err = errno;
	(void)fe_write_full(err_fd, &err, sizeof(err));
	_exit(err == ENOENT ? FE_EXIT_NOTFOUND : FE_EXIT_NOEXEC);
}

void fe_run_spawn(struct fe_job *job, char *const argv[])
{
	bool own_group = !is_interactive();
	pid_t parent = getpid(), pid;
	sigset_t fwd, mask;
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		die_errno("cannot run %s: pipe", argv[0]);
	/* Blocked across fork: a signal arriving now waits until the parent
	 * knows where to forward it, and the child never runs our handler. */
	fwd_set(&fwd);
	sigprocmask(SIG_BLOCK, &fwd, &mask);
	install_forwarding(!own_group);

	pid = fork();
	if (pid < 0)
		die_errno("cannot run %s: fork", argv[0]);
	if (pid == 0) {
		close(p[0]);
		exec_cmd(argv, own_group, parent, p[1], &mask);
	}
	close(p[1]);
	job->pid = pid;
	job->exec_fd = p[0];
	job->pgid = 0;
	if (own_group) {
		/* Both sides call setpgid so that neither the parent's kill()
		 * nor the daemon's SESSION can see CMD outside its group.
		 * EACCES: the child has already exec'd, and set it itself. */
		if (setpgid(pid, pid) < 0 && errno != EACCES && errno != ESRCH)
			fe_msg(errno, "setpgid");
		job->pgid = pid;
	}
	fwd_target = own_group ? -pid : pid;
	sigprocmask(SIG_SETMASK, &mask, NULL);
}

int fe_run_exec_error(struct fe_job *job)
{
	int err = 0;
	ssize_t n;

	if (job->exec_fd < 0)
		return 0;
	do
		n = read(job->exec_fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(job->exec_fd);
	job->exec_fd = -1;
	/* EOF: the exec succeeded and closed the pipe. */
	return n == (ssize_t)sizeof(err) ? err : 0;
}

/* Until CMD ends (its pidfd is readable), watch fd: on a hang-up, call
 * on_hangup for the next fd to watch.  Returns when CMD has ended, or at
 * once when there is nothing to watch or no pidfd. */
static void watch_until_exit(pid_t pid, int fd, int (*on_hangup)(void *ctx),
			     void *ctx)
{
	int pidfd;

	if (fd < 0)
		return;
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return;
	while (fd >= 0) {
		struct pollfd p[2] = { { .fd = pidfd, .events = POLLIN },
				       { .fd = fd, .events = POLLIN } };

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents)
			break;
		if (p[1].revents)
			fd = on_hangup(ctx);
	}
	close(pidfd);
}

int fe_run_wait(struct fe_job *job, int watch_fd,
		int (*on_hangup)(void *ctx), void *ctx)
{
	sigset_t fwd, mask;
	siginfo_t si;
	int st;

	watch_until_exit(job->pid, watch_fd, on_hangup, ctx);

	/* Wait without reaping first: while CMD is a zombie its pid and
	 * group cannot be reused, so forwarding stays safe until we stop
	 * it below. */
	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)job->pid, &si, WEXITED | WNOWAIT) == 0)
			break;
		if (errno != EINTR)
			die_errno("waitid");
	}
	fwd_set(&fwd);
	sigprocmask(SIG_BLOCK, &fwd, &mask);
	fwd_target = 0;
	while (waitpid(job->pid, &st, 0) < 0)
		if (errno != EINTR)
			die_errno("waitpid");
	/* The handlers stay, forwarding nowhere: a signal meant for CMD that
	 * arrives as it ends must not kill us before DETACH, or the daemon
	 * would take it for our death and kill a pid that may be reused. */
	sigprocmask(SIG_SETMASK, &mask, NULL);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

void fe_run_kill(struct fe_job *job)
{
	fwd_target = 0;
	kill(job->pgid ? -job->pgid : job->pid, SIGKILL);
	while (waitpid(job->pid, NULL, 0) < 0 && errno == EINTR)
		;
}
