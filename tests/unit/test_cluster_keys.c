/* test_cluster_keys.c - a cluster worker's clock keys (cluster_keys.c)
 * are exactly the distinct features of the clock's rows and the bias,
 * ascending, whichever way the epoch's bitmaps are marked: a copy per
 * thread, one shared copy by atomics, or no bitmaps (each clock marked
 * alone), for
 * 1-5 threads and 1-11 clocks, checked clock by clock against a brute
 * force over a power-law data set, for two epochs' orders in a row (the
 * bitmaps are cleared as they are read); and the model's keys found with
 * them where the worker's features are a map's (global f = 2f + 1 here,
 * the bias the model's dim), in the same pass. The union of a clock's
 * keys and an evaluation's (cluster_union) against a brute force: every
 * key once, ascending, each of the clock's at the place it names. The
 * evaluation's keys (cluster_eval_keys: a test set's features the model
 * has, some it lacks, and the bias), found before the epochs every way
 * the bitmaps are marked, leaving them clear for the clocks after.
 */
#include <stdlib.h>
#include <string.h>

#include "data/dataset.h"
#include "data/feature_map.h"
#include "engine/train.h"
#include "engine/train_cluster.h"
#include "testutil.h"

#define ROWS 12000
#define DIM 20000

/* Rows of 1-60 power-law (or uniform) ids (distinct within a row, as
 * parsers give). */
static void make_data(struct boar_dataset *d, uint64_t rows, uint64_t dim,
		      int uniform)
{
	memset(d, 0, sizeof *d);
	d->task = BOAR_TASK_LINEAR;
	d->n_rows = rows;
	d->dim = dim;
	d->row_ptr = calloc(rows + 1, sizeof *d->row_ptr);
	d->idx = malloc(rows * 60 * sizeof *d->idx);
	uint8_t *used = calloc(dim, 1);
	uint64_t n = 0;
	for (uint64_t i = 0; i < rows; i++) {
		uint64_t len = 1 + test_rng() % 60, b = n;
		for (uint64_t j = 0; j < len; j++) {
			double u = test_unif();
			uint32_t id = (uint32_t)((double)dim *
						 (uniform ? u : u * u));
			if (!used[id]) {
				used[id] = 1;
				d->idx[n++] = id;
			}
		}
		for (uint64_t x = b; x < n; x++)
			used[d->idx[x]] = 0;
		d->row_ptr[i + 1] = n;
	}
	d->nnz = n;
	free(used);
}

static void shuffle(uint32_t *order, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	TEST_SHUFFLE(order, n);
}

/* The features marked in in[0..dim) and the bias (dim), ascending into
 * out; in is freed. @return how many. */
static uint64_t listed(uint8_t *in, uint64_t dim, uint64_t *out)
{
	in[dim] = 1; /* the bias */
	uint64_t n = 0;
	for (uint64_t j = 0; j <= dim; j++)
		if (in[j])
			out[n++] = j;
	free(in);
	return n;
}

/* The brute force: clock k's features and the bias, ascending. */
static uint64_t expected(const struct boar_dataset *d, const uint32_t *order,
			 uint64_t b, uint64_t e, uint64_t *out)
{
	uint8_t *in = calloc(d->dim + 1, 1);
	for (uint64_t p = b; p < e; p++)
		for (uint64_t x = d->row_ptr[order[p]];
		     x < d->row_ptr[order[p] + 1]; x++)
			in[d->idx[x]] = 1;
	return listed(in, d->dim, out);
}

/* The test set's features below dim and the bias (dim), ascending. */
static uint64_t eval_expected(const struct boar_dataset *t, uint64_t dim,
			      uint64_t *out)
{
	uint8_t *in = calloc(dim + 1, 1);
	for (uint64_t x = 0; x < t->nnz; x++)
		if (t->idx[x] < dim)
			in[t->idx[x]] = 1;
	return listed(in, dim, out);
}

/* A test set (rows of ids up to DIM + 3000: some the model lacks), made
 * once. */
static struct boar_dataset test_set;

/* mode 0: as cluster_keys_start decides (a copy per thread here); 1: no
 * bitmaps; 2: one shared copy by atomics. fm: the worker's features
 * under that map (else the model's own). */
