/* sweep_multiclass.c - the Hogwild! sweep of a K-class linear model.
 *
 * One pass serves both multiclass schemes: a row's K margins are computed
 * together (the weights of one feature for all classes are contiguous), then
 *  - one-vs-rest (logistic or hinge loss): class c sees the row as positive
 *    iff it is the row's class, an independent binary loss per class;
 *  - softmax: p = softmax(margins), loss -log p[y], d_c = p_c - [c == y];
 * and every touched feature's K weights step by d_c * x_j (plus the lazy
 * regularization of coord_update.h), the biases by d_c. Every row touches
 * all K biases: each thread trains its own replica of them
 * (sweep_replica.h). The features that a large share of the rows touch
 * come first in a row (hot_n of them, engine_hot.c) and step by
 * compare-and-swap: racy stores would lose many of their updates.
 */
#include <math.h>

#include "coord_update.h"
#include "math/loss.h"
#include "sweep_common.h"
#include "sweep_replica.h"
#include "data/dataset.h"
#include "engine.h"
#include "model/model.h"

#ifndef MC_SHARED_BIAS
#define MC_SHARED_BIAS 0
#endif

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
	struct boar_engine *e; /* for the thread's replica */
	uint64_t dim;
	uint32_t K;
	int loss;
	float loss_param;
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
	struct boar_replica rep;
	boar_engine_replica(a->e, &rep);
	struct coord_params rcp = boar_rep_params(&a->cp, &rep, adagrad,
						  boar_rep_kappa(a->loss));
	struct boar_rep_slot *bias = rep.slot; /* no hot features: K biases */
	int since_sync = 0;

	for (uint64_t i = begin; i < end; i++) {
		uint32_t r = order[i];
		uint64_t lo = a->row_ptr[r], hi = a->row_ptr[r + 1];
		for (uint32_t c = 0; c < K; c++)
			m[c] = MC_SHARED_BIAS ? boar_load_relaxed(&a->w[a->dim * K + c])
					      : bias[c].val;
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
		for (uint32_t c = 0; c < K && MC_SHARED_BIAS; c++)
			boar_update_coord(&a->cp, &a->w[a->dim * K + c],
					  adagrad ? &a->G[a->dim * K + c] : 0,
					  d[c], 0.0f, BOAR_POLICY_ATOMIC, adagrad,
					  REG_NONE);
		for (uint32_t c = 0; c < K && !MC_SHARED_BIAS; c++)
			boar_update_coord(&rcp, &bias[c].val, &bias[c].gval,
					  d[c], 0.0f, BOAR_POLICY_RACY, adagrad,
					  REG_NONE);
		if (++since_sync == BOAR_REP_SYNC_ROWS) {
			boar_rep_round(&rep, a->w, policy);
			since_sync = 0;
		}
	}
	boar_rep_close(&rep, a->w, policy);
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
		.hot_n = d->hot_n, .w = e->m->w, .reg_scale = e->reg_scale, .G = e->accum, .e = e,
		.dim = e->m->dim, .K = e->m->n_classes, .loss = e->m->loss,
		.loss_param = e->m->loss_param,
		.cp = {.eta = eta, .l1 = (float)e->o.l1, .l2 = (float)e->o.l2,
		       .opt = e->o.optimizer},
	};
	int policy = e->o.update == BOAR_UPDATE_ATOMIC ? BOAR_POLICY_ATOMIC
						       : BOAR_POLICY_RACY;
	boar_slice_fn fn = mc_variants[policy][boar_opt_accumulates(e->o.optimizer)]
			      [boar_reg_kind(e->o.l1, e->o.l2)];
	return boar_run_slices(e->threads, fn, &a, order, begin, end);
}
