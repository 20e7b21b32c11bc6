/* sweep_multiclass.c - the Hogwild! sweep of a K-class linear model.
 *
 * One pass serves both multiclass schemes: a row's K margins are computed
 * together (the weights of one feature for all classes are contiguous), then
 *  - one-vs-rest (logistic or hinge loss): class c sees the row as positive
 *    iff it is the row's class, an independent binary loss per class;
 *  - softmax: p = softmax(margins), loss -log p[y], d_c = p_c - [c == y];
 * and every touched feature's K weights step by d_c * x_j (plus the lazy
 * regularization of coord_update.h), the biases by d_c. The features that
 * a large share of the rows touch come first in a row (hot_n of them,
 * engine_hot.c) and step by compare-and-swap: racy stores would lose many
 * of their updates. So do the K biases, which every row touches, in the
 * shared model: per-thread replicas merged by averaging (sweep_replica.h,
 * as a binary model's bias is kept) learn at 1 / T of one thread's speed
 * in rows, which a one-vs-rest model, whose biases carry the classes'
 * priors, cannot afford: on a 3-class set at 16 threads its loss ended
 * 3% (the defaults) to 35% (plain SGD, eta 0.1) above one thread's, and
 * within 0.5% with shared biases (bench/RESULTS-cores.md).
 */
#include <math.h>

#include "coord_update.h"
#include "math/loss.h"
#include "sweep_common.h"
#include "data/dataset.h"
#include "engine.h"
#include "model/model.h"

struct mc_args {
	const uint64_t *row_ptr;
	const uint32_t *idx;
	const float *val;
	const uint32_t *row_class;
	const float *row_weight;
	const uint16_t *hot_n; /* contended ids at the head of each row */
	float *w;
	const float *reg_scale;
	float *G;
	uint64_t dim;
	uint32_t K;
	int shared_bias; /* more than one thread */
	int loss;
	float loss_param;
	float bias_scale; /* LIBLINEAR's -B (boar_bias_params) */
	struct coord_params cp;
};

/* The K weights of non-zero k step by d_c * x_k. */
static inline __attribute__((always_inline)) void
step_feature(const struct mc_args *a, uint64_t k, const float *d, int policy,
	     int adagrad, int reg)
{
	uint32_t K = a->K;
	uint64_t base = (uint64_t)a->idx[k] * K;
	float x = a->val[k];
	float s = reg != REG_NONE ? a->reg_scale[a->idx[k]] : 0;
	for (uint32_t c = 0; c < K; c++) {
		if (d[c] == 0.0f && reg == REG_NONE)
			continue;
		boar_update_coord(&a->cp, &a->w[base + c],
				  adagrad ? &a->G[base + c] : 0, d[c] * x, s,
				  policy, adagrad, reg);
	}
}

static inline __attribute__((always_inline)) double
sweep_body(const struct mc_args *a, const uint32_t *order, uint64_t begin,
	   uint64_t end, int policy, int adagrad, int reg)
{
	uint32_t K = a->K;
	float m[BOAR_MAX_CLASSES], d[BOAR_MAX_CLASSES];
	double loss_sum = 0;
	float *bias = &a->w[a->dim * K];
	float *bias_G = adagrad ? &a->G[a->dim * K] : NULL;
	const float B = a->bias_scale;
	const struct coord_params bcp = boar_bias_params(a->cp, B);

	for (uint64_t i = begin; i < end; i++) {
		uint32_t r = order[i];
		uint64_t lo = a->row_ptr[r], hi = a->row_ptr[r + 1];
		for (uint32_t c = 0; c < K; c++)
			m[c] = boar_load_relaxed(&bias[c]);
		for (uint64_t k = lo; k < hi; k++) {
			const float *wj = &a->w[(uint64_t)a->idx[k] * K];
			float x = a->val[k];
			for (uint32_t c = 0; c < K; c++)
				m[c] += boar_load_relaxed(&wj[c]) * x;
		}
		float rw = a->row_weight ? a->row_weight[r] : 1.0f;
		loss_sum += rw * boar_multiclass_loss(a->loss, a->loss_param, m, K,
							   a->row_class[r], d);
		for (uint32_t c = 0; c < K; c++)
			d[c] *= rw;
		uint64_t hot = lo + (a->hot_n ? a->hot_n[r] : 0);
		for (uint64_t k = lo; k < hot; k++)
			step_feature(a, k, d, BOAR_POLICY_ATOMIC, adagrad, reg);
		for (uint64_t k = hot; k < hi; k++)
			step_feature(a, k, d, policy, adagrad, reg);
		for (uint32_t c = 0; c < K; c++)
			if (a->shared_bias) /* other threads write them */
				boar_update_coord(&bcp, &bias[c],
						  adagrad ? &bias_G[c] : NULL,
						  d[c] * B, 0.0f, BOAR_POLICY_ATOMIC,
						  adagrad, REG_NONE);
			else
				boar_update_coord(&bcp, &bias[c],
						  adagrad ? &bias_G[c] : NULL,
						  d[c] * B, 0.0f, BOAR_POLICY_RACY,
						  adagrad, REG_NONE);
	}
	return loss_sum;
}

BOAR_SWEEP_VARIANTS(struct mc_args, sweep_body, mc_variants)

double boar_sweep_multiclass(struct boar_engine *e, const uint32_t *order,
			     uint64_t begin, uint64_t end, float eta)
{
	const struct boar_rows *d = &e->rows;
	struct mc_args a = {
		.row_ptr = d->row_ptr, .idx = d->idx, .val = d->val,
		.row_class = d->row_class, .row_weight = d->row_weight,
		.hot_n = d->hot_n, .w = e->m->w, .reg_scale = e->reg_scale, .G = e->accum,
		.dim = e->m->dim, .K = e->m->n_classes, .loss = e->m->loss,
		.loss_param = e->m->loss_param,
		.bias_scale = (float)e->o.bias_scale,
		.cp = {.eta = eta, .l1 = (float)e->o.l1, .l2 = (float)e->o.l2,
		       .opt = e->o.optimizer},
	};
	int policy = e->o.update == BOAR_UPDATE_ATOMIC ? BOAR_POLICY_ATOMIC
						       : BOAR_POLICY_RACY;
	a.shared_bias = e->threads > 1;
	boar_slice_fn fn = mc_variants[policy][boar_opt_accumulates(e->o.optimizer)]
			      [boar_reg_kind(e->o.l1, e->o.l2)];
	return boar_run_slices(e->threads, fn, &a, order, begin, end);
}
