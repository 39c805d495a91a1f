/*
 * fakearm: a process of the session's user that plays an armed process
 * badly: it connects to the supervisor ($FAKEENV_SUPERVISOR), waits for
 * its byte, and hands it a pipe's read end, with data in it, as if it
 * were a seccomp listener.  Prints "handed" when the supervisor took the
 * message and closed the connection.
 *   fakearm
 */
#include "helper.h"

#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fakeenv/seccomp.h"

int main(void)
{
	const char *name = getenv(FE_ENV_SUPERVISOR);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct fe_sec_hello h = { .magic = FE_SEC_MAGIC, .ngroups = 0 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { &h, sizeof(h) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	int s, p[2];
	size_t len;
	char b;

	if (!name || name[0] != '@' || (len = strlen(name)) >= sizeof(sa.sun_path))
		return err_out(ENOENT);
	memcpy(sa.sun_path + 1, name + 1, len - 1);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa,
			     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) < 0 ||
	    read(s, &b, 1) != 1 || pipe(p) < 0 || write(p[1], "x", 1) != 1)
		return err_out(errno);
	memset(&u, 0, sizeof(u));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &p[0], sizeof(int));
	h.pid = getpid();
	if (sendmsg(s, &mh, 0) != (ssize_t)sizeof(h))
		return err_out(errno);
	(void)!read(s, &b, 1); /* the ack, or EOF: either way it is taken */
	printf("handed\n");
	return 0;
}
