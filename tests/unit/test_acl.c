/*
 * The POSIX ACL codec the shim and the daemon share: the kernel's checks
 * (tag order, one each of the owner, group and other entries, a mask
 * whenever there are named entries), the bits an ACL stands for, and
 * what makes one minimal, i.e. a chmod in the shim.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "common/acl.h"
#include "unit.h"

enum { UO = 0x01, U = 0x02, GO = 0x04, G = 0x08, M = 0x10, O = 0x20 };

/* An ACL of n entries {tag, perm, id} into buf; returns its length. */
static size_t acl(unsigned char *buf, const uint32_t (*e)[3], size_t n)
{
	memset(buf, 0, 4 + 8 * n);
	buf[0] = 2;
	for (size_t i = 0; i < n; i++) {
		unsigned char *p = buf + 4 + 8 * i;

		p[0] = (unsigned char)e[i][0];
		p[2] = (unsigned char)e[i][1];
		for (int b = 0; b < 4; b++)
			p[4 + b] = (unsigned char)(e[i][2] >> 8 * b);
	}
	return 4 + 8 * n;
}

#define PARSE(entries, perm, minimal)                                      \
	fe_acl_parse(buf, acl(buf, entries, sizeof(entries) / sizeof(entries[0])), \
		     perm, minimal)

int main(void)
{
	static const uint32_t minimal[][3] = { { UO, 6, 0 }, { GO, 4, 0 },
					       { O, 4, 0 } };
	static const uint32_t unordered[][3] = { { GO, 4, 0 }, { UO, 6, 0 },
						 { O, 4, 0 } };
	static const uint32_t named[][3] = { { UO, 7, 0 }, { U, 5, 1000 },
					     { GO, 5, 0 }, { M, 1, 0 },
					     { O, 0, 0 } };
	static const uint32_t nomask[][3] = { { UO, 7, 0 }, { U, 5, 1000 },
					      { GO, 5, 0 }, { O, 0, 0 } };
	static const uint32_t twice[][3] = { { UO, 7, 0 }, { U, 5, 1000 },
					     { U, 5, 1000 }, { GO, 5, 0 },
					     { M, 7, 0 }, { O, 0, 0 } };
	static const uint32_t noother[][3] = { { UO, 7, 0 }, { GO, 5, 0 } };
	static const uint32_t badperm[][3] = { { UO, 8, 0 }, { GO, 5, 0 },
					       { O, 0, 0 } };
	unsigned char buf[4 + 8 * 8];
	uint32_t perm = 0;
	bool min = false;

	CHECK("minimal: 0644, a chmod",
	      PARSE(minimal, &perm, &min) == 1 && perm == 0644 && min);
	CHECK("named entries: the mask is the group bits, not minimal",
	      PARSE(named, &perm, &min) == 1 && perm == 0710 && !min);
	CHECK("out of tag order: refused, as the kernel does (the shim took "
	      "it for a chmod once)",
	      PARSE(unordered, &perm, &min) == -EINVAL);
	CHECK("named entries without a mask: refused",
	      PARSE(nomask, &perm, &min) == -EINVAL);
	CHECK("the same user twice: refused",
	      PARSE(twice, &perm, &min) == -EINVAL);
	CHECK("no other entry: refused", PARSE(noother, &perm, &min) == -EINVAL);
	CHECK("perm past rwx: refused", PARSE(badperm, &perm, &min) == -EINVAL);
	memset(buf, 0, 4);
	buf[0] = 2;
	CHECK("no entry at all: 0, remove the ACL",
	      fe_acl_parse(buf, 4, &perm, &min) == 0);
	buf[0] = 1;
	CHECK("version 1: refused", fe_acl_parse(buf, 4, &perm, &min) == -EINVAL);
	CHECK("a partial entry: refused",
	      fe_acl_parse(buf, acl(buf, minimal, 3) - 1, &perm, &min) ==
		      -EINVAL);
	fe_acl_chmod(buf, acl(buf, named, 5), 0731);
	CHECK("chmod rewrites owner, mask and other, not the named entries",
	      fe_acl_parse(buf, 44, &perm, &min) == 1 && perm == 0731 &&
		      buf[4 + 8 + 2] == 5 && buf[4 + 16 + 2] == 5);
	UNIT_EXIT();
}
