/*
 * notif: the floor under a trapped call.  A child lstat()s FILE N times
 * under a seccomp filter that sends each one to this process, which
 * answers it with a little more at each step, up to what fakeenv's
 * supervisor does for a stat; natively first.  Prints microseconds a
 * call, the median of R rounds, steps interleaved in each round.  No
 * part of fakeenv runs: this is what the kernel's interface costs here.
 *
 *   notif [N [FILE [R]]]   N 100,000, FILE ".", R 5
 *
 * The target ends with an lstat of fd END ("" at an fd it does not
 * have), which the answerer lets through and stops at: a RECV does not
 * return when a filter's last process is gone, only poll tells that.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#define SYNC_WAKE_UP 1UL /* SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, 6.6 */
#define END 1000042

static const char *const steps[] = {
	"native lstat",
	"round trip: RECV, SEND(CONTINUE), the kernel stats",
	"+ poll before RECV",
	"+ path in, struct stat out (process_vm_readv, _writev), no stat",
	"+ the stat: answered as fakeenv's supervisor does",
	"+ ID_VALID: all of it (fakeenv's 7 calls)",
};
#define NSTEP (sizeof(steps) / sizeof(steps[0]))

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fd_pass(int sock, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec io = { "x", 1 };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1,
			    .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(sock, &m, 0) != 1)
		_exit(3);
}

static int fd_take(int sock)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char x;
	struct iovec io = { &x, 1 };
	struct msghdr m = { .msg_iov = &io, .msg_iovlen = 1,
			    .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &m, 0) != 1 || !(c = CMSG_FIRSTHDR(&m)))
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* The child: the filter (step > 0), then N lstats, timed; the time goes
 * back on sock. */
static _Noreturn void target(int sock, int step, long n, const char *file)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_newfstatat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { 4, f };
	struct stat st;
	double t;
	char c;

	if (step > 0) {
		long lfd;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(3);
		lfd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			      SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
		if (lfd < 0)
			_exit(3);
		fd_pass(sock, (int)lfd);
		close((int)lfd);
		if (read(sock, &c, 1) != 1)
			_exit(3);
	}
	t = now();
	for (long i = 0; i < n; i++)
		fstatat(AT_FDCWD, file, &st, AT_SYMLINK_NOFOLLOW);
	t = now() - t;
	fstatat(END, "", &st, 0);
	_exit(write(sock, &t, sizeof(t)) == sizeof(t) ? 0 : 3);
}

/* Answer one notification of listener lfd as step says. */
static void answer(int lfd, int step, const struct seccomp_notif *n,
		   struct seccomp_notif_resp *r)
{
	char path[4096];
	struct stat st = { 0 };
	struct iovec l = { path, sizeof(path) },
		     rm = { (void *)n->data.args[1], 256 };
	struct iovec l2 = { &st, sizeof(st) },
		     rm2 = { (void *)n->data.args[2], sizeof(st) };

	memset(r, 0, sizeof(*r));
	r->id = n->id;
	if (step < 3 || (int)n->data.args[0] == END) {
		r->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		return;
	}
	path[0] = '\0';
	if (process_vm_readv(n->pid, &l, 1, &rm, 1, 0) < 0)
		r->error = -EFAULT;
	if (step >= 5)
		ioctl(lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &n->id);
	if (step >= 4 && fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
		r->error = -errno;
	if (process_vm_writev(n->pid, &l2, 1, &rm2, 1, 0) < 0)
		r->error = -EFAULT;
}

/* One run of step: microseconds a call, or -1. */
static double run(int step, long n, const char *file)
{
	struct seccomp_notif nt;
	struct seccomp_notif_resp r;
	int sv[2], lfd = -1;
	double t = -1;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return -1;
	pid = fork();
	if (pid == 0)
		target(sv[1], step, n, file);
	if (step > 0) {
		struct pollfd pf;

		lfd = fd_take(sv[0]);
		if (lfd < 0)
			goto out;
		ioctl(lfd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SYNC_WAKE_UP);
		pf = (struct pollfd){ .fd = lfd, .events = POLLIN };
		if (write(sv[0], "g", 1) != 1)
			goto out;
		for (;;) {
			if (step >= 2 && (poll(&pf, 1, -1) < 0 ||
					  !(pf.revents & POLLIN)))
				break;
			memset(&nt, 0, sizeof(nt));
			if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, &nt) < 0)
				break;
			answer(lfd, step, &nt, &r);
			ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &r);
			if ((int)nt.data.args[0] == END)
				break;
		}
	}
out:
	if (read(sv[0], &t, sizeof(t)) != sizeof(t))
		t = -1;
	waitpid(pid, NULL, 0);
	if (lfd >= 0)
		close(lfd);
	close(sv[0]);
	close(sv[1]);
	return t < 0 ? -1 : t / n * 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	const char *file = argc > 2 ? argv[2] : ".";
	int rounds = argc > 3 ? atoi(argv[3]) : 5;
	double us[NSTEP][64];

	if (n <= 0 || rounds < 1 || rounds > 64) {
		fprintf(stderr, "usage: notif [N [FILE [ROUNDS<=64]]]\n");
		return 2;
	}
	for (int k = 0; k < rounds; k++)
		for (size_t s = 0; s < NSTEP; s++)
			us[s][k] = run((int)s, n, file);
	printf("%ld lstats of %s a run, median of %d rounds\n", n, file, rounds);
	for (size_t s = 0; s < NSTEP; s++) {
		qsort(us[s], (size_t)rounds, sizeof(double), cmp);
		if (us[s][0] < 0)
			printf("%8s  %s (failed: no seccomp user notification?)\n",
			       "-", steps[s]);
		else
			printf("%8.2f  %s\n", us[s][rounds / 2], steps[s]);
	}
	return 0;
}
