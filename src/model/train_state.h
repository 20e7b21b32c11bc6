/* train_state.h - the optimizer state a model file may keep, so that a warm
 * start continues training rather than restarting it (library-internal).
 *
 * Weights alone are not where training stopped: AdaGrad's per-coordinate
 * sums decide how far the next step goes, and SGD's step has decayed by
 * eta_decay per epoch. A warm start from weights alone takes full-size
 * steps again and walks away from the optimum it had reached (Jester MF:
 * RMSE 4.144 -> 4.203). With boar_options.save_resume, boar_train() keeps
 * both in the model (VW's --save_resume), the model file stores them (a
 * section of model_sections.c), and a warm start from that model resumes
 * the step schedule and the sums.
 */
#ifndef BOAR_TRAIN_STATE_H
#define BOAR_TRAIN_STATE_H

#include <stdint.h>

#include "boar.h"

struct boar_model;
struct boar_engine_ops;

struct boar_train_state {
	uint32_t epochs;   /* epochs trained so far, over every warm start */
	int optimizer;     /* BOAR_OPT_SGD or BOAR_OPT_ADAGRAD */
	double eta;        /* the step the schedule started from (resolved) */
	double eta_decay;
	uint64_t n_accum;  /* AdaGrad sums (0 for SGD): the engine's layout,
			      linear (dim + 1) * width, MF users + items */
	float *accum;
};

void boar_train_state_free(struct boar_train_state *s);

/* The state of model m after `epochs` more epochs of resolved options o,
 * on top of the initial model's state prev (may be NULL): the step the
 * schedule reached and, from the CPU engine eng (ops), its AdaGrad sums.
 * NULL when out of memory. */
struct boar_train_state *boar_train_state_take(const struct boar_model *m,
					       const struct boar_engine_ops *ops,
					       void *eng, const boar_options *o,
					       const struct boar_train_state *prev,
					       int epochs);

/* Warm start: resolved options o continue the initial model's state:
 * the step where its schedule stopped. Returns why the state cannot be
 * resumed with o (another optimizer), or NULL. */
const char *boar_train_state_resume_options(const struct boar_train_state *s,
					    boar_options *o);

/* Warm start: AdaGrad sums of the initial model `init` into the CPU
 * engine eng (ops), whose model grew from init (new features, users or
 * items start at 0). Other engines keep their own (refused earlier). */
void boar_train_state_resume_sums(const struct boar_train_state *s,
				  const struct boar_model *init,
				  const struct boar_engine_ops *ops, void *eng);

#endif
