/*
 * own: the chown family, one subcommand per entry point.
 *   own chown|lchown|fchown|fchownat|fchownat-nofollow|fchownat-empty PATH U G
 *   own many U G ROUNDS FILE...   chown+stat each FILE ROUNDS times, verify
 *   own loop SECONDS U G FILE     chown+stat FILE for SECONDS, verify
 * U or G of -1 leaves that field unchanged.  Prints "ok" on success.
 */
#include "helper.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

/* chown then stat; 0 when the stat shows u:g, else prints why. */
static int chown_verify(const char *path, uid_t u, gid_t g)
{
	struct stat st;

	if (chown(path, u, g) != 0) {
		printf("chown %s: ", path);
		return err_out(errno);
	}
	if (stat(path, &st) != 0) {
		printf("stat %s: ", path);
		return err_out(errno);
	}
	if (st.st_uid != u || st.st_gid != g) {
		printf("mismatch %s: %lu:%lu, want %lu:%lu\n", path,
		       (unsigned long)st.st_uid, (unsigned long)st.st_gid,
		       (unsigned long)u, (unsigned long)g);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *call;
	int r, fd;

	if (argc < 2)
		return usage("own CALL ARGS");
	call = argv[1];
	if (!strcmp(call, "many")) {
		long rounds;

		if (argc < 5)
			return usage("own many U G ROUNDS FILE...");
		rounds = num(argv[4]);
		for (long i = 0; i < rounds; i++)
			for (int k = 5; k < argc; k++)
				if (chown_verify(argv[k], num(argv[2]),
						 num(argv[3])))
					return 1;
		printf("ok\n");
		return 0;
	}
	if (!strcmp(call, "loop")) {
		time_t end;
		long n = 0;

		if (argc != 6)
			return usage("own loop SECONDS U G FILE");
		end = time(NULL) + num(argv[2]);
		while (time(NULL) < end) {
			if (chown_verify(argv[5], num(argv[3]), num(argv[4])))
				return 1;
			n++;
			usleep(10000);
		}
		printf("ok %ld\n", n);
		return 0;
	}
	if (argc != 5)
		return usage("own CALL PATH U G");
	uid_t u = (uid_t)num(argv[3]);
	gid_t g = (gid_t)num(argv[4]);
	const char *path = argv[2];

	if (!strcmp(call, "chown")) {
		r = chown(path, u, g);
	} else if (!strcmp(call, "lchown")) {
		r = lchown(path, u, g);
	} else if (!strcmp(call, "fchown")) {
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			return err_out(errno);
		r = fchown(fd, u, g);
	} else if (!strcmp(call, "fchownat")) {
		r = fchownat(AT_FDCWD, path, u, g, 0);
	} else if (!strcmp(call, "fchownat-nofollow")) {
		r = fchownat(AT_FDCWD, path, u, g, AT_SYMLINK_NOFOLLOW);
	} else if (!strcmp(call, "fchownat-empty")) {
		fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return err_out(errno);
		r = fchownat(fd, "", u, g, AT_EMPTY_PATH);
	} else {
		return usage("own: unknown CALL");
	}
	if (r != 0)
		return err_out(errno);
	printf("ok\n");
	return 0;
}
