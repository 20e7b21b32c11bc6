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
 * rows' CSR slices and, closer in, their weights are prefetched, for
 * reading: on a 16-core Xeon (bench/RESULTS-cores.md) prefetching them
 * for writing took lines from the other cores early and cost a quarter of
 * the rate on a 2^20 model at 16 threads (846 M/s against 1110 for
 * reading, 1101 without), and prefetching for reading gained the most on
 * a 2^26 model at 1-8 threads. Without it the 2-core VM ran a 2^20 model
 * at half the rate (its caches are smaller). Prefetching into the L2 only
 * (locality 2) made no difference beyond the noise there.
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
#define PREFETCH_WEIGHTS 6

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
	float bias_scale; /* LIBLINEAR's -B (boar_bias_params) */
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

/* AdaGrad without regularization (NORMALIZED's sweep too), eight
 * coordinates of a row at a time: their sums in row order (a relaxed load
 * and store each, so a repeated id sees its own earlier step, as in
 * boar_update_coord), then the eight rates at once in vector registers
 * where the build targets AVX (one at a time the square roots and
 * divisions were the one-thread bottleneck), then the weights. The sums
 * go from scalar registers into the vector directly: written to a local
 * array and read back as a vector (the earlier code), each group of eight
 * waited for its stores to reach the cache (a failed store-to-load
 * forward) behind the weights' stores, and every non-zero paid three
 * stores to that array besides its two to the model. */
static inline __attribute__((always_inline)) float
ada_sum(float *G, uint64_t at, float g)
{
	float acc = boar_load_relaxed(&G[at]) + g * g;
	boar_store_relaxed(&G[at], acc);
	return acc;
}

static inline __attribute__((always_inline)) void
ada_update_row(float eta, float *w, float *G, const uint32_t *idx,
	       const float *val, uint64_t lo, uint64_t hi, float d, int policy,
	       int ST)
{
	uint64_t k = lo;
#ifdef __AVX__
	const __m256 ve = _mm256_set1_ps(eta), vd = _mm256_set1_ps(d);
	const __m256 veps = _mm256_set1_ps(BOAR_ADAGRAD_EPS);
	for (; k + 8 <= hi; k += 8) {
		const uint32_t *ix = idx + k;
		const float *vx = val + k;
		/* one statement each: the order of a call's arguments is
		 * unspecified, and a repeated id must see its earlier sum */
		float a[8];
#pragma GCC unroll 8
		for (int c = 0; c < 8; c++)
			a[c] = ada_sum(G, ST * (uint64_t)ix[c], d * vx[c]);
		__m256 acc = _mm256_setr_ps(a[0], a[1], a[2], a[3], a[4], a[5],
					    a[6], a[7]);
		/* boar_adagrad_rate eight at a time (IEEE square root and
		 * division: the same bits as the scalar ones) */
		__m256 rate = _mm256_div_ps(
			ve, _mm256_add_ps(_mm256_sqrt_ps(acc), veps));
		__m256 g = _mm256_mul_ps(vd, _mm256_loadu_ps(vx));
		float step[8];
		_mm256_storeu_ps(step, _mm256_mul_ps(g, rate));
#pragma GCC unroll 8
		for (int c = 0; c < 8; c++)
			boar_add_policy(policy, &w[ST * (uint64_t)ix[c]],
					-step[c]);
	}
#endif
	for (; k < hi; k++) {
		uint64_t at = ST * (uint64_t)idx[k];
		float g = d * val[k];
		float rate = boar_adagrad_rate(eta, ada_sum(G, at, g));
		boar_add_policy(policy, &w[at], -(g * rate));
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
	const float B = a->bias_scale;
	const struct coord_params bcp = boar_bias_params(rcp, B);
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
		if (i + PREFETCH_WEIGHTS < end) {
			uint32_t rp = order[i + PREFETCH_WEIGHTS];
			for (uint64_t k = row_ptr[rp]; k < row_ptr[rp + 1]; k++) {
				__builtin_prefetch(&w[ST * (uint64_t)idx[k]], 0);
				if (adagrad && ST == 1) /* sums apart */
					__builtin_prefetch(&a->G[idx[k]], 0);
			}
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
			boar_update_coord(&bcp, &bias->val, &bias->gval, d * B,
					  0.0f, BOAR_POLICY_RACY, adagrad, REG_NONE);
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
	boar_engine_compact(e); /* before the first sweep only */
	const struct boar_rows *d = &e->rows;
	struct linear_args a = {
		.row_ptr = d->row_ptr, .idx = d->idx, .val = d->val,
		.label = d->label, .w = e->wg ? e->wg : e->m->w,
		.reg_scale = e->reg_scale, .G = e->wg ? e->wg + 1 : e->accum,
		.row_weight = d->row_weight,
		.hot_n = d->hot_n, .e = e, .dim = e->m->dim,
		.loss = e->m->loss, .loss_param = e->m->loss_param,
		.bias_scale = (float)e->o.bias_scale,
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
