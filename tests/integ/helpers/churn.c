/*
 * churn: many processes creating, chowning, renaming, linking and
 * unlinking files in one directory at once; afterwards every file still
 * open must show the last owner its creator gave it.
 *   churn DIR NPROC SECONDS [SEED]
 *                  NPROC workers in DIR for SECONDS (default 5).  Each
 *                  creates files (O_CREAT|O_EXCL at a free name of 256
 *                  shared ones), keeps up to 64 of them open (closing the
 *                  oldest) and fchowns them to owners unique per worker
 *                  and chown; all of them rename, link and unlink random
 *                  names of the 256, other workers' files included.  A
 *                  new file must show 0:0 at once; a held file, when it
 *                  is closed and at the end, its last fchown (0:0 if
 *                  none).  Prints each mismatch ("worker W file GEN: uid
 *                  U:G want U:G (links N)", at most 10 a worker), then one
 *                  line "totals checks N ... mismatches N (named N) ...",
 *                  named: those of files that still had a name.
 *                  Exits 0 with no mismatch, no error and some checks;
 *                  1 otherwise; 2 on bad usage or when the watchdog
 *                  (SECONDS + 60) fires.
 *   churn --fstat FD   prints "uid gid" of fstat of the inherited FD
 * The owner bookkeeping uses fchown only: a chown by name could hit
 * another worker's file that a third one had just renamed to that name,
 * and that worker would then see a change it did not make.  So every
 * mismatch is one that the kernel itself would never show: run natively
 * as root, where the chowns are real, a run prints none.
 */
#include "helper.h"

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NAMES	256    /* the shared namespace: n000 .. n255 */
#define HELD	64     /* files a worker keeps open at once */
#define MAXPROC 64     /* workers at most (owners stay below 100,000) */
#define PRINTED 10     /* mismatch lines printed per worker, at most */
#define GID_OFF 100000 /* gid = uid + GID_OFF: a swapped pair shows */

/* One worker's counts, in memory shared with the parent. */
struct counts {
	uint64_t creates;    /* files made */
	uint64_t chowns;     /* successful fchowns */
	uint64_t renames;    /* successful renames */
	uint64_t links;	     /* successful links */
	uint64_t unlinks;    /* successful unlinks */
	uint64_t new_checks; /* new files fstat'ed before any chown */
	uint64_t new_bad;    /* of which not 0:0 */
	uint64_t checks;     /* held files checked (at close, at the end) */
	uint64_t bad;	     /* of which not the last fchown */
	uint64_t bad_named;  /* of those, files with a name left */
	uint64_t errors;     /* calls failing in ways the test excludes */
	uint64_t done;	     /* 1 once the worker has finished its checks */
};

/* A file a worker holds open. */
struct held {
	int fd;	      /* open on the file since its creation */
	unsigned gen; /* the worker's creation number of the file */
	uid_t uid;    /* the last fchown's owner (0:0 before any) */
	gid_t gid;
};

static pid_t pids[MAXPROC];
static int npids;

/* The watchdog: a hung run ends, and says so. */
static void on_alarm(int sig)
{
	static const char msg[] = "churn: watchdog: run took too long\n";
	int i;

	(void)sig;
	for (i = 0; i < npids; i++)
		kill(pids[i], SIGKILL);
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(2);
}

