/*
 * mp: P processes at once in a tree made by mktree; process k takes the
 * leaf directories k, k + P, k + 2P, ... (N / P files), lchowns each of
 * its files to its own owner, UID + k * STEP : GID + k * STEP, then lstats
 * each and checks that lstat reports that owner.  In a session STEP is 1:
 * every process gives its files away to an owner no other one uses, so
 * that each lchown changes what the tool must record.  Natively the user
 * cannot give files away: UID:GID are his own ids and STEP 0, the same
 * calls, which succeed and change nothing.  The tree is made outside the
 * timing, so that only lchown and lstat are measured.  All start together
 * (a pipe is the gate).  With "each" every lchown is followed at once by
 * the lstat of the same file (a program reading back its own change),
 * instead of all the lchowns, then all the lstats.
 *
 *   mp P N TREE [UID GID STEP [each]]
 *
 * N: files in TREE (mktree TREE N), a multiple of 100 * P.  UID GID STEP
 * default to getuid() getgid() 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* mktree's layout: TREE/dM/dL/fF, 100 files a leaf, 32 leaves a middle. */
#define PER_LEAF 100
#define PER_MID 32

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void file_path(char *buf, size_t size, const char *tree, long leaf,
		      int f)
{
	snprintf(buf, size, "%s/d%ld/d%ld/f%d", tree, leaf / PER_MID,
		 leaf % PER_MID, f);
}

static int do_chown(const char *path, uid_t uid, gid_t gid)
{
	if (lchown(path, uid, gid) != 0) {
		perror(path);
		return 1;
	}
	return 0;
}

static int do_check(const char *path, uid_t uid, gid_t gid)
{
	struct stat st;

	if (lstat(path, &st) != 0) {
		perror(path);
		return 1;
	}
	if (st.st_uid != uid || st.st_gid != gid) {
		fprintf(stderr, "%s: owner %u:%u, expected %u:%u\n", path,
			(unsigned)st.st_uid, (unsigned)st.st_gid,
			(unsigned)uid, (unsigned)gid);
		return 1;
	}
	return 0;
}

static int child(int gate, int k, int np, long leaves, const char *tree,
		 uid_t uid, gid_t gid, int each)
{
	char path[4096], c;

	if (read(gate, &c, 1) < 0)
		return 1;
	for (long leaf = k; leaf < leaves; leaf += np)
		for (int f = 0; f < PER_LEAF; f++) {
			file_path(path, sizeof(path), tree, leaf, f);
			if (do_chown(path, uid, gid) ||
			    (each && do_check(path, uid, gid)))
				return 1;
		}
	if (each)
		return 0;
	for (long leaf = k; leaf < leaves; leaf += np)
		for (int f = 0; f < PER_LEAF; f++) {
			file_path(path, sizeof(path), tree, leaf, f);
			if (do_check(path, uid, gid))
				return 1;
		}
	return 0;
}

int main(int argc, char **argv)
{
	int np, gate[2], st, bad = 0, each = 0;
	long n, step = 0;
	uid_t uid = getuid();
	gid_t gid = getgid();
	double t0;

	if (argc != 4 && argc != 7 && argc != 8) {
		fprintf(stderr, "usage: mp P N TREE [UID GID STEP [each]]\n");
		return 2;
	}
	if (argc == 8) {
		if (strcmp(argv[7], "each") != 0) {
			fprintf(stderr, "mp: '%s': not 'each'\n", argv[7]);
			return 2;
		}
		each = 1;
	}
	np = atoi(argv[1]);
	n = atol(argv[2]);
	if (argc >= 7) {
		uid = (uid_t)strtoul(argv[4], NULL, 10);
		gid = (gid_t)strtoul(argv[5], NULL, 10);
		step = atol(argv[6]);
	}
	if (np < 1 || n < 1 || n % (PER_LEAF * np) != 0) {
		fprintf(stderr, "mp: N (%ld) must be a multiple of %d * P\n",
			n, PER_LEAF);
		return 2;
	}
	if (pipe(gate) != 0) {
		perror("pipe");
		return 1;
	}
	for (int k = 0; k < np; k++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			close(gate[1]);
			_exit(child(gate[0], k, np, n / PER_LEAF, argv[3],
				    uid + (uid_t)(k * step),
				    gid + (gid_t)(k * step), each));
		}
	}
	close(gate[0]);
	t0 = now();
	close(gate[1]); /* every child's read returns 0: go */
	while (wait(&st) > 0)
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad = 1;
	if (bad) {
		fprintf(stderr, "mp: a child failed\n");
		return 1;
	}
	printf("mp: %d x %ld lchown, %s lstat, in %.6f s\n", np, n / np,
	       each ? "each with its" : "then", now() - t0);
	return 0;
}