static void check(const struct boar_dataset *d, int threads, uint64_t clocks,
		  int mode, const struct feature_map *fm)
{
	struct train_run r = { .d = d };
	r.o.threads = threads;
	struct cluster c = { .width = 1, .fm = fm, .dim = d->dim };
	if (fm)
		c.dim = fm->dim;
	c.first = 0;
	c.last = d->n_rows;
	c.clocks = clocks;
	cluster_keys_start(&c, &r);
	if (mode == 1) /* as when they do not fit */
		cluster_keys_no_bitmaps(&c);
	if (mode == 2 && c.clock_bits && c.copies > 1) {
		c.copies = 1; /* the first copy of the bitmaps, by atomics */
	}
	c.keys = malloc((d->nnz + 1) * sizeof *c.keys);
	c.gkeys = fm ? malloc((d->nnz + 1) * sizeof *c.gkeys) : c.keys;
	uint64_t *want = malloc((d->dim + 1) * sizeof *want);
	uint32_t *order = malloc(d->n_rows * sizeof *order);
	/* the model's keys as bits (every other clock), set as they are
	 * found, against the bits of the keys found */
	uint64_t gw = (c.dim + 1 + 63) / 64;
	uint64_t *gbits = calloc(gw, sizeof *gbits);
	uint64_t *gwant = calloc(gw, sizeof *gwant);
	CHECK(c.seen && c.keys && c.gkeys && want && order && gbits && gwant,
	      "memory");
	if (!fm) { /* as cluster_start finds them, before the first clock */
		CHECK_EQ_INT(cluster_eval_keys(&c, &r, &test_set), 0);
		uint64_t m = eval_expected(&test_set, d->dim, want);
		CHECK(c.n_eval == m &&
			      !memcmp(c.eval_keys, want, m * sizeof *want),
		      "threads %d, clocks %llu, mode %d: %llu evaluation "
		      "keys, want %llu",
		      threads, (unsigned long long)clocks, mode,
		      (unsigned long long)c.n_eval, (unsigned long long)m);
		free(c.eval_keys);
		c.eval_keys = NULL;
	}
	for (int epoch = 0; epoch < 2; epoch++) {
		shuffle(order, d->n_rows);
		for (uint64_t k = 0; k < clocks; k++) {
			int with_bits = (int)(k % 2);
			memset(gbits, 0, gw * sizeof *gbits);
			uint64_t n = cluster_clock_keys(&c, &r, order, k,
							c.keys, c.gkeys,
							with_bits ? gbits
								  : NULL);
			memset(gwant, 0, gw * sizeof *gwant);
			for (uint64_t i = 0; with_bits && i < n; i++)
				gwant[c.gkeys[i] / 64] |= 1ull
							  << (c.gkeys[i] % 64);
			CHECK(!memcmp(gbits, gwant, gw * sizeof *gbits),
			      "threads %d, clocks %llu, mode %d, map %d, clock "
			      "%llu: the model's keys' bits differ",
			      threads, (unsigned long long)clocks, mode,
			      fm != NULL, (unsigned long long)k);
			uint64_t m = expected(d, order,
					      cluster_clock_begin(&c, k),
					      cluster_clock_begin(&c, k + 1),
					      want);
			CHECK(n == m && !memcmp(c.keys, want, n * sizeof *want),
			      "threads %d, clocks %llu, mode %d (copies %d, "
			      "bitmaps %s), epoch %d, clock %llu: %llu keys, "
			      "want %llu",
			      threads, (unsigned long long)clocks, mode,
			      c.copies, c.clock_bits ? "yes" : "no", epoch,
			      (unsigned long long)k, (unsigned long long)n,
			      (unsigned long long)m);
			uint64_t bad = 0;
			for (uint64_t i = 0; fm && i < n && n == m; i++)
				bad += c.gkeys[i] != (want[i] < d->dim
							      ? fm->global[want[i]]
							      : fm->dim);
			CHECK(!bad, "threads %d, clocks %llu, mode %d: %llu "
			      "keys mapped wrong", threads,
			      (unsigned long long)clocks, mode,
			      (unsigned long long)bad);
		}
	}
	for (uint64_t w = 0; c.clock_bits && w < c.copies * clocks * c.words;
	     w++)
		if (c.clock_bits[w]) {
			CHECK(0, "bitmaps left set after the epoch");
			break;
		}
	free(order);
	free(want);
	free(gbits);
	free(gwant);
	if (c.gkeys != c.keys)
		free(c.gkeys);
	free(c.keys);
	cluster_keys_free(&c);
}

/* Ascending distinct keys below span, each kept with chance pct %. */
static uint64_t some_keys(uint64_t *k, uint64_t span, uint64_t pct)
{
	uint64_t n = 0;
	for (uint64_t x = 0; x < span; x++)
		if (test_rng() % 100 < pct)
			k[n++] = x;
	return n;
}

