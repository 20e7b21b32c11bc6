/* test_key_table.c - the hash table from 32-bit keys (base/key_table.h):
 * keys inserted are found with their values and keys never inserted are
 * not, through growth from the first 2^10 slots to millions of keys, with
 * many keys on one home slot and a run wrapping past the last slot; the
 * empty-slot key UINT32_MAX is held like any other; the table never passes
 * 2/3 full; the key list is exactly the keys held.
 */
#include <stdlib.h>
#include <string.h>

#include "base/key_table.h"
#include "testutil.h"

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* The home slot of key in a table of 2^bits slots (key_table.h's hash). */
static uint64_t home(uint32_t key, unsigned bits)
{
	return (uint64_t)key * 0x9E3779B97F4A7C15ull >> (64 - bits);
}

/* t's key list, sorted, equals want[0..n) (sorted, distinct). */
static void check_keys(const struct key_table *t, const uint32_t *want,
		       uint64_t n)
{
	CHECK_EQ_INT(t->used, n);
	uint32_t *got = malloc((n ? n : 1) * sizeof *got);
	key_table_keys(t, got);
	qsort(got, n, sizeof *got, cmp_u32);
	uint64_t bad = 0;
	for (uint64_t i = 0; i < n; i++)
		bad += got[i] != want[i];
	CHECK_EQ_INT(bad, 0);
	free(got);
}

static void test_empty(void)
{
	struct key_table t;
	memset(&t, 0, sizeof t);
	CHECK(!key_table_find(&t, 0), "an empty table holds key 0");
	CHECK(!key_table_find(&t, KEY_TABLE_EMPTY), "an empty table holds "
	      "the empty key");
	check_keys(&t, NULL, 0);
	key_table_free(&t);
	CHECK_EQ_INT(t.bits, 0);
}

/* Keys on one home slot of the first table, then on the last slot (their
 * runs wrap to slot 0): each found with its own value. */
static void test_collisions(void)
{
	struct key_table t;
	memset(&t, 0, sizeof t);
	const unsigned bits = KEY_TABLE_FIRST_BITS;
	const uint64_t last = (1ull << bits) - 1;
	uint32_t same[40], at_end[20];
	int ns = 0, ne = 0;
	for (uint32_t k = 0; ns < 40 || ne < 20; k++) {
		if (ns < 40 && home(k, bits) == 7)
			same[ns++] = k;
		else if (ne < 20 && home(k, bits) == last)
			at_end[ne++] = k;
	}
	for (int i = 0; i < 40; i++)
		key_table_insert(&t, same[i])->u = 1000 + (uint32_t)i;
	for (int i = 0; i < 20; i++)
		key_table_insert(&t, at_end[i])->u = 2000 + (uint32_t)i;
	CHECK_EQ_INT(t.bits, bits); /* 60 keys: still the first table */
	CHECK_EQ_INT(t.used, 60);
	for (int i = 0; i < 20; i++) {
		union key_val *v = key_table_find(&t, at_end[i]);
		CHECK(v && v->u == 2000u + (uint32_t)i, "key %u at the end",
		      at_end[i]);
	}
	CHECK(home(t.slot[0].key, bits) == last, "no run wrapped past the "
	      "last slot");
	for (int i = 0; i < 40; i++) {
		union key_val *v = key_table_find(&t, same[i]);
		CHECK(v && v->u == 1000u + (uint32_t)i, "key %u of slot 7",
		      same[i]);
	}
	/* a key absent from a long run is not found */
	uint32_t absent = same[39] + 1;
	while (home(absent, bits) != 7)
		absent++;
	CHECK(!key_table_find(&t, absent), "absent key %u found", absent);
	/* again: the same values, no key added */
	for (int i = 0; i < 40; i++)
		CHECK_EQ_INT(key_table_insert(&t, same[i])->u, 1000 + i);
	CHECK_EQ_INT(t.used, 60);
	key_table_free(&t);
}

/* UINT32_MAX marks a free slot, yet a table holds it (feature 2^32 - 1). */
static void test_empty_key(void)
{
	struct key_table t;
	memset(&t, 0, sizeof t);
	union key_val *v = key_table_insert(&t, KEY_TABLE_EMPTY);
	CHECK(v && v->u == 0, "the empty key added as 0");
	v->f = 2.5f;
	CHECK_EQ_INT(t.used, 1);
	for (uint32_t k = 0; k < 5000; k++)
		key_table_insert(&t, k * 7919u)->u = k;
	v = key_table_find(&t, KEY_TABLE_EMPTY);
	CHECK(v && v->f == 2.5f, "the empty key's value after growing");
	CHECK_EQ_INT(t.used, 5001);
	CHECK(key_table_insert(&t, KEY_TABLE_EMPTY) == v,
	      "the empty key inserted again is another value");
	CHECK_EQ_INT(t.used, 5001);
	uint32_t want[5001];
	for (uint32_t k = 0; k < 5000; k++)
		want[k] = k * 7919u;
	want[5000] = KEY_TABLE_EMPTY;
	qsort(want, 5001, sizeof *want, cmp_u32);
	check_keys(&t, want, 5001);
	uint64_t in_slots = 0;
	for (uint64_t s = 0; s < 1ull << t.bits; s++)
		in_slots += t.slot[s].key != KEY_TABLE_EMPTY;
	CHECK_EQ_INT(in_slots, 5000); /* held aside, not in a slot */
	key_table_free(&t);
	CHECK(!key_table_find(&t, KEY_TABLE_EMPTY), "freed table holds the "
	      "empty key");
}

/* key_table_grow: never shrinks, moves every key, refuses 2^33 slots. */
static void test_grow(void)
{
	struct key_table t;
	memset(&t, 0, sizeof t);
	for (uint32_t k = 1; k <= 100; k++)
		key_table_insert(&t, k << 20)->f = (float)k / 4;
	CHECK_EQ_INT(key_table_grow(&t, 4), 0);
	CHECK_EQ_INT(t.bits, KEY_TABLE_FIRST_BITS);
	CHECK_EQ_INT(key_table_grow(&t, 16), 0);
	CHECK_EQ_INT(t.bits, 16);
	CHECK_EQ_INT(key_table_grow(&t, 33), -1);
	CHECK_EQ_INT(t.bits, 16);
	for (uint32_t k = 1; k <= 100; k++) {
		union key_val *v = key_table_find(&t, k << 20);
		CHECK(v && v->f == (float)k / 4, "key %u after growing", k << 20);
	}
	CHECK_EQ_INT(t.used, 100);
	key_table_free(&t);
}

/* Two million random keys (some repeated) against a sorted reference:
 * every one found with the count of its inserts, a million others not;
 * never over 2/3 full. */
static void test_large(void)
{
	const uint64_t n = 2000000;
	struct key_table t;
	memset(&t, 0, sizeof t);
	uint32_t *ref = malloc(n * sizeof *ref);
	test_rng_seed(11);
	uint64_t over = 0;
	for (uint64_t i = 0; i < n; i++) {
		/* keys of 2^24 values: about 6% repeat */
		ref[i] = (uint32_t)(test_rng() >> 40) * 251u;
		union key_val *v = key_table_insert(&t, ref[i]);
		CHECK(v != NULL, "insert %llu", (unsigned long long)i);
		if (!v)
			break;
		v->u++;
		over += t.used * 3 > (2ull << t.bits);
	}
	CHECK_EQ_INT(over, 0);
	qsort(ref, n, sizeof *ref, cmp_u32);
	uint64_t m = 0, bad = 0;
	for (uint64_t i = 0; i < n;) {
		uint64_t j = i;
		while (j < n && ref[j] == ref[i])
			j++;
		union key_val *v = key_table_find(&t, ref[i]);
		bad += !v || v->u != j - i;
		ref[m++] = ref[i];
		i = j;
	}
	CHECK_EQ_INT(bad, 0);
	CHECK(m > n * 9 / 10 && m < n, "distinct keys %llu",
	      (unsigned long long)m);
	check_keys(&t, ref, m);
	uint64_t wrong = 0;
	for (uint64_t i = 0; i < 1000000; i++) {
		uint32_t k = (uint32_t)test_rng();
		int held = bsearch(&k, ref, m, sizeof *ref, cmp_u32) != NULL;
		wrong += held != (key_table_find(&t, k) != NULL);
	}
	CHECK_EQ_INT(wrong, 0);
	free(ref);
	key_table_free(&t);
}

int main(void)
{
	test_empty();
	test_collisions();
	test_empty_key();
	test_grow();
	test_large();
	return TEST_RESULT();
}
