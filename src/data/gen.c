/* gen.c - synthetic datasets with a known ground truth, and writing any
 * dataset back out as text.
 *
 * Linear task: every row has exactly nnz_per_row distinct feature ids
 * (sorted), each drawn uniformly (skew 0) or from the power law
 * id = floor(D * u^(1+skew)) so that low ids are the frequent "head"
 * features of real data; every value is 1/sqrt(nnz_per_row) (rows of unit
 * norm, the shape of ../shared/tools/roofline.c). A hidden weight vector w*
 * (w*_j uniform in [-1, 1], a pure function of the seed and j, so it needs
 * no memory even for 2^32 features) labels the rows: y = sign(w*.x), then
 * flipped with probability `noise`. A linear model can therefore reach
 * accuracy 1 - noise.
 *
 * MF task: user and item factors p_u, q_i in R^rank, entries uniform with
 * variance 1/sqrt(rank) so that p_u.q_i has variance 1, again pure functions
 * of (seed, id, f); `rows` ratings at random (user, item) pairs (power-law
 * when skew > 0), rating = p_u.q_i + N(0, noise^2). A rank-`rank` model can
 * therefore reach RMSE `noise`.
 *
 * The linear dataset's dimension is the requested `features` (so that the
 * shape matches a roofline run exactly even if the last ids were never
 * drawn); an MF dataset's users and items are the largest drawn id + 1, as
 * for a ratings file.
 *
 * Rows are made in blocks of GEN_BLOCK with a generator seeded from
 * (seed, block number), so the data is the same for any thread count.
 *
 * Text output formats rows on all threads a batch at a time and writes the
 * batches in order into a temp file that is renamed into place at the end.
 */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic_file.h"
#include "dataset.h"
#include "base/options.h"
#include "base/error.h"
#include "parse_chunks.h"
#include "parse_common.h"

#define GEN_BLOCK 4096

/* -------------------------------------------------------- randomness */

static inline uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* splitmix64: one add and one mix per draw. */
static inline uint64_t rng_next(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ULL;
	return mix64(*s);
}

/* uniform in [0, 1) with 53 random bits */
static inline double rng_unit(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) * 0x1.0p-53;
}

/* uniform in [0, n) (Lemire's multiply-shift; the bias is below 2^-32) */
static inline uint32_t rng_below(uint64_t *s, uint64_t n)
{
	return (uint32_t)(((unsigned __int128)rng_next(s) * n) >> 64);
}

/* A value in [-1, 1) that depends only on (key, j). */
static inline double hash_unit(uint64_t key, uint64_t j)
{
	return (double)(mix64(key ^ mix64(j + 0x632be59bd9b4e019ULL)) >> 11) *
		       0x1.0p-52 - 1.0;
}

/* u^a for the power law without a pow() per draw: u = m * 2^-e with m in
 * [1, 2), so u^a = (2^-a)^e * m^a, the first from a table over e and the
 * second interpolated from a table over m (relative error below
 * 2e-8 * a(a-1), i.e. well under one id for any dimension that matters).
 * Built once per generate call; a is 1 + skew. */
#define POW_STEPS 2048

struct pow_table {
	double e2[64];              /* 2^(-a e) */
	double m[POW_STEPS + 1];    /* (1 + i/POW_STEPS)^a */
};

static void pow_table_init(struct pow_table *t, double a)
{
	for (int e = 0; e < 64; e++)
		t->e2[e] = pow(2.0, -a * e);
	for (int i = 0; i <= POW_STEPS; i++)
		t->m[i] = pow(1.0 + (double)i / POW_STEPS, a);
}

/* u = x 2^-53 for x in [0, 2^53) */
static inline double pow_table_eval(const struct pow_table *t, uint64_t x)
{
	if (!x)
		return 0;
	int lz = __builtin_clzll(x) - 11; /* x < 2^53 */
	uint64_t xn = x << lz;            /* bit 52 set: m = xn / 2^52 */
	uint64_t frac = xn & ((1ULL << 52) - 1);
	uint64_t i = frac >> (52 - 11);   /* POW_STEPS = 2^11 */
	double w = (double)(frac & ((1ULL << 41) - 1)) * 0x1.0p-41;
	double m = t->m[i] + (t->m[i + 1] - t->m[i]) * w;
	return t->e2[1 + lz] * m;
}

static inline uint32_t draw_id(uint64_t *s, uint64_t n,
			       const struct pow_table *t)
{
	if (!t)
		return rng_below(s, n);
	double f = (double)n * pow_table_eval(t, rng_next(s) >> 11);
	uint64_t id = (uint64_t)f;
	return (uint32_t)(id < n ? id : n - 1);
}

