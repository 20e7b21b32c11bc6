/* train_state.c - optimizer state kept for warm starts (train_state.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "engine_ops.h"
#include "math/step.h"
#include "model/model.h"
#include "model/train_state.h"

void boar_train_state_free(struct boar_train_state *s)
{
	if (!s)
		return;
	free(s->accum);
	free(s);
}

/* The CPU engine's AdaGrad sum of coordinate j: beside its weight when
 * the engine interleaves them (engine.c), else in its own array; NULL
 * when the engine keeps none (SGD, or not the CPU engine). */
static float *sum_of(const struct boar_engine_ops *ops, void *eng, uint64_t j)
{
	struct boar_engine *e = eng;
	if (ops != &boar_engine_cpu_ops || !e)
		return NULL;
	if (e->wg)
		return boar_engine_wg_sum(e, j);
	return e->accum ? &e->accum[j] : NULL;
}

static uint64_t sums_of(const struct boar_model *m)
{
	return m->task == BOAR_TASK_LINEAR ? (m->dim + 1) * boar_model_width(m)
					   : m->dim + m->n_items;
}

struct boar_train_state *boar_train_state_take(const struct boar_model *m,
					       const struct boar_engine_ops *ops,
					       void *eng, const boar_options *o,
					       const struct boar_train_state *prev,
					       int epochs)
{
	struct boar_train_state *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->epochs = (prev ? prev->epochs : 0) + (uint32_t)epochs;
	s->optimizer = o->optimizer;
	/* The step the next epoch would have taken: where a warm start
	 * picks the schedule up. */
	s->eta = boar_step_size(o->eta, o->eta_decay, epochs + 1);
	if (!(s->eta > 0))
		s->eta = 1e-30; /* decayed past a double: keep it valid */
	s->eta_decay = o->eta_decay;
	if (!boar_opt_accumulates(o->optimizer) || !sum_of(ops, eng, 0))
		return s;
	s->n_accum = sums_of(m);
	if (!(s->accum = malloc(s->n_accum * sizeof *s->accum))) {
		free(s);
		return NULL;
	}
	for (uint64_t j = 0; j < s->n_accum; j++)
		s->accum[j] = *sum_of(ops, eng, j);
	return s;
}

const char *boar_train_state_resume_options(const struct boar_train_state *s,
					    boar_options *o)
{
	if (o->optimizer == BOAR_OPT_AUTO)
		o->optimizer = s->optimizer;
	if (o->optimizer != s->optimizer)
		return s->optimizer == BOAR_OPT_ADAGRAD
			       ? "the initial model keeps AdaGrad's state: "
				 "continue it with the adagrad optimizer"
		       : s->optimizer == BOAR_OPT_NORMALIZED
			       ? "the initial model keeps normalized's "
				 "AdaGrad sums: continue it with the "
				 "normalized optimizer"
			       : "the initial model keeps SGD's step "
				 "schedule: continue it with the sgd optimizer";
	if (o->eta == BOAR_AUTO)
		o->eta = s->eta;
	return NULL;
}

void boar_train_state_resume_sums(const struct boar_train_state *s,
				  const struct boar_model *init,
				  const struct boar_engine_ops *ops, void *eng)
{
	if (!s->n_accum || !sum_of(ops, eng, 0))
		return;
	const struct boar_model *m = ((struct boar_engine *)eng)->m;
	/* Old coordinate j of init to new j of m: linear keeps feature ids
	 * and moves the K biases to the end; MF keeps users and moves the
	 * items after the (maybe more) users. */
	uint64_t K = boar_model_width(m);
	uint64_t head = m->task == BOAR_TASK_LINEAR ? init->dim * K : init->dim;
	uint64_t shift = m->task == BOAR_TASK_LINEAR ? (m->dim - init->dim) * K
						     : m->dim - init->dim;
	for (uint64_t j = 0; j < s->n_accum; j++)
		*sum_of(ops, eng, j < head ? j : j + shift) = s->accum[j];
}
