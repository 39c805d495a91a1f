/*
 * The string arena; see arena.h.  Grows by doubling, never shrinks except
 * by compaction.  No string is ever moved except inside fe_arena_compact(),
 * whose walk rewrites every offset, so an offset stays valid until its
 * owner drops it.
 */
#include "arena.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_MIN_CAP 4096u
/* Offsets are uint32: the buffer may hold at most 2^32 bytes. */
#define ARENA_MAX_CAP ((size_t)1 << 32)

int fe_arena_init(struct fe_arena *a)
{
	memset(a, 0, sizeof(*a));
	a->buf = malloc(ARENA_MIN_CAP);
	if (!a->buf)
		return -ENOMEM;
	a->cap = ARENA_MIN_CAP;
	a->buf[0] = '\0';
	a->len = 1;
	return 0;
}

void fe_arena_free(struct fe_arena *a)
{
	if (a->pinned != a->buf)
		free(a->pinned);
	free(a->buf);
	free(a->next);
	memset(a, 0, sizeof(*a));
}

/* Smallest power-of-two capacity >= need, at least ARENA_MIN_CAP; 0 when
 * need cannot fit in 32-bit offsets. */
static size_t cap_for(size_t need)
{
	size_t cap = ARENA_MIN_CAP;

	if (need > ARENA_MAX_CAP)
		return 0;
	while (cap < need)
		cap *= 2;
	return cap;
}

int fe_arena_alloc(struct fe_arena *a, size_t n, uint32_t *off)
{
	if (n > ARENA_MAX_CAP - a->len)
		return -ENOMEM;
	if (a->len + n > a->cap) {
		size_t cap = cap_for(a->len + n);
		char *buf;

		if (a->pins && a->buf == a->pinned) {
			/* A snapshot reads the old buffer: copy, keep it. */
			buf = cap ? malloc(cap) : NULL;
			if (buf)
				memcpy(buf, a->buf, a->len);
		} else {
			buf = cap ? realloc(a->buf, cap) : NULL;
		}
		if (!buf)
			return -ENOMEM;
		a->buf = buf;
		a->cap = cap;
	}
	*off = (uint32_t)a->len;
	a->len += n;
	return 0;
}

char *fe_arena_ptr(const struct fe_arena *a, uint32_t off)
{
	return a->buf + off;
}

int fe_arena_add(struct fe_arena *a, const char *s, uint32_t *off)
{
	size_t n = strlen(s) + 1;
	int r = fe_arena_alloc(a, n, off);

	if (r == 0)
		memcpy(a->buf + *off, s, n);
	return r;
}

bool fe_arena_span(const struct fe_arena *a, uint32_t off, size_t n)
{
	return off && off <= a->len && n <= a->len - off;
}

const char *fe_arena_str(const struct fe_arena *a, uint32_t off)
{
	if (!off || off >= a->len || !memchr(a->buf + off, '\0', a->len - off))
		return NULL;
	return a->buf + off;
}

void fe_arena_drop(struct fe_arena *a, uint32_t off)
{
	const char *s = fe_arena_str(a, off);

	if (s)
		fe_arena_drop_n(a, off, strlen(s) + 1);
}

void fe_arena_drop_n(struct fe_arena *a, uint32_t off, size_t n)
{
	/* An offset dropped twice must not make garbage pass len: the
	 * compaction sizes its buffer by len - garbage. */
	if (fe_arena_span(a, off, n))
		a->garbage = a->garbage + n < a->len ? a->garbage + n :
						      a->len - 1;
}

bool fe_arena_wants_compact(const struct fe_arena *a)
{
	return a->garbage > FE_ARENA_COMPACT_MIN && a->garbage > a->len / 2;
}

int fe_arena_compact(struct fe_arena *a, fe_arena_walk_fn *walk, void *ctx)
{
	size_t live = a->len - a->garbage;
	/* Room for as much again, so that compaction is not followed at
	 * once by a growth. */
	size_t cap = cap_for(live > ARENA_MAX_CAP / 2 ? live : live * 2);

	a->next = cap ? malloc(cap) : NULL;
	if (!a->next)
		return -ENOMEM;
	a->next[0] = '\0';
	a->next_cap = cap;
	a->next_len = 1;
	walk(a, ctx);
	if (!a->pins || a->buf != a->pinned)
		free(a->buf);
	a->buf = a->next;
	a->cap = cap;
	a->len = a->next_len;
	a->garbage = 0;
	a->next = NULL;
	a->next_cap = 0;
	a->next_len = 0;
	return 0;
}

uint32_t fe_arena_move(struct fe_arena *a, uint32_t off)
{
	const char *s = fe_arena_str(a, off);

	return s ? fe_arena_move_n(a, off, strlen(s) + 1) : 0;
}

uint32_t fe_arena_move_n(struct fe_arena *a, uint32_t off, size_t n)
{
	uint32_t moved;

	if (!fe_arena_span(a, off, n))
		return 0;
	/* The live entries fit when the walk hands each live offset once:
	 * the new buffer holds at least len - garbage bytes. */
	if (n > a->next_cap - a->next_len)
		return 0;
	memcpy(a->next + a->next_len, a->buf + off, n);
	moved = (uint32_t)a->next_len;
	a->next_len += n;
	return moved;
}

const char *fe_arena_pin(struct fe_arena *a, size_t *len)
{
	if (a->pins && a->pinned != a->buf)
		return NULL;
	a->pinned = a->buf;
	a->pins++;
	*len = a->len;
	return a->buf;
}

void fe_arena_unpin(struct fe_arena *a, const char *buf)
{
	if (!buf || !a->pins || buf != a->pinned)
		return;
	if (--a->pins)
		return;
	if (a->pinned != a->buf)
		free(a->pinned);
	a->pinned = NULL;
}

size_t fe_arena_entry(const struct fe_arena *a, uint32_t off, bool xattrs,
		      size_t *plen, const unsigned char **blk, size_t *blen)
{
	const char *p = fe_arena_str(a, off);
	size_t n;
	uint32_t bl = 0;

	*plen = 0;
	*blk = NULL;
	*blen = 0;
	if (!p)
		return 0;
	n = strlen(p) + 1;
	if (xattrs) {
		if (!fe_arena_span(a, off, n + sizeof(bl)))
			return 0;
		memcpy(&bl, p + n, sizeof(bl));
		if (!fe_arena_span(a, off, n + sizeof(bl) + bl))
			return 0;
		*blk = (const unsigned char *)p + n + sizeof(bl);
		*blen = bl;
	}
	*plen = n;
	return n + (*blk ? sizeof(bl) + *blen : 0);
}

size_t fe_arena_entry_len(const struct fe_arena *a, uint32_t off,
			  bool xattrs)
{
	const unsigned char *blk;
	size_t plen, blen;

	return fe_arena_entry(a, off, xattrs, &plen, &blk, &blen);
}
