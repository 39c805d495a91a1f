/*
 * A journal made of a list of records, for the tests and the fuzz seeds:
 * the emit callback fe_jnl_save() takes, writing a set as the daemon
 * writes a snapshot (header, records, strings, trailer).
 */
#ifndef FE_TESTS_JNLSET_H
#define FE_TESTS_JNLSET_H

#include <stddef.h>
#include <stdint.h>

#include "journal/journal.h"

struct jnl_set {
	const struct fe_jnl_rec *r; /* the records */
	size_t n;                   /* how many */
	int64_t written;            /* the header's write time */
};

static inline int jnl_set_emit(struct fe_jnl_w *w, int fd, void *ctx)
{
	const struct jnl_set *s = ctx;
	uint64_t str = 0;

	for (size_t i = 0; i < s->n; i++)
		str += fe_jnl_str_len(&s->r[i]);
	fe_jnl_w_begin(w, fd, s->n, str, s->written);
	for (size_t i = 0; i < s->n; i++)
		fe_jnl_w_rec(w, &s->r[i]);
	for (size_t i = 0; i < s->n; i++)
		fe_jnl_w_str(w, &s->r[i]);
	return fe_jnl_w_end(w);
}

#endif
