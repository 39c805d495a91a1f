/*
 * big: the limits of the machine, for t-limits.
 *   big forkchown N DIR   N children, each creates DIR/f.K and chowns it
 *                         to K+1:K+2, then holds on (its connection with
 *                         it) until all N have, then chowns it to K+3:K+4
 *                         and checks that with stat; prints "ok N" when
 *                         every child did, else "ERR ..."
 *   big smallstack N keep|clear PROG ARGS...
 *                         execve PROG from a thread with a 128 KiB stack,
 *                         with N extra entries V0=0 ... before environ
 *                         (keep) or alone (clear); prints nothing on
 *                         success (PROG does)
 *   big envfirst NAME SIZE PROG ARGS...
 *                         execve PROG with NAME=<SIZE ':'> first, then
 *                         environ (NAME=... of environ dropped)
 *   big execl PROG        execl(PROG, PROG, "argc", "A" 300 times, NULL):
 *                         past the wrapper's on-stack argument list
 *   big vforkleak N PROG  N times vfork, the child execve PROG with 1,000
 *                         entries V0=x ... and no LD_PRELOAD (a repaired
 *                         environment too big for the stack), or every
 *                         other time execl PROG with 300 arguments;
 *                         prints "ok" when this process grew by less than
 *                         a tenth of what the N lists take, else how much
 *   big argc ...          "uid euid argc"
 *   big ids               "uid euid envcount"
 */
#include "helper.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static size_t env_count(void)
{
	size_t n = 0;

	while (environ[n])
		n++;
	return n;
}

/* Each child reports on its pipe: 0 for success, an errno byte else. */
/* Child k of forkchown: creates and chowns f.k, says how that went on
 * done, waits for go, then chowns and stats it once more. */
static _Noreturn void forkchown_child(long k, const char *dir,
				      const int done[2], const int go[2])
{
	char path[4096], c;
	unsigned char e = 0;
	struct stat st;
	int fd;

	close(done[0]);
	close(go[1]);
	snprintf(path, sizeof(path), "%s/f.%ld", dir, k);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || close(fd) < 0 ||
	    chown(path, (uid_t)(k + 1), (gid_t)(k + 2)) < 0)
		e = (unsigned char)errno;
	if (write(done[1], &e, 1) != 1)
		_exit(1);
	/* Hold on to the connection until every child has made its call:
	 * then n are live at once. */
	while (read(go[0], &c, 1) < 0 && errno == EINTR)
		;
	/* Once more, on a connection the daemon may have closed meanwhile
	 * to make room. */
	if (chown(path, (uid_t)(k + 3), (gid_t)(k + 4)) < 0 ||
	    stat(path, &st) < 0)
		_exit(2);
	if (st.st_uid != (uid_t)(k + 3) || st.st_gid != (gid_t)(k + 4))
		_exit(3);
	_exit(0);
}

