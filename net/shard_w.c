/* shard_w.c - a shard's weights under stripe locks, dense or sparse (see
 * shard_w.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "base/lower_bound.h"
#include "net/shard_w.h"

/* Values gathered for a reply per wire_put_vals call (a sparse store
 * looks them up into this buffer first). */
#define CHUNK 1024

/* ------------------------------------------------- one stripe's table */

static float tab_get(const struct key_table *t, uint32_t off)
{
	const union key_val *v = key_table_find(t, off);
	return v ? v->f : 0.0f;
}

/* Adds v to off's weight (a key absent is 0), or sets it. */
static int tab_add(struct key_table *t, uint32_t off, float v, int set)
{
	if (v == 0.0f && !set)
		return 0; /* nothing to add: an absent key stays absent */
	union key_val *w = key_table_insert(t, off);
	if (!w)
		return -1;
	w->f = set ? v : w->f + v;
	return 0;
}

/* ------------------------------------------------------------ the store */

/* Whether [lo, hi) is too large for a dense array. */
static int wants_sparse(uint64_t n)
{
	if (n > SHARD_W_DENSE_MAX)
		return 1;
	struct rlimit as;
	return !getrlimit(RLIMIT_AS, &as) && as.rlim_cur != RLIM_INFINITY &&
	       n * sizeof(float) > (uint64_t)as.rlim_cur / 4;
}

int shard_w_init_store(struct shard_w *sw, uint64_t lo, uint64_t hi,
		       int store)
{
	uint64_t n = hi - lo;
	memset(sw, 0, sizeof *sw);
	sw->lo = lo;
	sw->hi = hi;
	while ((n >> sw->shift) >= SHARD_W_STRIPES)
		sw->shift++;
	if (sw->shift > 31) /* a table's offsets stay below 2^31 */
		sw->shift = 31;
	sw->n_stripes = (unsigned)(((n ? n - 1 : 0) >> sw->shift) + 1);
	if (store == SHARD_W_AUTO)
		store = wants_sparse(n) ? SHARD_W_SPARSE : SHARD_W_DENSE;
	if (store == SHARD_W_SPARSE)
		sw->tab = calloc(sw->n_stripes, sizeof *sw->tab);
	else
		sw->w = calloc(n ? n : 1, sizeof *sw->w);
	sw->stripe = malloc(sw->n_stripes * sizeof *sw->stripe);
	if ((!sw->w && !sw->tab) || !sw->stripe) {
		free(sw->w);
		free(sw->tab);
		free(sw->stripe);
		memset(sw, 0, sizeof *sw);
		return -1;
	}
	for (unsigned i = 0; i < sw->n_stripes; i++)
		pthread_mutex_init(&sw->stripe[i], NULL);
	pthread_rwlock_init(&sw->gate, NULL);
	sw->ready = 1;
	return 0;
}

void shard_w_free(struct shard_w *sw)
{
	if (!sw->ready)
		return;
	for (unsigned i = 0; i < sw->n_stripes; i++)
		pthread_mutex_destroy(&sw->stripe[i]);
	pthread_rwlock_destroy(&sw->gate);
	if (sw->tab)
		for (unsigned i = 0; i < sw->n_stripes; i++)
			key_table_free(&sw->tab[i]);
	free(sw->tab);
	free(sw->stripe);
	free(sw->w);
	sw->ready = 0;
}

/* The stripe of key k and the first key past it. */
static unsigned stripe_of(const struct shard_w *sw, uint64_t k,
			  uint64_t *end)
{
	uint64_t st = (k - sw->lo) >> sw->shift;
	*end = sw->lo + ((st + 1) << sw->shift);
	return (unsigned)st;
}

/* The first of keys[i..n) (ascending) at or past end: a stripe's keys
 * found by one binary search, so the loops over them test no bound per
 * key. */
static uint32_t stripe_end(const uint64_t *keys, uint32_t i, uint32_t n,
			   uint64_t end)
{
	return (uint32_t)boar_lower_bound_u64(keys, i, n, end);
}

/* Key k's offset in its stripe st. */
static uint32_t off_of(const struct shard_w *sw, unsigned st, uint64_t k)
{
	return (uint32_t)(k - sw->lo - ((uint64_t)st << sw->shift));
}

int shard_w_add(struct shard_w *sw, const uint64_t *keys, const float *vals,
		uint32_t n)
{
	float *w = sw->w - sw->lo;
	int rc = 0;
	for (uint32_t i = 0; i < n && !rc;) {
		uint64_t end;
		unsigned st = stripe_of(sw, keys[i], &end);
		uint32_t j = stripe_end(keys, i, n, end);
		pthread_mutex_lock(&sw->stripe[st]);
		if (sw->w)
			for (; i < j; i++)
				w[keys[i]] += vals[i];
		else
			for (; i < j && !rc; i++)
				rc = tab_add(&sw->tab[st],
					     off_of(sw, st, keys[i]), vals[i],
					     0);
		pthread_mutex_unlock(&sw->stripe[st]);
	}
	return rc;
}

