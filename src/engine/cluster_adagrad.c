/* cluster_adagrad.c - AdaGrad's sums of squared gradients shared through
 * the parameter servers by the linear cluster driver (train_cluster.c).
 *
 * Why. AdaGrad steps coordinate j by eta / sqrt(G_j), G_j the sum of its
 * squared gradients. A worker that keeps its own sums counts only the
 * gradients of its own rows, about 1/W of them with W workers, so every
 * step is about sqrt(W) times the single node's: 4 workers bottomed out
 * at epoch 2-3 and then rose, 8 never reached the single node's test loss
 * (bench/RESULTS-net.md). The matrix factorization cluster shares its
 * per-row sums through the shards (train_cluster_mf.c); this is the same
 * for the linear model.
 *
 * How. The servers hold a sum key beside every weight key: with N weight
 * keys ((dim + 1) * K, the model's), the sum of key k is key N + k, so
 * the transport connects with 2N keys and knows nothing of it
 * (checkpoints, replication, the push log and failover carry the sums as
 * they carry weights; a shard restored from a checkpoint of the other
 * layout is refused by its key count). A clock pulls its keys' sums with
 * their weights in one request (the weights' keys, then the same keys
 * plus N: still ascending), loads them into the engine, and after the
 * sweep pushes what the sweep added to each sum beside the weights'
 * deltas: the shard's sum counts every worker's squared gradients, and a
 * step is the single node's but for the staleness the weights have too.
 * Traffic: one more value per key each way, and its key (a dense run of
 * keys costs a byte each on the wire).
 *
 * Where the engine keeps the sums (engine.h): in its accum array, indexed
 * as its weights, except a binary model's bias, whose sum each thread
 * keeps in its replica slot (sweep_replica.h) and which stands for T
 * times as much (T threads): every thread's slot is loaded with G / T,
 * and what the threads added since is pushed. With one worker of one
 * thread the sums come back as before + (after - before) in float, which
 * is after except where the sum rounds at a tie (early, while a sum still
 * grows by more than itself per clock); no float increment can carry
 * after back then when its last bit is odd. So such a worker trains the
 * model of --adagrad-sums local (the single node's sums) to about 1e-5
 * relative in its weights, the same test loss to 4 digits (a9a; 1M
 * rows on the 16-core host: the same loss curve).
 * Only the CPU engine: the GPU engine's sums stay its own (the transport
 * then connects with N keys, as before).
 */
#include <math.h>
#include <stdlib.h>

#include "base/error.h"
#include "base/lower_bound.h"
#include "engine.h"
#include "engine_ops.h"
#include "math/step.h"
#include "model/model.h"
#include "sweep_replica.h"
#include "train_cluster.h"
#include "cluster_adagrad.h"

struct cluster_sums {
	float *acc;                  /* the engine's sums, as its weights */
	struct boar_rep_slot *slots; /* the threads' replica slots, or NULL */
	const uint64_t *slot_at;     /* slot s is weight key slot_at[s] */
	uint32_t n_slots, stride;    /* slots per thread, and their stride */
	int threads;                 /* the engine's (replicas' T) */
	float *loaded;               /* per slot: the sum its threads got,
					NAN when its key is not the clock's */
	uint64_t base;               /* transport key of key 0's sum: N */
};

int cluster_sums_start(struct cluster *c, const struct train_run *r,
		       boar_error *err)
{
	struct boar_engine *e = r->eng;
	c->key_copies = 1;
	if (!c->shared_sums || !boar_opt_accumulates(r->o.optimizer) ||
	    r->ops != &boar_engine_cpu_ops || !e || !e->accum || e->wg)
		return 0;
	struct cluster_sums *s = calloc(1, sizeof *s);
	if (!s)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	s->acc = e->accum;
	s->threads = e->threads;
	s->base = (c->dim + 1) * c->width;
	/* multiclass biases step in the shared sums (sweep_multiclass.c) */
	if (!r->m->n_classes && e->rep_slots && e->rep_n) {
		s->slots = e->rep_slots;
		s->slot_at = e->rep_at;
		s->n_slots = e->rep_n;
		s->stride = e->rep_stride;
		if (!(s->loaded = malloc(s->n_slots * sizeof *s->loaded))) {
			free(s);
			return boar_fail(err, BOAR_ENOMEM, "out of memory");
		}
	}
	c->sums = s;
	c->key_copies = 2;
	return 0;
}

void cluster_sums_free(struct cluster *c)
{
	if (c->sums)
		free(c->sums->loaded);
	free(c->sums);
	c->sums = NULL;
}

void cluster_sums_keys(const struct cluster *c, uint64_t *g, uint64_t n)
{
	uint64_t base = c->sums->base;
	for (uint64_t i = 0; i < n; i++)
		g[n + i] = base + g[i];
}

/* Where key k is among keys[0..n) (ascending), or n. */
static uint64_t find_key(const uint64_t *keys, uint64_t n, uint64_t k)
{
	uint64_t lo = boar_lower_bound_u64(keys, 0, n, k);
	return lo < n && keys[lo] == k ? lo : n;
}

void cluster_sums_load(struct cluster *c, const uint64_t *keys,
		       const float *sums, uint64_t n)
{
	struct cluster_sums *s = c->sums;
	float *acc = s->acc;
#pragma omp parallel for num_threads(s->threads) schedule(static) \
	if (n >= PARALLEL_MIN)
	for (uint64_t i = 0; i < n; i++)
		acc[keys[i]] = sums[i];
	for (uint32_t p = 0; p < s->n_slots; p++) {
		uint64_t i = find_key(keys, n, s->slot_at[p]);
		s->loaded[p] = i < n ? sums[i] / (float)s->threads : NAN;
		if (i == n)
			continue; /* the clock's rows do not touch it */
		for (int t = 0; t < s->threads; t++)
			s->slots[(size_t)t * s->stride + p].gval = s->loaded[p];
	}
}

void cluster_sums_added(struct cluster *c, const uint64_t *keys,
			const float *sums, float *added, uint64_t n)
{
	struct cluster_sums *s = c->sums;
	const float *acc = s->acc;
#pragma omp parallel for num_threads(s->threads) schedule(static) \
	if (n >= PARALLEL_MIN)
	for (uint64_t i = 0; i < n; i++)
		added[i] = acc[keys[i]] - sums[i];
	for (uint32_t p = 0; p < s->n_slots; p++) {
		uint64_t i = find_key(keys, n, s->slot_at[p]);
		if (i == n || isnan(s->loaded[p]))
			continue;
		for (int t = 0; t < s->threads; t++)
			added[i] += s->slots[(size_t)t * s->stride + p].gval -
				    s->loaded[p];
	}
}
