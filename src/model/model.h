/* model.h - the in-memory layout of a boar_model (library-internal).
 *
 * Linear: w has dim + 1 floats; w[dim] is the bias (kept in the same array
 * so the sweep treats it as one more coordinate that every row touches).
 * Multiclass (n_classes = K > 0): w has (dim + 1) * K floats, feature-major
 * (w[j * K + c]), so a row's update of all K classes for one feature falls
 * in one or two cache lines; classes[K] holds the class labels.
 * MF: P is n_users x rank and Q is n_items x rank, row-major; with biases,
 * bu[n_users], bi[n_items] and the global mean mu.
 */
#ifndef BOAR_MODEL_H
#define BOAR_MODEL_H

#include <math.h>
#include <stdint.h>

#include "boar.h"
#include "base/rng.h"
#include "data/feature_slot.h"

struct boar_model {
	int task;      /* BOAR_TASK_LINEAR or BOAR_TASK_MF */
	int loss;      /* enum boar_loss; MF: squared */
	float loss_param; /* the loss's parameter (Huber's delta), or 0 */
	int hash_bits; /* feature ids are hashed into 2^hash_bits (0: not) */
	int slot_ids;  /* trained on VW/CSV data: callers pass slots (see
			  boar_hash_feature), which are only masked */
	uint64_t dim;  /* linear: feature slots; MF: users */
	uint64_t n_items;
	uint32_t rank;
	int has_bias;  /* MF: mu, bu, bi are used */
	float mu;
	uint32_t n_classes; /* multiclass K, or 0 (binary/regression/MF) */
	float *classes;     /* K label values, ascending */
	float *w;      /* linear: (dim + 1) * max(K, 1) */
	float *P, *Q;  /* MF factors */
	float *bu, *bi; /* MF biases, or NULL */
	struct boar_input_spec *input; /* how its data was read, or NULL */
	struct boar_train_state *state; /* --save-resume: optimizer state */
	int mf_loss;   /* MF: enum boar_mf_loss the sweep fits */
};

/* Allocates a zeroed model of the given shape; NULL when out of memory. */
struct boar_model *boar_model_alloc(int task, int loss, uint64_t dim,
				    uint64_t n_items, uint32_t rank,
				    int has_bias);

/* A multiclass linear model of K classes with the given labels (copied;
 * NULL leaves them for the caller to fill). */
struct boar_model *boar_model_alloc_multiclass(int loss, uint64_t dim,
					       uint32_t k,
					       const float *classes);

/* The most classes a multiclass model may have (predict keeps a score per
 * class on the stack). */
#define BOAR_MAX_CLASSES 1024

/* The margins of one row, bias included, in double: out[0] for a binary or
 * regression model, out[0..K-1] for K classes. Ids are the caller's
 * (hashed like the model) when caller_ids, else slots (a loaded dataset's);
 * ids beyond the model are ignored (a test file may have new features).
 * val NULL: every value is 1. */
void boar_model_margins(const struct boar_model *m, size_t nnz,
			const uint32_t *idx, const float *val, int caller_ids,
			double *out);

/* In place: margins to probabilities (softmax, or a sigmoid per class for
 * logistic one-vs-rest; hinge margins stay margins). */
void boar_class_probabilities(int loss, double *s, uint32_t K);
uint32_t boar_argmax(const double *s, uint32_t K);
/* An MF model's predicted rating of (user, item): boar_model_predict_pair
 * without the task check, for loops over ratings. */
double boar_model_rating(const struct boar_model *m, uint32_t user,
			 uint32_t item);

/* Weights per feature slot: K for multiclass, else 1. */
static inline uint32_t boar_model_width(const struct boar_model *m)
{
	return m->n_classes ? m->n_classes : 1;
}

/* Draws MF factors uniformly in [-a, a], a = init_scale / sqrt(rank), from
 * the seed, and sets mu (used only with biases). */
/* The draws of boar_model_init_factors one by one: draw k is P's k-th
 * factor (row-major) for k < users * rank, else Q's (k - users * rank)-th,
 * so a cluster worker computes the initial rows it touches without the
 * whole model (train_cluster_mf.c). */
struct boar_factor_init {
	boar_rng base;
	float a;
};
static inline struct boar_factor_init
boar_factor_init_make(double init_scale, uint32_t rank, uint64_t seed)
{
	struct boar_factor_init f = {
		.base = boar_rng_make(seed, 1, 1),
		.a = (float)(init_scale / sqrt((double)rank)),
	};
	return f;
}
static inline float boar_factor_init_at(const struct boar_factor_init *f,
					uint64_t k)
{
	boar_rng r = boar_rng_skip(f->base, k);
	return f->a * (float)(2 * boar_rng_unit(&r) - 1);
}
void boar_model_init_factors(struct boar_model *m, double init_scale,
			     uint64_t seed, double mean_rating);

/* The weight slot a caller's id maps to in this model. */
static inline uint32_t boar_model_slot(const struct boar_model *m, uint64_t id)
{
	if (m->slot_ids)
		return (uint32_t)(id & ((1ULL << m->hash_bits) - 1));
	return boar_feature_slot(id, m->hash_bits);
}

/* boar_model_margins of a one-score model (binary, regression): the
 * serving path (bench/predict_latency), inlined where it is called, one sum
 * in a register, the bias first as everywhere. */
static inline double boar_model_margin1(const struct boar_model *m,
					size_t nnz, const uint32_t *idx,
					const float *val, int caller_ids)
{
	double sum = m->w[m->dim];
	for (size_t k = 0; k < nnz; k++) {
		uint64_t j = caller_ids ? boar_model_slot(m, idx[k]) : idx[k];
		if (j < m->dim)
			sum += m->w[j] * (val ? (double)val[k] : 1.0);
	}
	return sum;
}

#endif
