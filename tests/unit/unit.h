/*
 * A unit test harness in a header.  Each CHECK prints "ok - NAME" or
 * "not ok - NAME: file:line: expr"; tests/run counts those lines.  A test
 * binary exits 1 when any check failed.
 */
#ifndef FE_TESTS_UNIT_H
#define FE_TESTS_UNIT_H

#include <stdio.h>
#include <stdlib.h>

static int unit_failed;

#define CHECK(name, expr)                                                  \
	do {                                                               \
		if (expr) {                                                \
			printf("ok - %s\n", (name));                       \
		} else {                                                   \
			printf("not ok - %s: %s:%d: %s\n", (name), __FILE__, \
			       __LINE__, #expr);                           \
			unit_failed = 1;                                   \
		}                                                          \
		fflush(stdout);                                            \
	} while (0)

/* A check that only prints when it fails: for loops over thousands of
 * cases, followed by one CHECK that sums them up. */
#define QUIET_CHECK(expr, ...)                                             \
	do {                                                               \
		if (!(expr)) {                                             \
			printf("# %s:%d: %s: ", __FILE__, __LINE__, #expr); \
			printf(__VA_ARGS__);                               \
			printf("\n");                                      \
			unit_failed = 1;                                   \
		}                                                          \
	} while (0)

#define UNIT_EXIT() return unit_failed ? 1 : 0

#endif
