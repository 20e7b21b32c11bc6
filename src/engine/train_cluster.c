/* train_cluster.c - cluster training: the training driver (train.c) with a
 * per-clock hook that pulls a clock's keys from a parameter server before
 * its sweep and pushes what changed after (boar_train_ps, boar.h).
 *
 * The transport (boar_ps_transport) is the caller's: libboar-net's io_uring
 * client in the boar CLI. This file knows keys, not sockets; net/ knows
 * sockets, not models.
 *
 * The keys of a clock are collected with a bitmap (one bit per feature),
 * so finding the distinct keys of a clock costs O(its nnz), and come out
 * ascending (transports want them so) by scanning the bitmap when that is
 * cheaper than sorting them: a clock of 1000 rows x 30 non-zeros over 2^20
 * features has ~20k keys, whose qsort cost more than the sweep itself
 * (a third of a worker's cycles), where the scan reads 16k words. The engine (CPU or GPU, through engine_ops.h) loads the
 * pulled values by key before the sweep and hands the new ones back after.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "data/dataset.h"
#include "engine_ops.h"
#include "base/error.h"
#include "model/model.h"
#include "train.h"

/* Cluster training runs data-parallel linear models from zero weights.
 * Not optimizer normalized: the engine would convert the whole model
 * between its two spaces around every clock's sweep (engine_norm.c). */
#define CLUSTER_CAPS                                                        \
	(BOAR_CAPS_ALL & ~(BOAR_CAP(MF) | BOAR_CAP(SUBSET) |                \
			   BOAR_CAP(EARLY_STOP) | BOAR_CAP(WARM_START) |    \
			   BOAR_CAP(DETERMINISTIC) | BOAR_CAP(NORMALIZED)))

