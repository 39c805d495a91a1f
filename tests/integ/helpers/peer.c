/*
 * peer: a client of a session's daemon, outside the shim, for the tests
 * of who may talk to it and what it does with bad messages.
 *   peer SOCKET stats      a STATS request: prints "records N clients N"
 *   peer SOCKET short      a 10-byte message: prints "closed" when the
 *                          daemon hangs up on it
 *   peer SOCKET badop      a whole header with op 999: likewise
 *   peer SOCKET many N stats|short
 *                          that, N times over, each on a new connection:
 *                          prints "answered A closed C"
 * connect failures print "ERR <errno name>"; a connection the daemon
 * closes without a reply prints "closed".
 */
#include "helper.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fakeenv/proto.h"

/* One connection, one message of len bytes: 1 when answered, 0 when the
 * daemon closed it, -errno when it could not be sent. */
static int once(const struct sockaddr_un *sa, const void *msg, size_t len)
{
	struct fe_rep rep;
	ssize_t n;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0), r;

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	if (send(fd, msg, len, MSG_NOSIGNAL) < 0) {
		r = errno == EPIPE || errno == ECONNRESET ? 0 : -errno;
		close(fd);
		return r;
	}
	n = recv(fd, &rep, sizeof(rep), 0);
	close(fd);
	return n > 0;
}

/* many N KIND: once() N times.  0 or an exit status. */
static int many(const struct sockaddr_un *sa, const char *count,
		const char *kind)
{
	struct fe_req req = { .op = FE_OP_STATS, .version = FE_PROTO_VERSION };
	long n = num(count), answered = 0, closed = 0;
	size_t len = strcmp(kind, "short") ? sizeof(req) : 10;

	for (long i = 0; i < n; i++) {
		int r = once(sa, &req, len);

		if (r < 0)
			return err_out(-r);
		if (r)
			answered++;
		else
			closed++;
	}
	printf("answered %ld closed %ld\n", answered, closed);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct fe_req req = { .op = FE_OP_STATS, .version = FE_PROTO_VERSION };
	struct fe_rep rep;
	const void *msg = &req;
	size_t len = sizeof(req);
	ssize_t n;
	int fd;

	if (argc < 3 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: peer SOCKET stats|short|badop|many N "
				"KIND\n");
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	if (!strcmp(argv[2], "many") && argc == 5)
		return many(&sa, argv[3], argv[4]);
	if (argc != 3)
		return 2;
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
