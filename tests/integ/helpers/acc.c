/*
 * acc: access checks.
 *   acc access|faccessat|faccessat-eaccess|euidaccess|eaccess PATH WHAT
 * WHAT: any of r, w, x, or f (F_OK).  Prints "ok" when allowed.
 */
#include "helper.h"

#include <fcntl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *call, *path;
	int m = 0, r;

	if (argc != 4)
		return usage("acc CALL PATH rwx|f");
	call = argv[1];
	path = argv[2];
	for (const char *p = argv[3]; *p; p++)
		m |= *p == 'r' ? R_OK : *p == 'w' ? W_OK : *p == 'x' ? X_OK : 0;
	if (!strcmp(call, "access"))
		r = access(path, m);
	else if (!strcmp(call, "faccessat"))
		r = faccessat(AT_FDCWD, path, m, 0);
	else if (!strcmp(call, "faccessat-eaccess"))
		r = faccessat(AT_FDCWD, path, m, AT_EACCESS);
	else if (!strcmp(call, "euidaccess"))
		r = euidaccess(path, m);
	else if (!strcmp(call, "eaccess"))
		r = eaccess(path, m);
	else
		return usage("acc: unknown CALL");
	if (r != 0)
		return err_out(errno);
	printf("ok\n");
	return 0;
}
