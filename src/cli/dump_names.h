/* dump_names.h - the names behind a hashed model's slots, for
 * `boar dump --names DATA` (VW's --invert_hash, done after the fact).
 *
 * The model keeps weights by slot; the names are read back from a data
 * file, read exactly as the model's training data was (its remembered
 * options: namespaces, interactions, n-grams, CSV columns), so every name
 * lands in the slot training gave it. Only slots the caller wants (those
 * with a weight) are kept. Colliding names are all listed: up to
 * DUMP_NAMES_KEEP per slot in the order first seen, and a count of the
 * further distinct ones.
 */
#ifndef BOAR_CLI_DUMP_NAMES_H
#define BOAR_CLI_DUMP_NAMES_H

#include <stdint.h>

#include "boar.h"

#define DUMP_NAMES_KEEP 8

struct slot_names;

/* Reads data_path as m's data was read and keeps, for every slot s <
 * dim with wanted(s) (bit s of `wanted`), the names seen there.
 * @return 0 or a BOAR_E* code with err. */
int slot_names_collect(const boar_model *m, const char *data_path,
		       const uint8_t *wanted, uint64_t dim,
		       struct slot_names **out, boar_error *err);

/* The names of slot (NULL-terminated, first seen first) and in *more
 * how many other distinct names it had; NULL when none was seen. */
const char *const *slot_names_get(const struct slot_names *t, uint32_t slot,
				  uint64_t *more);

void slot_names_free(struct slot_names *t);

#endif
