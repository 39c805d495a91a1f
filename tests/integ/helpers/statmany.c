/*
 * statmany: one long-lived process that stats many files, for the shared
 * table's read path.
 *   statmany N PATH...     lstat every PATH N times; prints the counts of
 *                          "uid:gid" of the last round, one "COUNT uid:gid"
 *                          line per owner, in order of first appearance
 *   statmany same N PATH...  lstat every PATH N times; prints "ok" when
 *                          every result had uid == gid, else the first
 *                          that did not
 *   statmany wait PATH...  the same once and "--", then reads a line from
 *                          stdin (another process changes things
 *                          meanwhile), then the same again
 */
#include "helper.h"

#include <stdint.h>

#define OWNERS 16

static int round_of(int n, char **paths)
{
	struct {
		unsigned long uid, gid, count;
	} own[OWNERS];
	int nown = 0;

	for (int i = 0; i < n; i++) {
		struct stat st;
		int k;

		if (lstat(paths[i], &st) != 0)
			return err_out(errno);
		for (k = 0; k < nown; k++)
			if (own[k].uid == st.st_uid && own[k].gid == st.st_gid)
				break;
		if (k == nown) {
			if (nown == OWNERS)
				continue;
			own[k].uid = st.st_uid;
			own[k].gid = st.st_gid;
			own[k].count = 0;
			nown++;
		}
		own[k].count++;
	}
	for (int k = 0; k < nown; k++)
		printf("%lu %lu:%lu\n", own[k].count, own[k].uid, own[k].gid);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	char line[64];
	long n;

	if (argc < 3)
		return usage("statmany N|wait PATH...");
	if (!strcmp(argv[1], "same") && argc > 3) {
		n = num(argv[2]);
		for (long r = 0; r < n; r++)
			for (int i = 3; i < argc; i++) {
				struct stat st;

				if (lstat(argv[i], &st) != 0)
					return err_out(errno);
				if (st.st_uid != st.st_gid) {
					printf("BAD %s %lu:%lu\n", argv[i],
					       (unsigned long)st.st_uid,
					       (unsigned long)st.st_gid);
					return 1;
				}
			}
		printf("ok\n");
		return 0;
	}
	if (!strcmp(argv[1], "wait")) {
		if (round_of(argc - 2, argv + 2))
			return 1;
		printf("--\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 2;
		return round_of(argc - 2, argv + 2);
	}
	n = num(argv[1]);
	for (long r = 1; r < n; r++) {
		struct stat st;

		for (int i = 2; i < argc; i++)
			if (lstat(argv[i], &st) != 0)
				return err_out(errno);
	}
	return round_of(argc - 2, argv + 2);
}
