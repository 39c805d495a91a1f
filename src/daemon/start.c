/*
 * The daemon's start and end (fe_loop_run(), loop.h): the loop's state,
 * the signals, the journal loaded before the first client, the epoll set
 * handed to the events' loop (loop.c), and the leaving: the socket
 * removed, the last journal written, the clients closed.
 */
#include "loop_int.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "fakeenv/daemon.h"

/* File descriptors kept free of clients: the journal, its temporary file
 * and directory, the log, the table's memfds, the look into /proc. */
#define FD_RESERVE 64

/*
 * SIGTERM and SIGINT (checkpoint and exit) and SIGUSR1 (checkpoint) are
 * blocked and read from a signalfd.  The others a terminal, a parent or a
 * careless kill may send are ignored.  The daemon has its own session, so
 * a Ctrl-C at the terminal never reaches it; a SIGINT is sent on purpose.
 * SIGTSTP/TTIN/TTOU: when setsid() failed we may still share the
 * terminal's session.  Returns the signalfd or -errno.
 */
static int setup_signals(void)
{
	static const int ignored[] = { SIGPIPE,  SIGHUP,  SIGQUIT, SIGWINCH,
				       SIGUSR2,  SIGALRM, SIGTSTP, SIGTTIN,
				       SIGTTOU };
	struct sigaction sa;
	sigset_t set;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < FE_ARRAY_LEN(ignored); i++)
		if (sigaction(ignored[i], &sa, NULL) < 0)
			return -errno;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* A daemon that outlives its launcher must not hold the launcher's
 * stderr: `x=$(fakeenv --state D -- cmd 2>&1)` would wait for us.  What
 * the user must see at start (a refused journal, what the load dropped)
 * has been said by now. */
static void redirect_stderr(const char *path, int fd)
{
	if (dup2(fd, STDERR_FILENO) < 0)
		fe_log("daemon: cannot log to %s: %s", path,
		       fe_strerror(errno));
	close(fd);
}

/* Leave: no new client may reach us (the path goes first, so that a
 * launcher arriving now starts a new daemon instead of joining one that
 * is leaving), then the last journal, then the clients. */
static int leave(struct fe_loop *lp)
{
	int r;

	/* Through DIR's fd: the path may lead to a new DIR by now, whose
	 * socket is another daemon's. */
	if ((lp->have_dir ? unlinkat(lp->dir.fd, FE_DIR_SOCK, 0) :
			    unlink(lp->cfg->sock)) < 0 &&
	    errno != ENOENT)
		fe_log("daemon: cannot remove %s: %s", lp->cfg->sock,
		       fe_strerror(errno));
	close(lp->lfd);
	lp->lfd = -1;
	/* Writers to the socket from now on, which fails once we are gone;
	 * what the rings hold goes into the last journal. */
	(void)fe_ring_sleep(lp);
	r = fe_ckpt_final(lp);
	while (lp->conns) {
		/* Leaving on SIGTERM is not the launcher dying. */
		lp->conns->sess.attached = false;
		fe_conn_close(lp, lp->conns);
	}
	fe_conn_free_dead(lp);
	return r;
}

/* PATH made absolute against the working directory and folded lexically
 * (fe_path_lexical(): no symlink is followed, PATH need not exist), into
 * out.  False when it does not fit. */
static bool abs_lexical(const char *path, char *out, size_t size)
{
	char cwd[PATH_MAX];
	int n;

	if (path[0] == '/')
		n = snprintf(out, size, "%s", path);
	else if (getcwd(cwd, sizeof(cwd)))
		n = snprintf(out, size, "%s/%s", cwd, path);
	else
		return false;
	if (n < 0 || (size_t)n >= size)
		return false;
	fe_path_lexical(out);
	return true;
}

/*
 * fakeroot's idiom for a persistent build, `-i F -s F`: whether the
 * journal LOAD, found missing, is the file SAVE names, so that the first
 * run starts empty and writes it.  Compared as absolute paths, lexically
 * (F does not exist, there is nothing to resolve); a path ending in '/'
 * could never be saved to.  Decided here, on the open's ENOENT, so that
 * no other check can disagree with what the load saw.
 */
static bool first_run(const char *load, const char *save)
{
	char a[PATH_MAX], b[PATH_MAX];
	size_t la = strlen(load), ls = strlen(save);

	if (!la || !ls || load[la - 1] == '/' || save[ls - 1] == '/')
		return false;
	return abs_lexical(load, a, sizeof(a)) &&
	       abs_lexical(save, b, sizeof(b)) && !strcmp(a, b);
}

/*
 * Every process of the session that made a faked call holds a connection:
 * a big parallel build has thousands.  The soft limit (often 1,024) goes
 * up to the hard one; the clients beyond what it leaves are made room for
 * by evict().
 */
static void raise_nofile(struct fe_loop *lp)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		rl.rlim_cur = rl.rlim_max = 1024;
	} else if (rl.rlim_cur < rl.rlim_max) {
		rlim_t was = rl.rlim_cur;

		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			rl.rlim_cur = was;
	}
	lp->nofile = (unsigned long long)rl.rlim_cur;
	if (rl.rlim_cur > UINT_MAX)
		rl.rlim_cur = UINT_MAX;
	lp->max_clients = rl.rlim_cur > 2 * FD_RESERVE ?
				  (unsigned)rl.rlim_cur - FD_RESERVE :
				  (unsigned)rl.rlim_cur / 2;
}

