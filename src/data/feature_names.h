/* feature_names.h - the names behind hashed slots (library-internal).
 *
 * A hashed model (VW, CSV) keeps weights by slot, not by name: storing
 * every name would cost more than the model. So names are recovered on
 * demand (boar dump --names DATA, VW's --invert_hash): the data is read
 * again exactly as training read it (the model's load options:
 * namespaces dropped, interactions, n-grams, CSV columns) and every
 * feature of every row is reported with its slot and its name, VW's
 * audit style: "ns^token" ("token" in the unnamed namespace),
 * "ns^t1^t2" for an n-gram, names joined by '*' for an interaction; CSV
 * "column=value" for a categorical value and "column" for a numeric
 * column (the header's name, else the 0-based index).
 */
#ifndef BOAR_FEATURE_NAMES_H
#define BOAR_FEATURE_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "boar.h"

/* Receives (slot, name); name is not NUL-terminated and lives only for
 * the call. emit returns 0, or non-zero to stop (out of memory). */
struct name_sink {
	int (*emit)(void *ctx, uint32_t slot, const char *name, size_t len);
	void *ctx;
};

/* Reads path as o says (a VW or CSV file; AUTO is detected) and feeds
 * every feature of every row to sink, one thread, in file order.
 * @return 0, or a BOAR_E* code with err naming the file (and line);
 *         BOAR_EINVAL for a format without names (LIBSVM, ratings). */
int boar_feature_names_scan(const char *path, const boar_load_options *o,
			    const struct name_sink *sink, boar_error *err);

#endif
