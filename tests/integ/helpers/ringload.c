/*
 * ringload: a stream of changes, as a build's or an archiver's, for the
 * tests of the change rings (fakeenv/ring.h).
 *   ringload DIR N ROUNDS [closeall|slow]
 * makes DIR/f0 .. DIR/f(N-1) if missing, then ROUNDS times lchowns every
 * one to (1000 + round):(2000 + round), printing "round R" (flushed)
 * after each; closeall: then closes every fd above 2 (close_range), the
 * shim's socket with them; slow: then sleeps 50 ms.  Last it lstats every
 * file and prints "checks N bad B": B files not showing the last round's
 * owner.
 *   ringload DIR N afterkill MARKER
 * rounds of lchowns of DIR/f0 .. f(N-1), without a pause, until MARKER
 * exists (the test kills the daemon, then makes it), printing "round R"
 * after each; then, 20 ms later, lchowns DIR/g0 .. g99 each to its own
 * owner and prints "after checks 100 bad B": B of them not showing it.
 * A failed call prints "ERR <name> at <file>" and exits 1.
 */
#include "helper.h"

#include <fcntl.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

static int fail(const char *path)
{
	int e = errno;

	printf("ERR %s at %s\n", strerrorname_np(e) ? strerrorname_np(e) : "?",
	       path);
	return 1;
}

/* DIR/f<i>, or DIR/g<i>, exists: 0, or the exit status. */
static int make(const char *dir, char kind, long i)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%c%ld", dir, kind, i);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return fail(path);
	close(fd);
	return 0;
}

/* The changes right after the daemon died: see the head comment. */
static int afterkill(const char *dir, long n, const char *marker)
{
	const struct timespec pause = { 0, 20 * 1000 * 1000 };
	char path[PATH_MAX];
	long bad = 0;

	for (long i = 0; i < 100; i++)
		if (make(dir, 'g', i))
			return 1;
	for (long r = 1; r < 1000000 && access(marker, F_OK) < 0; r++) {
		for (long i = 0; i < n; i++) {
			snprintf(path, sizeof(path), "%s/f%ld", dir, i);
			if (lchown(path, 1000 + r % 1000, 2000) < 0)
				return fail(path);
		}
		printf("round %ld\n", r);
		fflush(stdout);
	}
	nanosleep(&pause, NULL);
	for (long i = 0; i < 100; i++) {
		snprintf(path, sizeof(path), "%s/g%ld", dir, i);
		if (lchown(path, 5000 + i, 6000 + i) < 0)
			return fail(path);
	}
	for (long i = 0; i < 100; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/g%ld", dir, i);
		if (lstat(path, &st) < 0)
			return fail(path);
		bad += st.st_uid != (uid_t)(5000 + i) ||
		       st.st_gid != (gid_t)(6000 + i);
	}
	printf("after checks 100 bad %ld\n", bad);
	return 0;
}

int main(int argc, char **argv)
{
	const struct timespec pause = { 0, 50 * 1000 * 1000 };
	const char *mode = argc > 4 ? argv[4] : "";
	char path[PATH_MAX];
	long n, rounds, bad = 0;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: ringload DIR N ROUNDS [closeall|slow]\n"
				"       ringload DIR N afterkill MARKER\n");
		return 2;
	}
	n = num(argv[2]);
	for (long i = 0; i < n; i++)
		if (make(argv[1], 'f', i))
			return 1;
	if (!strcmp(argv[3], "afterkill"))
		return argc == 5 ? afterkill(argv[1], n, argv[4]) : 2;
	rounds = num(argv[3]);
	for (long r = 1; r <= rounds; r++) {
		for (long i = 0; i < n; i++) {
			snprintf(path, sizeof(path), "%s/f%ld", argv[1], i);
			if (lchown(path, 1000 + r, 2000 + r) < 0)
				return fail(path);
		}
		printf("round %ld\n", r);
		fflush(stdout);
		if (!strcmp(mode, "closeall"))
			close_range(3, ~0U, 0);
		else if (!strcmp(mode, "slow"))
			nanosleep(&pause, NULL);
	}
	for (long i = 0; i < n; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/f%ld", argv[1], i);
		if (lstat(path, &st) < 0)
			return fail(path);
		if (st.st_uid != (uid_t)(1000 + rounds) ||
		    st.st_gid != (gid_t)(2000 + rounds))
			bad++;
	}
	printf("checks %ld bad %ld\n", n, bad);
	return 0;
}
