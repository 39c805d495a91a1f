/*
 * sigloop: chown and stat of one file in a loop while an interval timer
 * sends SIGALRM every 200 microseconds, for the seccomp tests' signal
 * case: a signal that lands while a call waits on the filter's
 * supervisor must be handled as the kernel handles it, the call restarted
 * (SA_RESTART) or failed with EINTR (without), never answered wrongly.
 *   sigloop restart|intr SECONDS U G FILE
 * restart: any error fails.  intr: EINTR is retried, any other fails.
 * Prints "ok" and "signals N" (how many handlers ran, which must be many
 * for the case to mean anything).
 */
#include "helper.h"

#include <signal.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t hits;

static void on_alarm(int sig)
{
	(void)sig;
	hits++;
}

/* The call, retried on EINTR when allowed; 0, or the errno. */
static int call(int allow_eintr, int (*f)(void *), void *arg)
{
	for (;;) {
		if (f(arg) == 0)
			return 0;
		if (errno != EINTR || !allow_eintr)
			return errno;
	}
}

struct job {
	const char *path;
	uid_t u;
	gid_t g;
	struct stat st;
};

static int do_chown(void *p)
{
	struct job *j = p;

	return chown(j->path, j->u, j->g);
}

static int do_stat(void *p)
{
	struct job *j = p;

	return stat(j->path, &j->st);
}

int main(int argc, char **argv)
{
	struct sigaction sa = {0};
	struct itimerval it = {{0, 200}, {0, 200}};
	struct job j;
	time_t end;
	int intr, e;
	long n = 0;

	if (argc != 6 || (strcmp(argv[1], "restart") && strcmp(argv[1], "intr")))
		return usage("sigloop restart|intr SECONDS U G FILE");
	intr = !strcmp(argv[1], "intr");
	j.path = argv[5];
	sa.sa_handler = on_alarm;
	sa.sa_flags = intr ? 0 : SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) != 0 ||
	    setitimer(ITIMER_REAL, &it, NULL) != 0)
		return err_out(errno);
	end = time(NULL) + num(argv[2]);
	while (time(NULL) < end) {
		/* Alternate owners, so that each round changes something. */
		j.u = (uid_t)(num(argv[3]) + (n & 1));
		j.g = (gid_t)(num(argv[4]) + (n & 1));
		if ((e = call(intr, do_chown, &j)) || (e = call(intr, do_stat, &j))) {
			printf("round %ld: ", n);
			return err_out(e);
		}
		if (j.st.st_uid != j.u || j.st.st_gid != j.g) {
			printf("round %ld: mismatch %lu:%lu, want %lu:%lu\n", n,
			       (unsigned long)j.st.st_uid,
			       (unsigned long)j.st.st_gid, (unsigned long)j.u,
			       (unsigned long)j.g);
			return 1;
		}
		n++;
	}
	printf("ok\nsignals %ld\n", (long)hits);
	return 0;
}
