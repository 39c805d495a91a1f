/*
 * eno: errno after a call that a fake root sees succeed.
 *   eno CALL PATH
 * Sets errno to EILSEQ, makes the call, prints "RET ERRNO" (ERRNO by
 * name): a faked success must print "0 EILSEQ"; a failure must carry the
 * call's own errno ("-1 ENOENT" for a missing file).
 * CALL: chown lchown fchown fchownat chmod fchmod mknod mknodat mkdir
 *   stat lstat fstat statx open-creat unlink rename setuid0 setgid0
 *   setgroups access-w
 */
#include "helper.h"

#include <fcntl.h>
#include <grp.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *call, *path;
	struct stat st;
	struct statx stx;
	char buf[4096];
	gid_t g0 = 0;
	int r, e, fd = -1;

	if (argc != 3)
		return usage("eno CALL PATH");
	call = argv[1];
	path = argv[2];
	if (!strcmp(call, "fchown") || !strcmp(call, "fchmod") ||
	    !strcmp(call, "fstat")) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return err_out(errno);
	}
	snprintf(buf, sizeof(buf), "%s.new", path);
	errno = EILSEQ;
	if (!strcmp(call, "chown"))
		r = chown(path, 1234, 5678);
	else if (!strcmp(call, "lchown"))
		r = lchown(path, 1234, 5678);
	else if (!strcmp(call, "fchown"))
		r = fchown(fd, 1234, 5678);
	else if (!strcmp(call, "fchownat"))
		r = fchownat(AT_FDCWD, path, 1234, 5678, 0);
	else if (!strcmp(call, "chmod"))
		r = chmod(path, 04755);
	else if (!strcmp(call, "fchmod"))
		r = fchmod(fd, 04755);
	else if (!strcmp(call, "mknod"))
		r = mknod(path, S_IFCHR | 0600, makedev(1, 3));
	else if (!strcmp(call, "mknodat"))
		r = mknodat(AT_FDCWD, path, S_IFBLK | 0600, makedev(8, 1));
	else if (!strcmp(call, "mkdir"))
		r = mkdir(path, 0755);
	else if (!strcmp(call, "stat"))
		r = stat(path, &st);
	else if (!strcmp(call, "lstat"))
		r = lstat(path, &st);
	else if (!strcmp(call, "fstat"))
		r = fstat(fd, &st);
	else if (!strcmp(call, "statx"))
		r = statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &stx);
	else if (!strcmp(call, "open-creat"))
		r = (fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0
			    ? -1
			    : 0;
	else if (!strcmp(call, "unlink"))
		r = unlink(path);
	else if (!strcmp(call, "rename"))
		r = rename(path, buf);
	else if (!strcmp(call, "setuid0"))
		r = setuid(0);
	else if (!strcmp(call, "setgid0"))
		r = setgid(0);
	else if (!strcmp(call, "setgroups"))
		r = setgroups(1, &g0);
	else if (!strcmp(call, "access-w"))
		r = access(path, W_OK);
	else
		return usage("eno: unknown CALL");
	e = errno;
	const char *n = strerrorname_np(e);

	if (n)
		printf("%d %s\n", r, n);
	else
		printf("%d %d\n", r, e);
	return 0;
}
