/* train_cluster_mf.c - matrix factorization trained by the parameter
 * server: boar_train_ps on a ratings dataset (train_cluster_mf.h).
 *
 * Design. The factors live only in the shards, under one key layout:
 * with S = rank + 3 keys per row, user u's row is keys [u*S, u*S + S)
 * and item i's is [(U + i)*S, ...) (U users, I items: the model's
 * shape), each row holding its rank factors, then its bias, its AdaGrad
 * sum and (users) how many workers hold its ratings; after the rows come
 * AGREE_KEYS per worker for the agreement below. A shard holds the factors
 * *minus their initial values*, so a fresh shard (zeros) is the initial
 * model without anyone pushing it:
 * the initial factors are boar_model_init_factors' draws, which a worker
 * computes for any row alone (model.h, boar_factor_init_at), so a
 * 1-worker cluster starts where the single node does.
 *
 * A worker holds only its ratings (its --read-part, or the ratings of a
 * hash-chosen 1/W of the file's users) with its users and items
 * renumbered densely (cluster_mf_local.c). A user whose ratings this
 * worker alone holds (every user without --read-part; with it, those the
 * workers' holder counts say so: cluster_mf_agree.c) has a private row:
 * one writer, so it stays in the worker and travels once an epoch (with
 * the epoch's last clock, so that worker 0's evaluations see it; worker
 * 0's own, which its evaluations read locally, once at the end for the
 * gather). With one worker an evaluation pulls nothing: every row is the
 * worker's own.
 *
 * Where the transport has a barrier (wait_clock), the workers train in
 * DSGD strata (cluster_mf_strata.c): users and items in W blocks each,
 * each worker sweeping one cell of its ratings per clock so that no two
 * touch one block at once, an item block held by one worker for W
 * clocks and moved twice per epoch. Their steps are a sequential
 * sweep's in some order, so the RMSE per epoch follows the single
 * node's at any W, and what crosses the network per epoch is the item
 * factors twice (plus the shared users' rows of each cell, for a part of
 * a file not grouped by user), where fixed clocks of sync_every ratings
 * moved every item row a clock touched both ways every clock (16-core
 * host, 4M ratings: 1 worker 17x slower than one process, 2 and 4
 * workers slower than 1: bench/RESULTS-net.md).
 *
 * Without a barrier, the fixed clocks remain: each clock the worker
 * pulls the shared rows that clock touches (keys ascending, asked a
 * clock ahead where the transport can), runs the CPU engine's MF sweep
 * over that clock's ratings on its threads, and pushes every pulled value's
 * change: shards add them, SSP bounds the staleness. Two workers
 * updating the same item row in one clock each push the sum of their
 * steps from the same stale value, and the shard adds them, as a
 * sequential sweep would add the steps while a clock gives each item a
 * few ratings; with tens per item per clock the W summed deltas
 * overshoot, so --sync-every must shrink as workers are added.
 *
 * In both, each clock (a strata cell, or a slice) has an engine of its
 * own over its ratings (sweep_mf.c: Hogwild!, or DSGD strata on the
 * threads when it is large), opened once, sharing the worker's model.
 *
 * AdaGrad's per-row sums (math/mf_step.h) are sharded beside their row
 * and pushed as deltas like the factors: a sum counts the squared
 * gradients of every worker's steps on the row, so the step a row takes
 * shrinks as it does on one node; sums kept per worker would each count
 * about 1/W of the steps and every shared row would step sqrt(W) times
 * too far. The default MF optimizer (plain SGD) has none; their keys are
 * then never pulled.
 *
 * The mean rating (mu) and the ratings' spread (by which eta and l2 are
 * resolved, options.c) are the whole file's: workers that each read
 * their part agree on them before training (cluster_mf_agree.c; no
 * clock ticks: this works at any staleness, inf too).
 *
 * Worker 0 gathers the keys at the end into an ordinary MF model (init +
 * shard value, biases, mu): boar predict and eval read it.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>

#include "base/error.h"
#include "base/options.h"
#include "data/dataset.h"
#include "engine.h"
#include "engine_ops.h"
#include "math/step.h"
#include "model/model.h"
#include "model/model_input.h"
#include "train_cluster_mf.h"
#include "cluster_clock.h"

/* What MF training in the cluster can do: a run from fresh factors with
 * the CPU engine's sweeps. Not early stopping (nor the holdout it
 * watches), which would need every worker to stop at the same epoch;
 * not non-negative factors, whose projection a sum of two workers'
 * deltas can undo. */
