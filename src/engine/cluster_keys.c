/* cluster_keys.c - the keys of a cluster worker's clocks (train_cluster.h):
 * ascending, found from a bitmap per clock made for all of an epoch's
 * clocks in one pass over the rows in storage order (or clock by clock
 * for a huge model), and translated to the model's keys where the
 * worker's engine holds only its features.
 */
#include <stdlib.h>
#include <string.h>

#include "base/huge_pages.h"
#include "data/dataset.h"
#include "engine_ops.h"
#include "train_cluster.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Marks the features below dim of rows order[b..e) (rows b..e where
 * order is NULL) in c->seen, on `threads` threads: a bit already set is
 * only read, so the hot features of power-law data cost a shared read,
 * not a contended atomic. */
static void mark_parallel(struct cluster *c, const struct boar_dataset *d,
			  const uint32_t *order, uint64_t b, uint64_t e,
			  uint64_t dim, int threads)
{
	uint64_t *seen = c->seen;
#pragma omp parallel for num_threads(threads) schedule(static) \
	if ((e - b) * (d->nnz / (d->n_rows + 1)) >= PARALLEL_MIN)
	for (uint64_t p = b; p < e; p++) {
		uint64_t r = order ? order[p] : p;
		for (uint64_t k = d->row_ptr[r]; k < d->row_ptr[r + 1]; k++) {
			uint32_t j = d->idx[k];
			if (j >= dim) /* a test set's feature the model lacks */
				continue;
			uint64_t bit = 1ull << (j & 63);
			if (!(__atomic_load_n(&seen[j / 64], __ATOMIC_RELAXED) &
			      bit))
				__atomic_fetch_or(&seen[j / 64], bit,
						  __ATOMIC_RELAXED);
		}
	}
}

/* Word w of copies 1.. of a bitmap (copy i at bits + i * stride) or-ed
 * into copy 0's and cleared: copy 0's word, the union. */
static inline uint64_t fold_word(uint64_t *bits, uint64_t w, int copies,
				 uint64_t stride)
{
	for (int i = 1; i < copies; i++) {
		bits[w] |= bits[i * stride + w];
		bits[i * stride + w] = 0;
	}
	return bits[w];
}

/* The features set in bits[words], ascending into out, clearing it: each
 * thread counts the bits of its range of words, then writes them from
 * where the counts before it end. With a map, each one's global id too,
 * into gout, and (gbits, all clear where the ids fall) its bit, in the
 * same pass (a clock's keys are megabytes: a second pass to translate
 * them, or to set their bits, read them all again). Without one, where
 * a feature is its key (words_to), each word as it is read: the keys'
 * bits. @return how many. */
static uint64_t scan_parallel(uint64_t *out, uint64_t *bits, uint64_t words,
			      int copies, uint64_t stride, int threads,
			      const uint32_t *map, uint64_t *gout,
			      uint64_t *gbits, uint64_t *words_to)
{
	uint64_t at[65] = {0};
	int nt = 1;
	if (threads > 64)
		threads = 64;
#pragma omp parallel num_threads(threads) if (words >= PARALLEL_MIN / 16)
	{
		int t = omp_get_thread_num(), n = omp_get_num_threads();
		uint64_t lo = words * t / n, hi = words * (t + 1) / n, m = 0;
		for (uint64_t w = lo; w < hi; w++)
			m += (uint64_t)__builtin_popcountll(
				fold_word(bits, w, copies, stride));
		at[t + 1] = m;
#pragma omp barrier
#pragma omp single
		{
			nt = n;
			for (int i = 1; i <= n; i++)
				at[i] += at[i - 1];
		}
		m = at[t];
		struct bit_run run = { gbits, 0, 0 };
		for (uint64_t w = lo; w < hi; w++) {
			uint64_t x = bits[w];
			if (words_to)
				words_to[w] = x;
			if (!x)
				continue;
			bits[w] = 0;
			if (map) {
				for (; x; x &= x - 1, m++) {
					out[m] = w * 64 +
						 (uint64_t)__builtin_ctzll(x);
					gout[m] = map[out[m]];
					if (gbits)
						bit_run_add(&run, gout[m]);
				}
				continue;
			}
			for (; x; x &= x - 1)
				out[m++] = w * 64 + (uint64_t)__builtin_ctzll(x);
		}
		bit_run_end(&run);
	}
	return at[nt];
}

/* Distinct features of rows order[b..e), ascending, one thread: listed
 * as found, then sorted (the bitmap only dedups), for clocks with few
 * non-zeros against the model's size, where scanning it would cost more
 * than a sort. */
