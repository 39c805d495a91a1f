/*
 * order's many and self runs: NPROC processes chown four files under a
 * process-shared mutex and judge their stats by ticket, and one process
 * reads its own changes.  A header of order.c, included once after the
 * common code: in a file of its own only to keep order.c short.
 */
/* --- many ------------------------------------------------------------ */

/* One process's stat after one of its chowns. */
struct many_obs {
	uint32_t file;	   /* which m<file> */
	uint32_t ticket;   /* its own chown's */
	uint32_t uid, gid; /* what the stat showed */
};

struct many_shm {
	pthread_mutex_t mu[MANY_FILES]; /* one per file, process-shared */
	uint32_t next[MANY_FILES];	/* the next ticket, under mu */
	/* Then, per chown q = p * rounds + r: ticket[q], file[q], obs[q];
	 * per file and ticket: owner_at[f * total + t]. */
};

static uid_t many_uid(long q)
{
	return (uid_t)(20000 + q);
}

/* A run of many: its size, and where its shared arrays are. */
struct many_run {
	long nproc, rounds, total;
	struct many_shm *m;
	struct many_obs *obs;
	uint32_t *ticket, *file, *owner_at;
	int fds[MANY_FILES];
};

/* Maps the shared memory and makes m0..m3; 0, or main's exit status. */
static int many_setup(struct many_run *g)
{
	size_t sz =
	    sizeof(struct many_shm) +
	    (size_t)g->total * (2 * sizeof(uint32_t) + sizeof(struct many_obs)) +
	    (size_t)(MANY_FILES * g->total) * sizeof(uint32_t);
	pthread_mutexattr_t ma;

	g->m = mmap(NULL, sz, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g->m == MAP_FAILED)
		return err_out(ENOMEM);
	g->ticket = (uint32_t *)(g->m + 1);
	g->file = g->ticket + g->total;
	g->obs = (struct many_obs *)(g->file + g->total);
	g->owner_at = (uint32_t *)(g->obs + g->total);
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	for (int f = 0; f < MANY_FILES; f++) {
		char nm[8];

		pthread_mutex_init(&g->m->mu[f], &ma);
		snprintf(nm, sizeof(nm), "m%d", f);
		g->fds[f] = make_file(nm);
	}
	return 0;
}

/* Worker p's round r: its chown and ticket under the file's mutex, then
 * its stat. */
static void many_round(const struct many_run *g, long p, long r)
{
	long q = p * g->rounds + r;
	int f = (int)((p + r) % MANY_FILES);
	/* Not (p + r) % 4: each file would get one entry point only. */
	int ho = (int)((p + r / MANY_FILES) % 4);
	int hl = (int)((3 * p + r) % 5), e;
	char nm[8], pth[PATH_MAX];
	struct seen s;

	snprintf(nm, sizeof(nm), "m%d", f);
	pthread_mutex_lock(&g->m->mu[f]);
	e = own(ho, nm, g->fds[f], many_uid(q), many_uid(q) + 7);
	g->ticket[q] = g->m->next[f]++;
	g->file[q] = (uint32_t)f;
	g->owner_at[f * g->total + g->ticket[q]] =
	    e < 0 ? UINT32_MAX : many_uid(q);
	pthread_mutex_unlock(&g->m->mu[f]);
	if (e < 0)
		error(own_name[ho], nm, -e);
	path_of(pth, sizeof(pth), nm);
	e = look(hl, pth, nm, g->fds[f], &s);
	if (e < 0) {
		error(look_name[hl], nm, -e);
		s.uid = s.gid = UINT32_MAX;
	}
	g->obs[q] = (struct many_obs){.file = (uint32_t)f,
				      .ticket = g->ticket[q],
				      .uid = s.uid,
				      .gid = s.gid};
}

/*
 * Every ticket is known now: judge each process's reads.  The uid
 * and the gid each on their own: the kernel's stat does not read
 * the two under the inode's lock, so natively a stat during
 * another's chown may show the uid of one and the gid of another
 * (never of an earlier one).
 */
static void many_judge(const struct many_run *g)
{
	for (long q = 0; q < g->total; q++) {
		const struct many_obs *o = &g->obs[q];
		long wu = (long)o->uid - 20000, wg = (long)o->gid - 20007;
		int tu = wu >= 0 && wu < g->total && g->file[wu] == o->file
			     ? (int)g->ticket[wu]
			     : -1;
		int tg = wg >= 0 && wg < g->total && g->file[wg] == o->file
			     ? (int)g->ticket[wg]
			     : -1;

		if (o->uid == UINT32_MAX)
			continue;
		check();
		if (tu < (int)o->ticket || tg < (int)o->ticket)
			stale("worker %ld round %ld: m%u after ticket %u "
			      "shows %u:%u (tickets %d:%d), want tickets >= "
			      "%u",
			      q / g->rounds, q % g->rounds, o->file, o->ticket,
			      o->uid, o->gid, tu, tg, o->ticket);
	}
}

