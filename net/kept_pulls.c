/* kept_pulls.c - a connection's last pulls' key lists (kept_pulls.h). */
#include <stdlib.h>
#include <string.h>

#include "net/kept_pulls.h"

void kept_pulls_take(struct kept_pulls *k, struct wire_msg *m)
{
	struct kept_pull *p = &k->p[k->next];
	uint64_t *arr = p->ks.a;
	uint32_t cap = p->cap;
	int bits = (m->flags & WIRE_F_BITS) != 0;
	/* the two arrays are both uint64: either may become the other */
	uint64_t **from = bits ? &m->bits : &m->keys;
	uint32_t *from_cap = bits ? &m->bits_cap : &m->keys_cap;
	p->ks = key_span_of(m);
	p->cap = *from_cap;
	p->req = m->req;
	p->used = 1;
	*from = arr;
	*from_cap = cap;
	k->next = (k->next + 1) % WIRE_PULLS_KEPT;
}

const struct kept_pull *kept_pulls_find(const struct kept_pulls *k,
					uint32_t req)
{
	/* newest first: from the slot before next, backwards */
	for (uint32_t i = 1; i <= WIRE_PULLS_KEPT; i++) {
		const struct kept_pull *p =
			&k->p[(k->next + WIRE_PULLS_KEPT - i) % WIRE_PULLS_KEPT];
		if (p->used && p->req == req)
			return p;
	}
	return NULL;
}

void kept_pulls_free(struct kept_pulls *k)
{
	for (uint32_t i = 0; i < WIRE_PULLS_KEPT; i++)
		free(k->p[i].ks.a);
	memset(k, 0, sizeof *k);
}
