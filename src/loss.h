/* loss.h - the three losses of the linear model, as small inline functions.
 *
 * Each gives the loss at margin m and its derivative d = dloss/dm. For
 * logistic and hinge, y is the label's sign (+1/-1); for squared it is the
 * raw target. The sweep computes these once per row, so they may branch.
 */
#ifndef BOAR_LOSS_H
#define BOAR_LOSS_H

#include <math.h>
#include <stdint.h>

#include "boar.h"

/* Loss of margin m against target y; *d receives dloss/dm. */
static inline double boar_loss_eval(int loss, float m, float y, float *d)
{
	switch (loss) {
	case BOAR_LOSS_LOGISTIC: {
		/* One exp serves loss and derivative: with e = exp(-|z|),
		 * loss = max(-z, 0) + log1p(e) and 1/(1+exp(z)) is e/(1+e)
		 * for z > 0, 1/(1+e) otherwise. */
		float z = y * m;
		float e = expf(-fabsf(z));
		float r = 1.0f / (1.0f + e);
		*d = -y * (z > 0 ? e * r : r);
		return (z > 0 ? 0.0f : -z) + log1pf(e);
	}
	case BOAR_LOSS_HINGE: {
		float z = y * m;
		*d = z < 1.0f ? -y : 0.0f;
		return z < 1.0f ? 1.0f - z : 0.0f;
	}
	default: { /* squared: report (m - y)^2, optimize half of it */
		float e = m - y;
		*d = e;
		return (double)e * e;
	}
	}
}

/* The label as the loss sees it: the sign for classification losses. */
static inline float boar_loss_target(int loss, float label)
{
	return loss == BOAR_LOSS_SQUARED ? label : (label > 0 ? 1.0f : -1.0f);
}

/* Loss of a K-class row of class y given its margins m; d receives
 * dloss/dm_c. One-vs-rest (logistic, hinge): class c sees the row as
 * positive iff c == y. Softmax: -log p_y and d_c = p_c - [c == y]. */
static inline double boar_multiclass_loss(int loss, const float *m,
					  uint32_t K, uint32_t y, float *d)
{
	if (loss != BOAR_LOSS_SOFTMAX) {
		double l = 0;
		for (uint32_t c = 0; c < K; c++)
			l += boar_loss_eval(loss, m[c], c == y ? 1.0f : -1.0f,
					    &d[c]);
		return l;
	}
	float mx = m[0], sum = 0;
	for (uint32_t c = 1; c < K; c++)
		mx = m[c] > mx ? m[c] : mx;
	for (uint32_t c = 0; c < K; c++)
		sum += (d[c] = expf(m[c] - mx));
	for (uint32_t c = 0; c < K; c++)
		d[c] /= sum;
	double l = -log(fmax(d[y], 1e-30));
	d[y] -= 1.0f;
	return l;
}

#endif
