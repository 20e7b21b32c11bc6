/* sweep_linear.c - the Hogwild! sweep of a sparse linear model on threads.
 *
 * Each thread takes a contiguous slice of the epoch's row order. For a row it
 * reads the weights it touches (relaxed loads; other threads may be writing
 * them), computes the margin and the loss derivative d, and writes back only
 * those coordinates: w_j -= eta * (d * x_j + l2 * s_j * w_j), then the L1
 * clip (see engine.c for s_j). The update policy (atomic/racy), optimizer
 * (SGD, AdaGrad, AdaGrad interleaved) and regularization (none/L2/L1) are
 * compile-time constants of one always-inlined body, so each of the
 * eighteen variants has a branch-free inner loop.
 *
 * AdaGrad interleaved: an engine that owns the weights for the whole run
 * (boar_train's) keeps each weight and its sum of squared gradients side by
 * side (engine.c, e->wg), so a coordinate costs one cache line instead of
 * two; every index is then doubled (ST below).
 *
 * The bias and the hot features are touched by a large share of the rows:
 * each thread trains its own replica of them (sweep_replica.h, picked in
 * engine_hot.c), and a row lists its hot features first, as slots of that
 * replica (hot_n of them), so that the inner loops never test an id.
 *
 * Rows come in shuffled order, so their data is not contiguous: the next
 * rows' CSR slices and, closer in, their weights are prefetched.
 */
#include <math.h>
#ifdef __AVX__
#include <immintrin.h>
#endif

#include "atomics/atomics.h"
#include "data/dataset.h"
#include "engine.h"
#include "coord_update.h"
#include "math/loss.h"
#include "sweep_common.h"
#include "sweep_replica.h"
#include "model/model.h"

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
	const uint16_t *hot_n;   /* hot slots at the head of each row, or NULL */
	struct boar_engine *e;   /* for the thread's replica */
	uint64_t dim;
	int loss;
	float loss_param;
	struct coord_params cp;
};

/* w . x with the weights ST floats apart (see boar_margin). */
static inline __attribute__((always_inline)) float
margin_strided(const float *w, const uint32_t *idx, const float *val,
	       uint64_t lo, uint64_t hi, int ST)
{
	if (ST == 1)
		return boar_margin(w, idx, val, lo, hi);
	float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	uint64_t k = lo;
	for (; k + 4 <= hi; k += 4) {
		s0 += boar_load_relaxed(&w[2 * (uint64_t)idx[k]]) * val[k];
		s1 += boar_load_relaxed(&w[2 * (uint64_t)idx[k + 1]]) * val[k + 1];
		s2 += boar_load_relaxed(&w[2 * (uint64_t)idx[k + 2]]) * val[k + 2];
		s3 += boar_load_relaxed(&w[2 * (uint64_t)idx[k + 3]]) * val[k + 3];
	}
	for (; k < hi; k++)
		s0 += boar_load_relaxed(&w[2 * (uint64_t)idx[k]]) * val[k];
	return (s0 + s1) + (s2 + s3);
}

/* AdaGrad without regularization, the default, in three passes over up to
 * ADA_CHUNK coordinates of a row: the sums (a load and a store each, in row
 * order), then the step sizes on a local array, where the square roots and
 * divisions run in vector registers where the build targets AVX (one at a
 * time they were the 1-thread bottleneck), then the weights. Same operations in the same order per
 * coordinate as boar_update_coord, so the same bits. */
#define ADA_CHUNK 32

static inline void ada_rates(float eta, const float *acc, float *gl, int n)
{
	int c = 0;
#ifdef __AVX__
	/* boar_adagrad_rate eight at a time (IEEE square root and division:
	 * the same bits as the scalar ones) */
	__m256 ve = _mm256_set1_ps(eta), veps = _mm256_set1_ps(BOAR_ADAGRAD_EPS);
	for (; c + 8 <= n; c += 8) {
		__m256 root = _mm256_sqrt_ps(_mm256_loadu_ps(acc + c));
		__m256 rate = _mm256_div_ps(ve, _mm256_add_ps(root, veps));
		_mm256_storeu_ps(gl + c,
				 _mm256_mul_ps(_mm256_loadu_ps(gl + c), rate));
	}
#endif
	for (; c < n; c++)
		gl[c] *= boar_adagrad_rate(eta, acc[c]);
}

static inline __attribute__((always_inline)) void
ada_update_row(float eta, float *w, float *G, const uint32_t *idx,
	       const float *val, uint64_t lo, uint64_t hi, float d, int policy,
	       int ST)
{
	float acc[ADA_CHUNK], gl[ADA_CHUNK];
	for (uint64_t k0 = lo; k0 < hi; k0 += ADA_CHUNK) {
		int n = hi - k0 < ADA_CHUNK ? (int)(hi - k0) : ADA_CHUNK;
		for (int c = 0; c < n; c++) {
			uint64_t at = ST * (uint64_t)idx[k0 + c];
			gl[c] = d * val[k0 + c];
			acc[c] = boar_load_relaxed(&G[at]) + gl[c] * gl[c];
			boar_store_relaxed(&G[at], acc[c]);
		}
		ada_rates(eta, acc, gl, n);
		for (int c = 0; c < n; c++)
			boar_add_policy(policy, &w[ST * (uint64_t)idx[k0 + c]],
					-gl[c]);
	}
}

