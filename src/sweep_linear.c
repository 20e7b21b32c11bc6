/* sweep_linear.c - the Hogwild! sweep of a sparse linear model on threads.
 *
 * Each thread takes a contiguous slice of the epoch's row order. For a row it
 * reads the weights it touches (relaxed loads; other threads may be writing
 * them), computes the margin and the loss derivative d, and writes back only
 * those coordinates: w_j -= eta * (d * x_j + l2 * s_j * w_j), then the L1
 * clip (see engine.c for s_j). The update policy (atomic/racy), optimizer
 * (SGD/AdaGrad) and regularization (none/L2/L1) are compile-time constants of
 * one always-inlined body, so each of the twelve variants has a branch-free
 * inner loop.
 *
 * The bias is touched by every row: with plain SGD a thread accumulates its
 * bias steps locally and publishes them every BIAS_FLUSH rows instead of
 * fighting over one cache line per row (it still reads shared + pending).
 *
 * Rows come in shuffled order, so their data is not contiguous: the next
 * rows' CSR slices and, closer in, their weights are prefetched.
 */
#include <math.h>

#include "atomics/atomics.h"
#include "dataset.h"
#include "engine.h"
#include "coord_update.h"
#include "math/loss.h"
#include "sweep_common.h"
#include "model.h"

#define BIAS_FLUSH 64
/* Prefetch distances, in rows: the row's offsets first, then (once those
 * have arrived) its ids, values and label, then the weights it touches. */
#define PREFETCH_OFFSETS 16
#define PREFETCH_ROWS 8
#ifndef PREFETCH_WEIGHTS
#define PREFETCH_WEIGHTS 6
#endif

struct linear_args {
	const uint64_t *row_ptr;
	const uint32_t *idx;
	const float *val;
	const float *label;
	float *w;
	const float *reg_scale;
	float *G;
	const float *row_weight; /* per-row loss scale, or NULL */
	uint64_t dim;
	int loss;
	float loss_param;
	struct coord_params cp;
};

static inline __attribute__((always_inline)) double
sweep_body(const struct linear_args *a, const uint32_t *order, uint64_t begin,
	   uint64_t end, int policy, int adagrad, int reg)
{
	const uint64_t *row_ptr = a->row_ptr;
	const uint32_t *idx = a->idx;
	const float *val = a->val;
	float *w = a->w;
	float *bias = &w[a->dim];
	int loss = a->loss;
	double loss_sum = 0;
	float bias_pending = 0;
	int bias_rows = 0;

	for (uint64_t i = begin; i < end; i++) {
		if (i + PREFETCH_OFFSETS < end)
			__builtin_prefetch(&row_ptr[order[i + PREFETCH_OFFSETS]]);
		if (i + PREFETCH_ROWS < end) {
			uint32_t rp = order[i + PREFETCH_ROWS];
			uint64_t lo = row_ptr[rp], hi = row_ptr[rp + 1];
			for (uint64_t k = lo; k < hi; k += 16) {
				__builtin_prefetch(&idx[k]);
				__builtin_prefetch(&val[k]);
			}
			__builtin_prefetch(&idx[hi - 1]);
			__builtin_prefetch(&val[hi - 1]);
			__builtin_prefetch(&a->label[rp]);
		}
		if (PREFETCH_WEIGHTS && i + PREFETCH_WEIGHTS < end) {
			uint32_t rp = order[i + PREFETCH_WEIGHTS];
			for (uint64_t k = row_ptr[rp]; k < row_ptr[rp + 1]; k++)
				__builtin_prefetch(&w[idx[k]], 1);
		}
		uint32_t r = order[i];
		uint64_t lo = row_ptr[r], hi = row_ptr[r + 1];
		float m = boar_margin(w, idx, val, lo, hi) +
			  boar_load_relaxed(bias) + bias_pending;
		float y = boar_loss_target(loss, a->label[r]), d;
		float rw = a->row_weight ? a->row_weight[r] : 1.0f;
		loss_sum += rw * boar_loss_eval(loss, m, y, a->loss_param, &d);
		d *= rw;
		if (d == 0.0f && reg == REG_NONE)
			continue;
		for (uint64_t k = lo; k < hi; k++) {
			uint32_t j = idx[k];
			boar_update_coord(&a->cp, &w[j], adagrad ? &a->G[j] : 0,
				     d * val[k],
				     reg != REG_NONE ? a->reg_scale[j] : 0.0f,
				     policy, adagrad, reg);
		}
		if (adagrad) {
			boar_update_coord(&a->cp, bias, &a->G[a->dim], d, 0.0f,
					  policy, adagrad, REG_NONE);
		} else {
			bias_pending -= a->cp.eta * d;
			if (++bias_rows == BIAS_FLUSH) {
				boar_add_policy(policy, bias, bias_pending);
				bias_pending = 0;
				bias_rows = 0;
			}
		}
	}
	if (bias_pending != 0.0f)
		boar_add_policy(policy, bias, bias_pending);
	return loss_sum;
}

BOAR_SWEEP_VARIANTS(struct linear_args, sweep_body, linear_variants)

double boar_sweep_linear(struct boar_engine *e, const uint32_t *order,
			 uint64_t begin, uint64_t end, float eta)
{
	const struct boar_rows *d = &e->rows;
	struct linear_args a = {
		.row_ptr = d->row_ptr, .idx = d->idx, .val = d->val,
		.label = d->label, .w = e->m->w, .reg_scale = e->reg_scale,
		.G = e->accum, .row_weight = d->row_weight, .dim = e->m->dim,
		.loss = e->m->loss, .loss_param = e->m->loss_param,
		.cp = {.eta = eta, .l1 = (float)e->o.l1, .l2 = (float)e->o.l2,
		       .opt = e->o.optimizer},
	};
	int reg = boar_reg_kind(e->o.l1, e->o.l2);
	int policy = e->o.update == BOAR_UPDATE_ATOMIC ? BOAR_POLICY_ATOMIC
						       : BOAR_POLICY_RACY;
	int ada = boar_opt_accumulates(e->o.optimizer);
	boar_slice_fn fn = linear_variants[policy][ada][reg];
	return boar_run_slices(e->threads, fn, &a, order, begin, end);
}