static uint64_t features_sorted(struct cluster *c, const struct boar_dataset *d,
				const uint32_t *order, uint64_t b, uint64_t e,
				uint64_t *keys)
{
	uint64_t n = 0;
	for (uint64_t p = b; p < e; p++) {
		uint32_t r = order[p];
		for (uint64_t k = d->row_ptr[r]; k < d->row_ptr[r + 1]; k++) {
			uint32_t j = d->idx[k];
			uint64_t bit = 1ull << (j & 63);
			if (!(c->seen[j / 64] & bit)) {
				c->seen[j / 64] |= bit;
				keys[n++] = j;
			}
		}
	}
	qsort(keys, n, sizeof *keys, cmp_u64);
	for (uint64_t i = 0; i < n; i++)
		c->seen[keys[i] / 64] = 0;
	return n;
}

/* Row i's features into the bitmap of clock k (NO_CLOCK: none): the
 * calling thread's copy (own), or the shared one by atomics, a bit
 * already set only read. */
static void mark_row(const struct boar_dataset *d, uint64_t i, uint32_t k,
		     uint64_t *bits, uint64_t C, uint64_t W, int own)
{
	if (k == NO_CLOCK)
		return;
	uint64_t *b = bits + k * W;
	uint64_t x = d->row_ptr[i], end = d->row_ptr[i + 1];
	if (own) {
		b += (uint64_t)omp_get_thread_num() * C * W;
		for (; x < end; x++)
			b[d->idx[x] / 64] |= 1ull << (d->idx[x] & 63);
		return;
	}
	for (; x < end; x++) {
		uint32_t j = d->idx[x];
		uint64_t bit = 1ull << (j & 63);
		if (!(__atomic_load_n(&b[j / 64], __ATOMIC_RELAXED) & bit))
			__atomic_fetch_or(&b[j / 64], bit, __ATOMIC_RELAXED);
	}
}

/* Every clock's features of this epoch at once, into c->clock_bits: the
 * rows in storage order, each marking the bitmap of the clock the order
 * puts it in. Visiting rows in the epoch's random order, clock by clock,
 * missed the cache on every row (as many misses as the sweep itself, and
 * on one thread); storage order streams them. Each thread marks its own
 * copy where there is room for one per thread: one shared copy set by
 * atomics moved every line it touched between the cores (most of this
 * pass's time with 6 threads); the scan folds the copies. Each thread
 * marking only its own clocks' rows, listed in storage order, read the
 * rows' ids once per clock instead (a clock's rows are a tenth of them,
 * spread over every line): 4x slower on the VM with 2 threads and a 2^22
 * model (99 ms against 26 ms an epoch). So was one pass over every row
 * in storage order per thread, each marking the rows of its own clocks
 * into one copy (a 4x weak-scaling worker's first epoch: 0.19-0.20 s of
 * keys against 0.155-0.17 with a copy per thread, 16-core host). */
static void epoch_marks(struct cluster *c, const struct train_run *r,
			const uint32_t *order)
{
	const struct boar_dataset *d = r->d;
	uint64_t L = c->last - c->first, C = c->clocks, W = c->words;
	uint64_t *bits = c->clock_bits;
	uint32_t *clock_of = c->clock_of;
	int threads = threads_of(r);
	if (c->copies > 1 && threads > c->copies)
		threads = c->copies;
	/* each thread its own copy (no shared cache lines), or atomics */
	int own = c->copies > 1;
#pragma omp parallel num_threads(threads) if (d->nnz >= PARALLEL_MIN)
	{
#pragma omp for schedule(static)
		for (uint64_t i = 0; i < d->n_rows; i++)
			clock_of[i] = NO_CLOCK;
		/* position q of the share is in clock k, the last whose
		 * start first + L*k/C (the driver's cut) is <= q */
#pragma omp for schedule(static)
		for (uint64_t q = 0; q < L; q++)
			clock_of[order[c->first + q]] =
				(uint32_t)(((q + 1) * C + L - 1) / L - 1);
#pragma omp for schedule(dynamic, 4096)
		for (uint64_t i = 0; i < d->n_rows; i++)
			mark_row(d, i, clock_of[i], bits, C, W, own);
	}
}

void *cluster_alloc(size_t bytes, int zeroed)
{
	size_t n = bytes ? bytes : 1;
	void *p = zeroed ? calloc(n, 1) : malloc(n);
	boar_advise_huge(p, bytes);
	return p;
}

