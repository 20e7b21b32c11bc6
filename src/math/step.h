/* step.h - how a coordinate steps: the step-size schedule, the optimizers'
 * rates, and lazy L1/L2 regularization; host and device (see hd.h).
 *
 * A sweep computes the loss part gl = d * x_j of a coordinate's gradient;
 * s is the coordinate's regularization scale n / count_j (engine.c). The
 * optimizer turns the epoch's step size eta into the coordinate's rate:
 * boar_opt_NAME(eta, g2, acc, &dacc) for every NAME of BOAR_OPTIMIZER_MAP
 * (boar.h), where g2 is the squared gradient, acc the coordinate's
 * accumulator before this step and *dacc what to add to it. Then
 * w -= rate * gl, an L2 shrink of rate * l2 * s capped at the weight
 * itself (so that a rare feature's large scale never flips its sign), and
 * L1 clips towards zero by rate * l1 * s (truncated gradient).
 */
#ifndef BOAR_MATH_STEP_H
#define BOAR_MATH_STEP_H

#include <math.h>

#include "boar.h"
#include "math/hd.h"

/* Keeps AdaGrad's first steps finite (the sum starts at 0). */
#define BOAR_ADAGRAD_EPS 1e-6f

enum { REG_NONE = 0, REG_L2 = 1, REG_L1 = 2 };

/* What a step needs besides the coordinate: the epoch's step size, the
 * regularization strengths and the optimizer (BOAR_OPT_*). */
struct coord_params {
	float eta, l1, l2;
	int opt;
};

/* The step size of an epoch (1-based): eta * decay^(epoch - 1). */
BOAR_HD double boar_step_size(double eta, double decay, int epoch)
{
	return eta * pow(decay, epoch - 1);
}

BOAR_HD int boar_reg_kind(double l1, double l2)
{
	return l1 > 0 ? REG_L1 : (l2 > 0 ? REG_L2 : REG_NONE);
}

BOAR_HD float boar_opt_sgd(float eta, float g2, float acc, float *dacc)
{
	*dacc = 0.0f;
	return eta;
}

/* AdaGrad's rate for a coordinate whose squared gradients, this step's
 * included, sum to acc (sweep_linear.c also computes it eight at a time in
 * vector registers, the same operations). */
BOAR_HD float boar_adagrad_rate(float eta, float acc)
{
	return eta / (sqrtf(acc) + BOAR_ADAGRAD_EPS);
}

/* The sum grows first, then divides the step, so the first step is
 * eta * g / |g|. */
BOAR_HD float boar_opt_adagrad(float eta, float g2, float acc, float *dacc)
{
	*dacc = g2;
	return boar_adagrad_rate(eta, acc + g2);
}

/* NORMALIZED, after Ross, Mineiro & Langford, "Normalized online
 * learning" (2013, NAG): AdaGrad on each feature divided by its scale s_j,
 * with the step multiplied by sqrt(t / N), N summing the rows' normalized
 * squared norms sum_j (x_j / s_j)^2 (so a row of many features steps no
 * further than a row of one). In the original weights the rate of
 * coordinate j is eta sqrt(t/N) / (s_j sqrt(G_j)): multiplying a column by
 * c divides its weight's steps by c and leaves the predictions unchanged,
 * so raw counts and unscaled columns train as unit-scale ones. NAG takes
 * s_j = the largest |x_j| seen so far; with every row in memory the
 * engine (engine_norm.c) takes the mean |x_j| over the rows that hold the
 * feature: with the max, one long document that repeats a word shrinks
 * the word's every other count, and on 20 Newsgroups term counts (sci.space
 * against the rest) test accuracy fell from 0.978 to 0.973 and log loss
 * rose from 0.066 to 0.087 (bench/RESULTS-defaults.md). Here the
 * coordinate's rate is AdaGrad's on the normalized feature. */
BOAR_HD float boar_opt_normalized(float eta, float g2, float acc, float *dacc)
{
	return boar_opt_adagrad(eta, g2, acc, dacc);
}

/* s_j from the feature's typical |value|: the power of 2 at or above it
 * (1 for a feature no row holds), so that dividing the values and
 * multiplying the weights by it are exact, and the weights survive the
 * engine's round trips between the two spaces bit for bit. */
BOAR_HD float boar_norm_scale(float max_abs)
{
	if (!(max_abs > 0.0f) || !isfinite(max_abs))
		return 1.0f;
	int e;
	float f = frexpf(max_abs, &e); /* max_abs = f 2^e, f in [0.5, 1) */
	if (f == 0.5f)
		e--;
	/* 1 / s stays a normal float, and s finite */
	e = e < -125 ? -125 : (e > 127 ? 127 : e);
	return ldexpf(1.0f, e);
}

/* The step's factor sqrt(t / N) over an epoch of `rows` rows whose
 * normalized squared norms sum to sum_sq (1 when there is nothing). */
BOAR_HD double boar_norm_step_factor(double rows, double sum_sq)
{
	return rows > 0 && sum_sq > 0 ? sqrt(rows / sum_sq) : 1.0;
}

/* The rate of optimizer `opt`. */
BOAR_HD float boar_opt_rate(int opt, float eta, float g2, float acc,
			    float *dacc)
{
	switch (opt) {
#define BOAR_OPT_CASE_(N, code, name, accumulates, help) \
	case BOAR_OPT_##N:                                \
		return boar_opt_##name(eta, g2, acc, dacc);
		BOAR_OPTIMIZER_MAP(BOAR_OPT_CASE_)
#undef BOAR_OPT_CASE_
	}
	*dacc = 0.0f;
	return eta;
}

/* 1 when the optimizer keeps an accumulator per coordinate. */
BOAR_HD int boar_opt_accumulates(int opt)
{
	switch (opt) {
#define BOAR_OPT_ACC_(N, code, name, accumulates, help) \
	case BOAR_OPT_##N:                               \
		return accumulates;
		BOAR_OPTIMIZER_MAP(BOAR_OPT_ACC_)
#undef BOAR_OPT_ACC_
	}
	return 0;
}

BOAR_HD float boar_soft_threshold(float v, float t)
{
	return v > t ? v - t : (v < -t ? v + t : 0.0f);
}

/* One coordinate's step before L1. w is its value as read, acc its
 * accumulator (read only when `accumulates`), gl and s as above. Returns
 * the change to w; *dacc receives the accumulator's change and *l1_t the
 * L1 threshold to clip w + change by (0 unless reg is REG_L1).
 * accumulates and reg are compile-time constants at every call site, so
 * the branches fold away. */
BOAR_HD float boar_coord_step(const struct coord_params *p, int accumulates,
			      int reg, float gl, float w, float acc, float s,
			      float *dacc, float *l1_t)
{
	float rate = p->eta;
	*dacc = 0.0f;
	if (accumulates) {
		/* The optimizer sees the whole gradient, L2 included. */
		float g = reg != REG_NONE ? gl + p->l2 * s * w : gl;
		rate = boar_opt_rate(p->opt, p->eta, g * g, acc, dacc);
	}
	*l1_t = reg == REG_L1 ? rate * p->l1 * s : 0.0f;
	if (reg == REG_NONE)
		return -rate * gl;
	return -rate * gl - fminf(1.0f, rate * p->l2 * s) * w;
}

#endif