static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void rand_name(uint64_t *s, char buf[8])
{
	snprintf(buf, 8, "n%03u", (unsigned)(next_rand(s) % NAMES));
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One line, in one write: workers share the output. */
static void say(const char *buf, int n)
{
	if (n > 0)
		(void)!write(1, buf, (size_t)n);
}

static void failed(struct counts *c, int w, const char *what, int e)
{
	char buf[160];
	const char *name = strerrorname_np(e);

	if (c->errors++ < PRINTED)
		say(buf, snprintf(buf, sizeof(buf), "worker %d: %s: %s\n", w,
				  what, name ? name : "?"));
}

/* fstat of a held file against its last fchown. */
static void check(struct counts *c, int w, const struct held *h)
{
	struct stat st;
	char buf[160];

	if (fstat(h->fd, &st) != 0) {
		failed(c, w, "fstat of a held file", errno);
		return;
	}
	c->checks++;
	if (st.st_uid == h->uid && st.st_gid == h->gid)
		return;
	/* A file with a link now had one all along (nothing links an
	 * unlinked file back here): its record went while it was named. */
	if (st.st_nlink > 0)
		c->bad_named++;
	if (c->bad++ < PRINTED)
		say(buf, snprintf(buf, sizeof(buf),
				  "worker %d file %u: uid %lu:%lu want %lu:%lu "
				  "(links %lu)\n",
				  w, h->gen, (unsigned long)st.st_uid,
				  (unsigned long)st.st_gid,
				  (unsigned long)h->uid, (unsigned long)h->gid,
				  (unsigned long)st.st_nlink));
}

/* Make a file at a free name; it joins the held ones (the oldest, when
 * there are HELD, checked and closed first). */
static void create(struct counts *c, int w, uint64_t *s, struct held *hs,
		   int *nheld, int *oldest, unsigned *gen)
{
	struct held *h;
	struct stat st;
	char name[8], buf[160];
	int fd = -1, i;

	for (i = 0; i < 4 && fd < 0; i++) {
		rand_name(s, name);
		fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST) {
			failed(c, w, "open O_CREAT|O_EXCL", errno);
			return;
		}
	}
	if (fd < 0)
		return; /* every name tried was taken */
	c->creates++;
	if (fstat(fd, &st) != 0) {
		failed(c, w, "fstat of a new file", errno);
	} else {
		c->new_checks++;
		if ((st.st_uid != 0 || st.st_gid != 0) &&
		    c->new_bad++ < PRINTED)
			say(buf, snprintf(buf, sizeof(buf),
					  "worker %d file %u: new file uid "
					  "%lu:%lu want 0:0\n",
					  w, *gen, (unsigned long)st.st_uid,
					  (unsigned long)st.st_gid));
	}
	if (*nheld == HELD) {
		h = &hs[*oldest];
		check(c, w, h);
		close(h->fd);
		*oldest = (*oldest + 1) % HELD;
		(*nheld)--;
	}
	h = &hs[(*oldest + *nheld) % HELD];
	h->fd = fd;
	h->gen = (*gen)++;
	h->uid = 0;
	h->gid = 0;
	(*nheld)++;
}

static int worker(int w, double seconds, uint64_t seed, struct counts *c)
{
	struct held hs[HELD];
	uint64_t s = seed * MAXPROC + (uint64_t)w;
	int nheld = 0, oldest = 0, i;
	unsigned gen = 0, nchown = 0;
	double end = now() + seconds;
	char a[8], b[8];

	while (now() < end) {
		unsigned op = (unsigned)(next_rand(&s) % 100);

		if (op < 25) {
			create(c, w, &s, hs, &nheld, &oldest, &gen);
		} else if (op < 50) {
			struct held *h;
			uid_t u;

			if (nheld == 0)
				continue;
			h = &hs[(oldest + next_rand(&s) % nheld) % HELD];
			u = (uid_t)(1000 + w * 1000 + ++nchown % 1000);
			if (fchown(h->fd, u, u + GID_OFF) != 0) {
				failed(c, w, "fchown", errno);
				continue;
			}
			h->uid = u;
			h->gid = u + GID_OFF;
			c->chowns++;
		} else if (op < 70) {
			rand_name(&s, a);
			rand_name(&s, b);
			if (rename(a, b) == 0)
				c->renames++;
			else if (errno != ENOENT)
				failed(c, w, "rename", errno);
		} else if (op < 80) {
			rand_name(&s, a);
			rand_name(&s, b);
			if (link(a, b) == 0)
				c->links++;
			else if (errno != ENOENT && errno != EEXIST)
				failed(c, w, "link", errno);
		} else {
			rand_name(&s, a);
			if (unlink(a) == 0)
				c->unlinks++;
			else if (errno != ENOENT)
				failed(c, w, "unlink", errno);
		}
	}
	for (i = 0; i < nheld; i++)
		check(c, w, &hs[(oldest + i) % HELD]);
	c->done = 1;
	return 0;
}