#define MF_CLUSTER_CAPS                                                     \
	(BOAR_CAPS_ALL & ~(BOAR_CAP(SUBSET) | BOAR_CAP(EARLY_STOP) |        \
			   BOAR_CAP(WARM_START) | BOAR_CAP(DETERMINISTIC) | \
			   BOAR_CAP(MF_NONNEG)))

static void lap(struct mfc *c, enum boar_ps_phase p)
{
	cluster_lap(c->phase, &c->mark, p);
}

/* The options as the cluster runs them, refused by name where it
 * cannot (before anything is connected). */
static int cluster_options(struct mfc *c, const boar_dataset *train,
			   const boar_options *o_in, boar_error *err)
{
	int rc = boar_options_import(o_in, train, &c->o, err);
	if (rc)
		return rc;
	/* the single node's default watches a holdout; here it is off */
	if (c->o.early_stop == BOAR_EARLY_STOP_AUTO)
		c->o.early_stop = 0;
	if (c->o.device == BOAR_DEVICE_GPU)
		return boar_fail(err, BOAR_EINVAL,
				 "cluster training of matrix factorization "
				 "runs the CPU engine: drop the GPU device");
	unsigned need = boar_caps_needed(train, &c->o, NULL,
					 c->o.holdout > 0);
	return boar_caps_check(need, MF_CLUSTER_CAPS, "cluster training",
			       "train on one machine for it", err);
}

/* Count, mean and mean square of the worker's ratings. */
static void rating_moments(const struct boar_dataset *d, double m[3])
{
	double s = 0, s2 = 0;
	for (uint64_t r = 0; r < d->n_rows; r++) {
		s += d->label[r];
		s2 += (double)d->label[r] * d->label[r];
	}
	m[0] = (double)d->n_rows;
	m[1] = d->n_rows ? s / d->n_rows : 0;
	m[2] = d->n_rows ? s2 / d->n_rows : 0;
}

/* mu, and the options resolved for the whole file's ratings. */
static int resolve_for_file(struct mfc *c, const boar_dataset *train,
			    boar_error *err)
{
	double m[3], all[3];
	rating_moments(c->local_rows ? &c->l.d : train, m);
	if (c->local_rows) {
		int rc = mf_agree(c, m, all, err);
		if (rc)
			return rc;
	} else { /* the workers' users are apart (cluster_mf_local.c) */
		memcpy(all, m, sizeof all);
		if (!(c->is_private = malloc(c->l.nu + 1)))
			return boar_fail(err, BOAR_ENOMEM, "out of memory");
		memset(c->is_private, 1, c->l.nu + 1);
	}
	double var = all[2] - all[1] * all[1];
	boar_options_resolve_mf(&c->o, var > 1e-12 ? sqrt(var) : 1.0,
				(uint64_t)all[0]);
	c->mu = c->o.mf_biases ? (float)all[1] : 0.0f;
	return 0;
}

/* The slots a clock moves per row: the factors, the bias with biases,
 * the AdaGrad sum with AdaGrad. */
static void pick_slots(struct mfc *c)
{
	c->w = c->R;
	if (c->o.mf_biases)
		c->off[c->w++ - c->R] = SLOT_BIAS(c->R);
	if (boar_opt_accumulates(c->o.optimizer))
		c->off[c->w++ - c->R] = SLOT_SUM(c->R);
}

/* The worker's model (its rows at their initial values), one engine per
 * clock sharing it, and the buffers of a clock's keys. */
