/* shard_w.c - a shard's weights under stripe locks (see shard_w.h). */
#include <stdlib.h>

#include "net/shard_w.h"

int shard_w_init(struct shard_w *sw, uint64_t lo, uint64_t hi)
{
	uint64_t n = hi - lo;
	sw->lo = lo;
	sw->hi = hi;
	sw->shift = 0;
	while ((n >> sw->shift) >= SHARD_W_STRIPES)
		sw->shift++;
	sw->n_stripes = (unsigned)(((n ? n - 1 : 0) >> sw->shift) + 1);
	sw->w = calloc(n ? n : 1, sizeof *sw->w);
	sw->stripe = malloc(sw->n_stripes * sizeof *sw->stripe);
	if (!sw->w || !sw->stripe) {
		free(sw->w);
		free(sw->stripe);
		sw->w = NULL;
		sw->stripe = NULL;
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

void shard_w_add(struct shard_w *sw, const uint64_t *keys,
		 const float *vals, uint32_t n)
{
	float *w = sw->w - sw->lo;
	for (uint32_t i = 0; i < n;) {
		uint64_t end;
		unsigned st = stripe_of(sw, keys[i], &end);
		pthread_mutex_lock(&sw->stripe[st]);
		for (; i < n && keys[i] < end; i++)
			w[keys[i]] += vals[i];
		pthread_mutex_unlock(&sw->stripe[st]);
	}
}

void shard_w_put_keys(struct shard_w *sw, struct wire_out *o,
		      const uint64_t *keys, uint32_t n, int f16)
{
	for (uint32_t i = 0; i < n;) {
		uint64_t end;
		unsigned st = stripe_of(sw, keys[i], &end);
		uint32_t j = i;
		while (j < n && keys[j] < end)
			j++;
		pthread_mutex_lock(&sw->stripe[st]);
		wire_put_vals_at(o, sw->w, keys + i, j - i, sw->lo, f16);
		pthread_mutex_unlock(&sw->stripe[st]);
		i = j;
	}
}

void shard_w_put_range(struct shard_w *sw, struct wire_out *o, uint64_t a,
		       uint64_t count)
{
	uint64_t b = a + count;
	while (a < b) {
		uint64_t end;
		unsigned st = stripe_of(sw, a, &end);
		if (end > b)
			end = b;
		pthread_mutex_lock(&sw->stripe[st]);
		wire_put_vals(o, sw->w + (a - sw->lo), (uint32_t)(end - a), 0);
		pthread_mutex_unlock(&sw->stripe[st]);
		a = end;
	}
}
