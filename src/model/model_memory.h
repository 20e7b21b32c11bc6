/* model_memory.h - the memory a fresh model would need, against the limit. */
#ifndef BOAR_MODEL_MEMORY_H
#define BOAR_MODEL_MEMORY_H

#include "boar.h"

struct boar_dataset;

/* Refuses (BOAR_ENOMEM, as boar_memory_check) a fresh model for d that
 * would not fit o->max_memory with its training state: weights, AdaGrad
 * sums and per-feature scales (linear: (dim + 1) floats each, times the
 * classes; MF: (users + items) x (rank + 1) floats). A lower bound of
 * what training takes, enough to stop a 16-byte file from asking for
 * hundreds of GiB. */
int boar_model_memory_check(const struct boar_dataset *d,
			    const boar_options *o, boar_error *err);

#endif