static int open_local(struct mfc *c, boar_error *err)
{
	struct mf_local *l = &c->l;
	uint32_t R = c->R;
	c->lm = boar_model_alloc(BOAR_TASK_MF, BOAR_LOSS_SQUARED, l->nu, l->ni,
				 R, c->o.mf_biases);
	c->P0 = malloc(((uint64_t)l->nu * R + 1) * sizeof *c->P0);
	c->Q0 = malloc(((uint64_t)l->ni * R + 1) * sizeof *c->Q0);
	c->eng = calloc(l->clocks, sizeof *c->eng);
	c->cap = l->max_rows * c->w + 1;
	c->keys = malloc(c->cap * sizeof *c->keys);
	c->ahead_keys = malloc(c->cap * sizeof *c->ahead_keys);
	c->vals = malloc(c->cap * sizeof *c->vals);
	c->before = malloc(c->cap * sizeof *c->before);
	if (l->blocks) {
		c->bkeys = malloc(c->cap * sizeof *c->bkeys);
		c->bvals = malloc(c->cap * sizeof *c->bvals);
		c->bbefore = malloc(c->cap * sizeof *c->bbefore);
		if (!c->bkeys || !c->bvals || !c->bbefore)
			return boar_fail(err, BOAR_ENOMEM, "out of memory");
	}
	if (!c->lm || !c->P0 || !c->Q0 || !c->eng || !c->keys ||
	    !c->ahead_keys || !c->vals || !c->before)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	c->lm->mf_loss = c->o.mf_loss;
	c->lm->mu = c->mu;
#pragma omp parallel for num_threads(c->o.threads > 0 ? c->o.threads : \
					     omp_get_num_procs())
	for (uint64_t r = 0; r < (uint64_t)l->nu + l->ni; r++) {
		int item = r >= l->nu;
		uint64_t g = item ? c->U * R + (uint64_t)l->gi[r - l->nu] * R
				  : (uint64_t)l->gu[r] * R;
		float *p = item ? &c->Q0[(r - l->nu) * R] : &c->P0[r * R];
		for (uint32_t f = 0; f < R; f++)
			p[f] = boar_factor_init_at(&c->fi, g + f);
	}
	memcpy(c->lm->P, c->P0, (uint64_t)l->nu * R * sizeof *c->P0);
	memcpy(c->lm->Q, c->Q0, (uint64_t)l->ni * R * sizeof *c->Q0);
	for (uint64_t k = 0; k < l->clocks; k++) {
		int rc = boar_engine_create_subset(
			&l->d, &c->o, c->lm, l->rows + l->at[k],
			l->at[k + 1] - l->at[k], 0, &c->eng[k], err);
		if (rc)
			return rc;
		if (c->eng[k]->accum) { /* one set of row sums for all */
			if (!c->sums) {
				c->sums = c->eng[k]->accum;
			} else {
				free(c->eng[k]->accum);
				c->eng[k]->accum = c->sums;
			}
		}
	}
	return 0;
}

static void close_local(struct mfc *c)
{
	for (uint64_t k = 0; c->eng && k < c->l.clocks; k++) {
		if (k > 0 && c->eng[k])
			c->eng[k]->accum = NULL; /* engine 0's, freed there */
		boar_engine_free(c->eng[k]);
	}
	free(c->eng);
	boar_model_free(c->lm);
	free(c->P0);
	free(c->Q0);
	free(c->keys);
	free(c->ahead_keys);
	free(c->vals);
	free(c->before);
	free(c->bkeys);
	free(c->bvals);
	free(c->bbefore);
	free(c->test_keys);
	free(c->is_private);
	free(c->pu);
	free(c->pkeys);
	free(c->pvals);
	free(c->pbefore);
	mf_local_free(&c->l);
}

/* The worker's value of slot `off` of local row id (item or user side),
 * and its initial value (the factors' draw; 0 for a bias or a sum). */
static float *local_slot(struct mfc *c, int item, uint32_t id, uint32_t off,
			 float *init)
{
	struct boar_model *m = c->lm;
	uint64_t at = (uint64_t)id * c->R + off;
	*init = 0;
	if (off < c->R) {
		*init = item ? c->Q0[at] : c->P0[at];
		return item ? &m->Q[at] : &m->P[at];
	}
	if (off == SLOT_BIAS(c->R))
		return item ? &m->bi[id] : &m->bu[id];
	return &c->sums[item ? c->l.nu + id : id];
}

