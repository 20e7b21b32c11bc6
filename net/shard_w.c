/* shard_w.c - a shard's weights under stripe locks, dense or sparse (see
 * shard_w.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

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

/* The i-th of the floats at v, at any alignment. */
static inline float val_at(const void *v, size_t i)
{
	float f;
	memcpy(&f, (const char *)v + 4 * i, sizeof f);
	return f;
}

/* A list's keys, stripe by stripe. */
static int add_list(struct shard_w *sw, const uint64_t *keys,
		    const void *vals, uint32_t n)
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
				w[keys[i]] += val_at(vals, i);
		else
			for (; i < j && !rc; i++)
				rc = tab_add(&sw->tab[st],
					     off_of(sw, st, keys[i]),
					     val_at(vals, i), 0);
		pthread_mutex_unlock(&sw->stripe[st]);
	}
	return rc;
}

/* The stripes a bitmap's keys [first, last] fall in, in turn: *pa, *pb
 * the positions (key - base) of the stripe's part, st its stripe. Start
 * with *pb = 0. @return 0 when none is left. */
static int next_stripe(const struct shard_w *sw, const struct key_span *ks,
		       uint64_t last, uint64_t *pa, uint64_t *pb,
		       unsigned *st)
{
	uint64_t k = ks->base + *pb, end;
	if (k > last)
		return 0;
	*st = stripe_of(sw, k, &end);
	*pa = *pb;
	*pb = (end > last ? last + 1 : end) - ks->base;
	return 1;
}

/* ---- a bitmap's keys, a word (64 keys) at a time
 *
 * With AVX-512, 16 keys per step: the dense store's 16 weights are loaded
 * under the bits' mask (lanes off the mask are not read, so nothing past
 * the store is), the values expanded to the set lanes (add) or the
 * weights compressed out of them (reply), in the keys' order. Walking the
 * bits one at a time (ctz, clear the lowest) chained each key on the
 * last: 1.3x a list's ns a key, hot in cache (bench/wire_rate). Elsewhere
 * that walk. */

/* w[j] += the next of the floats at v (any alignment) for each bit j of
 * x, in order. @return the values taken. */
static inline uint32_t add_word(float *w, uint64_t x, const void *v)
{
	uint32_t used = 0;
#if defined(__AVX512F__)
	for (int q = 0; q < 4 && x; q++, x >>= 16, w += 16) {
		__mmask16 k = (__mmask16)(x & 0xffff);
		if (!k)
			continue;
		__m512 d = _mm512_maskz_expandloadu_ps(
			k, (const char *)v + 4 * (size_t)used);
		__m512 a = _mm512_maskz_loadu_ps(k, w);
		_mm512_mask_storeu_ps(w, k, _mm512_add_ps(a, d));
		used += (uint32_t)__builtin_popcount(k);
	}
#else
	for (; x; x &= x - 1)
		w[__builtin_ctzll(x)] += val_at(v, used++);
#endif
	return used;
}

/* w[j] for each bit j of x, in order, as floats at out (any alignment).
 * @return how many. */
static inline uint32_t gather_word(void *out, const float *w, uint64_t x)
{
	uint32_t m = 0;
#if defined(__AVX512F__)
	for (int q = 0; q < 4 && x; q++, x >>= 16, w += 16) {
		__mmask16 k = (__mmask16)(x & 0xffff);
		if (!k)
			continue;
		__m512 a = _mm512_maskz_loadu_ps(k, w);
		_mm512_mask_compressstoreu_ps((float *)out + m, k, a);
		m += (uint32_t)__builtin_popcount(k);
	}
#else
	for (; x; x &= x - 1)
		memcpy((char *)out + 4 * (size_t)m++, &w[__builtin_ctzll(x)], 4);
#endif
	return m;
}

