/* model.c - model handles: allocation, shape, initialization, scoring. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "data/dataset.h"
#include "data/input_spec.h"
#include "math/loss.h"
#include "model.h"
#include "base/rng.h"
#include "train_state.h"

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

struct boar_model *boar_model_alloc_multiclass(int loss, uint64_t dim,
					       uint32_t k, const float *classes)
{
	struct boar_model *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->task = BOAR_TASK_LINEAR;
	m->loss = loss;
	m->dim = dim;
	m->n_classes = k;
	m->w = calloc((dim + 1) * k, sizeof *m->w);
	m->classes = malloc(k * sizeof *m->classes);
	if (!m->w || !m->classes) {
		boar_model_free(m);
		return NULL;
	}
	if (classes)
		memcpy(m->classes, classes, k * sizeof *classes);
	return m;
}

void boar_model_init_factors(struct boar_model *m, double init_scale,
			     uint64_t seed, double mean_rating)
{
	struct boar_factor_init fi = boar_factor_init_make(init_scale, m->rank,
							  seed);
	for (uint64_t k = 0; k < m->dim * m->rank; k++)
		m->P[k] = boar_factor_init_at(&fi, k);
	for (uint64_t k = 0; k < m->n_items * m->rank; k++)
		m->Q[k] = boar_factor_init_at(&fi, m->dim * m->rank + k);
	m->mu = m->has_bias ? (float)mean_rating : 0.0f;
}

void boar_model_free(struct boar_model *m)
{
	if (!m)
		return;
	free(m->w);
	free(m->classes);
	free(m->P);
	free(m->Q);
	free(m->bu);
	free(m->bi);
	boar_input_spec_free(m->input);
	boar_train_state_free(m->state);
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

int boar_model_mf_loss(const boar_model *m)
{
	return m->task == BOAR_TASK_MF ? m->mf_loss : -1;
}

uint32_t boar_model_classes(const boar_model *m, const float **labels)
{
	if (labels)
		*labels = m->classes;
	return m->n_classes;
}

/* The message of a call on a model of the other task. */
static int wrong_task(boar_error *err, const char *fn, const boar_model *m)
{
	return boar_fail(err, BOAR_EINVAL, "%s: the model is %s", fn,
			 m->task == BOAR_TASK_MF ? "matrix factorization"
						 : "linear");
}

int boar_model_weights(const boar_model *m, const float **w, uint64_t *n,
		       boar_error *err)
{
	if (m->task != BOAR_TASK_LINEAR)
		return wrong_task(err, "boar_model_weights", m);
	*w = m->w;
	*n = (m->dim + 1) * boar_model_width(m);
	return 0;
}

int boar_model_factors(const boar_model *m, const float **P, const float **Q,
		       const float **bu, const float **bi, float *mu,
		       uint64_t *n_items, boar_error *err)
{
	if (m->task != BOAR_TASK_MF)
		return wrong_task(err, "boar_model_factors", m);
	*P = m->P;
	*Q = m->Q;
	*bu = m->has_bias ? m->bu : NULL;
	*bi = m->has_bias ? m->bi : NULL;
	*mu = m->mu;
	*n_items = m->n_items;
	return 0;
}

uint64_t boar_model_dim(const boar_model *m)
{
	return m->dim;
}

double boar_sigmoid(double margin)
{
	return boar_loss_response(BOAR_LOSS_LOGISTIC, margin);
}

void boar_model_margins(const struct boar_model *m, size_t nnz,
			const uint32_t *idx, const float *val, int caller_ids,
			double *out)
{
	uint32_t K = boar_model_width(m);
	const float *bias = &m->w[m->dim * K];
	if (K == 1) {
		out[0] = boar_model_margin1(m, nnz, idx, val, caller_ids);
		return;
	}
	for (uint32_t c = 0; c < K; c++)
		out[c] = bias[c];
	for (size_t k = 0; k < nnz; k++) {
		uint64_t j = caller_ids ? boar_model_slot(m, idx[k]) : idx[k];
		if (j >= m->dim)
			continue;
		double x = val ? val[k] : 1.0;
		for (uint32_t c = 0; c < K; c++)
			out[c] += m->w[j * K + c] * x;
	}
}

void boar_class_probabilities(int loss, double *s, uint32_t K)
{
	if (boar_loss_kind(loss) == BOAR_LOSS_KIND_MULTINOMIAL) {
		boar_softmax_d(s, K, s);
	} else if (boar_loss_probabilistic(loss)) {
		for (uint32_t c = 0; c < K; c++)
			s[c] = boar_sigmoid(s[c]);
	}
}

uint32_t boar_argmax(const double *s, uint32_t K)
{
	uint32_t best = 0;
	for (uint32_t c = 1; c < K; c++)
		if (s[c] > s[best])
			best = c;
	return best;
}

/* A linear model's raw score of one row: the margin, or for a multiclass
 * model the label of the best class. */
static double row_score(const boar_model *m, size_t nnz, const uint32_t *idx,
			const float *val)
{
	if (m->n_classes) {
		/* No allocation: classes beyond this stack block are not
		 * supported (boar_options_check caps K). */
		double s[BOAR_MAX_CLASSES];
		boar_model_margins(m, nnz, idx, val, 1, s);
		return m->classes[boar_argmax(s, m->n_classes)];
	}
	return boar_model_margin1(m, nnz, idx, val, 1);
}

int boar_model_predict_scores(const boar_model *m, size_t nnz,
			      const uint32_t *idx, const float *val,
			      double *scores, boar_error *err)
{
	if (m->task != BOAR_TASK_LINEAR)
		return wrong_task(err, "boar_model_predict_scores", m);
	if (!m->n_classes) {
		double s = row_score(m, nnz, idx, val);
		scores[0] = boar_loss_response(m->loss, s);
		return 1;
	}
	boar_model_margins(m, nnz, idx, val, 1, scores);
	boar_class_probabilities(m->loss, scores, m->n_classes);
	return (int)m->n_classes;
}

int boar_model_predict_row(const boar_model *m, size_t nnz,
			   const uint32_t *idx, const float *val,
			   double *score, boar_error *err)
{
	if (m->task != BOAR_TASK_LINEAR)
		return wrong_task(err, "boar_model_predict_row", m);
	*score = row_score(m, nnz, idx, val);
	return 0;
}

double boar_model_rating(const struct boar_model *m, uint32_t user,
			 uint32_t item)
{
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

int boar_model_predict_pair(const boar_model *m, uint32_t user, uint32_t item,
			    double *rating, boar_error *err)
{
	if (m->task != BOAR_TASK_MF)
		return wrong_task(err, "boar_model_predict_pair", m);
	*rating = boar_model_rating(m, user, item);
	return 0;
}