uint64_t mf_walk(struct mfc *c, const struct mf_rows *rs, enum mf_walk mode,
		 uint64_t *keys, float *vals, float *before)
{
	const struct mf_local *l = &c->l;
	uint64_t n = 0;
	for (int item = 0; item < 2; item++) {
		const uint32_t *ids = item ? rs->i : rs->u;
		uint64_t m = item ? rs->ni : rs->nu;
		for (uint64_t p = 0; p < m; p++) {
			uint32_t id = ids[p];
			uint64_t row = item ? c->U + l->gi[id] : l->gu[id];
			for (uint32_t j = 0; j < c->w; j++, n++) {
				uint32_t off = j < c->R ? j : c->off[j - c->R];
				float init, *v;
				if (mode == WALK_KEYS) {
					keys[n] = row * c->S + off;
					continue;
				}
				v = local_slot(c, item, id, off, &init);
				if (mode == WALK_LOAD) {
					before[n] = *v = init + vals[n];
				} else {
					vals[n] = *v - before[n];
					before[n] = *v;
				}
			}
		}
	}
	return n;
}

/* Clock k's rows: its shared users, its items. */
static struct mf_rows clock_rows(const struct mfc *c, uint64_t k)
{
	const struct mf_local *l = &c->l;
	struct mf_rows rs = {
		.u = l->cu + l->cu_at[k], .nu = l->cu_at[k + 1] - l->cu_at[k],
		.i = l->ci + l->ci_at[k], .ni = l->ci_at[k + 1] - l->ci_at[k],
	};
	return rs;
}

/* The private users' rows, fresh from the shards (at the start). */
static int pull_private(struct mfc *c, boar_error *err)
{
	struct mf_rows rs = {.u = c->pu, .nu = c->npu};
	int rc = 0;
	for (uint64_t lo = 0; !rc && lo < c->npk; lo += c->cap) {
		uint64_t n = c->npk - lo > c->cap ? c->cap : c->npk - lo;
		rc = c->t->pull(c->t->ctx, c->pkeys + lo, (uint32_t)n,
				c->pvals + lo, err);
	}
	if (!rc)
		mf_walk(c, &rs, WALK_LOAD, NULL, c->pvals, c->pbefore);
	return rc;
}

int mf_private_travels(const struct mfc *c)
{
	return c->npu && c->t->rank != 0;
}

int mf_push_private(struct mfc *c, boar_error *err)
{
	struct mf_rows rs = {.u = c->pu, .nu = c->npu};
	mf_walk(c, &rs, WALK_STORE, NULL, c->pvals, c->pbefore);
	int rc = 0;
	for (uint64_t lo = 0; !rc && lo < c->npk; lo += c->cap) {
		uint64_t n = c->npk - lo > c->cap ? c->cap : c->npk - lo;
		rc = c->t->push(c->t->ctx, c->pkeys + lo, c->pvals + lo,
				(uint32_t)n, err);
	}
	return rc;
}

/* Clock k's keys into c->ahead_keys, asked for now (the transport's
 * pull_ahead) so that they travel while the clock before sweeps. */
static int ask_ahead(struct mfc *c, uint64_t k, boar_error *err)
{
	if (!c->pull_ahead)
		return 0;
	struct mf_rows rs = clock_rows(c, k);
	c->ahead_nk = mf_walk(c, &rs, WALK_KEYS, c->ahead_keys, NULL, NULL);
	int rc = c->pull_ahead(c->t->ctx, c->ahead_keys,
			       (uint32_t)c->ahead_nk, err);
	c->ahead_k = rc ? -1 : (int64_t)k;
	return rc;
}