static inline __attribute__((always_inline)) double
sweep_body(const struct linear_args *a, const uint32_t *order, uint64_t begin,
	   uint64_t end, int policy, int optimizer, int reg)
{
	const int adagrad = optimizer != 0, ST = optimizer == 2 ? 2 : 1;
	const uint64_t *row_ptr = a->row_ptr;
	const uint32_t *idx = a->idx;
	const float *val = a->val;
	float *w = a->w;
	int loss = a->loss;
	double loss_sum = 0;
	struct boar_replica rep;
	boar_engine_replica(a->e, &rep);
	struct coord_params rcp = boar_rep_params(&a->cp, &rep, adagrad,
						  boar_rep_kappa(a->loss));
	struct boar_rep_slot *hot = rep.slot, *bias = &rep.slot[rep.n_hot];
	int since_sync = 0;

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
				__builtin_prefetch(&w[ST * (uint64_t)idx[k]], 1);
		}
		uint32_t r = order[i];
		uint64_t lo = row_ptr[r], hi = row_ptr[r + 1];
		uint64_t cold = lo + (a->hot_n ? a->hot_n[r] : 0);
		float m = bias->val;
		for (uint64_t k = lo; k < cold; k++)
			m += hot[idx[k]].val * val[k];
		m += margin_strided(w, idx, val, cold, hi, ST);
		float y = boar_loss_target(loss, a->label[r]), d;
		float rw = a->row_weight ? a->row_weight[r] : 1.0f;
		loss_sum += rw * boar_loss_eval(loss, m, y, a->loss_param, &d);
		d *= rw;
		if (d != 0.0f || reg != REG_NONE) {
			for (uint64_t k = lo; k < cold; k++) {
				uint32_t s = idx[k];
				boar_update_coord(&rcp, &hot[s].val, &hot[s].gval,
						  d * val[k],
						  reg != REG_NONE ? a->reg_scale[rep.at[s] / ST] : 0.0f,
						  BOAR_POLICY_RACY, adagrad, reg);
			}
			/* AdaGrad's rate, vectorized (NORMALIZED's too:
			 * math/step.h; other optimizers that accumulate
			 * take the generic step) */
			if (adagrad && reg == REG_NONE &&
			    (a->cp.opt == BOAR_OPT_ADAGRAD ||
			     a->cp.opt == BOAR_OPT_NORMALIZED))
				ada_update_row(a->cp.eta, w, a->G, idx, val, cold,
					       hi, d, policy, ST);
			else
			for (uint64_t k = cold; k < hi; k++) {
				uint32_t j = idx[k];
				uint64_t at = ST * (uint64_t)j;
				boar_update_coord(&a->cp, &w[at],
						  adagrad ? &a->G[at] : 0,
						  d * val[k],
						  reg != REG_NONE ? a->reg_scale[j] : 0.0f,
						  policy, adagrad, reg);
			}
			boar_update_coord(&rcp, &bias->val, &bias->gval, d, 0.0f,
					  BOAR_POLICY_RACY, adagrad, REG_NONE);
		}
		if (++since_sync == BOAR_REP_SYNC_ROWS) {
			boar_rep_round(&rep, w, policy);
			since_sync = 0;
		}
	}
	boar_rep_close(&rep, w, policy);
	return loss_sum;
}

#define LIN_(name, policy, opt, reg)                                       \
	static double name(const void *a, const uint32_t *o, uint64_t lo,   \
			   uint64_t hi)                                     \
	{                                                                   \
		return sweep_body((const struct linear_args *)a, o, lo, hi, \
				  policy, opt, reg);                        \
	}
#define LIN_REGS_(name, policy, opt)                                        \
	LIN_(name##_0, policy, opt, REG_NONE)                               \
	LIN_(name##_1, policy, opt, REG_L2)                                 \
	LIN_(name##_2, policy, opt, REG_L1)
#define LIN_OPTS_(name, policy)                                             \
	LIN_REGS_(name##_sgd, policy, 0)                                    \
	LIN_REGS_(name##_ada, policy, 1)                                    \
	LIN_REGS_(name##_adi, policy, 2)
LIN_OPTS_(lin_atomic, BOAR_POLICY_ATOMIC)
LIN_OPTS_(lin_racy, BOAR_POLICY_RACY)
#define LIN_ROW_(name) {name##_0, name##_1, name##_2}
/* [policy][optimizer: SGD, AdaGrad, AdaGrad interleaved][regularizer] */
static const boar_slice_fn linear_variants[2][3][3] = {
	{LIN_ROW_(lin_atomic_sgd), LIN_ROW_(lin_atomic_ada),
	 LIN_ROW_(lin_atomic_adi)},
	{LIN_ROW_(lin_racy_sgd), LIN_ROW_(lin_racy_ada),
	 LIN_ROW_(lin_racy_adi)},
};

double boar_sweep_linear(struct boar_engine *e, const uint32_t *order,
			 uint64_t begin, uint64_t end, float eta)
{
	const struct boar_rows *d = &e->rows;
	struct linear_args a = {
		.row_ptr = d->row_ptr, .idx = d->idx, .val = d->val,
		.label = d->label, .w = e->wg ? e->wg : e->m->w,
		.reg_scale = e->reg_scale, .G = e->wg ? e->wg + 1 : e->accum,
		.row_weight = d->row_weight,
		.hot_n = d->hot_n, .e = e, .dim = e->m->dim,
		.loss = e->m->loss, .loss_param = e->m->loss_param,
		.cp = {.eta = eta, .l1 = (float)e->o.l1, .l2 = (float)e->o.l2,
		       .opt = e->o.optimizer},
	};
	int reg = boar_reg_kind(e->o.l1, e->o.l2);
	int policy = e->o.update == BOAR_UPDATE_ATOMIC ? BOAR_POLICY_ATOMIC
						       : BOAR_POLICY_RACY;
	int opt = !boar_opt_accumulates(e->o.optimizer) ? 0 : (e->wg ? 2 : 1);
	boar_slice_fn fn = linear_variants[policy][opt][reg];
	return boar_run_slices(e->threads, fn, &a, order, begin, end);
}
