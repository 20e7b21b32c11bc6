/* feature_map.h - a compact numbering of the features some datasets use
 * (library-internal).
 *
 * A cluster worker (engine/train_cluster.c) or a prediction over the
 * shards (cli/ps_model.c) holds the weights of the features its rows touch,
 * not of the whole model: at --hash-bits 32 the model has 2^32 weights
 * (16 GiB) while a worker's rows touch a few million. The map lists those
 * features ascending (global[local]), so local order is global order: a
 * clock's keys, found ascending in local ids, are still ascending once
 * translated, and a row's ids keep their order (the sweeps add in the
 * same order, so the training is the same bit for bit). A view of a
 * dataset renumbers its ids into the map (its own idx, the rest shared).
 *
 * Two ways to find the features, chosen by size: a bitmap of dim bits
 * (with a count of the bits before each word, for the local id) where it
 * is no larger than the data's ids, else a hash table of the ids seen
 * (global -> local), sorted once.
 */
#ifndef BOAR_FEATURE_MAP_H
#define BOAR_FEATURE_MAP_H

#include <stdint.h>

#include "base/key_table.h"
#include "dataset.h"

struct feature_map {
	uint64_t dim;     /* the datasets' feature count (global ids) */
	uint64_t n;       /* features used: local ids 0..n-1 */
	uint32_t *global; /* n, ascending: global[local] */
	/* global -> local: a bitmap and its ranks, or a hash table */
	uint64_t *bits;   /* dim bits, or NULL */
	uint32_t *rank;   /* per bitmap word: bits set before it */
	struct key_table tab; /* global -> local (.u) */
};

/* The features below dim used by the rows of d[0..nd) (NULL entries
 * skipped; a test set may name features beyond the model's dim), on
 * `threads` threads (0: all). @return 0 or BOAR_ENOMEM with *err. */
int feature_map_build(struct feature_map *fm, uint64_t dim,
		      const struct boar_dataset *const *d, int nd, int threads,
		      boar_error *err);
void feature_map_free(struct feature_map *fm);

/* The local id of global feature g, which the map holds; n for one at or
 * beyond dim. */
uint32_t feature_map_local(const struct feature_map *fm, uint32_t g);

/* *view: d with its ids renumbered into fm (a new idx array, which the
 * caller frees with feature_map_view_free; every other array is d's) and
 * dim fm->n (fm->n + 1 where d names features beyond the model's dim:
 * they all become id fm->n, which no model of fm->n weights has). d's
 * features below dim must be in fm. Never boar_dataset_free a
 * view. @return 0 or BOAR_ENOMEM with *err. */
int feature_map_view(const struct feature_map *fm,
		     const struct boar_dataset *d, struct boar_dataset *view,
		     int threads, boar_error *err);
void feature_map_view_free(struct boar_dataset *view);

#endif