int mf_sweep_block(struct mfc *c, uint64_t k, int epoch, double eta,
		   double *loss, boar_error *err)
{
	uint64_t rows = c->l.at[k + 1] - c->l.at[k];
	int rc = boar_engine_sweep(c->eng[k], epoch, 0, rows, eta, loss);
	if (rc)
		return boar_fail(err, rc, "training diverged in epoch %d "
					  "(non-finite loss); lower eta",
				 epoch);
	lap(c, BOAR_PS_SWEEP);
	return 0;
}

/* Clock k: pull its rows (asked ahead, or now), load them, ask for the
 * next clock's (next < 0: none), sweep, push what changed, tick. */
static int run_clock(struct mfc *c, int epoch, uint64_t k, int64_t next,
		     double eta, double *loss, boar_error *err)
{
	const boar_ps_transport *t = c->t;
	struct mf_rows rs = clock_rows(c, k);
	c->mark = cluster_now_s();
	if (c->ahead_k == (int64_t)k) {
		uint64_t *s = c->keys;
		c->keys = c->ahead_keys;
		c->ahead_keys = s;
		c->nk = c->ahead_nk;
	} else {
		c->nk = mf_walk(c, &rs, WALK_KEYS, c->keys, NULL, NULL);
	}
	c->ahead_k = -1;
	lap(c, BOAR_PS_KEYS);
	int rc = t->pull(t->ctx, c->keys, (uint32_t)c->nk, c->vals, err);
	lap(c, BOAR_PS_PULL);
	if (rc)
		return rc;
	mf_walk(c, &rs, WALK_LOAD, NULL, c->vals, c->before);
	lap(c, BOAR_PS_LOCAL);
	if (next >= 0 && (rc = ask_ahead(c, (uint64_t)next, err)))
		return rc;
	lap(c, BOAR_PS_PULL);
	if ((rc = mf_sweep_block(c, k, epoch, eta, loss, err)))
		return rc;
	mf_walk(c, &rs, WALK_STORE, NULL, c->vals, c->before);
	lap(c, BOAR_PS_LOCAL);
	rc = t->push(t->ctx, c->keys, c->vals, (uint32_t)c->nk, err);
	/* the private rows once an epoch, before its last clock ticks */
	if (!rc && k + 1 == c->l.clocks && mf_private_travels(c))
		rc = mf_push_private(c, err);
	lap(c, BOAR_PS_PUSH);
	if (!rc)
		rc = t->clock(t->ctx, c->l.at[k + 1] - c->l.at[k], err);
	lap(c, BOAR_PS_CLOCK);
	return rc;
}

/* A fresh model of the whole shape: initial factors, zero biases. */
static struct boar_model *whole_model(const struct mfc *c)
{
	struct boar_model *m = boar_model_alloc(BOAR_TASK_MF,
						BOAR_LOSS_SQUARED, c->U, c->I,
						c->R, c->o.mf_biases);
	if (!m)
		return NULL;
	m->mf_loss = c->o.mf_loss;
	m->mu = c->mu;
	boar_model_init_factors(m, c->o.init_scale, c->o.seed, c->mu);
	m->mu = c->mu;
	return m;
}

/* Keys keys[0..n) of the layout (NULL: lo, lo + 1, ...), as pulled or
 * gathered, into m: a factor is its initial draw plus the shard's value,
 * a bias the shard's value. */
static void keys_into_model(const struct mfc *c, struct boar_model *m,
			    const uint64_t *keys, uint64_t lo, const float *v,
			    uint64_t n)
{
#pragma omp parallel for num_threads(c->o.threads > 0 ? c->o.threads : \
					     omp_get_num_procs()) \
	schedule(static) if (n >= 65536)
	for (uint64_t i = 0; i < n; i++) {
		uint64_t key = keys ? keys[i] : lo + i;
		uint64_t row = key / c->S, off = key % c->S;
		int item = row >= c->U;
		uint64_t id = item ? row - c->U : row;
		if (row >= c->U + c->I || off > SLOT_BIAS(c->R))
			continue; /* a sum, a holder count, the agreement's */
		if (off < c->R)
			(item ? m->Q : m->P)[id * c->R + off] =
				boar_factor_init_at(&c->fi, row * c->R + off) +
				v[i];
		else if (m->has_bias)
			(item ? m->bi : m->bu)[id] = v[i];
	}
}