/* ------------------------------------------------------------ options */

void boar_gen_options_fill(boar_gen_options *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
	o->task = BOAR_TASK_LINEAR;
	o->rows = 100000;
	o->features = 1u << 20;
	o->items = 10000;
	o->nnz_per_row = 30;
	o->skew = 0;
	o->rank = 16;
	o->noise = 0.05;
	o->seed = 1;
}

static int check_gen(const boar_gen_options *o, boar_error *err)
{
	if (o->task != BOAR_TASK_LINEAR && o->task != BOAR_TASK_MF)
		return boar_fail(err, BOAR_EINVAL,
				 "task must be linear or MF to generate data");
	if (o->rows == 0)
		return boar_fail(err, BOAR_EINVAL, "rows must be > 0");
	if (o->features == 0)
		return boar_fail(err, BOAR_EINVAL,
				 o->task == BOAR_TASK_MF ? "users (features) must be > 0"
							 : "features must be > 0");
	if (!(o->skew >= 0) || !isfinite(o->skew))
		return boar_fail(err, BOAR_EINVAL,
				 "skew must be a finite number >= 0");
	if (o->task == BOAR_TASK_LINEAR) {
		if (o->nnz_per_row == 0 || o->nnz_per_row > o->features)
			return boar_fail(err, BOAR_EINVAL,
					 "nnz_per_row must be between 1 and features (%u)",
					 o->features);
		if (o->rows > (1ULL << 62) / o->nnz_per_row)
			return boar_fail(err, BOAR_EINVAL,
					 "rows x nnz_per_row is too large");
		if (!(o->noise >= 0 && o->noise <= 1))
			return boar_fail(err, BOAR_EINVAL,
					 "noise (label-flip probability) must be in [0, 1]");
	} else {
		if (o->items == 0)
			return boar_fail(err, BOAR_EINVAL, "items must be > 0");
		if (o->rank == 0 || o->rank > 4096)
			return boar_fail(err, BOAR_EINVAL,
					 "rank must be between 1 and 4096");
		if (!(o->noise >= 0) || !isfinite(o->noise))
			return boar_fail(err, BOAR_EINVAL,
					 "noise (rating stddev) must be a finite number >= 0");
		if (o->rows > (1ULL << 62))
			return boar_fail(err, BOAR_EINVAL, "rows is too large");
	}
	return 0;
}

/* ------------------------------------------------------------- linear */

/* Draws k distinct ids below n into ix[0..k), ascending. Rejection keeps
 * the distribution exact; after many rejections (k close to n under heavy
 * skew) the next free id after a uniform draw is taken instead, so that the
 * loop always ends. */
static void draw_row(uint64_t *s, uint32_t *ix, uint32_t k, uint64_t n,
		     const struct pow_table *pt)
{
	uint32_t have = 0;
	uint64_t tries = 0, patience = 64ULL * k + 64;
	while (have < k) {
		uint32_t id = ++tries > patience ? rng_below(s, n)
						 : draw_id(s, n, pt);
		/* one pass: shift larger ids up while looking for the slot
		 * (rows are short, and a duplicate, which needs the shift
		 * undone, is rare) */
		uint32_t j = have;
		while (j > 0 && ix[j - 1] > id) {
			ix[j] = ix[j - 1];
			j--;
		}
		if (j > 0 && ix[j - 1] == id) {
			for (uint32_t m = j; m < have; m++)
				ix[m] = ix[m + 1];
			if (tries <= patience)
				continue;
			/* out of patience: take the next free id above */
			do {
				id = (uint32_t)((id + 1) % n);
				j = have;
				while (j > 0 && ix[j - 1] > id)
					j--;
			} while (j > 0 && ix[j - 1] == id);
			for (uint32_t m = have; m > j; m--)
				ix[m] = ix[m - 1];
		}
		ix[j] = id;
		have++;
	}
}

