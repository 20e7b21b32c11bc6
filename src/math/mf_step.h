/* mf_step.h - one rating's step of matrix factorization, host and device
 * (see hd.h).
 *
 * A rating (u, i, r) has the prediction mu + bu + bi + P[u].Q[i] and the
 * loss of boar_options.mf_loss: squared (loss.h's; e = prediction - r) or
 * absolute (|prediction - r|; e = its sign, LIBMF's -f 1), e being the
 * loss's derivative by the prediction. Each factor moves against its
 * component of the gradient with L2 on what the rating touches (the
 * per-rating regularization of LIBMF and cuMF): p -= rate_u (e q + l2_u p),
 * q -= rate_i (e p + l2_i q), both from the old values, and each bias
 * b -= rate (e + l2 b) with its side's l2 (l2_u = l2_i = l2 unless set
 * apart, as LIBMF's -l2 sets P's and Q's). Non-negative MF (LIBMF's -n)
 * projects each new factor back onto >= 0 (boar_mf_project). AdaGrad
 * keeps one sum per user row and per item row, of the row's mean squared
 * gradient component (as LIBMF does): rank times less state than
 * per-coordinate sums, and a row's components share a scale anyway.
 */
#ifndef BOAR_MATH_MF_STEP_H
#define BOAR_MATH_MF_STEP_H

#include <stdint.h>

#include "math/hd.h"
#include "math/loss.h"
#include "math/step.h"

/* The loss of predicting `pred` for the rating r under `loss` (enum
 * boar_mf_loss); *e receives its derivative by pred: the error pred - r
 * for squared loss, its sign for absolute loss (0 at a perfect fit, where
 * |x| has no slope to follow). The evaluation's loss is this one. */
BOAR_HD float boar_mf_rating_loss(int loss, float pred, float r, float *e)
{
	if (loss == BOAR_MF_LOSS_ABSOLUTE) {
		float d = pred - r;
		*e = d > 0.0f ? 1.0f : (d < 0.0f ? -1.0f : 0.0f);
		return fabsf(d);
	}
	return boar_loss_squared(pred, r, 0.0f, e);
}

/* The rating's loss; *e receives the loss's derivative (the error for
 * squared loss). */
BOAR_HD float boar_mf_loss(int loss, float mu, float bu, float bi, float dot,
			   float r, float *e)
{
	return boar_mf_rating_loss(loss, mu + bu + bi + dot, r, e);
}

/* The gradient component of factor `self` whose partner in the dot
 * product is `other` (also a bias's, with other = 1). */
BOAR_HD float boar_mf_grad(float e, float other, float self, float l2)
{
	return e * other + l2 * self;
}

/* A factor's new value under non-negative MF: max(x, 0); x otherwise. */
BOAR_HD float boar_mf_project(float x, int nonneg)
{
	return nonneg && x < 0.0f ? 0.0f : x;
}

/* A row's rate from the sum of its squared gradient components g2_sum
 * over the rank; *dacc receives the change to its accumulator acc. */
BOAR_HD float boar_mf_rate(const struct coord_params *p, int accumulates,
			   float g2_sum, uint32_t rank, float acc, float *dacc)
{
	*dacc = 0.0f;
	if (!accumulates)
		return p->eta;
	return boar_opt_rate(p->opt, p->eta, g2_sum / (float)rank, acc, dacc);
}

#endif
