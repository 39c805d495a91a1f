/*
 * The common helpers the launcher, the daemon and the shim print with:
 * every errno libc knows has its description, never "error N"; a path is
 * cleaned lexically one way for the launcher and the shim alike.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

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
	{
		static const char *const cases[][2] = {
			{ "/", "/" },
			{ "//", "/" },
			{ "/a/b/", "/a/b" },
			{ "/a//b/./c", "/a/b/c" },
			{ "/a/b/../c", "/a/c" },
			{ "/..", "/" },
			{ "/a/../..", "/" },
			{ "/tmp/./x/..", "/tmp" },
			{ "/a/.b/..c", "/a/.b/..c" },
		};
		int bad = 0;

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			char buf[64];
			size_t n;

			strcpy(buf, cases[i][0]);
			n = fe_path_lexical(buf);
			QUIET_CHECK(strcmp(buf, cases[i][1]) == 0 &&
					    n == strlen(cases[i][1]),
				    "%s gave %s", cases[i][0], buf);
			bad += strcmp(buf, cases[i][1]) != 0;
		}
		CHECK("paths cleaned lexically", bad == 0);
	}
	CHECK("file type letters", fe_type_char(S_IFDIR | 0755) == 'd' &&
					   fe_type_char(S_IFCHR) == 'c' &&
					   fe_type_char(S_IFREG) == '-' &&
					   fe_type_char(0) == '?');
	UNIT_EXIT();
}
