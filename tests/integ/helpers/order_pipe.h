/*
 * order's pipe and thread runs: a writer changes DIR/f0..f(N-1) round by
 * round and tells a reader (a process on a pipe, or a thread) which file
 * to read at once.  A header of order.c, included once after the common
 * code: in a file of its own only to keep order.c short.
 */
/* --- pipe, thread ---------------------------------------------------- */

struct pipe_run {
	long n, rounds;
	int *fds;  /* fds[i]: DIR/fi, opened before the fork, or -1 */
	int lines; /* the reader's end of the line pipe */
	int acks;  /* the reader's end of the ack pipe */
};

static void fname(char *buf, size_t n, long i)
{
	snprintf(buf, n, "f%ld", i);
}

static void dname(char *buf, size_t n, long r, long i)
{
	snprintf(buf, n, "dev%ld/d%ld", r, i);
}

/* The owner file i gets in round r: unique per (round, file). */
static uid_t pipe_uid(const struct pipe_run *p, long r, long i)
{
	return (uid_t)(1000 + r * p->n + i);
}

/*
 * How far the writer may run ahead of the reader, in lines: even rounds
 * in lockstep (the reader stats while the change is fresh), odd ones 64
 * ahead (the changes pile up in flight while the reader reads).  At most
 * n: round r+1 never touches a file before its line of round r is read.
 */
static long pipe_window(const struct pipe_run *p, long r)
{
	return r & 1 ? (p->n < 64 ? p->n : 64) : 1;
}

/* Round r of file i: a chown, a chmod in odd rounds, a device node
 * dev<r>/d<i>, XNAME on every third file. */
static void pipe_step(const struct pipe_run *p, long r, long i, struct step *s)
{
	*s = (struct step){.order = (int)((i / 3 + r) % 4),
			   .how = (int)((r + i) % 12),
			   .fd = p->fds[i],
			   .uid = pipe_uid(p, r, i),
			   .chmod = r & 1,
			   .mode = round_mode(r, i),
			   .rdev = makedev(DEV_MAJOR(r), (unsigned)i)};
	fname(s->file, sizeof(s->file), i);
	dname(s->node, sizeof(s->node), r, i);
	if (xattrs && i % 3 == 0)
		snprintf(s->xval, sizeof(s->xval), "%ld %ld", r, i);
}

/* File i's permission bits after rounds 0..r. */
static mode_t pipe_mode_after(const struct pipe_run *p, long r, long i)
{
	mode_t m = 0644;
	struct step s;

	for (long k = 0; k <= r; k++) {
		pipe_step(p, k, i, &s);
		m = mode_step(m, &s);
	}
	return m;
}

/* readdir of dev<r> after its d0..d<i> were made: each says DT_CHR. */
static void pipe_dtypes(long r, long i)
{
	char sub[32], ctx[80];
	struct dirent *de;
	DIR *dp;
	int fd;

	snprintf(sub, sizeof(sub), "dev%ld", r);
	fd = openat(dfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(dp = fdopendir(fd))) {
		error("opendir", sub, errno);
		if (fd >= 0)
			close(fd);
		return;
	}
	snprintf(ctx, sizeof(ctx), "round %ld after d%ld: readdir", r, i);
	while ((de = readdir(dp))) {
		char *end;
		long j;

		if (de->d_name[0] != 'd')
			continue;
		j = strtol(de->d_name + 1, &end, 10);
		/* Files the writer may have made since, in a window. */
		if (*end || j > i || de->d_type == DT_UNKNOWN)
			continue;
		check();
		if (de->d_type != DT_CHR)
			stale("%s %s/%s: d_type %u, want DT_CHR", ctx, sub,
			      de->d_name, de->d_type);
	}
	closedir(dp);
}