static int forkchown(long n, const char *dir)
{
	int done[2], go[2];
	int first_err = 0;
	long got = 0, bad = 0;

	if (pipe(done) < 0 || pipe(go) < 0)
		return err_out(errno);
	for (long k = 0; k < n; k++) {
		pid_t pid = fork();

		if (pid < 0) {
			first_err = errno;
			n = k;
			break;
		}
		if (pid == 0)
			forkchown_child(k, dir, done, go);
	}
	close(done[1]);
	close(go[0]);
	while (got < n) {
		unsigned char e;
		ssize_t r = read(done[0], &e, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got++;
		if (e && !first_err)
			first_err = e;
	}
	close(go[1]);
	for (;;) {
		int status;
		pid_t w = wait(&status);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			break;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	if (first_err)
		return err_out(first_err);
	if (got != n)
		return err_out(EPIPE);
	if (bad) {
		printf("ERR %ld children failed their second chown\n", bad);
		return 1;
	}
	printf("ok %ld\n", got);
	return 0;
}

struct exec_args {
	char **argv;
	char **envp;
	int err;
};

static void *exec_thread(void *p)
{
	struct exec_args *a = p;

	execve(a->argv[0], a->argv, a->envp);
	a->err = errno;
	return NULL;
}

static int smallstack(long n, bool keep, char **argv)
{
	size_t e = keep ? env_count() : 0, k = 0;
	char **envp = calloc((size_t)n + e + 1, sizeof(char *));
	struct exec_args a = { .argv = argv };
	pthread_attr_t attr;
	pthread_t t;

	if (!envp)
		return err_out(ENOMEM);
	for (long i = 0; i < n; i++) {
		char buf[48];

		snprintf(buf, sizeof(buf), "V%ld=%ld", i, i);
		envp[k++] = strdup(buf);
	}
	for (size_t i = 0; i < e; i++)
		envp[k++] = environ[i];
	envp[k] = NULL;
	a.envp = envp;
	if (pthread_attr_init(&attr) || pthread_attr_setstacksize(&attr, 128 * 1024) ||
	    pthread_create(&t, &attr, exec_thread, &a) || pthread_join(t, NULL))
		return err_out(EAGAIN);
	return err_out(a.err);
}

static int envfirst(const char *name, long size, char **argv)
{
	size_t e = env_count(), len = strlen(name), k = 0;
	char **envp = calloc(e + 2, sizeof(char *));
	char *v = malloc(len + 1 + (size_t)size + 1);

	if (!envp || !v)
		return err_out(ENOMEM);
	memcpy(v, name, len);
	v[len] = '=';
	memset(v + len + 1, ':', (size_t)size);
	v[len + 1 + size] = '\0';
	envp[k++] = v;
	for (size_t i = 0; i < e; i++)
		if (strncmp(environ[i], name, len) || environ[i][len] != '=')
			envp[k++] = environ[i];
	envp[k] = NULL;
	execve(argv[0], argv, envp);
	return err_out(errno);
}

#define A10 "A", "A", "A", "A", "A", "A", "A", "A", "A", "A"
#define A100 A10, A10, A10, A10, A10, A10, A10, A10, A10, A10

static int execl300(const char *prog)
{
	execl(prog, prog, "argc", A100, A100, A100, (char *)NULL);
	return err_out(errno);
}

/* This process's VmData in kB, or -1. */
static long vm_data_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmData: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

#define LEAK_ENV 1000

static int vforkleak(long n, const char *prog)
{
	static char vals[LEAK_ENV][16];
	static char *envp[LEAK_ENV + 1];
	char *argv[] = { (char *)prog, NULL };
	long before, grew, each = (LEAK_ENV + 300) / 2 * sizeof(char *) / 1024;

	for (int i = 0; i < LEAK_ENV; i++) {
		snprintf(vals[i], sizeof(vals[i]), "V%d=x", i);
		envp[i] = vals[i];
	}
	before = vm_data_kb();
	for (long k = 0; k < n; k++) {
		int ws;
		pid_t pid = vfork();

		if (pid == 0) {
			if (k % 2)
				execl(prog, prog, A100, A100, A100, (char *)NULL);
			else
				execve(prog, argv, envp);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &ws, 0) != pid || ws != 0)
			return printf("ERR child %ld\n", k), 1;
	}
	grew = vm_data_kb() - before;
	if (before < 0 || grew >= n * each / 10)
		return printf("grew by %ld kB in %ld execs\n", grew, n), 1;
	printf("ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *u = "big forkchown N DIR | smallstack N keep|clear PROG "
			"ARGS... | envfirst NAME SIZE PROG ARGS... | vforkleak N "
			"PROG | execl PROG | argc ... | ids";

	if (argc == 4 && !strcmp(argv[1], "forkchown"))
		return forkchown(num(argv[2]), argv[3]);
	if (argc >= 5 && !strcmp(argv[1], "smallstack"))
		return smallstack(num(argv[2]), !strcmp(argv[3], "keep"),
				  argv + 4);
	if (argc >= 5 && !strcmp(argv[1], "envfirst"))
		return envfirst(argv[2], num(argv[3]), argv + 4);
	if (argc == 4 && !strcmp(argv[1], "vforkleak"))
		return vforkleak(num(argv[2]), argv[3]);
	if (argc == 3 && !strcmp(argv[1], "execl"))
		return execl300(argv[2]);
	if (argc >= 2 && !strcmp(argv[1], "argc")) {
		printf("%u %u %d\n", (unsigned)getuid(), (unsigned)geteuid(),
		       argc);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "ids")) {
		printf("%u %u %zu\n", (unsigned)getuid(), (unsigned)geteuid(),
		       env_count());
		return 0;
	}
	return usage(u);
}
