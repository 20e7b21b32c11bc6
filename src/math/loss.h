/* loss.h - the losses of the linear model, host and device (see hd.h).
 *
 * boar_loss_NAME(m, y, param, &d) gives the loss at margin m against
 * target y and its derivative d = dloss/dm, for every NAME of
 * BOAR_LOSS_MAP (boar.h). Adding a loss is a line in that list and its
 * function here; everything else (dispatch, label mapping, the CLI's
 * names, model files, GPU kernels) is generated from the list.
 *
 * Every loss is the objective the sweeps optimize and the number they
 * report, so squared loss is (m - y)^2 / 2: its derivative is m - y.
 */
#ifndef BOAR_MATH_LOSS_H
#define BOAR_MATH_LOSS_H

#include <math.h>
#include <stdint.h>

#include "boar.h"
#include "math/hd.h"

/* The loss of a probability below 1e-30, -log(1e-30): what a row costs at
 * worst, so one hopeless row cannot make the mean infinite. */
#define BOAR_LOSS_CAP 69.07755279f

/* log(1 + exp(-y m)). One exp serves loss and derivative: with
 * e = exp(-|z|), loss = max(-z, 0) + log1p(e), and 1/(1+exp(z)) is
 * e/(1+e) for z > 0, 1/(1+e) otherwise. */
BOAR_HD float boar_loss_logistic(float m, float y, float param, float *d)
{
	float z = y * m;
	float e = expf(-fabsf(z));
	float r = 1.0f / (1.0f + e);
	*d = -y * (z > 0 ? e * r : r);
	return (z > 0 ? 0.0f : -z) + log1pf(e);
}

/* max(0, 1 - y m) */
BOAR_HD float boar_loss_hinge(float m, float y, float param, float *d)
{
	float z = y * m;
	*d = z < 1.0f ? -y : 0.0f;
	return z < 1.0f ? 1.0f - z : 0.0f;
}

/* (m - y)^2 / 2 */
BOAR_HD float boar_loss_squared(float m, float y, float param, float *d)
{
	float e = m - y;
	*d = e;
	return 0.5f * e * e;
}

/* Huber: (m - y)^2 / 2 within delta of the target, delta (|m - y| - delta/2)
 * beyond: squared loss near the target, absolute loss far from it, so an
 * outlier's gradient is at most delta. */
BOAR_HD float boar_loss_huber(float m, float y, float delta, float *d)
{
	float e = m - y, a = fabsf(e);
	if (a <= delta) {
		*d = e;
		return 0.5f * e * e;
	}
	*d = e > 0 ? delta : -delta;
	return delta * (a - 0.5f * delta);
}

/* Pinball loss of the tau-quantile: tau (y - m) when the target is above
 * the prediction, (1 - tau) (m - y) below it. Its minimizer over a
 * constant m is the tau-quantile of the targets: a fraction tau of them
 * ends up below the prediction. At m == y (the kink) the derivative is
 * the midpoint of the two slopes. */
BOAR_HD float boar_loss_quantile(float m, float y, float tau, float *d)
{
	float e = y - m;
	*d = e > 0 ? -tau : (e < 0 ? 1.0f - tau : 0.5f - tau);
	return e > 0 ? tau * e : (tau - 1.0f) * e;
}

/* Beyond this margin the Poisson mean exp(m) continues as its tangent, so
 * that a wild early step yields a large finite gradient rather than an
 * infinite one (exp(30) is 1e13 counts: no real prediction is near it). */
#define BOAR_POISSON_MAX_MARGIN 30.0f

/* Poisson regression with a log link: the mean is mu = exp(m) and the loss
 * is half the unit deviance, mu - y - y log(mu / y) = exp(m) - y m - y +
 * y log y (0 log 0 = 0): the negative log-likelihood less its value at a
 * perfect fit, so it is 0 there and never negative. Its derivative is
 * mu - y. Labels are counts (>= 0; boar_loss_label_ok); a negative one is
 * read as 0 so the loss stays defined. */