static int gen_linear(const boar_gen_options *o, struct boar_dataset *d)
{
	uint64_t n = o->rows, k = o->nnz_per_row, D = o->features;
	d->n_rows = n;
	d->nnz = n * k;
	d->dim = D;
	d->row_ptr = malloc((n + 1) * sizeof *d->row_ptr);
	d->idx = malloc(n * k * sizeof *d->idx);
	d->val = malloc(n * k * sizeof *d->val);
	d->label = malloc(n * sizeof *d->label);
	d->owned[0] = d->row_ptr;
	d->owned[1] = d->idx;
	d->owned[2] = d->val;
	d->owned[3] = d->label;
	if (!d->row_ptr || !d->idx || !d->val || !d->label)
		return BOAR_ENOMEM;
	const float v = 1.0f / sqrtf((float)k);
	const uint64_t wkey = mix64(o->seed ^ 0x5eed0f1a7e5ULL);
	const uint64_t nblocks = (n + GEN_BLOCK - 1) / GEN_BLOCK;
	const double noise = o->noise;
	struct pow_table *pt = NULL;
	if (o->skew > 0) {
		if (!(pt = malloc(sizeof *pt)))
			return BOAR_ENOMEM;
		pow_table_init(pt, 1.0 + o->skew);
	}
#pragma omp parallel for schedule(dynamic, 4) if (nblocks > 1)
	for (uint64_t b = 0; b < nblocks; b++) {
		uint64_t s = mix64(o->seed * 0x9e3779b97f4a7c15ULL + b);
		uint64_t r1 = (b + 1) * GEN_BLOCK < n ? (b + 1) * GEN_BLOCK : n;
		for (uint64_t r = b * GEN_BLOCK; r < r1; r++) {
			uint32_t *ix = d->idx + r * k;
			float *vx = d->val + r * k;
			d->row_ptr[r + 1] = (r + 1) * k;
			draw_row(&s, ix, (uint32_t)k, D, pt);
			double margin = 0;
			for (uint64_t j = 0; j < k; j++) {
				vx[j] = v;
				margin += hash_unit(wkey, ix[j]);
			}
			float y = margin >= 0 ? 1.0f : -1.0f;
			if (noise > 0 && rng_unit(&s) < noise)
				y = -y;
			d->label[r] = y;
		}
	}
	d->row_ptr[0] = 0;
	free(pt);
	return 0;
}

/* ----------------------------------------------------------------- MF */

static int gen_mf(const boar_gen_options *o, struct boar_dataset *d)
{
	uint64_t n = o->rows, U = o->features, I = o->items, K = o->rank;
	d->n_rows = d->nnz = n;
	d->user = malloc(n * sizeof *d->user);
	d->item = malloc(n * sizeof *d->item);
	d->label = malloc(n * sizeof *d->label);
	d->owned[0] = d->user;
	d->owned[1] = d->item;
	d->owned[2] = d->label;
	if (!d->user || !d->item || !d->label)
		return BOAR_ENOMEM;
	/* entries uniform in [-a, a): variance a^2/3 = 1/sqrt(K) */
	const double a = sqrt(3.0 / sqrt((double)K));
	const uint64_t pkey = mix64(o->seed ^ 0x9a11e75ULL);
	const uint64_t qkey = mix64(o->seed ^ 0x17e35ULL);
	const uint64_t nblocks = (n + GEN_BLOCK - 1) / GEN_BLOCK;
	const double noise = o->noise;
	uint64_t mu = 0, mi = 0;
	struct pow_table *pt = NULL;
	if (o->skew > 0) {
		if (!(pt = malloc(sizeof *pt)))
			return BOAR_ENOMEM;
		pow_table_init(pt, 1.0 + o->skew);
	}
#pragma omp parallel for schedule(dynamic, 4) reduction(max : mu, mi) if (nblocks > 1)
	for (uint64_t b = 0; b < nblocks; b++) {
		uint64_t s = mix64(o->seed * 0x9e3779b97f4a7c15ULL + b + 1);
		uint64_t r1 = (b + 1) * GEN_BLOCK < n ? (b + 1) * GEN_BLOCK : n;
		for (uint64_t r = b * GEN_BLOCK; r < r1; r++) {
			uint32_t u = draw_id(&s, U, pt);
			uint32_t i = draw_id(&s, I, pt);
			double dot = 0;
			for (uint64_t f = 0; f < K; f++)
				dot += hash_unit(pkey, (uint64_t)u * K + f) *
				       hash_unit(qkey, (uint64_t)i * K + f);
			dot *= a * a;
			if (noise > 0) { /* Box-Muller */
				double u1 = 1.0 - rng_unit(&s), u2 = rng_unit(&s);
				dot += noise * sqrt(-2.0 * log(u1)) *
				       cos(6.283185307179586 * u2);
			}
			d->user[r] = u;
			d->item[r] = i;
			d->label[r] = (float)dot;
			if ((uint64_t)u + 1 > mu)
				mu = (uint64_t)u + 1;
			if ((uint64_t)i + 1 > mi)
				mi = (uint64_t)i + 1;
		}
	}
	free(pt);
	d->dim = mu;
	d->n_items = mi;
	return 0;
}