/* Whether the worker's own copy of a local row is its latest value (one
 * writer, this worker): its private users; with one worker, every row. */
static int own_row(const struct mfc *c, int item, uint32_t id)
{
	return c->t->n_workers == 1 || (!item && c->is_private[id]);
}

/* The rows the test set reads (ids of the model's shape) that are not
 * the worker's own, as their keys (factors, bias) ascending into
 * c->test_keys: all an evaluation pulls. With one worker a row it does
 * not hold was never written: it stays initial, unpulled. */
static int list_test_keys(struct mfc *c, boar_error *err)
{
	const struct boar_dataset *t = c->o.test;
	const struct mf_local *l = &c->l;
	uint8_t *used = calloc(c->U + c->I + 1, 1);
	if (!used)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	for (uint64_t r = 0; r < t->n_rows; r++) {
		if (t->user[r] < c->U)
			used[t->user[r]] = 1;
		if (t->item[r] < c->I)
			used[c->U + t->item[r]] = 1;
	}
	for (uint32_t u = 0; u < l->nu; u++)
		if (own_row(c, 0, u))
			used[l->gu[u]] = 0;
	for (uint32_t i = 0; i < l->ni; i++)
		if (own_row(c, 1, i))
			used[c->U + l->gi[i]] = 0;
	uint64_t rows = 0;
	for (uint64_t row = 0; c->t->n_workers > 1 && row < c->U + c->I; row++)
		rows += used[row];
	uint32_t w = c->R + (c->o.mf_biases != 0);
	c->test_keys = malloc((rows * w + 1) * sizeof *c->test_keys);
	if (!c->test_keys) {
		free(used);
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	}
	for (uint64_t row = 0; rows && row < c->U + c->I; row++)
		for (uint32_t j = 0; used[row] && j < w; j++)
			c->test_keys[c->n_test_keys++] = row * c->S + j;
	free(used);
	return 0;
}

/* The worker's rows over the whole model m: all of them (what a worker
 * that does not gather hands back, its replica), or only its own
 * (own_row: an evaluation's). */
static void local_into(const struct mfc *c, struct boar_model *m, int own)
{
	const struct mf_local *l = &c->l;
	uint64_t R = c->R;
	for (uint32_t u = 0; u < l->nu; u++) {
		if (own && !own_row(c, 0, u))
			continue;
		memcpy(&m->P[l->gu[u] * R], &c->lm->P[u * R], R * sizeof *m->P);
		if (m->has_bias)
			m->bu[l->gu[u]] = c->lm->bu[u];
	}
	for (uint32_t i = 0; i < l->ni; i++) {
		if (own && !own_row(c, 1, i))
			continue;
		memcpy(&m->Q[l->gi[i] * R], &c->lm->Q[i * R], R * sizeof *m->Q);
		if (m->has_bias)
			m->bi[l->gi[i]] = c->lm->bi[i];
	}
}

/* The rows the test set reads, fresh from the shards or the worker's own,
 * into *m (the whole shape, made on first use: the other rows stay
 * initial). */
static int refresh(struct mfc *c, struct boar_model **m, boar_error *err)
{
	double t0 = cluster_now_s();
	int rc = 0;
	if (!*m && !(*m = whole_model(c)))
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	if (!c->test_keys && (rc = list_test_keys(c, err)))
		return rc;
	for (uint64_t lo = 0; !rc && lo < c->n_test_keys; lo += c->cap) {
		uint64_t n = c->n_test_keys - lo > c->cap ? c->cap
							  : c->n_test_keys - lo;
		rc = c->t->pull(c->t->ctx, c->test_keys + lo, (uint32_t)n,
				c->vals, err);
		if (!rc)
			keys_into_model(c, *m, c->test_keys + lo, 0, c->vals, n);
	}
	if (!rc)
		local_into(c, *m, 1);
	c->phase[BOAR_PS_REFRESH] += cluster_now_s() - t0;
	return rc;
}