BOAR_HD float boar_loss_poisson(float m, float y, float param, float *d)
{
	float yc = y > 0 ? y : 0.0f;
	float top = BOAR_POISSON_MAX_MARGIN;
	float mu = m <= top ? expf(m) : expf(top) * (1.0f + (m - top));
	float mu_integral = m <= top ? mu
				     : expf(top) * (1.0f + (m - top) +
						    0.5f * (m - top) * (m - top));
	*d = mu - yc;
	return mu_integral - yc * m - yc + (yc > 0 ? yc * logf(yc) : 0.0f);
}

/* Softmax over the two margins {0, m}: exactly the logistic loss. Softmax
 * models have K >= 2 margins and go through boar_multiclass_loss. */
BOAR_HD float boar_loss_softmax(float m, float y, float param, float *d)
{
	return boar_loss_logistic(m, y, param, d);
}

/* The loss of code `loss`. */
BOAR_HD float boar_loss_eval(int loss, float m, float y, float param, float *d)
{
	switch (loss) {
#define BOAR_LOSS_CASE_(N, code, name, kind, prob, pname, dflt, help) \
	case BOAR_LOSS_##N:                                      \
		return boar_loss_##name(m, y, param, d);
		BOAR_LOSS_MAP(BOAR_LOSS_CASE_)
#undef BOAR_LOSS_CASE_
	}
	*d = 0.0f;
	return 0.0f;
}

/* A loss's kind and prob columns in one int (kind in the low four bits);
 * a binary margin loss for an unknown code. */
BOAR_HD int boar_loss_traits_(int loss)
{
	switch (loss) {
#define BOAR_LOSS_TRAITS_(N, code, name, kind, prob, pname, dflt, help) \
	case BOAR_LOSS_##N:                                              \
		return BOAR_LOSS_KIND_##kind | (prob) << 4;
		BOAR_LOSS_MAP(BOAR_LOSS_TRAITS_)
#undef BOAR_LOSS_TRAITS_
	}
	return BOAR_LOSS_KIND_BINARY;
}

/* enum boar_loss_kind of a loss. */
BOAR_HD int boar_loss_kind(int loss)
{
	return boar_loss_traits_(loss) & 15;
}

/* 1 when the loss's scores are probabilities (sigmoid or softmax). */
BOAR_HD int boar_loss_probabilistic(int loss)
{
	return boar_loss_traits_(loss) >> 4;
}

/* The label as the loss sees it: the sign for classification losses, the
 * value for regression. */
BOAR_HD float boar_loss_target(int loss, float label)
{
	if (boar_loss_kind(loss) == BOAR_LOSS_KIND_REGRESSION)
		return label;
	return label > 0 ? 1.0f : -1.0f;
}

/* Whether v is a usable parameter of the loss: > 0 and finite, and below
 * 1 for quantile's tau. */
BOAR_HD int boar_loss_param_ok(int loss, double v)
{
	return v > 0 && v < 1e30 && (loss != BOAR_LOSS_QUANTILE || v < 1);
}

/* Whether y is a label the loss can fit: Poisson's are counts, >= 0. */
BOAR_HD int boar_loss_label_ok(int loss, float y)
{
	return loss != BOAR_LOSS_POISSON || y >= 0;
}

/* A prediction in the label's scale from the margin m: the probability of
 * the positive class for sigmoid losses, the mean count exp(m) for
 * Poisson, the margin itself otherwise. */
BOAR_HD double boar_loss_response(int loss, double m)
{
	if (boar_loss_probabilistic(loss))
		return m >= 0 ? 1.0 / (1.0 + exp(-m)) : exp(m) / (1.0 + exp(m));
	if (loss == BOAR_LOSS_POISSON)
		return exp(m);
	return m;
}

/* p[c] = exp(m[c]) / sum exp(m); returns log(sum exp(m)), computed from
 * the largest margin so that nothing overflows. p may be m. One body for
 * the float sweep and the double evaluation. */
