/* dataset_subset.c - a dataset of some rows of another (for
 * cross-validation folds, or any split the caller draws). */
#include <stdlib.h>
#include <string.h>

#include "dataset.h"
#include "base/error.h"

int boar_dataset_subset(const boar_dataset *d, const uint64_t *rows,
			uint64_t n, boar_dataset **out, boar_error *err)
{
	if (!d || !rows || !out || !n)
		return boar_fail(err, BOAR_EINVAL,
				 "a subset needs a dataset and at least one row");
	uint64_t nnz = 0;
	for (uint64_t i = 0; i < n; i++) {
		if (rows[i] >= d->n_rows)
			return boar_fail(err, BOAR_EINVAL,
					 "row %llu of %llu is out of range",
					 (unsigned long long)rows[i],
					 (unsigned long long)d->n_rows);
		if (d->task == BOAR_TASK_LINEAR)
			nnz += d->row_ptr[rows[i] + 1] - d->row_ptr[rows[i]];
	}
	struct boar_dataset *s = boar_dataset_alloc(d->task);
	if (!s)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	s->hash_bits = d->hash_bits;
	s->slot_ids = d->slot_ids;
	s->dim = d->dim;
	s->n_items = d->n_items;
	s->n_rows = n;
	s->nnz = d->task == BOAR_TASK_LINEAR ? nnz : n;
	void **own = s->owned;
	*own++ = s->label = malloc(n * sizeof *s->label);
	if (d->weight)
		s->owned[5] = s->weight = malloc(n * sizeof *s->weight);
	if (d->task == BOAR_TASK_LINEAR) {
		*own++ = s->row_ptr = malloc((n + 1) * sizeof *s->row_ptr);
		*own++ = s->idx = malloc((nnz ? nnz : 1) * sizeof *s->idx);
		*own++ = s->val = malloc((nnz ? nnz : 1) * sizeof *s->val);
	} else {
		*own++ = s->user = malloc(n * sizeof *s->user);
		*own++ = s->item = malloc(n * sizeof *s->item);
	}
	if (!s->label || (d->weight && !s->weight) ||
	    (d->task == BOAR_TASK_LINEAR ? !s->row_ptr || !s->idx || !s->val
					 : !s->user || !s->item)) {
		boar_dataset_free(s);
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	}
	uint64_t at = 0;
	if (s->row_ptr)
		s->row_ptr[0] = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = rows[i];
		s->label[i] = d->label[r];
		if (s->weight)
			s->weight[i] = d->weight[r];
		if (d->task != BOAR_TASK_LINEAR) {
			s->user[i] = d->user[r];
			s->item[i] = d->item[r];
			continue;
		}
		uint64_t b = d->row_ptr[r], e = d->row_ptr[r + 1];
		memcpy(s->idx + at, d->idx + b, (e - b) * sizeof *s->idx);
		memcpy(s->val + at, d->val + b, (e - b) * sizeof *s->val);
		at += e - b;
		s->row_ptr[i + 1] = at;
	}
	boar_dataset_classify(s);
	*out = s;
	return 0;
}