int boar_generate(const boar_gen_options *o, boar_dataset **out,
		  boar_error *err)
{
	boar_gen_options full;
	if (!o || !out)
		return boar_fail(err, BOAR_EINVAL,
				 "options and out must not be NULL");
	if (boar_gen_options_widen(o, &full))
		return boar_fail(err, BOAR_EINVAL, "boar_gen_options.size is "
				 "not a size this libboar knows: fill the "
				 "options with boar_gen_options_default()");
	o = &full;
	int ret = check_gen(o, err);
	if (ret)
		return ret;
	struct boar_dataset *d = boar_dataset_alloc(o->task);
	if (!d)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	ret = o->task == BOAR_TASK_LINEAR ? gen_linear(o, d) : gen_mf(o, d);
	if (ret) {
		boar_dataset_free(d);
		return boar_fail(err, ret, "out of memory generating %llu rows",
				 (unsigned long long)o->rows);
	}
	boar_dataset_classify(d);
	*out = d;
	return 0;
}

/* -------------------------------------------------------- text output */

static inline char *put_u64(char *p, uint64_t x)
{
	char t[20];
	int n = 0;
	do {
		t[n++] = (char)('0' + x % 10);
		x /= 10;
	} while (x);
	while (n)
		*p++ = t[--n];
	return p;
}