void cluster_keys_start(struct cluster *c, const struct train_run *r)
{
	const struct boar_dataset *d = r->d;
	c->words = (d->dim + 63) / 64;
	c->seen = calloc(c->words + 1, sizeof *c->seen);
	/* the epoch's bitmaps where they take at most the size of the
	 * data's ids (a huge hashed model marks clock by clock instead) */
	uint64_t set = c->clocks * c->words, room = d->nnz / 2 + 1;
	uint64_t threads = (uint64_t)threads_of(r);
	c->copies = threads * set <= room ? (int)threads : 1;
	if (set > room)
		return;
	c->clock_bits =
		cluster_alloc(c->copies * set * sizeof *c->clock_bits, 1);
	c->clock_of = cluster_alloc(d->n_rows * sizeof *c->clock_of, 0);
	if (!c->clock_bits || !c->clock_of)
		cluster_keys_no_bitmaps(c);
}

void cluster_keys_no_bitmaps(struct cluster *c)
{
	free(c->clock_bits);
	free(c->clock_of);
	c->clock_bits = NULL;
	c->clock_of = NULL;
}

void cluster_keys_free(struct cluster *c)
{
	cluster_keys_no_bitmaps(c);
	free(c->seen);
	c->seen = NULL;
}

/* Where clock k of an epoch starts in its order (the driver's cut). */
uint64_t cluster_clock_begin(const struct cluster *c, uint64_t k)
{
	return c->first + (c->last - c->first) * k / c->clocks;
}

/* Clock k's distinct features, ascending into keys: from the epoch's
 * bitmaps where there are some (clock 0 makes them), else from its rows;
 * with a map, their global ids into gkeys as they are found where a
 * bitmap is scanned (*mapped); without one, where words_to is given (a
 * feature is its key), the bitmap's words into it as they are scanned
 * (*copied). @return how many. */
static uint64_t clock_features(struct cluster *c, const struct train_run *r,
			       const uint32_t *order, uint64_t k,
			       uint64_t *keys, const uint32_t *map,
			       uint64_t *gkeys, uint64_t *gbits,
			       uint64_t *words_to, int *mapped, int *copied)
{
	const struct boar_dataset *d = r->d;
	uint64_t b = cluster_clock_begin(c, k), e = cluster_clock_begin(c, k + 1);
	*mapped = map != NULL;
	*copied = words_to != NULL;
	if (c->clock_bits) {
		if (k == 0)
			epoch_marks(c, r, order);
		return scan_parallel(keys, c->clock_bits + k * c->words,
				     c->words, c->copies, c->clocks * c->words,
				     threads_of(r), map, gkeys, gbits,
				     words_to);
	}
	uint64_t nnz = (uint64_t)((double)d->nnz * (e - b) /
				  (d->n_rows ? d->n_rows : 1));
	if (c->words < 16 * nnz) {
		mark_parallel(c, d, order, b, e, d->dim, threads_of(r));
		return scan_parallel(keys, c->seen, c->words, 1, 0,
				     threads_of(r), map, gkeys, gbits,
				     words_to);
	}
	*mapped = *copied = 0;
	return features_sorted(c, d, order, b, e, keys);
}

/* keys[0..n) (features, ascending) and the bias after them as keys: a
 * feature j of a K-class model owns keys j*K .. j*K+K-1 (the model is
 * feature-major), expanded in place from the back. keys has room for
 * (n + 1) * K. @return how many keys. */
static uint64_t features_to_keys(uint64_t *keys, uint64_t n, uint64_t dim,
				 uint32_t K)
{
	keys[n++] = dim; /* the bias (the largest key), every row */
	if (K > 1)
		for (uint64_t i = n; i-- > 0;)
			for (uint32_t j = K; j-- > 0;)
				keys[i * K + j] = keys[i] * K + j;
	return n * K;
}

/* Distinct keys of clock k's rows plus the bias, ascending: the bitmap
 * is per feature, each feature expanding to its K keys; the model's keys
 * found with the engine's where one key is one feature, and their bits
 * set as they are (else in a pass of their own). */
uint64_t cluster_clock_keys(struct cluster *c, const struct train_run *r,
			    const uint32_t *order, uint64_t k, uint64_t *keys,
			    uint64_t *gkeys, uint64_t *gbits)
{
	const uint32_t *map = c->fm && c->width == 1 && gkeys != keys
				      ? c->fm->global
				      : NULL;
	/* one key a feature, the model's own: the keys' bits are the
	 * bitmap's words (a 4x weak-scaling clock's 1.9M keys, 15 MB, are
	 * not read again to set them) */
	uint64_t *words_to = !c->fm && c->width == 1 && gkeys == keys ? gbits
								     : NULL;
	int mapped, copied;
	uint64_t n = clock_features(c, r, order, k, keys, map, gkeys, gbits,
				    words_to, &mapped, &copied);
	n = features_to_keys(keys, n, r->d->dim, c->width);
	if (mapped)
		gkeys[n - 1] = c->dim; /* the bias, the model's last key */
	else
		cluster_to_global(c, r, keys, gkeys, n);
	if (gbits && (mapped || copied)) /* the bias's bit */
		gbits[c->dim >> 6] |= 1ull << (c->dim & 63);
	else if (gbits)
		cluster_keys_as_bits(gkeys, n, gbits, threads_of(r));
	return n;
}

