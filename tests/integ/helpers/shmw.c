/*
 * shmw: a session process that tries to write the daemon's shared table,
 * for the test that the memfds a reader gets cannot be written.  Run in a
 * session: it asks the daemon for the memfds itself (MAP on
 * $FAKEENV_SOCKET) and, for each of root, pend, cur (and old), tries
 *   open-rw   open("/proc/self/fd/N", O_RDWR)
 *   write     pwrite() of the bytes already there, on that fd
 *   mmap-rw   mmap(PROT_WRITE, MAP_SHARED) of that fd
 *   mprotect  mprotect(PROT_WRITE) of a read-only mapping of N
 *   mem       a write through /proc/self/mem into that mapping
 * printing "NAME ROUTE ok" or "NAME ROUTE ERR <errno name>" for each.
 * With any writable mapping it scribbles: every used slot gets owner
 * 4242:4242 and a path offset far past the daemon's arena, the root's
 * counters and seq odd values; the pending counters (writable by design)
 * get 0xffffffff.  Last line: "scribbled N" (slots written).
 */
#include "helper.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fakeenv/map.h"
#include "fakeenv/proto.h"

static int get_fds(int *fds, int max)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct fe_req req = { .op = FE_OP_MAP, .version = FE_PROTO_VERSION };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * FE_MAP_FDS)];
	} ctl;
	struct fe_rep rep;
	struct iovec iov = { &rep, sizeof(rep) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	const char *path = getenv("FAKEENV_SOCKET");
	int fd, n = 0;

	if (!path || strlen(path) >= sizeof(sa.sun_path))
		return -EINVAL;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	if (send(fd, &req, sizeof(req), MSG_NOSIGNAL) != sizeof(req) ||
	    recvmsg(fd, &mh, 0) != sizeof(rep))
		return -EPROTO;
	if (rep.err)
		return rep.err;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm;
	     cm = CMSG_NXTHDR(&mh, cm)) {
		size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		for (size_t i = 0; i < k && n < max; i++)
			memcpy(&fds[n++], CMSG_DATA(cm) + i * sizeof(int),
			       sizeof(int));
	}
	return n;
}

static void say(const char *name, const char *route, int e)
{
	const char *en = strerrorname_np(e);

	if (!e)
		printf("%s %s ok\n", name, route);
	else if (en)
		printf("%s %s ERR %s\n", name, route, en);
	else
		printf("%s %s ERR %d\n", name, route, e);
}

/* Every used slot of the array at a (size bytes): a lie the daemon must
 * not follow.  Returns the slots written. */
static long scribble_arr(struct fe_map_arr *a, size_t size)
{
	size_t cap = (size - sizeof(*a)) / sizeof(struct fe_slot);
	long n = 0;

	for (size_t i = 0; i < cap; i++) {
		struct fe_slot *s = &a->slots[i];

		if (!(s->flags & FE_SLOT_USED))
			continue;
		s->uid = s->gid = 4242;
		s->path = 0xfffffff0u;
		s->flags |= FE_REC_XATTR;
		s->seq += 2;
		n++;
	}
	/* A capacity the daemon must not believe either. */
	a->cap = ~0ull;
	return n;
}

static long scribble(int k, void *p, size_t size)
{
	if (k == 0) {
		struct fe_map_root *r = p;

		r->seq |= 1;
		r->ndev = r->nxattr = r->nsgid = r->nblind = ~0ull;
		return 0;
	}
	if (k == 1) {
		uint32_t *c = p;

		for (size_t i = 0; i < size / sizeof(*c); i++)
			c[i] = 0xffffffffu;
		return 0;
	}
	return scribble_arr(p, size);
}

int main(void)
{
	static const char *names[] = { "root", "pend", "cur", "old" };
	int fds[FE_MAP_FDS];
	long scribbled = 0;
	int n = get_fds(fds, FE_MAP_FDS);

	if (n < 0)
		return err_out(-n);
	for (int k = 0; k < n; k++) {
		const char *nm = names[k];
		char proc[64];
		struct stat st;
		void *w = MAP_FAILED, *ro;
		size_t size;
		int rw, e, mem;

		if (fstat(fds[k], &st) < 0)
			return err_out(errno);
		size = (size_t)st.st_size;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fds[k]);
		rw = open(proc, O_RDWR | O_CLOEXEC);
		say(nm, "open-rw", rw < 0 ? errno : 0);
		if (rw >= 0) {
			uint64_t v;

			e = pread(rw, &v, sizeof(v), 0) == sizeof(v) &&
					    pwrite(rw, &v, sizeof(v), 0) ==
						    sizeof(v) ?
				    0 :
				    errno;
			say(nm, "write", e);
			w = mmap(NULL, size, PROT_READ | PROT_WRITE,
				 MAP_SHARED, rw, 0);
			say(nm, "mmap-rw", w == MAP_FAILED ? errno : 0);
			close(rw);
		}
		ro = mmap(NULL, size, PROT_READ, MAP_SHARED, fds[k], 0);
		if (ro == MAP_FAILED)
			return err_out(errno);
		mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
		if (mem < 0) {
			say(nm, "mem", errno);
		} else {
			uint64_t v;

			memcpy(&v, ro, sizeof(v));
			e = pwrite(mem, &v, sizeof(v), (off_t)(uintptr_t)ro) ==
					    sizeof(v) ?
				    0 :
				    errno;
			say(nm, "mem", e);
			close(mem);
		}
		e = mprotect(ro, size, PROT_READ | PROT_WRITE) < 0 ? errno : 0;
		say(nm, "mprotect", e);
		if (w == MAP_FAILED && !e)
			w = ro;
		if (w != MAP_FAILED)
			scribbled += scribble(k, w, size);
	}
	printf("scribbled %ld\n", scribbled);
	return 0;
}
