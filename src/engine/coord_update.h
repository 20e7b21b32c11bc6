/* coord_update.h - how the CPU sweeps apply one coordinate's step.
 *
 * The step itself is math/step.h's (the GPU kernels use the same); this
 * file adds what only threads sharing memory need: relaxed loads and
 * stores for the intended Hogwild! race, and the update policy (atomic
 * add or compare-and-swap, or racy store). policy/adagrad/reg are
 * compile-time constants at every call site, so the branches fold away.
 */
#ifndef BOAR_COORD_UPDATE_H
#define BOAR_COORD_UPDATE_H

#include <stdint.h>

#include "atomics/atomics.h"
#include "math/step.h"

/* w . x over non-zeros [lo, hi) with relaxed loads, in four interleaved
 * partial sums: one running sum is a chain of dependent adds as long as
 * the row, four let the loads and adds of neighbouring non-zeros overlap.
 * The order is fixed, so one-thread runs stay reproducible. */
static inline float boar_margin(const float *w, const uint32_t *idx,
				const float *val, uint64_t lo, uint64_t hi)
{
	float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	uint64_t k = lo;
	for (; k + 4 <= hi; k += 4) {
		s0 += boar_load_relaxed(&w[idx[k]]) * val[k];
		s1 += boar_load_relaxed(&w[idx[k + 1]]) * val[k + 1];
		s2 += boar_load_relaxed(&w[idx[k + 2]]) * val[k + 2];
		s3 += boar_load_relaxed(&w[idx[k + 3]]) * val[k + 3];
	}
	for (; k < hi; k++)
		s0 += boar_load_relaxed(&w[idx[k]]) * val[k];
	return (s0 + s1) + (s2 + s3);
}

/* Applies one coordinate's update. gl is the loss part of the gradient
 * (d * x_j), s the coordinate's regularization scale; adagrad: the
 * optimizer keeps an accumulator in *G (boar_opt_accumulates). */
static inline __attribute__((always_inline)) void
boar_update_coord(const struct coord_params *a, float *p, float *G, float gl,
		  float s, int policy, int adagrad, int reg)
{
	float wv = reg != REG_NONE ? boar_load_relaxed(p) : 0.0f;
	float acc = adagrad ? boar_load_relaxed(G) : 0.0f, dacc, t;
	float delta = boar_coord_step(a, adagrad, reg, gl, wv, acc, s, &dacc,
				      &t);
	/* The sums are a step-size heuristic: a lost increment under racing
	 * threads does little harm, so racy updates store them racily. Under
	 * the atomic policy they are added by compare-and-swap as well: on
	 * the coordinates that many threads write at once (a multiclass
	 * model's hot features, engine_hot.c) racy sums lost enough of their
	 * increments to lengthen the steps noticeably. */
	if (adagrad && policy == BOAR_POLICY_ATOMIC)
		boar_add_atomic(G, dacc);
	else if (adagrad)
		boar_store_relaxed(G, acc + dacc);
	if (reg != REG_L1) {
		boar_add_policy(policy, p, delta);
		return;
	}
	if (policy == BOAR_POLICY_RACY) {
		boar_store_relaxed(p, boar_soft_threshold(wv + delta, t));
		return;
	}
	float old = wv;
	while (!boar_cas_float(p, &old, boar_soft_threshold(old + delta, t)))
		;
}

#endif
