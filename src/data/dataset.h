/* dataset.h - the in-memory layout of a boar_dataset (library-internal).
 *
 * Linear task: CSR. Row r has non-zeros [row_ptr[r], row_ptr[r+1]) in idx
 * (0-based feature ids, ascending within a row unless hashing folded them)
 * and val; its label is label[r].
 * MF task: n_rows triplets (user[k], item[k], label[k] = rating).
 *
 * The arrays either belong to the dataset (owned[] lists the allocations)
 * or point into a read-only mapping of a binary cache (map, map_len).
 */
#ifndef BOAR_DATASET_H
#define BOAR_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "boar.h"

enum boar_label_kind {
	BOAR_LABELS_BINARY = 1, /* every label is +1/-1, or every label is 1/0 */
	BOAR_LABELS_REAL = 2,   /* anything else (regression, multiclass ids) */
};

struct boar_dataset {
	int task;        /* BOAR_TASK_LINEAR or BOAR_TASK_MF */
	int label_kind;  /* enum boar_label_kind */
	int hash_bits;   /* ids were hashed into 2^hash_bits slots (0: not) */
	int slot_ids;    /* the parser chose the slots with its own name hash
			    (VW, CSV): ids are slots, never re-hashed */
	int all_ones;    /* linear: every value is exactly 1.0 */
	uint64_t n_rows; /* rows or ratings */
	uint64_t nnz;    /* linear: non-zeros; MF: n_rows */
	uint64_t dim;    /* linear: max feature id + 1 (2^hash_bits if hashed);
			    MF: max user id + 1 */
	uint64_t n_items; /* MF: max item id + 1 */

	/* linear */
	uint64_t *row_ptr; /* n_rows + 1 */
	uint32_t *idx;     /* nnz */
	float *val;        /* nnz */
	/* MF */
	uint32_t *user, *item; /* n_rows */
	/* both: label (linear) or rating (MF); n_rows.
	 * Binary labels are stored as given (+1/-1 or 1/0); the engine maps
	 * them with boar_label_sign(). */
	float *label;
	float *weight;   /* per-row instance weights, or NULL (all 1) */
	struct boar_input_spec *input; /* how a file was read, or NULL */
	uint32_t csv_label_col; /* CSV: 1 + the label's column; 0: none */
	char *csv_kinds[2]; /* CSV: its categorical and numeric columns as
			       the file settled them (lists), or NULL */

	void *owned[6];  /* [5] is reserved for weight */  /* heap blocks to free, NULL-terminated */
	void *map;       /* the cache's arrays (a private mapping), or NULL */
	size_t map_len;
	char *path;      /* the file it was loaded from (owned), or NULL: for
			    messages about the data found after loading */
};

/* +1 for a positive label, -1 for the negative one (-1 or 0). */
static inline float boar_label_sign(float y)
{
	return y > 0 ? 1.0f : -1.0f;
}

/* Allocates an empty dataset of the given task (all arrays NULL). */
struct boar_dataset *boar_dataset_alloc(int task);
/* A linear dataset takes its rows' arrays (row_ptr, idx, val, label and
 * weight or NULL) and owns them: set as its fields and in owned[]. */
void boar_dataset_adopt_rows(struct boar_dataset *d, uint64_t *row_ptr,
			     uint32_t *idx, float *val, float *label,
			     float *weight);

/* Scans labels (and values) once to fill label_kind and all_ones. */
void boar_dataset_classify(struct boar_dataset *d);

/* boar_dataset_parse_text on `threads` threads (at least 1): the same
 * dataset, for a block large enough to be worth splitting. With an
 * origin (parse_chunks.h; else NULL), the text is a range of the file
 * `name` and an error names the file's own line. */
struct line_origin;
int dataset_parse_text_threads(const char *text, size_t len,
			       const char *name, struct line_origin *origin,
			       const boar_load_options *o, int threads,
			       boar_dataset **out, boar_error *err);

#endif
