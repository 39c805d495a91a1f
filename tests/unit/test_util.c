/*
 * The common helpers the launcher, the daemon and the shim print with:
 * every errno libc knows has its description, never "error N".
 */
#include <errno.h>
#include <string.h>

#include "common/util.h"
#include "unit.h"

int main(void)
{
	CHECK("EAGAIN has its description",
	      strcmp(fe_strerror(EAGAIN), "Resource temporarily unavailable") == 0);
	CHECK("ELOOP has its description",
	      strcmp(fe_strerror(ELOOP), "Too many levels of symbolic links") == 0);
	CHECK("EDQUOT has its description",
	      strcmp(fe_strerror(EDQUOT), "Disk quota exceeded") == 0);
	CHECK("ENOENT has its description",
	      strcmp(fe_strerror(ENOENT), "No such file or directory") == 0);
	CHECK("an unknown number: error N",
	      strcmp(fe_strerror(4321), "error 4321") == 0);
	CHECK("errno is kept", (errno = EXDEV, fe_strerror(EIO), errno == EXDEV));
	UNIT_EXIT();
}
