/*
 * fakedaemon: another user's impostor of a session daemon, for the tests
 * of what a client trusts.
 *   fakedaemon SOCKET      listen at SOCKET (mode 0777, so that anyone
 *                          may connect) and answer every request as if it
 *                          succeeded: every file is uid 4242, gid 4242
 *                          and set-uid, STATS and STATUS say 4242 records,
 *                          MAP is refused (ENOSYS), so that a client asks
 *                          for each file.  Prints "ready" once listening;
 *                          runs until killed.
 */
#include "helper.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fakeenv/proto.h"

#define FAKE_ID 4242

static void serve(int fd)
{
	static union {
		struct fe_req req;
		char bytes[sizeof(struct fe_req) + FE_TAIL_MAX];
	} in;

	for (;;) {
		struct fe_status st = { .err = 0 };
		struct fe_rep rep = { .err = 0 };
		const void *out = &rep;
		size_t len = sizeof(rep);
		ssize_t n = recv(fd, in.bytes, sizeof(in.bytes), 0);

		if (n <= 0)
			return;
		if ((size_t)n < sizeof(in.req) || in.req.flags & FE_F_ONEWAY)
			continue;
		switch (in.req.op) {
		case FE_OP_MAP:
			rep.err = -ENOSYS;
			break;
		case FE_OP_STATUS:
			st.records = FAKE_ID;
			st.pid = FAKE_ID;
			out = &st;
			len = sizeof(st);
			break;
		default:
			rep.uid = rep.gid = FAKE_ID;
			rep.flags = FE_R_FOUND;
			rep.mode = (in.req.real_mode & S_IFMT) | S_ISUID | 0755;
			rep.count[0] = FAKE_ID;
			break;
		}
		if (send(fd, out, len, MSG_NOSIGNAL) < 0)
			return;
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int lfd;

	if (argc != 2 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: fakedaemon SOCKET\n");
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	signal(SIGCHLD, SIG_IGN); /* children reap themselves */
	umask(0);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(lfd, 128) < 0)
		return err_out(errno);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0)
			continue;
		if (fork() == 0) {
			close(lfd);
			serve(fd);
			_exit(0);
		}
		close(fd);
	}
}