static const double pow10_tab[] = {
	1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* 10^e as a double for |e| up to ~300 (exact for 0 <= e <= 22). */
static double pow10_of(int e)
{
	if (e >= 0 && e <= 22)
		return pow10_tab[e];
	if (e < 0 && e >= -22)
		return 1.0 / pow10_tab[-e];
	return pow(10.0, e);
}

/* Would the parser read m * 10^e10 back as exactly v? (It computes
 * pc_scale for every number of up to 19 digits.) */
static int reads_back(uint64_t m, int e10, float v)
{
	return pc_scale(m, e10) == v;
}

/* Writes |v| > 0 with P significant digits (trailing zeros dropped) in %g
 * style; sets *m and *e10 to the digits and exponent actually written. */
static char *put_digits(char *p, double a, int P, uint64_t *mout, int *e10out)
{
	int e = (int)floor(log10(a));
	uint64_t top = (uint64_t)pow10_tab[P], low = (uint64_t)pow10_tab[P - 1];
	uint64_t m = (uint64_t)llround(a * pow10_of(P - 1 - e));
	if (m >= top) { /* log10 rounded down too far, or 9.99.. rounded up */
		e++;
		m = (uint64_t)llround(a * pow10_of(P - 1 - e));
	} else if (m < low) {
		e--;
		m = (uint64_t)llround(a * pow10_of(P - 1 - e));
	}
	if (m >= top) { /* 9.999..5 rounding up to 10^P */
		m /= 10;
		e++;
	}
	int nd = P;
	while (nd > 1 && m % 10 == 0) {
		m /= 10;
		nd--;
	}
	*mout = m;
	*e10out = e - (nd - 1);
	char dig[20];
	for (int k = nd - 1; k >= 0; k--) {
		dig[k] = (char)('0' + m % 10);
		m /= 10;
	}
	if (e >= -5 && e < P) {
		if (e >= 0) {
			for (int k = 0; k <= e; k++)
				*p++ = k < nd ? dig[k] : '0';
			if (nd > e + 1) {
				*p++ = '.';
				for (int k = e + 1; k < nd; k++)
					*p++ = dig[k];
			}
		} else {
			*p++ = '0';
			*p++ = '.';
			for (int k = 0; k < -e - 1; k++)
				*p++ = '0';
			for (int k = 0; k < nd; k++)
				*p++ = dig[k];
		}
	} else {
		*p++ = dig[0];
		if (nd > 1) {
			*p++ = '.';
			for (int k = 1; k < nd; k++)
				*p++ = dig[k];
		}
		*p++ = 'e';
		int x = e;
		if (x < 0) {
			*p++ = '-';
			x = -x;
		} else {
			*p++ = '+';
		}
		if (x < 10)
			*p++ = '0';
		p = put_u64(p, (uint64_t)x);
	}
	return p;
}

/* Formats a finite float in at most 16 bytes: integers as integers,
 * anything else with the fewest of 7, 8 or 9 significant digits that read
 * back as the same float (9 always do). */
static char *put_float(char *p, float v)
{
	if (v == 0) {
		*p++ = '0';
		return p;
	}
	if (v < 0) {
		*p++ = '-';
		v = -v;
	}
	if (v < 1e15f && v == (float)(uint64_t)v)
		return put_u64(p, (uint64_t)v);
	char *start = p;
	uint64_t m;
	int e10;
	for (int digits = 7; digits < 9; digits++) {
		p = put_digits(start, (double)v, digits, &m, &e10);
		if (reads_back(m, e10, v))
			return p;
	}
	return put_digits(start, (double)v, 9, &m, &e10);
}

/* Upper bound of the text of rows [r0, r1). */
static size_t text_bound(const struct boar_dataset *d, uint64_t r0,
			 uint64_t r1)
{
	if (d->task == BOAR_TASK_MF)
		return (r1 - r0) * (11 + 11 + 17 + 1);
	uint64_t nnz = d->row_ptr[r1] - d->row_ptr[r0];
	return (r1 - r0) * (17 + 1) + nnz * (1 + 10 + 1 + 17);
}

/* Formats rows [r0, r1) at p; returns the end. A memo of the last value
 * written skips the float formatting of repeated values (binary data, the
 * generator's constant values). */
static char *format_rows(const struct boar_dataset *d, uint64_t r0,
			 uint64_t r1, char *p)
{
	float last = 1.0f;
	char memo[24] = "1";
	size_t memo_len = 1;
	for (uint64_t r = r0; r < r1; r++) {
		if (d->task == BOAR_TASK_MF) {
			p = put_u64(p, d->user[r]);
			*p++ = ' ';
			p = put_u64(p, d->item[r]);
			*p++ = ' ';
			p = put_float(p, d->label[r]);
			*p++ = '\n';
			continue;
		}
		p = put_float(p, d->label[r]);
		for (uint64_t k = d->row_ptr[r]; k < d->row_ptr[r + 1]; k++) {
			*p++ = ' ';
			p = put_u64(p, (uint64_t)d->idx[k] + 1);
			*p++ = ':';
			float v = d->val[k];
			if (v != last) {
				char *e = put_float(memo, v);
				memo_len = (size_t)(e - memo);
				last = v;
			}
			memcpy(p, memo, 16);
			p += memo_len;
		}
		*p++ = '\n';
	}
	return p;
}

int boar_dataset_write_text(const boar_dataset *d, const char *path,
			    boar_error *err)
{
	if (!d || !path)
		return boar_fail(err, BOAR_EINVAL,
				 "dataset and path must not be NULL");
	int threads = parse_threads(0);
	const uint64_t batch_rows = 16384;
	char **buf = calloc((size_t)threads, sizeof *buf);
	size_t *cap = calloc((size_t)threads, sizeof *cap);
	size_t *len = calloc((size_t)threads, sizeof *len);
	int ret = 0, oom = 0;
	boar_atomic_file f;
	if (!buf || !cap || !len) {
		ret = boar_fail(err, BOAR_ENOMEM, "out of memory");
		goto out;
	}
	ret = boar_atomic_open(&f, path, err);
	if (ret)
		goto out;
	for (uint64_t r0 = 0; r0 < d->n_rows && !ret;
	     r0 += batch_rows * (uint64_t)threads) {
#pragma omp parallel num_threads(threads) reduction(| : oom) if (d->n_rows > batch_rows)
		{
			int t = omp_get_thread_num();
			uint64_t a = r0 + (uint64_t)t * batch_rows, b = a + batch_rows;
			if (a > d->n_rows)
				a = d->n_rows;
			if (b > d->n_rows)
				b = d->n_rows;
			/* +16: the memo copy writes 16 bytes at a time */
			size_t need = text_bound(d, a, b) + 16;
			len[t] = 0;
			if (need > cap[t]) {
				free(buf[t]);
				buf[t] = malloc(need);
				cap[t] = buf[t] ? need : 0;
			}
			if (!buf[t])
				oom = 1;
			else if (a < b)
				len[t] = (size_t)(format_rows(d, a, b, buf[t]) -
						  buf[t]);
		}
		if (oom) {
			ret = boar_fail(err, BOAR_ENOMEM, "out of memory");
			break;
		}
		for (int t = 0; t < threads && !ret; t++)
			if (len[t] && fwrite(buf[t], 1, len[t], f.fp) != len[t])
				ret = boar_fail_line(err, BOAR_EIO, path, 0,
						     "write failed: %s",
						     strerror(errno));
	}
	if (ret)
		boar_atomic_abort(&f);
	else
		ret = boar_atomic_commit(&f, err);
out:
	if (buf)
		for (int t = 0; t < threads; t++)
			free(buf[t]);
	free(buf);
	free(cap);
	free(len);
	return ret;
}