struct cluster {
	const boar_ps_transport *t;
	int local_rows; /* t->local_rows, where t's size has it */
	uint64_t n_keys;
	uint32_t width; /* keys per feature: K, or 1 */
	uint64_t *seen;  /* a bit per feature, all clear between clocks */
	uint64_t *keys;  /* the current clock's keys, ascending */
	uint64_t nk;
	float *before, *delta;
	uint64_t cap;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The n distinct features marked in c->seen, ascending into c->keys,
 * leaving c->seen clear: a scan of the bitmap where it has fewer words
 * than ~16 per key (a sort's cost), else a sort of the keys found. */
static void sorted_features(struct cluster *c, uint64_t dim, uint64_t n)
{
	uint64_t words = (dim + 63) / 64;
	if (words < 16 * n) {
		uint64_t m = 0;
		for (uint64_t w = 0; w < words; w++) {
			uint64_t x = c->seen[w];
			if (!x)
				continue;
			c->seen[w] = 0;
			for (; x; x &= x - 1)
				c->keys[m++] = w * 64 + (uint64_t)__builtin_ctzll(x);
		}
		return;
	}
	qsort(c->keys, n, sizeof *c->keys, cmp_u64);
	for (uint64_t i = 0; i < n; i++)
		c->seen[c->keys[i] / 64] = 0;
}

/* Distinct keys of rows order[b..e) plus the bias, ascending. A feature j
 * of a K-class model owns keys j*K .. j*K+K-1 (the model is feature-major),
 * so the bitmap is per feature and each feature expands to K keys. */
static uint64_t clock_keys(struct cluster *c, const struct boar_dataset *d,
			   const uint32_t *order, uint64_t b, uint64_t e)
{
	uint32_t K = c->width;
	uint64_t n = 0;
	for (uint64_t p = b; p < e; p++) {
		uint32_t r = order[p];
		for (uint64_t k = d->row_ptr[r]; k < d->row_ptr[r + 1]; k++) {
			uint32_t j = d->idx[k];
			uint64_t bit = 1ull << (j & 63);
			if (!(c->seen[j / 64] & bit)) {
				c->seen[j / 64] |= bit;
				c->keys[n++] = j;
			}
		}
	}
	sorted_features(c, d->dim, n);
	c->keys[n++] = d->dim; /* the bias (the largest key), every row */
	if (K > 1) /* expand in place from the back: j -> j*K .. j*K+K-1 */
		for (uint64_t i = n; i-- > 0;)
			for (uint32_t k = K; k-- > 0;)
				c->keys[i * K + k] = c->keys[i] * K + k;
	return n * K;
}

/* The schedule: the same number of clocks per epoch on every worker, and
 * room for the keys of the largest clock. */
static int cluster_start(void *ctx, const struct train_run *r, uint64_t *first,
			 uint64_t *last, uint64_t *clocks, boar_error *err)
{
	struct cluster *c = ctx;
	const struct boar_dataset *d = r->d;
	const boar_ps_transport *t = c->t;
	uint32_t R = t->rank, W = t->n_workers;
	uint64_t n = r->ops->rows(r->eng);
	uint64_t sync = t->sync_every ? t->sync_every : 1000;
	uint64_t per_worker = (n + W - 1) / W;
	*first = n * R / W;
	*last = n * (R + 1) / W;
	if (c->local_rows) { /* the rows are this worker's part already */
		per_worker = n;
		*first = 0;
		*last = n;
	}
	*clocks = (per_worker + sync - 1) / sync;
	if (!*clocks)
		*clocks = 1;

	c->width = boar_model_width(r->m);
	c->n_keys = (d->dim + 1) * c->width;
	uint64_t max_row = 0;
	for (uint64_t i = 0; i < d->n_rows; i++)
		if (d->row_ptr[i + 1] - d->row_ptr[i] > max_row)
			max_row = d->row_ptr[i + 1] - d->row_ptr[i];
	/* keys of one clock: at most its nnz + 1, at most the whole model */
	uint64_t rows = (*last - *first + *clocks - 1) / *clocks;
	uint64_t cap = (rows * max_row + 1) * c->width;
	if (cap > c->n_keys)
		cap = c->n_keys;
	if (cap < 4096)
		cap = c->n_keys < 4096 ? c->n_keys : 4096;
	c->cap = cap;
	c->seen = calloc((d->dim + 63) / 64 + 1, sizeof *c->seen);
	c->keys = malloc(cap * sizeof *c->keys);
	c->before = malloc(cap * sizeof *c->before);
	c->delta = malloc(cap * sizeof *c->delta);
	if (!c->seen || !c->keys || !c->before || !c->delta)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	return t->connect(t->ctx, c->n_keys, err);
}

static int cluster_pull(void *ctx, const struct train_run *r,
			const uint32_t *order, uint64_t b, uint64_t e,
			boar_error *err)
{
	struct cluster *c = ctx;
	c->nk = clock_keys(c, r->d, order, b, e);
	int rc = c->t->pull(c->t->ctx, c->keys, (uint32_t)c->nk, c->before, err);
	if (!rc)
		rc = r->ops->load_keys(r->eng, c->keys, c->before, c->nk, err);
	return rc;
}

/* The bias is touched by every row of every worker: each worker's delta
 * for it sums a clock's worth of steps taken from one stale value, and the
 * shard adding W of them steps W times too far (plain SGD diverged with two
 * workers). Pushing the bias as 1/W of the delta makes the shard's bias the
 * average of the workers' replicas, as the GPU engine does for its hot
 * coordinates per block; sparse features rarely collide and are summed. */
static void damp_bias(struct cluster *c)
{
	uint64_t bias_key = c->n_keys - c->width;
	for (uint64_t i = 0; i < c->nk; i++)
		if (c->keys[i] >= bias_key)
			c->delta[i] /= (float)c->t->n_workers;
}

static int cluster_push(void *ctx, const struct train_run *r, uint64_t rows,
			boar_error *err)
{
	struct cluster *c = ctx;
	int rc = r->ops->store_keys(r->eng, c->keys, c->delta, c->nk, err);
	if (rc)
		return rc;
	for (uint64_t i = 0; i < c->nk; i++)
		c->delta[i] -= c->before[i];
	damp_bias(c);
	if ((rc = c->t->push(c->t->ctx, c->keys, c->delta, (uint32_t)c->nk,
			     err)))
		return rc;
	return c->t->clock(c->t->ctx, rows, err);
}

/* Every key into the host model, in pulls of at most cap keys. */
static int cluster_refresh(void *ctx, const struct train_run *r,
			   boar_error *err)
{
	struct cluster *c = ctx;
	for (uint64_t lo = 0; lo < c->n_keys;) {
		uint64_t n = c->n_keys - lo > c->cap ? c->cap : c->n_keys - lo;
		for (uint64_t i = 0; i < n; i++)
			c->keys[i] = lo + i;
		int rc = c->t->pull(c->t->ctx, c->keys, (uint32_t)n,
				    r->m->w + lo, err);
		if (rc)
			return rc;
		lo += n;
	}
	return 0;
}

static int cluster_finish(void *ctx, const struct train_run *r,
			  boar_error *err)
{
	struct cluster *c = ctx;
	int gathered = 0;
	return c->t->finish(c->t->ctx, r->m->w, c->n_keys, &gathered, err);
}

static int transport_check(const boar_ps_transport *t, boar_error *err)
{
	if (!t || (t->size != sizeof *t &&
		   t->size != offsetof(boar_ps_transport, local_rows)))
		return boar_fail(err, BOAR_EINVAL,
				 "boar_ps_transport.size is not a size this "
				 "libboar knows: set it to "
				 "sizeof(boar_ps_transport)");
	if (!t->n_workers || t->rank >= t->n_workers)
		return boar_fail(err, BOAR_EINVAL,
				 "boar_ps_transport: rank %u of %u workers",
				 t->rank, t->n_workers);
	if (!t->connect || !t->pull || !t->push || !t->clock || !t->finish)
		return boar_fail(err, BOAR_EINVAL,
				 "boar_ps_transport: a callback is missing");
	return 0;
}

int boar_train_ps(const boar_dataset *train, const boar_options *o,
		  const boar_ps_transport *t, boar_model **out,
		  boar_error *err)
{
	int rc = transport_check(t, err);
	if (rc)
		return rc;
	struct cluster c = {.t = t};
	if (t->size > offsetof(boar_ps_transport, local_rows))
		c.local_rows = t->local_rows;
	const struct train_hook hook = {
		.who = "cluster training",
		.caps = CLUSTER_CAPS,
		.advice = "train on one machine for it",
		.ctx = &c,
		.start = cluster_start,
		.pull = cluster_pull,
		.push = cluster_push,
		.refresh = cluster_refresh,
		.finish = cluster_finish,
	};
	rc = boar_train_driver(train, o, &hook, out, err);
	free(c.seen);
	free(c.keys);
	free(c.before);
	free(c.delta);
	return rc;
}
