/* key_table.c - open addressing from 32-bit keys (see key_table.h). */
#include <stdlib.h>
#include <string.h>

#include "key_table.h"

int key_table_grow(struct key_table *t, unsigned bits)
{
	if (bits <= t->bits)
		return 0;
	if (bits > 32) /* more slots than keys */
		return -1;
	struct key_table n = *t;
	uint64_t size = 1ull << bits, old = t->bits ? 1ull << t->bits : 0;
	n.bits = bits;
	n.slot = malloc(size * sizeof *n.slot);
	if (!n.slot)
		return -1;
	memset(n.slot, 0xff, size * sizeof *n.slot); /* keys KEY_TABLE_EMPTY */
	for (uint64_t s = 0; s < old; s++)
		if (t->slot[s].key != KEY_TABLE_EMPTY)
			*key_table_slot(&n, t->slot[s].key) = t->slot[s];
	free(t->slot);
	*t = n;
	return 0;
}

void key_table_keys(const struct key_table *t, uint32_t *out)
{
	uint64_t size = t->bits ? 1ull << t->bits : 0, n = 0;
	for (uint64_t s = 0; s < size; s++)
		if (t->slot[s].key != KEY_TABLE_EMPTY)
			out[n++] = t->slot[s].key;
	if (t->has_empty_key)
		out[n] = KEY_TABLE_EMPTY;
}

void key_table_free(struct key_table *t)
{
	free(t->slot);
	memset(t, 0, sizeof *t);
}
