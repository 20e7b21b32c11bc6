/* key_table.h - a hash table from 32-bit keys to 32-bit values
 * (library-internal).
 *
 * For the sparse stores of very large key spaces: a shard's weights of a
 * 2^32-weight hashed model (net/shard_w.c, one table per stripe, keyed by
 * a key's offset in its stripe) and the renumbering of the features a
 * worker's rows touch (data/feature_map.c, keyed by feature id). Both
 * hold millions of keys, so a slot is a key and its value side by side,
 * 8 bytes (one cache line per probe): 64-bit keys made a table half as
 * large again and its inserts (page faults while it grows) half as slow
 * again. Open addressing with linear probing from a Fibonacci hash of the
 * key, at most 2/3 full.
 *
 * The key UINT32_MAX marks an empty slot; a table still holds that key
 * (feature 2^32 - 1 of a 2^32-weight model), aside from the slots.
 *
 * A zeroed struct is an empty table (no slots until the first insert).
 * Not thread-safe: its user holds a lock around it or owns it.
 */
#ifndef BOAR_KEY_TABLE_H
#define BOAR_KEY_TABLE_H

#include <stdint.h>

#define KEY_TABLE_EMPTY UINT32_MAX
/* The first insert's slots: 2^this. */
#define KEY_TABLE_FIRST_BITS 10

/* A value: a count or id (.u), or a weight (.f). */
union key_val {
	uint32_t u;
	float f;
};

struct key_slot {
	uint32_t key; /* KEY_TABLE_EMPTY: free */
	union key_val val;
};

struct key_table {
	struct key_slot *slot; /* 2^bits */
	unsigned bits;         /* 0 before the first insert */
	int has_empty_key;     /* holds KEY_TABLE_EMPTY, whose value is: */
	union key_val empty_key_val;
	uint64_t used;         /* keys held */
};

/* The slot of key, or the free one where it would go (t has slots; key
 * is not KEY_TABLE_EMPTY). */
static inline struct key_slot *key_table_slot(const struct key_table *t,
					      uint32_t key)
{
	uint64_t mask = (1ull << t->bits) - 1;
	uint64_t s = (uint64_t)key * 0x9E3779B97F4A7C15ull >> (64 - t->bits);
	while (t->slot[s].key != KEY_TABLE_EMPTY && t->slot[s].key != key)
		s = (s + 1) & mask;
	return &t->slot[s];
}

/* key's value, or NULL when the table does not hold it (writable, as
 * strchr's result is, for a caller that owns the table). */
static inline union key_val *key_table_find(const struct key_table *t,
					    uint32_t key)
{
	if (key == KEY_TABLE_EMPTY)
		return t->has_empty_key ? (union key_val *)&t->empty_key_val
					: NULL;
	if (!t->bits)
		return NULL;
	struct key_slot *s = key_table_slot(t, key);
	return s->key == key ? &s->val : NULL;
}

/* At least 2^bits slots, the keys held moved over. @return 0, or -1 when
 * out of memory (the table unchanged). */
int key_table_grow(struct key_table *t, unsigned bits);

/* key's value, added as 0 (.u 0, .f 0.0f) when absent; the table grows
 * first where one more key would fill it past 2/3. @return NULL when out
 * of memory (the table unchanged). Inline: a shard's pushes and a feature
 * map's build call it per key. */
static inline union key_val *key_table_insert(struct key_table *t,
					      uint32_t key)
{
	if (key == KEY_TABLE_EMPTY) {
		if (!t->has_empty_key) {
			t->has_empty_key = 1;
			t->empty_key_val.u = 0;
			t->used++;
		}
		return &t->empty_key_val;
	}
	if (__builtin_expect((t->used + 1) * 3 > (t->bits ? 2ull << t->bits
							  : 0),
			     0) &&
	    key_table_grow(t, t->bits ? t->bits + 1 : KEY_TABLE_FIRST_BITS))
		return NULL;
	struct key_slot *s = key_table_slot(t, key);
	if (s->key == KEY_TABLE_EMPTY) {
		s->key = key;
		s->val.u = 0;
		t->used++;
	}
	return &s->val;
}

/* The keys held (t->used of them) into out, in no useful order. */
void key_table_keys(const struct key_table *t, uint32_t *out);

/* Frees the slots; the table is empty again. */
void key_table_free(struct key_table *t);

#endif
