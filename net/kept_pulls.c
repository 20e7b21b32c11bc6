/* kept_pulls.c - a connection's last pulls' key lists (kept_pulls.h). */
#include <stdlib.h>
#include <string.h>

#include "net/kept_pulls.h"

void kept_pulls_take(struct kept_pulls *k, struct wire_msg *m)
{
	struct kept_pull *p = &k->p[k->next];
	uint64_t *keys = p->keys;
	uint32_t cap = p->cap;
	p->keys = m->keys;
	p->cap = m->keys_cap;
	p->n = m->n_keys;
	p->req = m->req;
	p->used = 1;
	m->keys = keys;
	m->keys_cap = cap;
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
		free(k->p[i].keys);
	memset(k, 0, sizeof *k);
}
