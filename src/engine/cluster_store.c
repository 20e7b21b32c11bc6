/* cluster_store.c - a cluster worker's clock after its sweep: how far
 * each of the clock's weights moved, for the push (train_cluster.h).
 *
 * The next clock's values were asked for before this clock's sweep
 * (pull_ahead) and have usually come by its end. Where every server's
 * answer is in and none counts this clock's pushes (the transport's
 * pull_ahead_ready), they are collected now, before the push, and the
 * CPU engine stores this clock's deltas, adds them to the next clock's
 * values of the keys both clocks have and loads those values, all in one
 * pass (boar_engine_store_load): what the transport's merge of this
 * clock's push into the answer and the next clock's load would do after
 * the push, where the three passes each went over the model (32 MiB for
 * a 2^22 model with its AdaGrad sums beside the weights) and the merge
 * mispredicted at about every other key. The next clock's pull then has
 * nothing to wait for and nothing to load.
 *
 * Not where the next clock's values come with an evaluation's keys (the
 * union: the evaluation reads them before the clock starts), where
 * AdaGrad's sums travel too (their deltas are the sums', added apart),
 * or where an evaluation comes before the next clock (its pulls then
 * come between); nor on the GPU engine. There the transport adds the
 * push as before.
 */
#include "engine.h"
#include "engine_ops.h"
#include "train_cluster.h"
#include "cluster_clock.h"

/* The bias is touched by every row of every worker: each worker's delta
 * for it sums a clock's worth of steps taken from one stale value, and the
 * shard adding W of them steps W times too far (plain SGD diverged with two
 * workers). Pushing the bias as 1/W of the delta makes the shard's bias the
 * average of the workers' replicas, as the GPU engine does for its hot
 * coordinates per block; sparse features rarely collide and are summed.
 * The bias keys are the largest: the last `width` of the clock's. */
static void damp_bias(struct cluster *c)
{
	uint64_t bias_key = c->n_keys - c->width;
	for (uint64_t i = c->nk; i-- > 0 && c->keys[i] >= bias_key;)
		c->delta[i] /= (float)c->t->n_workers;
}

/* Whether the next clock's values may be collected now and loaded with
 * this clock's store (k: this clock). */
static int may_load_early(const struct cluster *c, const struct train_run *r,
			  uint64_t k)
{
	return c->pull_ahead_ready && r->ops == &boar_engine_cpu_ops &&
	       c->ahead_k != NO_CLOCK && !c->ahead_got && !c->ahead_with &&
	       !c->sums && c->key_copies == 1 && c->nk >= c->width &&
	       c->ahead_nk >= c->width &&
	       !(k + 1 == c->clocks && r->o.test) &&
	       c->pull_ahead_ready(c->t->ctx);
}

/* The next clock's values collected (into ahead_before), then this
 * clock's deltas stored and those values loaded, the deltas of the keys
 * both clocks have added, in one pass; the bias keys (the last of either
 * list) apart, as their delta is damped before it counts. */
static int store_and_load(struct cluster *c, const struct train_run *r,
			  boar_error *err)
{
	int rc = cluster_settle_ahead(c, err);
	cluster_lap(c->phase, &c->mark, BOAR_PS_PULL);
	if (rc)
		return rc;
	struct boar_engine *e = r->eng;
	uint64_t K = c->width, na = c->nk - K, nb = c->ahead_nk - K;
	float *vals = c->ahead_before;
	boar_engine_store_load(e, c->keys, c->before, c->delta, na,
			       c->ahead_keys, vals, nb);
	boar_engine_store_deltas(e, c->keys + na, c->before + na,
				 c->delta + na, K);
	damp_bias(c);
	for (uint64_t j = 0; j < K; j++)
		vals[nb + j] += c->delta[na + j];
	boar_engine_load_keys(e, c->ahead_keys + nb, vals + nb, K);
	c->loaded_ahead = 1;
	return 0;
}

int cluster_store(struct cluster *c, const struct train_run *r, uint64_t k,
		  boar_error *err)
{
	if (may_load_early(c, r, k))
		return store_and_load(c, r, err);
	int rc = r->ops->store_deltas(r->eng, c->keys, c->before, c->delta,
				      c->nk, err);
	if (!rc)
		damp_bias(c);
	return rc;
}
