/*
 * The records' arena entries (table.c): a path, then the xattrs, written
 * anew for each change that touches them, dropped as garbage when no
 * slot refers to them, and the arena compacted when garbage dominates.
 * Offsets and lengths read back from shared slots are checked by the
 * arena's accessors (fe_arena_entry()) before use.
 */
#include "table.h"
#include "table_int.h"

#include <errno.h>
#include <string.h>

#include "common/util.h"

/* fe_arena_compact()'s walk: hand every path to the new buffer. */
static void walk_paths(struct fe_arena *a, void *ctx)
{
	struct fe_tab *t = ctx;
	struct fe_tab_arr *arrs[] = { &t->cur, &t->old };

	for (size_t k = 0; k < FE_ARRAY_LEN(arrs); k++) {
		struct fe_tab_arr *arr = arrs[k];

		for (size_t i = 0; arr->slots && i < arr->cap; i++) {
			struct fe_slot *s = &arr->slots[i];
			size_t n;

			if (!(s->flags & FE_SLOT_USED) || !s->path)
				continue;
			/* An entry that is not whole is lost, not copied. */
			n = fe_arena_entry_len(a, s->path,
					       s->flags & FE_REC_XATTR);
			slot_begin(s);
			SET(s, path, n ? fe_arena_move_n(a, s->path, n) : 0);
			slot_end(s);
		}
	}
}

void fe_tab_drop_path(struct fe_tab *t, uint32_t off, uint32_t flags)
{
	fe_arena_drop_n(&t->arena, off,
			fe_arena_entry_len(&t->arena, off, flags & FE_REC_XATTR));
	if (fe_arena_wants_compact(&t->arena))
		(void)fe_arena_compact(&t->arena, walk_paths, t);
}

int fe_tab_new_entry(struct fe_tab *t, uint32_t old_off, uint32_t old_flags,
		     const char *path, bool set_x, const void *blk, size_t len,
		     uint32_t *off, bool *has_x)
{
	const unsigned char *oblk;
	size_t plen, n, old_plen, oblen, xlen, keep_plen;
	bool drop = path && strlen(path) >= FE_PATH_MAX;
	uint32_t xl32;
	char *p;
	const char *old;
	int r;

	if (!fe_arena_entry(&t->arena, old_off, old_flags & FE_REC_XATTR, &old_plen, &oblk,
		       &oblen))
		old_off = 0;
	/* The old path is kept when no new one is given, unless the new
	 * one was dropped. */
	keep_plen = drop ? 0 : old_plen;
	if (drop)
		path = NULL;
	xlen = set_x ? len : oblen;
	*has_x = xlen > 0;
	if (xlen > UINT32_MAX / 2)
		return -ENOMEM;
	plen = path ? strlen(path) + 1 : keep_plen ? keep_plen : 1;
	if (!path && !keep_plen && !xlen) {
		*off = 0;
		t->long_paths += drop;
		return 0;
	}
	n = plen + (xlen ? sizeof(xl32) + xlen : 0);
	r = fe_arena_alloc(&t->arena, n, off);
	if (r < 0)
		return r;
	t->long_paths += drop;
	/* Pointers into the arena only now: the alloc may have moved it. */
	p = fe_arena_ptr(&t->arena, *off);
	old = old_off ? fe_arena_ptr(&t->arena, old_off) : NULL;
	if (path)
		memcpy(p, path, plen);
	else if (keep_plen)
		memcpy(p, old, plen);
	else
		p[0] = '\0';
	if (!xlen)
		return 0;
	xl32 = (uint32_t)xlen;
	memcpy(p + plen, &xl32, sizeof(xl32));
	if (set_x)
		memcpy(p + plen + sizeof(xl32), blk, xlen);
	else
		memcpy(p + plen + sizeof(xl32), old + old_plen + sizeof(xl32),
		       xlen);
	return 0;
}

bool fe_tab_same_path(const struct fe_tab *t, uint32_t off, uint32_t flags,
		       const char *path)
{
	const unsigned char *blk;
	size_t plen, blen;

	if (!off || !fe_arena_entry(&t->arena, off, flags & FE_REC_XATTR, &plen,
				    &blk, &blen))
		return false;
	return strlen(path) + 1 == plen &&
	       memcmp(fe_arena_ptr(&t->arena, off), path, plen) == 0;
}
