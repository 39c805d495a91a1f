/*
 * peer: a client of a session's daemon, outside the shim, for the tests
 * of who may talk to it and what it does with bad messages.
 *   peer SOCKET stats      a STATS request: prints "records N clients N"
 *   peer SOCKET short      a 10-byte message: prints "closed" when the
 *                          daemon hangs up on it
 *   peer SOCKET badop      a whole header with op 999: likewise
 * connect failures print "ERR <errno name>"; a connection the daemon
 * closes without a reply prints "closed".
 */
#include "helper.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fakeenv/proto.h"

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct fe_req req = { .op = FE_OP_STATS, .version = FE_PROTO_VERSION };
	struct fe_rep rep;
	const void *msg = &req;
	size_t len = sizeof(req);
	ssize_t n;
	int fd;

	if (argc != 3 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: peer SOCKET stats|short|badop\n");
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	if (!strcmp(argv[2], "short"))
		len = 10;
	else if (!strcmp(argv[2], "badop"))
		req.op = 999;
	else if (strcmp(argv[2], "stats"))
		return 2;
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return err_out(errno);
	if (send(fd, msg, len, MSG_NOSIGNAL) < 0) {
		if (errno == EPIPE || errno == ECONNRESET) {
			printf("closed\n");
			return 0;
		}
		return err_out(errno);
	}
	n = recv(fd, &rep, sizeof(rep), 0);
	if (n <= 0) {
		printf("closed\n");
		return 0;
	}
	if ((size_t)n != sizeof(rep))
		return err_out(EPROTO);
	printf("records %llu clients %llu\n", (unsigned long long)rep.count[0],
	       (unsigned long long)rep.count[1]);
	return 0;
}