/* Each file at the end must show its last ticket's owner. */
static void many_end(const struct many_run *g)
{
	for (int f = 0; f < MANY_FILES; f++) {
		uint32_t last = g->m->next[f]
				    ? g->owner_at[f * g->total +
						  g->m->next[f] - 1]
				    : 0;
		char nm[8], ctx[64];
		struct seen s;

		snprintf(nm, sizeof(nm), "m%d", f);
		snprintf(ctx, sizeof(ctx), "at the end (%u tickets)",
			 g->m->next[f]);
		if (last == UINT32_MAX || !get(f, nm, g->fds[f], &s))
			continue;
		check_file(&s, last, last + 7, 0644, ctx, nm, f);
	}
}

static int cmd_many(long nproc, long rounds)
{
	struct many_run g = {.nproc = nproc, .rounds = rounds,
			     .total = nproc * rounds};
	pid_t *pids;
	int rc;

	if (nproc < 1 || rounds < 1 || g.total > 1000000)
		return usage("order many DIR NPROC ROUNDS (NPROC*ROUNDS "
			     "1..1000000)");
	pids = calloc((size_t)nproc, sizeof(*pids));
	if (!pids)
		return err_out(ENOMEM);
	rc = many_setup(&g);
	if (rc)
		return rc;
	if (atomic_load(&tally->errors))
		return totals();
	fflush(stdout);
	for (long p = 0; p < nproc; p++) {
		pids[p] = fork();
		if (pids[p] < 0)
			return err_out(errno);
		if (pids[p] > 0)
			continue;
		arm();
		for (long r = 0; r < rounds; r++)
			many_round(&g, p, r);
		_exit(0);
	}
	for (long p = 0; p < nproc; p++)
		reap(pids[p], "worker");
	many_judge(&g);
	many_end(&g);
	return totals();
}

/* --- self ------------------------------------------------------------ */

static int cmd_self(long n)
{
	char d[32], d2[32], v[32];
	int fd, e, r;
	struct seen s;

	if (n < 1)
		return usage("order self DIR N (N > 0)");
	fd = make_file("x");
	if (fd < 0)
		return totals();
	for (long k = 0; k < n; k++) {
		uid_t a = (uid_t)(5000 + 3 * k), b = a + 1, c = a + 2;
		mode_t mm = round_mode(k, 0);
		int how = (int)(k % 12);
		dev_t dv = makedev(DEV_MAJOR(2), (unsigned)k);

		if ((e = own(how, "x", fd, a, a + 7)) < 0)
			error(own_name[how % 4], "x", -e);
		if (get(1, "x", fd, &s))
			check_file(&s, a, a + 7, 0644, "chown then", "x", 1);
		if ((e = own(how + 1, "x", fd, b, b + 7)) < 0)
			error(own_name[(how + 1) % 4], "x", -e);
		if ((e = mode(how, "x", fd, mm)) < 0)
			error("chmod", "x", -e);
		if (get(0, "x", fd, &s))
			check_file(&s, b, b + 7, mm, "chown, chmod then", "x",
				   0);
		if (fchown(fd, c, c + 7) != 0)
			error("fchown", "x", errno);
		if (get(4, "x", fd, &s))
			check_file(&s, c, c + 7, mm & ~(mode_t)S_ISUID,
				   "fchown then", "x", 4);
		/* Back to 0644, what the next round's first check wants. */
		if ((e = mode(how + 1, "x", fd, 0644)) < 0)
			error("chmod", "x", -e);

		snprintf(d, sizeof(d), "s%ld", k);
		snprintf(d2, sizeof(d2), "t%ld", k);
		if ((e = node(how, d, dv)) < 0)
			error("mknod", d, -e);
		if (get(3, d, -1, &s))
			check_node(&s, dv, "mknod then", d, 3);
		if (renameat(dfd, d, dfd, d2) != 0)
			error("rename", d, errno);
		if (get(2, d2, -1, &s))
			check_node(&s, dv, "rename then", d2, 2);
		/* The device goes; a new file in its place (ext4 may give it
		 * the same inode number) is a plain file of ours. */
		if (unlinkat(dfd, d2, 0) != 0)
			error("unlink", d2, errno);
		r = openat(dfd, d2, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			   0644);
		if (r < 0) {
			error("create", d2, errno);
		} else {
			if (get(4, d2, r, &s))
				check_file(&s, geteuid(), getegid(), 0644,
					   "unlink, create then", d2, 4);
			close(r);
			if (unlinkat(dfd, d2, 0) != 0)
				error("unlink", d2, errno);
		}
		if (xattrs) {
			snprintf(v, sizeof(v), "self %ld", k);
			if ((e = xset(how, "x", fd, v)) < 0)
				error("setxattr", "x", -e);
			check_x(how + 1, "x", fd, v, "setxattr then");
		}
	}
	close(fd);
	return totals();
}
