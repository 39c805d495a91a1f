/*
 * order's fork and signal runs: a child changes DIR/x, and the parent
 * reads it right after waitpid(), or in (or right after) its SIGUSR1
 * handler.  A header of order.c, included once after the common code: in
 * a file of its own only to keep order.c short.
 */
/* --- fork ------------------------------------------------------------ */

static uid_t fork_uid(long k)
{
	return (uid_t)(3000 + k);
}

/* Step k of the fork and signal tests, on x: a chmod in odd k, a device
 * node fk<k> in every third, XNAME in every fifth.  The order changes
 * every 4 steps, so that each order meets every chown entry point. */
static void fork_step(long k, int fd, struct step *s)
{
	*s = (struct step){.order = (int)(k / 4 % 4),
			   .how = (int)(k % 12),
			   .fd = fd,
			   .uid = fork_uid(k),
			   .chmod = k & 1,
			   .mode = round_mode(k, 0),
			   .rdev = makedev(DEV_MAJOR(1), (unsigned)k)};
	snprintf(s->file, sizeof(s->file), "x");
	if (k % 3 == 0)
		snprintf(s->node, sizeof(s->node), "fk%ld", k);
	if (xattrs && k % 5 == 1)
		snprintf(s->xval, sizeof(s->xval), "fork %ld", k);
}

/* Make step k; 0, or 1 when a call failed. */
static int fork_change(long k, int fd)
{
	struct step s;

	fork_step(k, fd, &s);
	do_step(&s);
	return atomic_load(&tally->errors) ? 1 : 0;
}

/* After step k, by entry point how; *m: x's mode before step k, then
 * after it.  pre as check_step's. */
static void fork_check(long k, int fd, int how, mode_t *m, const char *ctx,
		       const struct seen *pre)
{
	struct step s;

	fork_step(k, fd, &s);
	*m = mode_step(*m, &s);
	check_step(&s, how, *m, ctx, pre);
}

static int cmd_fork(const char *self, long n)
{
	mode_t m = 0644;
	int fd;

	if (n < 1)
		return usage("order fork DIR N (N > 0)");
	fd = make_file("x");
	if (fd < 0)
		return totals();
	for (long k = 0; k < n; k++) {
		char ctx[64];
		pid_t pid;

		fflush(stdout);
		pid = fork();
		if (pid < 0)
			return err_out(errno);
		if (pid == 0) {
			char ks[24];

			arm();
			if (k % 8 != 7)
				_exit(fork_change(k, fd));
			/* A new program: its own first connection. */
			snprintf(ks, sizeof(ks), "%ld", k);
			execl(self, "order", "_fork1", dir, ks,
			      xattrs ? "1" : "0", (char *)NULL);
			error("exec", self, errno);
			_exit(1);
		}
		reap(pid, "child");
		snprintf(ctx, sizeof(ctx), "after child %ld (order %d)", k,
			 (int)(k / 4 % 4));
		fork_check(k, fd, (int)(k % 5), &m, ctx, NULL);
	}
	close(fd);
	return totals();
}

/* --- signal ---------------------------------------------------------- */

static volatile sig_atomic_t sig_k = -1; /* the round the handler reads */
static char sig_path[PATH_MAX];
static int sig_fd = -1;
static struct seen sig_seen;
static volatile sig_atomic_t sig_r; /* look()'s result in the handler */
static volatile sig_atomic_t sig_done;

static void on_usr1(int sig)
{
	int saved = errno;

	(void)sig;
	sig_r = look((int)(sig_k % 5), sig_path, "x", sig_fd, &sig_seen);
	sig_done = 1;
	errno = saved;
}

static int cmd_signal(long n)
{
	struct sigaction sa = {.sa_handler = on_usr1};
	sigset_t usr1, old;
	mode_t m = 0644;
	int ap[2];
	pid_t pid;

	if (n < 1)
		return usage("order signal DIR N (N > 0)");
	sig_fd = make_file("x");
	if (sig_fd < 0)
		return totals();
	path_of(sig_path, sizeof(sig_path), "x");
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	sigdelset(&old, SIGUSR1);
	if (pipe2(ap, O_CLOEXEC))
		return err_out(errno);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return err_out(errno);
	if (pid == 0) {
		pid_t parent = getppid();

		arm();
		close(ap[1]);
		for (long k = 0; k < n; k++) {
			fork_change(k, sig_fd);
			kill(parent, SIGUSR1);
			if (!read_byte(ap[0]))
				_exit(1);
		}
		_exit(0);
	}
	close(ap[0]);
	for (long k = 0; k < n; k++) {
		char ctx[80];
		struct seen s;
		int r = 0;

		/* Not by k & 1, which picks the chmod. */
		if (k & 2) {
			sig_k = (sig_atomic_t)k;
			sig_done = 0;
			while (!sig_done)
				sigsuspend(&old);
			r = sig_r;
			s = sig_seen;
			snprintf(ctx, sizeof(ctx), "signal %ld, in the handler",
				 k);
		} else {
			while (sigwaitinfo(&usr1, NULL) < 0 && errno == EINTR)
				;
			snprintf(ctx, sizeof(ctx), "signal %ld, after sigwait",
				 k);
		}
		if (r < 0) {
			error(look_name[k % 5], "x", -r);
			fork_check(k, sig_fd, (int)(k % 5), &m, ctx, NULL);
		} else {
			fork_check(k, sig_fd, (int)(k % 5), &m, ctx,
				   k & 2 ? &s : NULL);
		}
		write_byte(ap[1]);
	}
	close(ap[1]);
	reap(pid, "child");
	return totals();
}
