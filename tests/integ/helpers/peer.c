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
 *   peer SOCKET renamedir N K LEN
 *                          N records made by CREATE under /g, then K
 *                          RENAMEDIRs of /g to /g/ and LEN bytes of 'x'
 *                          (each moves every record again, deeper):
 *                          prints "records N clients N" (STATS) at the end
 *   peer SOCKET drainclose one epoll batch that holds a GET on one
 *                          connection and then a malformed one-way change
 *                          on another, which the GET's drain closes:
 *                          the daemon is stopped (SIGSTOP) while both are
 *                          sent, so that they wake it together, in that
 *                          order.  Prints "get G bad B" (answered or
 *                          closed) and the daemon's STATS after.
 * connect failures print "ERR <errno name>"; a connection the daemon
 * closes without a reply prints "closed".
 */
#include "helper.h"

#include <signal.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
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

/* Send req with its tail and wait for the reply.  Returns 0 or -errno
 * (-ECONNRESET: the daemon closed the connection). */
static int rpc(int fd, struct fe_req *req, const char *tail, size_t tlen,
	       struct fe_rep *rep)
{
	static char msg[sizeof(struct fe_req) + FE_TAIL_MAX];
	ssize_t n;

	req->version = FE_PROTO_VERSION;
	req->tail_len = (uint32_t)tlen;
	memcpy(msg, req, sizeof(*req));
	memcpy(msg + sizeof(*req), tail, tlen);
	if (send(fd, msg, sizeof(*req) + tlen, MSG_NOSIGNAL) < 0)
		return -errno;
	n = recv(fd, rep, sizeof(*rep), 0);
	if (n <= 0)
		return n < 0 ? -errno : -ECONNRESET;
	return (size_t)n == sizeof(*rep) ? 0 : -EPROTO;
}

static int renamedir(int fd, long n, long k, long len)
{
	static char tail[2 * FE_PATH_MAX];
	struct fe_rep rep;
	size_t tlen;
	int r;

	if (len < 1 || len > FE_PATH_MAX - 8)
		return -EINVAL;
	for (long i = 0; i < n; i++) {
		struct fe_req req = { .op = FE_OP_CREATE, .dev = 0x10,
				      .ino = 1000 + (uint64_t)i,
				      .flags = FE_F_UID, .uid = 1234,
				      .real_mode = S_IFREG | 0644 };

		tlen = (size_t)snprintf(tail, sizeof(tail), "/g/f%ld", i) + 1;
		r = rpc(fd, &req, tail, tlen, &rep);
		if (r < 0 || rep.err)
			return r < 0 ? r : rep.err;
	}
	memcpy(tail, "/g", 3);
	memcpy(tail + 3, "/g/", 3);
	memset(tail + 6, 'x', (size_t)len);
	tail[6 + len] = '\0';
	tlen = 6 + (size_t)len + 1;
	for (long i = 0; i < k; i++) {
		struct fe_req req = { .op = FE_OP_RENAMEDIR, .dev = 0x10,
				      .ino = 999, .real_mode = S_IFDIR | 0755 };

		r = rpc(fd, &req, tail, tlen, &rep);
		if (r < 0)
			return r;
	}
	return 0;
}

static int dial(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	if (fd < 0 || connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0)
		return -errno;
	return fd;
}

/* Whether process pid is stopped (state T in /proc/PID/stat). */
static bool stopped(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'T';
}

static const char *answered(int fd)
{
	struct fe_rep rep;

	return recv(fd, &rep, sizeof(rep), 0) > 0 ? "answered" : "closed";
}

/* drainclose: see the head comment.  0 or an exit status. */
static int drainclose(const struct sockaddr_un *sa)
{
	struct fe_req st = { .op = FE_OP_STATUS, .version = FE_PROTO_VERSION };
	struct fe_req get = { .op = FE_OP_GET, .version = FE_PROTO_VERSION,
			      .dev = 0x10, .ino = 77,
			      .real_mode = S_IFREG | 0644 };
	/* One-way, so that a drain takes it; a wrong version, so that the
	 * check refuses it. */
	struct fe_req bad = { .op = FE_OP_CHOWN, .version = 999,
			      .flags = FE_F_ONEWAY | FE_F_UID, .dev = 0x10,
			      .ino = 78, .real_mode = S_IFREG | 0644 };
	struct fe_status status;
	const struct timespec tick = { 0, 10 * 1000 * 1000 };
	int a = dial(sa), b = dial(sa), c, i;
	pid_t pid;

	if (a < 0 || b < 0)
		return err_out(a < 0 ? -a : -b);
	if (send(b, &st, sizeof(st), MSG_NOSIGNAL) < 0 ||
	    recv(b, &status, sizeof(status), 0) != (ssize_t)sizeof(status))
		return err_out(EPROTO);
	pid = (pid_t)status.pid;
	if (kill(pid, SIGSTOP) < 0)
		return err_out(errno);
	for (i = 0; i < 500 && !stopped(pid); i++)
		nanosleep(&tick, NULL);
	if (send(b, &get, sizeof(get), MSG_NOSIGNAL) < 0 ||
	    send(a, &bad, sizeof(bad), MSG_NOSIGNAL) < 0) {
		kill(pid, SIGCONT);
		return err_out(errno);
	}
	kill(pid, SIGCONT);
	printf("get %s ", answered(b));
	printf("bad %s\n", answered(a));
	c = dial(sa);
	if (c < 0 || send(c, &st, sizeof(st), MSG_NOSIGNAL) < 0 ||
	    recv(c, &status, sizeof(status), 0) != (ssize_t)sizeof(status)) {
		printf("daemon gone\n");
		return 0;
	}
	printf("daemon serving\n");
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
				"KIND|renamedir N K LEN|drainclose\n");
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	if (!strcmp(argv[2], "many") && argc == 5)
		return many(&sa, argv[3], argv[4]);
	if (!strcmp(argv[2], "drainclose") && argc == 3)
		return drainclose(&sa);
	if (argc != 3 && !(argc == 6 && !strcmp(argv[2], "renamedir")))
		return 2;
	if (!strcmp(argv[2], "short"))
		len = 10;
	else if (!strcmp(argv[2], "badop"))
		req.op = 999;
	else if (strcmp(argv[2], "stats") && strcmp(argv[2], "renamedir"))
		return 2;
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return err_out(errno);
	if (argc == 6) {
		int r = renamedir(fd, num(argv[3]), num(argv[4]), num(argv[5]));

		if (r == -ECONNRESET) {
			printf("closed\n");
			return 0;
		}
		if (r < 0)
			return err_out(-r);
	}
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
