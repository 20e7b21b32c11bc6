/* model_memory.c - whether a fresh model for a dataset fits the memory
 * limit (base/mem_limit.h), asked before anything is allocated. */
#include <stdio.h>

#include "base/error.h"
#include "base/mem_limit.h"
#include "data/dataset.h"
#include "math/step.h"
#include "model_memory.h"

int boar_model_memory_check(const struct boar_dataset *d,
			    const boar_options *o, boar_error *err)
{
	char what[160];
	uint64_t floats;
	int adagrad = boar_opt_accumulates(o->optimizer) ||
		      (o->optimizer == BOAR_OPT_AUTO && d->task == BOAR_TASK_LINEAR);
	if (d->task == BOAR_TASK_MF) {
		uint64_t ids = boar_add_sat(d->dim, d->n_items);
		floats = boar_add_sat(boar_mul_sat(ids, (uint64_t)o->rank + 1),
				      ids); /* factors, biases, row sums */
		snprintf(what, sizeof what,
			 "a rank-%u model of %llu users and %llu items (ids as given: the largest id + 1)",
			 o->rank, (unsigned long long)d->dim,
			 (unsigned long long)d->n_items);
	} else {
		uint64_t w = boar_add_sat(d->dim, 1);
		/* weights, AdaGrad sums, regularization scales and counts */
		floats = boar_mul_sat(w, adagrad ? 4 : 3);
		snprintf(what, sizeof what,
			 "a model of %llu features (the largest id + 1%s)",
			 (unsigned long long)d->dim,
			 d->hash_bits ? ", hashed" : "; hash_bits B hashes ids into 2^B");
	}
	return boar_memory_check(boar_mul_sat(floats, 4), o->max_memory,
				 d->path, what, err);
}
