/*
 * ops: one process, a sequence of operations, so that a test can make a
 * single process live across an event (a daemon killed and restarted):
 *   ops OP ARGS... [, OP ARGS...]...
 *   chown PATH UID GID   lchown, prints nothing (ERR on failure)
 *   stat PATH            lstat, prints "uid:gid"
 *   touch PATH           creates PATH (a marker for the test)
 *   wait PATH            waits (at most 30 s) until PATH exists
 *   create PATH MODE     open O_CREAT|O_EXCL|O_WRONLY with MODE (octal)
 *   fopen PATH           fopen "w"
 *   write PATH           opens PATH (which exists) for writing
 *   mode PATH            lstat, prints "uid:gid mode" (octal, 4 digits)
 *   umask MASK           umask(MASK) (octal); sysumask: by syscall()
 * Stops at the first failure, with status 1.
 */
#include "helper.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int one(char **a)
{
	struct stat st;

	if (!strcmp(a[0], "chown") && a[1] && a[2] && a[3])
		return lchown(a[1], (uid_t)num(a[2]), (gid_t)num(a[3])) ?
			       err_out(errno) : 0;
	if (!strcmp(a[0], "stat") && a[1]) {
		if (lstat(a[1], &st))
			return err_out(errno);
		printf("%lu:%lu\n", (unsigned long)st.st_uid,
		       (unsigned long)st.st_gid);
		return 0;
	}
	if (!strcmp(a[0], "touch") && a[1]) {
		int fd = open(a[1], O_CREAT | O_WRONLY, 0644);

		if (fd < 0)
			return err_out(errno);
		close(fd);
		return 0;
	}
	if (!strcmp(a[0], "create") && a[1] && a[2]) {
		int fd = open(a[1], O_CREAT | O_EXCL | O_WRONLY,
			      (mode_t)strtoul(a[2], NULL, 8));

		if (fd < 0)
			return err_out(errno);
		close(fd);
		return 0;
	}
	if (!strcmp(a[0], "fopen") && a[1]) {
		FILE *f = fopen(a[1], "w");

		if (!f)
			return err_out(errno);
		fclose(f);
		return 0;
	}
	if (!strcmp(a[0], "write") && a[1]) {
		int fd = open(a[1], O_WRONLY);

		if (fd < 0)
			return err_out(errno);
		close(fd);
		return 0;
	}
	if (!strcmp(a[0], "mode") && a[1]) {
		if (lstat(a[1], &st))
			return err_out(errno);
		printf("%lu:%lu %04o\n", (unsigned long)st.st_uid,
		       (unsigned long)st.st_gid,
		       (unsigned int)(st.st_mode & 07777));
		return 0;
	}
	if (!strcmp(a[0], "umask") && a[1]) {
		umask((mode_t)strtoul(a[1], NULL, 8));
		return 0;
	}
	if (!strcmp(a[0], "sysumask") && a[1]) {
		syscall(SYS_umask, (mode_t)strtoul(a[1], NULL, 8));
		return 0;
	}
	if (!strcmp(a[0], "wait") && a[1]) {
		struct timespec ts = { 0, 20000000 };

		for (int i = 0; i < 1500; i++) {
			if (access(a[1], F_OK) == 0)
				return 0;
			nanosleep(&ts, NULL);
		}
		return err_out(ETIMEDOUT);
	}
	fprintf(stderr, "ops: bad operation '%s'\n", a[0]);
	return 2;
}

int main(int argc, char **argv)
{
	int i = 1;

	setvbuf(stdout, NULL, _IONBF, 0);
	while (i < argc) {
		int j = i, r;

		while (j < argc && strcmp(argv[j], ","))
			j++;
		argv[j < argc ? j : argc] = NULL;
		r = one(&argv[i]);
		if (r)
			return r;
		i = j + 1;
	}
	return 0;
}