#define BOAR_SOFTMAX_DEF_(NAME, T, EXP, LOG)                              \
	BOAR_HD T NAME(const T *m, uint32_t K, T *p)                       \
	{                                                                  \
		T mx = m[0], sum = 0;                                      \
		for (uint32_t c = 1; c < K; c++)                           \
			mx = m[c] > mx ? m[c] : mx;                        \
		for (uint32_t c = 0; c < K; c++)                           \
			sum += (p[c] = EXP(m[c] - mx));                    \
		for (uint32_t c = 0; c < K; c++)                           \
			p[c] /= sum;                                       \
		return mx + LOG(sum);                                      \
	}
BOAR_SOFTMAX_DEF_(boar_softmax_f, float, expf, logf)
BOAR_SOFTMAX_DEF_(boar_softmax_d, double, exp, log)
#undef BOAR_SOFTMAX_DEF_

/* The class index of a label: its position among the model's K class
 * labels, ascending (a label between two classes takes the lower one;
 * training data holds only the model's labels). One search for the CPU
 * engine's rows (engine.c) and the GPU's (gpu_multiclass.cu). */
BOAR_HD uint32_t boar_class_index(const float *classes, uint32_t K,
				  float label)
{
	uint32_t lo = 0, hi = K;
	while (hi - lo > 1) {
		uint32_t mid = (lo + hi) / 2;
		if (classes[mid] <= label)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* A K-class row's softmax normalizer: the largest margin mx and
 * sum = sum_c boar_softmax_term(m_c, mx), so that nothing overflows. */
struct boar_softmax_norm {
	float mx, sum;
};

BOAR_HD float boar_softmax_term(float m, float mx)
{
	return expf(m - mx);
}

/* Class c's share of a K-class row's loss, and *d = dloss/dm_c, from its
 * margin m, whether c is the row's class (is_y), and for softmax its term
 * e = boar_softmax_term(m, n.mx) and the row's normalizer n (unused by
 * one-vs-rest). One-vs-rest (BINARY losses): class c's binary loss, the
 * row positive iff is_y. MULTINOMIAL (softmax): d = p_c - [is_y] with
 * p_c = e / sum, and the row's class holds the whole loss -log p_y =
 * mx + log(sum) - m_y. A row's loss is boar_multiclass_total of its
 * classes' shares: engines that spread the classes over threads (the
 * GPU's lanes) reduce mx, sum and the shares themselves and call these
 * per class; boar_multiclass_loss is the same in one loop. */
BOAR_HD float boar_multiclass_class(int loss, float param, float m, int is_y,
				    float e, struct boar_softmax_norm n,
				    float *d)
{
	if (boar_loss_kind(loss) != BOAR_LOSS_KIND_MULTINOMIAL)
		return boar_loss_eval(loss, m, is_y ? 1.0f : -1.0f, param, d);
	*d = e / n.sum - (is_y ? 1.0f : 0.0f);
	return is_y ? n.mx + logf(n.sum) - m : 0.0f;
}

/* The row's loss from the sum of its classes' shares: softmax's capped at
 * BOAR_LOSS_CAP. */
BOAR_HD double boar_multiclass_total(int loss, double shares)
{
	if (boar_loss_kind(loss) != BOAR_LOSS_KIND_MULTINOMIAL)
		return shares;
	return shares < BOAR_LOSS_CAP ? shares : BOAR_LOSS_CAP;
}

/* Loss of a K-class row of class y given its margins m; d receives
 * dloss/dm_c (boar_multiclass_class for every class). */
BOAR_HD double boar_multiclass_loss(int loss, float param, const float *m,
				    uint32_t K, uint32_t y, float *d)
{
	struct boar_softmax_norm n = {0.0f, 1.0f};
	int softmax = boar_loss_kind(loss) == BOAR_LOSS_KIND_MULTINOMIAL;
	if (softmax) {
		n.mx = m[0];
		for (uint32_t c = 1; c < K; c++)
			n.mx = m[c] > n.mx ? m[c] : n.mx;
		n.sum = 0.0f;
		for (uint32_t c = 0; c < K; c++)
			n.sum += (d[c] = boar_softmax_term(m[c], n.mx));
	}
	double l = 0;
	for (uint32_t c = 0; c < K; c++)
		l += boar_multiclass_class(loss, param, m[c], c == y,
					   softmax ? d[c] : 0.0f, n, &d[c]);
	return boar_multiclass_total(loss, l);
}

#endif