/* Make the loop's state, with the table empty and nothing loaded. */
static int loop_init(struct fe_loop *lp, const struct fe_loop_cfg *cfg)
{
	int r;

	lp->cfg = cfg;
	lp->lfd = cfg->listen_fd;
	lp->uid = getuid();
	lp->refused.what = "refused connections";
	lp->bad.what = "bad requests";
	lp->linger_ms = -1;
	lp->started = (uint64_t)time(NULL);
	raise_nofile(lp);
	lp->reserve = -1;
	lp->sfd = -1;
	lp->delta = -1;
	if (cfg->state && cfg->state_fd >= 0) {
		r = fe_state_dir_init(&lp->dir, cfg->state, cfg->state_fd,
				      FE_DIR_JOURNAL);
		if (r < 0)
			return r;
		lp->have_dir = true;
		r = fe_unsaved_read(cfg->state_fd, FE_UNSAVED_NAME, &lp->prev);
		if (r < 0)
			fe_log("daemon: %s/%s: %s", cfg->state,
			       FE_UNSAVED_NAME, fe_strerror(-r));
		lp->have_prev = r > 0;
		lp->reserve = fe_unsaved_reserve(cfg->state_fd);
	}
	return fe_srv_init(&lp->srv, cfg->unknown_is_real);
}

/* Load cfg->load into the table: 0, or -EBADMSG (said) when it could
 * not be. */
static int load_journal(struct fe_loop *lp, const struct fe_loop_cfg *cfg)
{
	int r = fe_state_load_flags(&lp->srv, cfg->load, cfg->load_flags,
				    &lp->load);

	if (r == -ENOENT && cfg->load_optional)
		return 0;
	if (r == -ENOENT && cfg->save && first_run(cfg->load, cfg->save)) {
		fe_log("journal %s: no such file; starting with an empty "
		       "state, it will be saved there",
		       cfg->load);
		return 0;
	}
	if (r < 0) {
		/* Said already (state.c), but for a plain missing file; the
		 * caller exits with the refusal status. */
		if (r == -ENOENT)
			fe_log("journal %s: no such file", cfg->load);
		return -EBADMSG;
	}
	lp->loaded = true;
	lp->journal_bytes = lp->load.bytes;
	/* The file holds what we hold, unless the check dropped or moved
	 * records. */
	lp->on_disk = cfg->save && !strcmp(cfg->save, cfg->load) &&
		      !lp->load.dropped && !lp->load.rekeyed;
	return 0;
}

/* The epoll set, then the loop until it stops, then leave(). */
static int serve_all(struct fe_loop *lp)
{
	int r, left;

	lp->saved_changes = lp->srv.changes;
	lp->ckpt_ms = fe_now_ms();
	lp->deadline_ms = fe_now_ms() + FE_LOOP_FIRST_CLIENT_SEC * 1000LL;
	lp->ep = epoll_create1(EPOLL_CLOEXEC);
	if (lp->ep < 0)
		return -errno;
	r = fe_loop_watch(lp, lp->sfd, &lp->sfd);
	if (r == 0)
		r = fe_loop_watch(lp, lp->saver.efd, &lp->saver);
	if (r == 0)
		r = fe_loop_watch(lp, lp->lfd, &lp->lfd);
	if (r == 0) {
		r = fe_loop_events(lp);
		fe_noise_sum(&lp->refused, true);
		fe_noise_sum(&lp->bad, true);
		left = leave(lp);
		if (r == 0)
			r = left;
	}
	close(lp->ep);
	return r;
}

int fe_loop_run(const struct fe_loop_cfg *cfg)
{
	struct fe_loop *lp = calloc(1, sizeof(*lp));
	int r;

	if (!lp) {
		unlink(cfg->sock);
		close(cfg->listen_fd);
		return -ENOMEM;
	}
	r = loop_init(lp, cfg);
	if (r < 0)
		goto out_free_loop;
	if (cfg->trace_fd >= 0) {
		r = fe_trace_init(&lp->trace, cfg->trace, cfg->trace_fd);
		if (r < 0) {
			fe_log("trace %s: %s", cfg->trace, fe_strerror(-r));
			goto out_free_srv;
		}
		lp->srv.trace = &lp->trace;
	}
	r = fe_saver_init(&lp->saver);
	if (r < 0)
		goto out_free_srv;
	lp->saver.dir = lp->have_dir ? &lp->dir : NULL;
	/* Signals first: a SIGTERM during a long load must not kill us
	 * before it has been read. */
	lp->sfd = setup_signals();
	if (lp->sfd < 0) {
		r = lp->sfd;
		goto out_free_saver;
	}
	r = cfg->load ? load_journal(lp, cfg) : 0;
	if (r == 0)
		r = fe_dur_open(lp);
	if (r < 0)
		goto out_close_sfd;
	if (cfg->log && cfg->log_fd >= 0)
		redirect_stderr(cfg->log, cfg->log_fd);
	r = serve_all(lp);
out_close_sfd:
	close(lp->sfd);
out_free_saver:
	fe_saver_free(&lp->saver);
out_free_srv:
	if (lp->srv.trace)
		fe_trace_free(lp->srv.trace);
	fe_srv_free(&lp->srv);
out_free_loop:
	if (lp->lfd >= 0) {
		/* Never served: nobody must try to join us. */
		unlink(cfg->sock);
		close(lp->lfd);
	}
	if (lp->reserve >= 0)
		close(lp->reserve);
	if (lp->delta >= 0)
		close(lp->delta);
	free(lp);
	return r;
}
