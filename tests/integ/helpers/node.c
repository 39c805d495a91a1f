/*
 * node: device nodes and fifos.
 *   node mknod|mknodat|xmknod|xmknodat PATH TYPE MODE MAJOR MINOR
 *   node mkfifo|mkfifoat PATH MODE
 * TYPE: c (char), b (block), p (fifo), s (socket), f (regular).
 * Prints "ok" on success.  __xmknod and __xmknodat are declared by hand
 * (glibc >= 2.33 headers dropped them) and bound to their old versions.
 */
#include "helper.h"

#include <fcntl.h>
#include <unistd.h>

#define FE_MKNOD_VER 0 /* _MKNOD_VER on x86_64 */
int __xmknod(int ver, const char *path, mode_t mode, dev_t *dev);
int __xmknodat(int ver, int dirfd, const char *path, mode_t mode,
	       dev_t *dev);
#if defined(__x86_64__)
__asm__(".symver __xmknod,__xmknod@GLIBC_2.2.5");
__asm__(".symver __xmknodat,__xmknodat@GLIBC_2.4");
#endif

static mode_t type_bits(const char *t)
{
	switch (t[0]) {
	case 'c': return S_IFCHR;
	case 'b': return S_IFBLK;
	case 'p': return S_IFIFO;
	case 's': return S_IFSOCK;
	case 'f': return S_IFREG;
	}
	fprintf(stderr, "bad type: %s\n", t);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *call, *path;
	int r;

	if (argc < 4)
		return usage("node CALL PATH ...");
	call = argv[1];
	path = argv[2];
	if (!strcmp(call, "mkfifo") || !strcmp(call, "mkfifoat")) {
		mode_t m = omode(argv[3]);

		if (argc != 4)
			return usage("node mkfifo PATH MODE");
		if (!strcmp(call, "mkfifo"))
			r = mkfifo(path, m);
		else
			r = mkfifoat(AT_FDCWD, path, m);
	} else {
		if (argc != 7)
			return usage("node CALL PATH TYPE MODE MAJOR MINOR");
		mode_t m = type_bits(argv[3]) | omode(argv[4]);
		dev_t dev = makedev(num(argv[5]), num(argv[6]));

		if (!strcmp(call, "mknod"))
			r = mknod(path, m, dev);
		else if (!strcmp(call, "mknodat"))
			r = mknodat(AT_FDCWD, path, m, dev);
		else if (!strcmp(call, "xmknod"))
			r = __xmknod(FE_MKNOD_VER, path, m, &dev);
		else if (!strcmp(call, "xmknodat"))
			r = __xmknodat(FE_MKNOD_VER, AT_FDCWD, path, m, &dev);
		else
			return usage("node: unknown CALL");
	}
	if (r != 0)
		return err_out(errno);
	printf("ok\n");
	return 0;
}