/* A bitmap's keys: vals[i] to its i-th set bit's key. */
static int add_bits(struct shard_w *sw, const struct key_span *ks,
		    const void *vals)
{
	uint64_t last = key_span_last(ks), pa, pb = 0;
	float *w = sw->w ? sw->w + (ks->base - sw->lo) : NULL;
	uint32_t i = 0;
	unsigned st;
	int rc = 0;
	while (!rc && next_stripe(sw, ks, last, &pa, &pb, &st)) {
		pthread_mutex_lock(&sw->stripe[st]);
		for (uint64_t b = pa >> 6; b <= (pb - 1) >> 6 && !rc; b++) {
			uint64_t x = key_span_word(ks, b, pa, pb);
			if (w) {
				i += add_word(w + 64 * b, x,
					      (const char *)vals + 4 * (size_t)i);
				continue;
			}
			for (; x && !rc; x &= x - 1) {
				uint64_t k = ks->base + 64 * b +
					     (uint64_t)__builtin_ctzll(x);
				rc = tab_add(&sw->tab[st], off_of(sw, st, k),
					     val_at(vals, i++), 0);
			}
		}
		pthread_mutex_unlock(&sw->stripe[st]);
	}
	return rc;
}

/* A bitmap's values, in its keys' order: float32 from a dense store
 * straight into the frame where the host's floats are the wire's
 * (little-endian); otherwise through buf, CHUNK at a time. */
static void put_bits(struct shard_w *sw, struct wire_out *o,
		     const struct key_span *ks, int f16)
{
	uint64_t last = key_span_last(ks), pa, pb = 0;
	const float *w = sw->w ? sw->w + (ks->base - sw->lo) : NULL;
	int direct = w && !f16 && WIRE_LE_HOST;
	uint8_t *out = direct ? wire_put_space(o, (size_t)ks->n * 4) : NULL;
	float buf[CHUNK + 64];
	uint32_t m = 0;
	unsigned st;
	if (direct && !out)
		return;
	while (next_stripe(sw, ks, last, &pa, &pb, &st)) {
		pthread_mutex_lock(&sw->stripe[st]);
		for (uint64_t b = pa >> 6; b <= (pb - 1) >> 6; b++) {
			uint64_t x = key_span_word(ks, b, pa, pb);
			if (direct) {
				out += 4 * (size_t)gather_word(out, w + 64 * b,
							       x);
				continue;
			}
			if (w)
				m += gather_word(buf + m, w + 64 * b, x);
			for (; !w && x; x &= x - 1) {
				uint64_t k = ks->base + 64 * b +
					     (uint64_t)__builtin_ctzll(x);
				buf[m++] = tab_get(&sw->tab[st],
						   off_of(sw, st, k));
			}
			if (m >= CHUNK) {
				wire_put_vals(o, buf, m, f16);
				m = 0;
			}
		}
		pthread_mutex_unlock(&sw->stripe[st]);
	}
	if (m)
		wire_put_vals(o, buf, m, f16);
}

int shard_w_add(struct shard_w *sw, const struct key_span *ks,
		const void *vals)
{
	if (!ks->n)
		return 0;
	return ks->n_words ? add_bits(sw, ks, vals)
			   : add_list(sw, ks->a, vals, ks->n);
}

/* Values of keys[0..n) of stripe st from its table, into out. */
static void tab_values(const struct shard_w *sw, unsigned st,
		       const uint64_t *keys, uint32_t n, float *out)
{
	for (uint32_t i = 0; i < n; i++)
		out[i] = tab_get(&sw->tab[st], off_of(sw, st, keys[i]));
}

static void put_list(struct shard_w *sw, struct wire_out *o,
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

void shard_w_put_keys(struct shard_w *sw, struct wire_out *o,
		      const struct key_span *ks, int f16)
{
	if (!ks->n)
		return;
	if (ks->n_words)
		put_bits(sw, o, ks, f16);
	else
		put_list(sw, o, ks->a, ks->n, f16);
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