static void check_union(void)
{
	enum { SPAN = 5000 };
	static uint64_t a[SPAN], b[SPAN], out[2 * SPAN];
	static uint32_t pos[SPAN];
	static uint8_t in[SPAN];
	const uint64_t pct[] = { 0, 3, 45, 88, 100 };
	for (int x = 0; x < 5; x++)
		for (int y = 0; y < 5; y++) {
			uint64_t na = some_keys(a, SPAN, pct[x]);
			uint64_t nb = some_keys(b, SPAN, pct[y]);
			uint64_t n = cluster_union(a, na, b, nb, out, pos), m = 0;
			memset(in, 0, sizeof in);
			for (uint64_t i = 0; i < na; i++)
				in[a[i]] = 1;
			for (uint64_t i = 0; i < nb; i++)
				in[b[i]] = 1;
			for (uint64_t key = 0; key < SPAN; key++)
				if (in[key] && m < n && out[m] == key)
					m++;
			/* every key out in order, ascending, from a or b */
			CHECK(m == n,
			      "union of %d%% and %d%%: %llu keys, %llu right",
			      (int)pct[x], (int)pct[y], (unsigned long long)n,
			      (unsigned long long)m);
			uint64_t want = 0;
			for (uint64_t key = 0; key < SPAN; key++)
				want += in[key];
			CHECK(n == want, "union size %llu, want %llu",
			      (unsigned long long)n, (unsigned long long)want);
			for (uint64_t i = 0; i < na; i++)
				CHECK(pos[i] < n && out[pos[i]] == a[i],
				      "a[%llu] = %llu not at its place",
				      (unsigned long long)i,
				      (unsigned long long)a[i]);
		}
}

/* cluster_keys_as_bits: exactly the keys' bits, the words between the
 * first and last key's cleared of what was there (words outside them
 * left alone), on 1-5 threads with enough keys for every thread (runs
 * meeting in a word: or-ed, not overwritten). */
static void check_as_bits(void)
{
	enum { SPAN = 1u << 21 };
	static uint64_t k[SPAN], bits[SPAN / 64], want[SPAN / 64];
	const uint64_t pct[] = { 100, 60, 13 };
	for (int p = 0; p < 3; p++)
		for (int threads = 1; threads <= 5; threads += 2) {
			uint64_t n = some_keys(k, SPAN, pct[p]);
			memset(want, 0, sizeof want);
			for (uint64_t i = 0; i < n; i++)
				want[k[i] / 64] |= 1ull << (k[i] % 64);
			/* stale bits everywhere, as a clock before left them */
			memset(bits, 0x5a, sizeof bits);
			for (uint64_t w = 0; w < SPAN / 64; w++)
				if (w < k[0] / 64 || w > k[n - 1] / 64)
					want[w] = 0x5a5a5a5a5a5a5a5aull;
			CHECK(n >= PARALLEL_MIN, "%llu keys",
			      (unsigned long long)n);
			cluster_keys_as_bits(k, n, bits, threads);
			CHECK(!memcmp(bits, want, sizeof bits),
			      "%d%% of the keys on %d threads: the bits differ",
			      (int)pct[p], threads);
		}
}

/* The map global[f] = a f + b of a worker's dim features into a model
 * of a dim + b. */
static struct feature_map line_map(uint64_t dim, uint32_t a, uint32_t b)
{
	struct feature_map fm = { .dim = a * dim + b, .n = dim };
	fm.global = malloc(dim * sizeof *fm.global);
	CHECK(fm.global != NULL, "memory");
	for (uint32_t f = 0; fm.global && f < dim; f++)
		fm.global[f] = a * f + b;
	return fm;
}

int main(void)
{
	struct boar_dataset d;
	test_rng_seed(88172645463325252ull);
	make_data(&test_set, ROWS, DIM + 3000, 0); /* on every thread */
	make_data(&d, ROWS, DIM, 0);
	/* enough non-zeros that the marking runs on every thread */
	CHECK(d.nnz >= PARALLEL_MIN, "%llu non-zeros",
	      (unsigned long long)d.nnz);
	const int threads[] = { 1, 2, 3, 5 };
	const uint64_t clocks[] = { 1, 2, 3, 4, 7, 11 };
	struct feature_map fm = line_map(DIM, 2, 1);
	for (size_t t = 0; t < 4; t++)
		for (size_t k = 0; k < 6; k++)
			for (int mode = 0; mode < 3; mode++) {
				check(&d, threads[t], clocks[k], mode, NULL);
				if (fm.global)
					check(&d, threads[t], clocks[k], mode,
					      &fm);
			}
	free(fm.global);
	free(d.row_ptr);
	free(d.idx);
	/* enough features that the scan runs on every thread, its runs of
	 * keys meeting in words of the model's bits (a map off the words'
	 * grid) */
	make_data(&d, 20000, 1u << 21, 1);
	fm = line_map(1u << 21, 1, 37);
	for (int mode = 0; mode < 2; mode++)
		for (int t = 3; t <= 5; t += 2) {
			check(&d, t, 3, mode, NULL);
			if (fm.global)
				check(&d, t, 3, mode, &fm);
		}
	free(fm.global);
	free(d.row_ptr);
	free(d.idx);
	free(test_set.row_ptr);
	free(test_set.idx);
	check_union();
	check_as_bits();
	return TEST_RESULT();
}
