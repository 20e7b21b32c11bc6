/* engine_norm.c - the CPU engine's side of optimizer NORMALIZED
 * (math/step.h): each feature's scale (the mean |value| of its non-zeros
 * in the training rows), the values the sweeps read divided
 * by it, and the weights moved between the model's space (w_j) and the
 * sweeps' (w_j s_j) around every sweep.
 *
 * Training on x_j / s_j with weights w_j s_j makes the same predictions
 * as the model's w_j on x_j, and AdaGrad there is NAG in the model's
 * space. The scales are powers of 2, so both conversions are exact: the
 * weights come back from a round trip bit for bit, and the model between
 * sweeps (evaluated, kept as the best epoch, pulled and pushed by a
 * cluster worker) is the plain one.
 */
#include <stdlib.h>

#include "data/dataset.h"
#include "engine.h"
#include "math/step.h"
#include "model/model.h"

int boar_engine_norm_setup(struct boar_engine *e)
{
	const struct boar_dataset *d = e->d;
	uint64_t dim = e->m->dim;
	float *s = calloc(dim + 1, sizeof *s);
	uint32_t *count = calloc(dim + 1, sizeof *count);
	if (!s || !count) {
		free(s), free(count);
		return BOAR_ENOMEM;
	}
	/* The training rows only (a holdout's values stay unseen), on one
	 * thread: the scales and the factor are the same at any count. */
	for (uint64_t i = 0; i < e->n; i++) {
		uint32_t r = e->order[i];
		for (uint64_t k = d->row_ptr[r]; k < d->row_ptr[r + 1]; k++)
			if (d->idx[k] < dim && d->val[k] != 0.0f) {
				s[d->idx[k]] += fabsf(d->val[k]);
				count[d->idx[k]]++;
			}
	}
	for (uint64_t j = 0; j < dim; j++)
		s[j] = boar_norm_scale(count[j] ? s[j] / count[j] : 0.0f);
	s[dim] = 1.0f;
	free(count);
	double sum_sq = 0;
	for (uint64_t i = 0; i < e->n; i++) {
		uint32_t r = e->order[i];
		for (uint64_t k = d->row_ptr[r]; k < d->row_ptr[r + 1]; k++) {
			if (d->idx[k] >= dim)
				continue;
			double z = d->val[k] / s[d->idx[k]];
			sum_sq += z * z;
		}
	}
	e->norm_scale = s;
	e->norm_factor = boar_norm_step_factor((double)e->n, sum_sq);
	return 0;
}

int boar_engine_norm_values(struct boar_engine *e)
{
	const struct boar_dataset *d = e->d;
	if (!e->norm_scale || e->rows.val != d->val)
		return 0; /* no normalization, or already the engine's copy */
	float *val = malloc((d->nnz ? d->nnz : 1) * sizeof *val);
	if (!val)
		return BOAR_ENOMEM;
	const float *s = e->norm_scale;
	uint64_t dim = e->m->dim;
#pragma omp parallel for num_threads(e->threads) schedule(static)
	for (uint64_t k = 0; k < d->nnz; k++)
		val[k] = d->idx[k] < dim ? d->val[k] / s[d->idx[k]] : d->val[k];
	e->remapped[1] = val; /* the rows were not remapped: the slot is free */
	e->rows.val = val;
	return 0;
}

void boar_engine_norm_weights(struct boar_engine *e, int to_sweep)
{
	float *w = e->m->w;
	const float *s = e->norm_scale;
	uint64_t K = boar_model_width(e->m), n = (e->m->dim + 1) * K;
#pragma omp parallel for num_threads(e->threads) schedule(static)
	for (uint64_t p = 0; p < n; p++)
		w[p] = to_sweep ? w[p] * s[p / K] : w[p] / s[p / K];
}
