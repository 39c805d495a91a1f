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

/* The ids the shim and the launcher's spawn trampoline both read. */
static void test_ids(void)
{
	uint32_t v[4] = { 9, 9, 9, 9 }, g[3];

	CHECK("ids: four of them",
	      fe_parse_ids("1:2:3:4", v) && v[0] == 1 && v[3] == 4);
	CHECK("ids: three are refused, nothing written",
	      !fe_parse_ids("5:6:7", v) && v[0] == 1);
	CHECK("ids: a fifth is refused", !fe_parse_ids("1:2:3:4:5", v));
	CHECK("ids: past 32 bits is refused", !fe_parse_ids("1:2:3:4294967296", v));
	CHECK("ids: absent is refused", !fe_parse_ids(NULL, v));
	CHECK("groups: two", fe_parse_groups("7,8", g, 3) == 2 && g[1] == 8);
	CHECK("groups: empty is none", fe_parse_groups("", g, 3) == 0);
	CHECK("groups: more than max is refused",
	      fe_parse_groups("1,2,3,4", g, 3) == -1);
	CHECK("groups: a letter is refused", fe_parse_groups("1,x", g, 3) == -1);
}

int main(void)
{
	test_ids();
	CHECK("EAGAIN has its description",
	      strcmp(fe_strerror(EAGAIN), "Resource temporarily unavailable") == 0);
	/* libc's words: glibc's, or musl's. */
#ifdef __GLIBC__
	CHECK("ELOOP has its description",
	      strcmp(fe_strerror(ELOOP), "Too many levels of symbolic links") == 0);
	CHECK("EDQUOT has its description",
	      strcmp(fe_strerror(EDQUOT), "Disk quota exceeded") == 0);
#else
	CHECK("ELOOP has its description",
	      strcmp(fe_strerror(ELOOP), "Symbolic link loop") == 0);
	CHECK("EDQUOT has its description",
	      strcmp(fe_strerror(EDQUOT), "Quota exceeded") == 0);
#endif
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
