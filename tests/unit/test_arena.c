/*
 * The string arena: strings round trip through offsets, growth keeps them,
 * garbage is counted, and compaction keeps every live string reachable
 * through its rewritten offset.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "daemon/arena.h"
#include "unit.h"

#define N_STR 40000

static uint32_t offs[N_STR];
static int live[N_STR];

static void make_str(char *buf, size_t size, int i)
{
	snprintf(buf, size, "/some/build/tree/dir%d/file-%d.o", i % 97, i);
}

/* The walk: every live offset, once. */
static void walk(struct fe_arena *a, void *ctx)
{
	int *calls = ctx;

	(*calls)++;
	for (int i = 0; i < N_STR; i++)
		if (live[i])
			offs[i] = fe_arena_move(a, offs[i]);
}

static int all_live_match(const struct fe_arena *a)
{
	char want[128];
	int bad = 0;

	for (int i = 0; i < N_STR; i++) {
		if (!live[i])
			continue;
		make_str(want, sizeof(want), i);
		if (!offs[i] || strcmp(fe_arena_str(a, offs[i]), want)) {
			if (!bad)
				printf("# string %d lost\n", i);
			bad++;
		}
	}
	return bad == 0;
}

int main(void)
{
	struct fe_arena a;
	char buf[128];
	uint32_t o1, o2, o3;
	size_t len_before;
	int calls = 0, ok = 1;

	CHECK("init", fe_arena_init(&a) == 0);
	CHECK("offset 0 is none", fe_arena_str(&a, 0) == NULL);
	CHECK("add one", fe_arena_add(&a, "/etc/passwd", &o1) == 0);
	CHECK("add two", fe_arena_add(&a, "/usr/bin/env", &o2) == 0);
	CHECK("add empty", fe_arena_add(&a, "", &o3) == 0);
	CHECK("offsets are not 0 and distinct",
	      o1 && o2 && o3 && o1 != o2 && o2 != o3);
	CHECK("round trip one", !strcmp(fe_arena_str(&a, o1), "/etc/passwd"));
	CHECK("round trip two", !strcmp(fe_arena_str(&a, o2), "/usr/bin/env"));
	CHECK("round trip empty", !strcmp(fe_arena_str(&a, o3), ""));
	fe_arena_drop(&a, o2);
	CHECK("drop counts the NUL too", a.garbage == strlen("/usr/bin/env") + 1);
	fe_arena_drop(&a, 0);
	CHECK("drop of none counts nothing",
	      a.garbage == strlen("/usr/bin/env") + 1);
	fe_arena_free(&a);

	/* Growth across many doublings. */
	CHECK("init again", fe_arena_init(&a) == 0);
	for (int i = 0; i < N_STR; i++) {
		make_str(buf, sizeof(buf), i);
		if (fe_arena_add(&a, buf, &offs[i]) < 0)
			ok = 0;
		live[i] = 1;
	}
	CHECK("adds past the first buffer", ok && a.cap > 4096);
	CHECK("strings kept across growth", all_live_match(&a));
	CHECK("no garbage yet: no compaction wanted",
	      !fe_arena_wants_compact(&a));

	/* Drop most of them: garbage > 1 MiB and > half. */
	for (int i = 0; i < N_STR; i++) {
		if (i % 5 == 0)
			continue;
		fe_arena_drop(&a, offs[i]);
		live[i] = 0;
	}
	CHECK("garbage past half and 1 MiB wants compaction",
	      a.garbage > (1u << 20) && fe_arena_wants_compact(&a));
	len_before = a.len;
	CHECK("compact", fe_arena_compact(&a, walk, &calls) == 0);
	CHECK("walk called once", calls == 1);
	CHECK("garbage gone", a.garbage == 0 && a.len < len_before / 4);
	CHECK("live strings kept at their new offsets", all_live_match(&a));
	CHECK("nothing in compaction after", a.next == NULL);

	/* The arena works on after compaction. */
	CHECK("add after compaction", fe_arena_add(&a, "/after", &o1) == 0 &&
					      !strcmp(fe_arena_str(&a, o1),
						      "/after"));
	CHECK("old strings still there", all_live_match(&a));

	/* Drop everything: compaction leaves only the reserved byte (and
	 * "/after", handed to no walk, is gone with it). */
	for (int i = 0; i < N_STR; i++) {
		if (live[i])
			fe_arena_drop(&a, offs[i]);
		live[i] = 0;
	}
	fe_arena_drop(&a, o1);
	CHECK("compact to empty", fe_arena_compact(&a, walk, &calls) == 0 &&
					  a.len == 1 && a.garbage == 0);
	fe_arena_free(&a);
	UNIT_EXIT();
}
