/* train_state.c - optimizer state kept for warm starts (train_state.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "model.h"
#include "train_state.h"

void boar_train_state_free(struct boar_train_state *s)
{
	if (!s)
		return;
	free(s->accum);
	free(s);
}

struct boar_train_state *boar_train_state_take(const struct boar_model *m,
					       const struct boar_engine *e,
					       const boar_options *o,
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
	s->eta = o->eta * pow(o->eta_decay, epochs);
	if (!(s->eta > 0))
		s->eta = 1e-30; /* decayed past a double: keep it valid */
	s->eta_decay = o->eta_decay;
	if (e && e->accum) {
		s->n_accum = m->task == BOAR_TASK_LINEAR
				     ? (m->dim + 1) * boar_model_width(m)
				     : m->dim + m->n_items;
		if (!(s->accum = malloc(s->n_accum * sizeof *s->accum))) {
			free(s);
			return NULL;
		}
		memcpy(s->accum, e->accum, s->n_accum * sizeof *s->accum);
	}
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
			       : "the initial model keeps SGD's step "
				 "schedule: continue it with the sgd optimizer";
	if (o->eta == BOAR_AUTO)
		o->eta = s->eta;
	return NULL;
}

void boar_train_state_resume_sums(const struct boar_train_state *s,
				  const struct boar_model *init,
				  struct boar_engine *e)
{
	const struct boar_model *m = e->m;
	if (!e->accum || !s->n_accum)
		return;
	if (m->task == BOAR_TASK_LINEAR) {
		uint64_t K = boar_model_width(m);
		memcpy(e->accum, s->accum, init->dim * K * sizeof *e->accum);
		memcpy(&e->accum[m->dim * K], &s->accum[init->dim * K],
		       K * sizeof *e->accum);
	} else {
		memcpy(e->accum, s->accum, init->dim * sizeof *e->accum);
		memcpy(&e->accum[m->dim], &s->accum[init->dim],
		       init->n_items * sizeof *e->accum);
	}
}
