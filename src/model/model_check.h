/* model_check.h - validating a model read from a file (library-internal).
 *
 * A valid checksum is not a valid model. Both checks fail with
 * BOAR_ECORRUPT and "PATH: corrupt model file: field F ..." in err.
 */
#ifndef BOAR_MODEL_CHECK_H
#define BOAR_MODEL_CHECK_H

#include "boar.h"

struct boar_model;

/* The most factors an MF model file may claim. */
#define BOAR_MODEL_MAX_RANK 65536

/* The header fields of m (task, loss, hash_bits, dim, n_items, rank,
 * has_bias, n_classes, mu) agree with each other; m's arrays are not read,
 * so a loader can check a shape before allocating it. */
int boar_model_check_shape(const struct boar_model *m, const char *path,
			   boar_error *err);

/* Every weight, factor and bias is finite and the class labels are finite
 * and strictly ascending (no duplicates). */
int boar_model_check_values(const struct boar_model *m, const char *path,
			    boar_error *err);

#endif