/* Test metrics of the whole model into st. */
static int evaluate(struct mfc *c, struct boar_model **m,
		    boar_epoch_stats *st, boar_error *err)
{
	boar_metrics t;
	boar_error why;
	int rc = refresh(c, m, err);
	if (rc)
		return rc;
	if ((rc = boar_evaluate(*m, c->o.test, &t, c->o.threads, &why)))
		return boar_fail(err, rc, "evaluating the test set: %s",
				 why.message);
	st->has_test = 1;
	st->test_loss = t.loss;
	st->test_rmse = t.rmse;
	st->test_mae = t.mae;
	st->holdout_loss = t.loss;
	return 0;
}

/* One epoch: every clock, each asking for the next one's rows ahead (the
 * next epoch's first too, unless an evaluation pulls in between). */
static int epoch_clocks(struct mfc *c, int epoch, double eta, double *loss,
			boar_error *err)
{
	uint64_t C = c->l.clocks;
	int more = epoch < c->o.epochs && !c->o.test;
	if (c->l.blocks)
		return mf_strata_epoch(c, epoch, eta, loss, err);
	for (uint64_t k = 0; k < C; k++) {
		int64_t next = k + 1 < C ? (int64_t)(k + 1) : more ? 0 : -1;
		int rc = run_clock(c, epoch, k, next, eta, loss, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* The epochs; *m: the last evaluated whole model, or NULL. */
static int epochs(struct mfc *c, struct boar_model **m, boar_error *err)
{
	uint64_t n = c->l.d.n_rows;
	for (int epoch = 1; epoch <= c->o.epochs; epoch++) {
		boar_epoch_stats st = {.epoch = epoch, .best_epoch = epoch};
		double loss = 0, t0 = omp_get_wtime();
		st.eta = boar_step_size(c->o.eta, c->o.eta_decay, epoch);
		int rc = epoch_clocks(c, epoch, st.eta, &loss, err);
		if (rc)
			return rc;
		st.seconds = omp_get_wtime() - t0;
		st.updates_per_sec = st.seconds > 0 ? n / st.seconds : 0;
		st.train_loss = loss / (n ? n : 1);
		if (!isfinite(st.train_loss))
			return boar_fail(err, BOAR_EDIVERGED,
					 "training diverged in epoch %d "
					 "(non-finite loss); lower eta",
					 epoch);
		/* strata: every worker's epoch in before it is evaluated */
		c->mark = cluster_now_s();
		if (c->o.test && c->l.blocks && (rc = mf_barrier(c, err)))
			return rc;
		lap(c, BOAR_PS_CLOCK);
		if (c->o.test && (rc = evaluate(c, m, &st, err)))
			return rc;
		if (c->o.progress && c->o.progress(&st, c->o.progress_ctx))
			return boar_fail(err, BOAR_ECANCELLED,
					 "stopped after epoch %d by the "
					 "progress callback",
					 epoch);
	}
	return 0;
}

/* The transport's end: the gathered model (worker 0), or the replica. */
static int finish(struct mfc *c, const boar_dataset *train,
		  struct boar_model **m, boar_error *err)
{
	float *all = malloc(c->n_keys * sizeof *all);
	int gathered = 0;
	if (!all)
		return boar_fail(err, BOAR_ENOMEM,
				 "out of memory for the gathered model");
	int rc = 0;
	/* worker 0's private rows, read by nobody else, go for the gather */
	if (c->npu && c->t->rank == 0)
		rc = mf_push_private(c, err);
	if (!rc && c->ahead_k >= 0) /* asked for an epoch a stop then skipped */
		rc = c->t->pull(c->t->ctx, c->ahead_keys,
				(uint32_t)c->ahead_nk, c->vals, err);
	c->ahead_k = -1;
	if (!rc)
		rc = c->t->finish(c->t->ctx, all, c->n_keys, &gathered, err);
	boar_model_free(*m);
	*m = NULL;
	if (!rc && !(*m = whole_model(c)))
		rc = boar_fail(err, BOAR_ENOMEM, "out of memory");
	if (!rc && gathered)
		keys_into_model(c, *m, NULL, 0, all, c->stats_key);
	else if (!rc)
		local_into(c, *m, 0);
	free(all);
	if (!rc)
		rc = boar_model_note_input(*m, train, err);
	return rc;
}

/* The transport's optional members, where its size has them. */
static void transport_extras(struct mfc *c, const boar_ps_transport *t)
{
	if (t->size > offsetof(boar_ps_transport, local_rows))
		c->local_rows = t->local_rows;
	if (t->size > offsetof(boar_ps_transport, pull_ahead))
		c->pull_ahead = t->pull_ahead;
	if (t->size > offsetof(boar_ps_transport, wait_clock))
		c->wait_clock = t->wait_clock;
	if (t->size > offsetof(boar_ps_transport, model_sharded) &&
	    t->model_sharded)
		*t->model_sharded = 0; /* always gathered */
}

/* The private users out of the clocks, listed with their keys, and their
 * rows pulled. */
static int open_private(struct mfc *c, boar_error *err)
{
	const struct mf_local *l = &c->l;
	for (uint32_t u = 0; u < l->nu; u++)
		c->npu += c->is_private[u];
	c->npk = c->npu * c->w;
	c->pu = malloc((c->npu + 1) * sizeof *c->pu);
	c->pkeys = malloc((c->npk + 1) * sizeof *c->pkeys);
	c->pvals = malloc((c->npk + 1) * sizeof *c->pvals);
	c->pbefore = malloc((c->npk + 1) * sizeof *c->pbefore);
	if (!c->pu || !c->pkeys || !c->pvals || !c->pbefore)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	for (uint32_t u = 0, n = 0; u < l->nu; u++)
		if (c->is_private[u])
			c->pu[n++] = u;
	struct mf_rows rs = {.u = c->pu, .nu = c->npu};
	mf_walk(c, &rs, WALK_KEYS, c->pkeys, NULL, NULL);
	return pull_private(c, err);
}

static int connect_and_open(struct mfc *c, const boar_dataset *train,
			    boar_error *err)
{
	const boar_ps_transport *t = c->t;
	int rc = mf_local_build(train, c->local_rows, t->rank, t->n_workers,
				c->o.seed, t->sync_every, c->wait_clock != NULL,
				&c->l, err);
	if (rc)
		return rc;
	c->U = train->dim;
	c->I = train->n_items;
	c->R = (uint32_t)c->o.rank;
	c->S = c->R + 3;
	c->stats_key = (c->U + c->I) * c->S;
	c->n_keys = c->stats_key + (uint64_t)AGREE_KEYS * t->n_workers;
	c->fi = boar_factor_init_make(c->o.init_scale, c->R, c->o.seed);
	if ((rc = t->connect(t->ctx, c->n_keys, err)) ||
	    (rc = resolve_for_file(c, train, err)))
		return rc;
	if (mf_local_drop_users(&c->l, c->is_private))
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	pick_slots(c);
	if ((rc = open_local(c, err)))
		return rc;
	return open_private(c, err);
}

int boar_train_ps_mf(const boar_dataset *train, const boar_options *o,
		     const boar_ps_transport *t, boar_model **out,
		     boar_error *err)
{
	struct mfc c = {.t = t, .ahead_k = -1};
	struct boar_model *m = NULL;
	transport_extras(&c, t);
	int rc = cluster_options(&c, train, o, err);
	if (!rc)
		rc = connect_and_open(&c, train, err);
	if (!rc)
		rc = epochs(&c, &m, err);
	if (!rc || rc == BOAR_ECANCELLED) {
		boar_error e2;
		int frc = finish(&c, train, &m, rc ? &e2 : err);
		if (frc && !rc)
			rc = frc;
	}
	if (t->size > offsetof(boar_ps_transport, phase_seconds) &&
	    t->phase_seconds)
		for (int p = 0; p < BOAR_PS_PHASES; p++)
			t->phase_seconds[p] += c.phase[p];
	close_local(&c);
	if (rc && rc != BOAR_ECANCELLED) {
		boar_model_free(m);
		return rc;
	}
	*out = m;
	return rc;
}