/* The features below dim of every row of d into each thread's own copy
 * of clock 0's bitmap (clear before an epoch), folded into copy 0: the
 * test set's features, before the first epoch. The shared bitmap set by
 * atomics (mark_parallel) took 19 ms for 100k rows on 3 threads of the
 * 16-core host, every line moving between the cores, ahead of worker 0's
 * first clock. */
static void mark_copies(struct cluster *c, const struct boar_dataset *d,
			uint64_t dim, int threads)
{
	uint64_t *bits = c->clock_bits, stride = c->clocks * c->words;
	if (threads > c->copies)
		threads = c->copies;
#pragma omp parallel num_threads(threads) if (d->nnz >= PARALLEL_MIN)
	{
		uint64_t *own = bits + (uint64_t)omp_get_thread_num() * stride;
#pragma omp for schedule(static)
		for (uint64_t i = 0; i < d->n_rows; i++)
			for (uint64_t k = d->row_ptr[i]; k < d->row_ptr[i + 1];
			     k++) {
				uint32_t j = d->idx[k];
				if (j < dim) /* else a feature the model lacks */
					own[j / 64] |= 1ull << (j & 63);
			}
#pragma omp for schedule(static)
		for (uint64_t w = 0; w < c->words; w++)
			fold_word(bits, w, c->copies, stride);
	}
}

int cluster_eval_keys(struct cluster *c, const struct train_run *r,
		      const struct boar_dataset *test)
{
	uint64_t dim = r->d->dim, n = 0;
	/* clock 0's first copy where there are copies, else the one bitmap */
	uint64_t *bits = c->clock_bits && c->copies > 1 ? c->clock_bits
						       : c->seen;
	if (bits == c->seen)
		mark_parallel(c, test, NULL, 0, test->n_rows, dim,
			      threads_of(r));
	else
		mark_copies(c, test, dim, threads_of(r));
	for (uint64_t w = 0; w < c->words; w++)
		n += (uint64_t)__builtin_popcountll(bits[w]);
	c->eval_keys = malloc((n + 1) * c->width * sizeof *c->eval_keys);
	if (!c->eval_keys) {
		memset(bits, 0, c->words * sizeof *bits);
		return -1;
	}
	n = scan_parallel(c->eval_keys, bits, c->words, 1, 0, threads_of(r),
			  NULL, NULL, NULL, NULL);
	c->n_eval = features_to_keys(c->eval_keys, n, dim, c->width);
	return 0;
}

uint64_t cluster_union(const uint64_t *a, uint64_t na, const uint64_t *b,
		       uint64_t nb, uint64_t *out, uint32_t *pos_a)
{
	uint64_t i = 0, j = 0, n = 0;
	/* No branch on the keys while both lists last: the smaller key goes
	 * out (one copy where they are equal), and a's place is noted every
	 * step (the step that takes a[i] writes it last). Branching on the
	 * compare mispredicted at nearly every switch between the lists: a
	 * clock's keys and a test set's interleave at about every key. */
	while (i < na && j < nb) {
		uint64_t x = a[i], y = b[j];
		uint64_t ta = x <= y, tb = y <= x;
		out[n] = ta ? x : y;
		pos_a[i] = (uint32_t)n;
		n++;
		i += ta;
		j += tb;
	}
	for (; i < na; i++) {
		pos_a[i] = (uint32_t)n;
		out[n++] = a[i];
	}
	while (j < nb)
		out[n++] = b[j++];
	return n;
}

/* keys[0..n) (the engine's) as the model's keys, into out: feature f of
 * the map is global[f], the bias (f = the map's size) the model's bias.
 * The map keeps the order, so they stay ascending. */
void cluster_to_global(const struct cluster *c, const struct train_run *r,
		       const uint64_t *keys, uint64_t *out, uint64_t n)
{
	if (!c->fm) { /* out is keys, or room for them and their sums */
		if (out != keys)
			memcpy(out, keys, n * sizeof *out);
		return;
	}
	const uint32_t *g = c->fm->global;
	uint64_t K = c->width, m = c->fm->n, dim = c->dim;
#pragma omp parallel for num_threads(threads_of(r)) schedule(static) \
	if (n >= PARALLEL_MIN)
	for (uint64_t i = 0; i < n; i++) {
		uint64_t f = keys[i] / K, k = keys[i] % K;
		out[i] = (f < m ? g[f] : dim) * K + k;
	}
}