/* The line "i r": file i's round r has returned; read it at once. */
static void pipe_read_one(const struct pipe_run *p, long i, long r)
{
	char ctx[64];
	struct step s;

	pipe_step(p, r, i, &s);
	snprintf(ctx, sizeof(ctx), "round %ld (order %d)", r, s.order);
	check_step(&s, (int)((r + i) % 5), pipe_mode_after(p, r, i), ctx, NULL);
	if (i % 97 == 0 || i == p->n - 1)
		pipe_dtypes(r, i);
}

static void *pipe_reader(void *arg)
{
	const struct pipe_run *p = arg;
	long total = p->n * p->rounds, got = 0;
	FILE *in = fdopen(p->lines, "r");
	char line[64];

	if (!in) {
		error("fdopen", "lines", errno);
		return NULL;
	}
	while (got < total && fgets(line, sizeof(line), in)) {
		long i, r;

		if (sscanf(line, "%ld %ld", &i, &r) != 2 || i < 0 ||
		    i >= p->n || r < 0 || r >= p->rounds) {
			error("read", "line", EPROTO);
			break;
		}
		pipe_read_one(p, i, r);
		got++;
		write_byte(p->acks);
	}
	if (got < total)
		error("read", "lines", EPIPE);
	fclose(in);
	close(p->acks);
	return NULL;
}

static void pipe_writer(const struct pipe_run *p, int lines, int acks)
{
	long acked = 0;

	for (long r = 0; r < p->rounds; r++) {
		long w = pipe_window(p, r);

		for (long i = 0; i < p->n; i++) {
			long l = r * p->n + i;

			while (acked < l - w + 1) {
				if (!read_byte(acks)) {
					error("read", "acks", EPIPE);
					return;
				}
				acked++;
			}
			struct step s;

			pipe_step(p, r, i, &s);
			do_step(&s);
			if (dprintf(lines, "%ld %ld\n", i, r) < 0) {
				error("write", "lines", errno);
				return;
			}
		}
	}
	/* Every line read before the files are left to the caller. */
	while (acked < p->n * p->rounds && read_byte(acks))
		acked++;
}

static int cmd_pipe(long n, long rounds, bool thread)
{
	struct pipe_run p = {.n = n, .rounds = rounds};
	int lp[2], ap[2];
	long budget;
	pthread_t t;
	pid_t pid;

	if (n < 1 || rounds < 1)
		return usage("order pipe|thread DIR N ROUNDS (N, ROUNDS > 0)");
	budget = fd_budget();
	p.fds = calloc((size_t)n, sizeof(int));
	if (!p.fds)
		return err_out(ENOMEM);
	for (long i = 0; i < n; i++) {
		char f[32];

		fname(f, sizeof(f), i);
		p.fds[i] = make_file(f);
		/* Past the budget, the fd calls fall back to their *at
		 * forms. */
		if (i >= budget && p.fds[i] >= 0) {
			close(p.fds[i]);
			p.fds[i] = -1;
		}
	}
	for (long r = 0; r < rounds; r++) {
		char d[32];

		snprintf(d, sizeof(d), "dev%ld", r);
		if (mkdirat(dfd, d, 0755) != 0 && errno != EEXIST)
			error("mkdir", d, errno);
	}
	if (atomic_load(&tally->errors))
		return totals();
	if (pipe2(lp, O_CLOEXEC) || pipe2(ap, O_CLOEXEC))
		return err_out(errno);
	p.lines = lp[0];
	p.acks = ap[1];
	if (thread) {
		if ((errno = pthread_create(&t, NULL, pipe_reader, &p)))
			return err_out(errno);
		pipe_writer(&p, lp[1], ap[0]);
		close(lp[1]);
		pthread_join(t, NULL);
		close(ap[0]);
		return totals();
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return err_out(errno);
	if (pid == 0) {
		arm();
		close(lp[1]);
		close(ap[0]);
		pipe_reader(&p);
		_exit(0);
	}
	close(lp[0]);
	close(ap[1]);
	pipe_writer(&p, lp[1], ap[0]);
	close(lp[1]);
	reap(pid, "reader");
	close(ap[0]);
	return totals();
}