/* Values of keys[0..n) of stripe st from its table, into out. */
static void tab_values(const struct shard_w *sw, unsigned st,
		       const uint64_t *keys, uint32_t n, float *out)
{
	for (uint32_t i = 0; i < n; i++)
		out[i] = tab_get(&sw->tab[st], off_of(sw, st, keys[i]));
}

void shard_w_put_keys(struct shard_w *sw, struct wire_out *o,
		      const uint64_t *keys, uint32_t n, int f16)
{
	float buf[CHUNK];
	for (uint32_t i = 0; i < n;) {
		uint64_t end;
		unsigned st = stripe_of(sw, keys[i], &end);
		uint32_t j = stripe_end(keys, i, n, end);
		pthread_mutex_lock(&sw->stripe[st]);
		if (sw->w) {
			wire_put_vals_at(o, sw->w, keys + i, j - i, sw->lo, f16);
		} else {
			for (uint32_t a = i; a < j; a += CHUNK) {
				uint32_t m = j - a < CHUNK ? j - a : CHUNK;
				tab_values(sw, st, keys + a, m, buf);
				wire_put_vals(o, buf, m, f16);
			}
		}
		pthread_mutex_unlock(&sw->stripe[st]);
		i = j;
	}
}

void shard_w_put_range(struct shard_w *sw, struct wire_out *o, uint64_t a,
		       uint64_t count)
{
	uint64_t b = a + count;
	float buf[CHUNK];
	while (a < b) {
		uint64_t end;
		unsigned st = stripe_of(sw, a, &end);
		if (end > b)
			end = b;
		pthread_mutex_lock(&sw->stripe[st]);
		if (sw->w) {
			wire_put_vals(o, sw->w + (a - sw->lo),
				      (uint32_t)(end - a), 0);
		} else {
			for (uint64_t k = a; k < end; k += CHUNK) {
				uint32_t m = (uint32_t)(end - k < CHUNK ? end - k
									: CHUNK);
				for (uint32_t i = 0; i < m; i++)
					buf[i] = tab_get(&sw->tab[st],
							 off_of(sw, st, k + i));
				wire_put_vals(o, buf, m, 0);
			}
		}
		pthread_mutex_unlock(&sw->stripe[st]);
		a = end;
	}
}

uint64_t shard_w_stored(struct shard_w *sw)
{
	if (sw->w)
		return sw->hi - sw->lo;
	uint64_t n = 0;
	for (unsigned i = 0; i < sw->n_stripes; i++) {
		pthread_mutex_lock(&sw->stripe[i]);
		n += sw->tab[i].used;
		pthread_mutex_unlock(&sw->stripe[i]);
	}
	return n;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

int shard_w_export(struct shard_w *sw, uint64_t **keys, float **vals,
		   uint64_t *n)
{
	uint64_t total = 0, m = 0, most = 0;
	for (unsigned i = 0; sw->tab && i < sw->n_stripes; i++) {
		total += sw->tab[i].used;
		if (sw->tab[i].used > most)
			most = sw->tab[i].used;
	}
	*keys = malloc((total ? total : 1) * sizeof **keys);
	*vals = malloc((total ? total : 1) * sizeof **vals);
	uint32_t *offs = malloc((most ? most : 1) * sizeof *offs);
	if (!*keys || !*vals || !offs) {
		free(*keys);
		free(*vals);
		free(offs);
		return -1;
	}
	/* stripes in key order, each one's offsets sorted */
	for (unsigned i = 0; sw->tab && i < sw->n_stripes; i++) {
		const struct key_table *t = &sw->tab[i];
		uint64_t k = t->used;
		key_table_keys(t, offs);
		qsort(offs, k, sizeof *offs, cmp_u32);
		for (uint64_t j = 0; j < k; j++) {
			float v = tab_get(t, offs[j]);
			if (v == 0.0f)
				continue; /* summed back to 0: absent */
			(*keys)[m] = sw->lo + ((uint64_t)i << sw->shift) + offs[j];
			(*vals)[m++] = v;
		}
	}
	free(offs);
	*n = m;
	return 0;
}

int shard_w_load(struct shard_w *sw, const uint64_t *keys, const float *vals,
		 uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		uint64_t k = keys ? keys[i] : sw->lo + i, end;
		if (sw->w) {
			sw->w[k - sw->lo] = vals[i];
			continue;
		}
		if (vals[i] == 0.0f)
			continue;
		unsigned st = stripe_of(sw, k, &end);
		if (tab_add(&sw->tab[st], off_of(sw, st, k), vals[i], 1))
			return -1;
	}
	return 0;
}
