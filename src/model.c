/* model.c - model handles: allocation, shape, initialization, scoring. */
#include <math.h>
#include <stdlib.h>

#include "dataset.h"
#include "model.h"
#include "rng.h"

struct boar_model *boar_model_alloc(int task, int loss, uint64_t dim,
				    uint64_t n_items, uint32_t rank,
				    int has_bias)
{
	struct boar_model *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->task = task;
	m->loss = loss;
	m->dim = dim;
	m->n_items = n_items;
	m->rank = rank;
	m->has_bias = has_bias;
	if (task == BOAR_TASK_LINEAR) {
		if (!(m->w = calloc(dim + 1, sizeof *m->w)))
			goto nomem;
		return m;
	}
	m->P = calloc(dim * rank + 1, sizeof *m->P);
	m->Q = calloc(n_items * rank + 1, sizeof *m->Q);
	if (!m->P || !m->Q)
		goto nomem;
	if (has_bias) {
		m->bu = calloc(dim + 1, sizeof *m->bu);
		m->bi = calloc(n_items + 1, sizeof *m->bi);
		if (!m->bu || !m->bi)
			goto nomem;
	}
	return m;
nomem:
	boar_model_free(m);
	return NULL;
}

void boar_model_init_factors(struct boar_model *m, double init_scale,
			     uint64_t seed, double mean_rating)
{
	float a = (float)(init_scale / sqrt((double)m->rank));
	boar_rng r = boar_rng_make(seed, 1, 1);
	for (uint64_t k = 0; k < m->dim * m->rank; k++)
		m->P[k] = a * (float)(2 * boar_rng_unit(&r) - 1);
	for (uint64_t k = 0; k < m->n_items * m->rank; k++)
		m->Q[k] = a * (float)(2 * boar_rng_unit(&r) - 1);
	m->mu = m->has_bias ? (float)mean_rating : 0.0f;
}

void boar_model_free(struct boar_model *m)
{
	if (!m)
		return;
	free(m->w);
	free(m->P);
	free(m->Q);
	free(m->bu);
	free(m->bi);
	free(m);
}

int boar_model_task(const boar_model *m)
{
	return m->task;
}

int boar_model_loss(const boar_model *m)
{
	return m->loss;
}

int boar_model_hash_bits(const boar_model *m)
{
	return m->hash_bits;
}

uint32_t boar_model_rank(const boar_model *m)
{
	return m->task == BOAR_TASK_MF ? m->rank : 0;
}

uint64_t boar_model_dim(const boar_model *m)
{
	return m->dim;
}

double boar_sigmoid(double margin)
{
	return margin >= 0 ? 1.0 / (1.0 + exp(-margin))
			   : exp(margin) / (1.0 + exp(margin));
}

double boar_model_predict_row(const boar_model *m, size_t nnz,
			      const uint32_t *idx, const float *val)
{
	if (m->task != BOAR_TASK_LINEAR)
		return NAN;
	double s = m->w[m->dim];
	for (size_t k = 0; k < nnz; k++) {
		uint32_t j = boar_feature_slot(idx[k], m->hash_bits);
		if (j < m->dim)
			s += (double)m->w[j] * (val ? val[k] : 1.0f);
	}
	return s;
}

double boar_model_predict_pair(const boar_model *m, uint32_t user,
			       uint32_t item)
{
	if (m->task != BOAR_TASK_MF)
		return NAN;
	double s = m->mu;
	int known_u = user < m->dim, known_i = item < m->n_items;
	if (m->has_bias) {
		s += known_u ? m->bu[user] : 0;
		s += known_i ? m->bi[item] : 0;
	}
	if (known_u && known_i) {
		const float *p = &m->P[(uint64_t)user * m->rank];
		const float *q = &m->Q[(uint64_t)item * m->rank];
		for (uint32_t f = 0; f < m->rank; f++)
			s += (double)p[f] * q[f];
	}
	return s;
}
