/*
 * rmv: removal and renaming.
 *   rmv unlink|unlinkat|unlinkat-dir|remove|rmdir PATH
 *   rmv rename|renameat|renameat2|renameat2-noreplace|renameat2-exchange A B
 * Prints "ok" on success.
 */
#include "helper.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *call, *a, *b;
	int r;

	if (argc < 3)
		return usage("rmv CALL PATH [PATH]");
	call = argv[1];
	a = argv[2];
	b = argc > 3 ? argv[3] : NULL;
	if (!strncmp(call, "rename", 6) && (argc != 4 || !b))
		return usage("rmv CALL A B");
	if (!strcmp(call, "unlink"))
		r = unlink(a);
	else if (!strcmp(call, "unlinkat"))
		r = unlinkat(AT_FDCWD, a, 0);
	else if (!strcmp(call, "unlinkat-dir"))
		r = unlinkat(AT_FDCWD, a, AT_REMOVEDIR);
	else if (!strcmp(call, "remove"))
		r = remove(a);
	else if (!strcmp(call, "rmdir"))
		r = rmdir(a);
	else if (!strcmp(call, "rename"))
		r = rename(a, b);
	else if (!strcmp(call, "renameat"))
		r = renameat(AT_FDCWD, a, AT_FDCWD, b);
	else if (!strcmp(call, "renameat2"))
		r = renameat2(AT_FDCWD, a, AT_FDCWD, b, 0);
	else if (!strcmp(call, "renameat2-noreplace"))
		r = renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_NOREPLACE);
	else if (!strcmp(call, "renameat2-exchange"))
		r = renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
	else
		return usage("rmv: unknown CALL");
	if (r != 0)
		return err_out(errno);
	printf("ok\n");
	return 0;
}