static int fstat_fd(const char *arg)
{
	struct stat st;

	if (fstat((int)num(arg), &st) != 0)
		return err_out(errno);
	printf("%lu %lu\n", (unsigned long)st.st_uid, (unsigned long)st.st_gid);
	return 0;
}

/* Sums the workers' counts and prints the totals line; 1 when they say
 * the run failed, else 0. */
static int report(const struct counts *cs, long nproc, uint64_t seed)
{
	struct counts t;

	memset(&t, 0, sizeof(t));
	for (long i = 0; i < nproc; i++) {
		t.creates += cs[i].creates;
		t.chowns += cs[i].chowns;
		t.renames += cs[i].renames;
		t.links += cs[i].links;
		t.unlinks += cs[i].unlinks;
		t.new_checks += cs[i].new_checks;
		t.new_bad += cs[i].new_bad;
		t.checks += cs[i].checks;
		t.bad += cs[i].bad;
		t.bad_named += cs[i].bad_named;
		t.errors += cs[i].errors;
	}
	printf("totals checks %llu chowns %llu creates %llu renames %llu "
	       "links %llu unlinks %llu new-checks %llu new-mismatches %llu "
	       "mismatches %llu (named %llu) errors %llu seed %llu\n",
	       (unsigned long long)t.checks, (unsigned long long)t.chowns,
	       (unsigned long long)t.creates, (unsigned long long)t.renames,
	       (unsigned long long)t.links, (unsigned long long)t.unlinks,
	       (unsigned long long)t.new_checks, (unsigned long long)t.new_bad,
	       (unsigned long long)t.bad, (unsigned long long)t.bad_named,
	       (unsigned long long)t.errors, (unsigned long long)seed);
	if (t.bad || t.new_bad || t.errors || t.checks == 0 ||
	    t.new_checks == 0)
		return 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct counts *cs;
	long nproc, seconds = 5;
	uint64_t seed;
	int go[2], i, st, rc = 0;
	char x;

	if (argc == 3 && !strcmp(argv[1], "--fstat"))
		return fstat_fd(argv[2]);
	if (argc < 3 || argc > 5)
		return usage(
		    "churn DIR NPROC [SECONDS [SEED]] | churn --fstat FD");
	nproc = num(argv[2]);
	if (argc > 3)
		seconds = num(argv[3]);
	seed = argc > 4 ? (uint64_t)num(argv[4])
			: (uint64_t)time(NULL) ^ (uint64_t)getpid() << 16;
	if (nproc < 1 || nproc > MAXPROC || seconds < 1 || seconds > 3600)
		return usage("churn: NPROC 1..64, SECONDS 1..3600");
	if (chdir(argv[1]) != 0) {
		perror(argv[1]);
		return 2;
	}
	cs = mmap(NULL, sizeof(*cs) * (size_t)nproc, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (cs == MAP_FAILED || pipe(go) != 0) {
		perror("churn: setup");
		return 2;
	}
	signal(SIGALRM, on_alarm);
	alarm((unsigned)seconds + 60);
	fflush(stdout);
	for (i = 0; i < nproc; i++) {
		pid_t p = fork();

		if (p < 0) {
			perror("churn: fork");
			on_alarm(0);
		}
		if (p == 0) {
			signal(SIGALRM, SIG_DFL);
			close(go[1]);
			/* All start together: EOF once the parent closes. */
			while (read(go[0], &x, 1) < 0 && errno == EINTR)
				;
			_exit(worker(i, (double)seconds, seed, &cs[i]));
		}
		pids[npids++] = p;
	}
	close(go[0]);
	close(go[1]);
	for (i = 0; i < npids; i++) {
		while (waitpid(pids[i], &st, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !cs[i].done) {
			printf("worker %d: ended badly (status 0x%x)\n", i, st);
			rc = 1;
		}
	}
	if (report(cs, nproc, seed))
		rc = 1;
	return rc;
}
