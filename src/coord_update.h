/* coord_update.h - how one coordinate of a linear model takes a step.
 *
 * Shared by the binary and the multiclass sweeps. gl is the loss part of the
 * coordinate's gradient (d * x_j); s its regularization scale n / count_j
 * (engine.c). SGD: w -= eta * gl, then an L2 shrink of eta * l2 * s, capped
 * at the weight itself so that a rare feature's large scale never flips its
 * sign; L1 then clips towards zero by eta * l1 * s (truncated gradient).
 * AdaGrad divides eta by the root of the coordinate's summed squared
 * gradients first. policy/adagrad/reg are compile-time constants at every
 * call site, so the branches below fold away.
 */
#ifndef BOAR_COORD_UPDATE_H
#define BOAR_COORD_UPDATE_H

#include <math.h>
#include <stdint.h>

#include "atomics/atomics.h"

enum { REG_NONE = 0, REG_L2 = 1, REG_L1 = 2 };

#define ADAGRAD_EPS 1e-6f

struct coord_params {
	float eta, l1, l2;
};

static inline int boar_reg_kind(double l1, double l2)
{
	return l1 > 0 ? REG_L1 : (l2 > 0 ? REG_L2 : REG_NONE);
}

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

/* AdaGrad's step size for a coordinate whose squared gradients sum to acc
 * (the vectorized path of sweep_linear.c calls it too). */
static inline float boar_adagrad_rate(float eta, float acc)
{
	return eta / (sqrtf(acc) + ADAGRAD_EPS);
}

static inline float boar_soft_threshold(float v, float t)
{
	return v > t ? v - t : (v < -t ? v + t : 0.0f);
}

/* Applies one coordinate's update. gl is the loss part of the gradient
 * (d * x_j), s the coordinate's regularization scale. */
static inline __attribute__((always_inline)) void
boar_update_coord(const struct coord_params *a, float *p, float *G, float gl,
		  float s, int policy, int adagrad, int reg)
{
	float eta = a->eta;
	float wv = reg != REG_NONE ? boar_load_relaxed(p) : 0.0f;
	if (adagrad) {
		float g = gl + (reg != REG_NONE ? a->l2 * s * wv : 0.0f);
		/* The sums are a step-size heuristic: a lost increment under
		 * racing threads is harmless, so they are always racy. */
		float acc = boar_load_relaxed(G) + g * g;
		boar_store_relaxed(G, acc);
		eta = boar_adagrad_rate(eta, acc);
	}
	/* The L2 shrink is capped at the weight itself, so that a rare
	 * feature's large scale n/count_j never flips the weight's sign. */
	float shrink = reg != REG_NONE ? fminf(1.0f, eta * a->l2 * s) : 0.0f;
	float delta = -eta * gl - shrink * wv;
	if (reg != REG_L1) {
		boar_add_policy(policy, p, delta);
		return;
	}
	float t = eta * a->l1 * s;
	if (policy == BOAR_POLICY_RACY) {
		boar_store_relaxed(p, boar_soft_threshold(wv + delta, t));
		return;
	}
	float old = wv;
	while (!boar_cas_float(p, &old, boar_soft_threshold(old + delta, t)))
		;
}

#endif
