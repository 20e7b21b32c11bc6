/* model_copy.h - copying models: snapshots for early stopping, and the
 * grown copy a warm start continues from. */
#ifndef BOAR_MODEL_COPY_H
#define BOAR_MODEL_COPY_H

#include "boar.h"

struct boar_model;
struct boar_dataset;

/* Makes *dst an exact copy of src, reusing *dst's memory when it has the
 * same shape (allocating it when *dst is NULL). 0 or BOAR_ENOMEM. */
int boar_model_copy_into(struct boar_model **dst, const struct boar_model *src);

/* A copy of init, widened to cover d's features (or users and items); new
 * coordinates start at zero. Refuses a model of another task, loss kind,
 * hashing or class list with the reason in *err. */
int boar_model_grow_copy(const struct boar_model *init,
			 const struct boar_dataset *d, struct boar_model **out,
			 boar_error *err);

#endif
