/*
 * ringpeer: a client of a session's daemon that writes its change ring
 * itself (fakeenv/ring.h), outside the shim, for the daemon's side of
 * the rings: what it takes and what it refuses.
 *   ringpeer SOCKET good N   N one-way CHOWNs (dev 0x10, inodes 1000..,
 *                            uid 4242) through the ring, several times
 *                            round it, waiting for room as a writer
 *                            does; then STATS on the same connection:
 *                            prints "records N"
 *   ringpeer SOCKET KIND     one bad entry, then WAKE and STATS: prints
 *                            "closed" when the daemon hung up, else
 *                            "answered".  KIND: badframe (an unknown
 *                            frame kind), badlen (a length past the
 *                            ring), badhead (head beyond the ring's
 *                            size), badwrap (a WRAP at 0), notoneway (a
 *                            CHOWN without FE_F_ONEWAY), badversion (a
 *                            request the socket would refuse too),
 *                            badclose (a bad frame, then the connection
 *                            closed at once: the daemon meets it as it
 *                            takes the rest of the ring at the close)
 * A daemon that gives no ring prints "ERR <errno name>".
 */
#include "helper.h"

#include <stdbool.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fakeenv/proto.h"
#include "fakeenv/ring.h"

#define RING_BYTES (sizeof(struct fe_ring) + FE_RING_DATA)

/* Send RING on fd and map the ring it brings.  NULL: errno says why. */
static struct fe_ring *get_ring(int fd)
{
	struct fe_req req = { .op = FE_OP_RING, .version = FE_PROTO_VERSION };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct fe_rep rep;
	struct iovec iov = { &rep, sizeof(rep) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *cm;
	void *p;
	int rfd;

	if (send(fd, &req, sizeof(req), MSG_NOSIGNAL) < 0 ||
	    recvmsg(fd, &mh, 0) != (ssize_t)sizeof(rep))
		return NULL;
	if (rep.err) {
		errno = -rep.err;
		return NULL;
	}
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_RIGHTS) {
		errno = EPROTO;
		return NULL;
	}
	memcpy(&rfd, CMSG_DATA(cm), sizeof(rfd));
	p = mmap(NULL, RING_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, 0);
	close(rfd);
	return p == MAP_FAILED ? NULL : p;
}

/* One CHOWN entry of inode ino at head; returns the new head. */
static uint64_t put(struct fe_ring *r, uint64_t head, uint64_t ino,
		    uint32_t flags, uint16_t version)
{
	struct fe_req q = { .op = FE_OP_CHOWN, .version = version,
			    .flags = flags, .dev = 0x10, .ino = ino,
			    .real_mode = S_IFREG | 0644, .uid = 4242 };
	struct fe_ring_frame f = { .len = sizeof(q), .kind = FE_RING_MSG };
	uint64_t off = head & (FE_RING_DATA - 1);

	if (off + fe_ring_span(sizeof(q)) > FE_RING_DATA) {
		struct fe_ring_frame w = { .kind = FE_RING_WRAP };

		memcpy(r->data + off, &w, sizeof(w));
		head += FE_RING_DATA - off;
		off = 0;
	}
	memcpy(r->data + off, &f, sizeof(f));
	memcpy(r->data + off + sizeof(f), &q, sizeof(q));
	return head + fe_ring_span(sizeof(q));
}

static void publish(struct fe_ring *r, uint64_t head)
{
	__atomic_store_n(&r->head, head, __ATOMIC_SEQ_CST);
}

/* WAKE, then STATS: the reply, or "closed". */
static const char *wake_stats(int fd, struct fe_rep *rep)
{
	struct fe_req w = { .op = FE_OP_WAKE, .version = FE_PROTO_VERSION,
			    .flags = FE_F_ONEWAY };
	struct fe_req st = { .op = FE_OP_STATS, .version = FE_PROTO_VERSION };

	if (send(fd, &w, sizeof(w), MSG_NOSIGNAL) < 0 ||
	    send(fd, &st, sizeof(st), MSG_NOSIGNAL) < 0 ||
	    recv(fd, rep, sizeof(*rep), 0) != (ssize_t)sizeof(*rep))
		return "closed";
	return "answered";
}

static int good(int fd, struct fe_ring *r, long n)
{
	const struct timespec tick = { 0, 1000 * 1000 };
	struct fe_req w = { .op = FE_OP_WAKE, .version = FE_PROTO_VERSION,
			    .flags = FE_F_ONEWAY };
	struct fe_rep rep;
	uint64_t head = 0;

	for (long i = 0; i < n; i++) {
		int waited = 0;

		/* Room for one more, a WRAP included: 10 s at most. */
		while (head + 2 * fe_ring_span(sizeof(struct fe_req)) -
			       __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) >
		       FE_RING_DATA) {
			if (send(fd, &w, sizeof(w), MSG_NOSIGNAL) < 0)
				return err_out(errno);
			if (++waited > 10000)
				return err_out(ETIMEDOUT);
			nanosleep(&tick, NULL);
		}
		head = put(r, head, 1000 + (uint64_t)i, FE_F_UID | FE_F_ONEWAY,
			   FE_PROTO_VERSION);
		publish(r, head);
	}
	if (strcmp(wake_stats(fd, &rep), "answered"))
		return err_out(ECONNRESET);
	printf("records %llu\n", (unsigned long long)rep.count[0]);
	return 0;
}

static int bad(int fd, struct fe_ring *r, const char *kind)
{
	struct fe_ring_frame f = { .kind = 7, .len = sizeof(struct fe_req) };
	struct fe_rep rep;
	uint64_t head = 0;

	if (!strcmp(kind, "badframe") || !strcmp(kind, "badclose")) {
		memcpy(r->data, &f, sizeof(f));
		head = fe_ring_span(f.len);
	} else if (!strcmp(kind, "badlen")) {
		f.kind = FE_RING_MSG;
		f.len = 2 * FE_RING_DATA;
		memcpy(r->data, &f, sizeof(f));
		head = fe_ring_span(sizeof(struct fe_req));
	} else if (!strcmp(kind, "badhead")) {
		head = put(r, 0, 1, FE_F_UID | FE_F_ONEWAY, FE_PROTO_VERSION) +
		       2 * FE_RING_DATA;
	} else if (!strcmp(kind, "badwrap")) {
		f.kind = FE_RING_WRAP;
		memcpy(r->data, &f, sizeof(f));
		head = FE_RING_DATA;
	} else if (!strcmp(kind, "notoneway")) {
		head = put(r, 0, 1, FE_F_UID, FE_PROTO_VERSION);
	} else if (!strcmp(kind, "badversion")) {
		head = put(r, 0, 1, FE_F_UID | FE_F_ONEWAY, 999);
	} else {
		return 2;
	}
	publish(r, head);
	if (!strcmp(kind, "badclose")) {
		/* The daemon meets it as it closes the connection. */
		close(fd);
		printf("closed\n");
		return 0;
	}
	printf("%s\n", wake_stats(fd, &rep));
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct fe_ring *r;
	int fd;

	if (argc < 3 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: ringpeer SOCKET good N|KIND\n");
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return err_out(errno);
	r = get_ring(fd);
	if (!r)
		return err_out(errno);
	if (!strcmp(argv[2], "good") && argc == 4)
		return good(fd, r, num(argv[3]));
	return bad(fd, r, argv[2]);
}
