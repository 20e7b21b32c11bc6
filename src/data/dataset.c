/* dataset.c - the dataset object: building one from the caller's arrays,
 * the accessors, classification and freeing. Everything that makes a
 * dataset (the parsers, the cache, dataset_load.c) sits above this file;
 * it calls none of them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dataset.h"
#include "input_spec.h"
#include "base/error.h"


struct boar_dataset *boar_dataset_alloc(int task)
{
	struct boar_dataset *d = calloc(1, sizeof *d);
	if (d) {
		d->task = task;
		d->label_kind = task == BOAR_TASK_MF ? BOAR_LABELS_REAL
						     : BOAR_LABELS_BINARY;
	}
	return d;
}

void boar_dataset_free(boar_dataset *d)
{
	if (!d)
		return;
	for (size_t k = 0; k < sizeof d->owned / sizeof d->owned[0]; k++)
		free(d->owned[k]);
	if (d->map)
		munmap(d->map, d->map_len);
	free(d->path);
	boar_input_spec_free(d->input);
	free(d->csv_kinds[0]);
	free(d->csv_kinds[1]);
	free(d);
}

void boar_dataset_classify(struct boar_dataset *d)
{
	if (d->task != BOAR_TASK_LINEAR) {
		d->label_kind = BOAR_LABELS_REAL;
		d->all_ones = 0;
		return;
	}
	int pm = 1, zo = 1; /* every label in {+1,-1}; every label in {1,0} */
	for (uint64_t r = 0; r < d->n_rows && (pm || zo); r++) {
		float y = d->label[r];
		pm &= y == 1.0f || y == -1.0f;
		zo &= y == 1.0f || y == 0.0f;
	}
	d->label_kind = pm || zo ? BOAR_LABELS_BINARY : BOAR_LABELS_REAL;
	int ones = 1;
	for (uint64_t k = 0; k < d->nnz && ones; k++)
		ones = d->val[k] == 1.0f;
	d->all_ones = ones;
}

int boar_dataset_task(const boar_dataset *d)
{
	return d ? d->task : BOAR_TASK_AUTO;
}

uint64_t boar_dataset_rows(const boar_dataset *d)
{
	return d ? d->n_rows : 0;
}

uint64_t boar_dataset_nnz(const boar_dataset *d)
{
	return d ? d->nnz : 0;
}

uint64_t boar_dataset_features(const boar_dataset *d)
{
	return d ? d->dim : 0;
}

uint64_t boar_dataset_items(const boar_dataset *d)
{
	return d && d->task == BOAR_TASK_MF ? d->n_items : 0;
}

/* ------------------------------------------------- from the caller */

int boar_dataset_from_csr(uint64_t n_rows, uint32_t n_features,
			  const uint64_t *row_ptr, const uint32_t *idx,
			  const float *val, const float *labels,
			  boar_dataset **out, boar_error *err)
{
	if (!out)
		return boar_fail(err, BOAR_EINVAL, "out must not be NULL");
	if (n_rows == 0)
		return boar_fail(err, BOAR_EINVAL, "n_rows is 0: no rows");
	if (!row_ptr || !labels)
		return boar_fail(err, BOAR_EINVAL,
				 "row_ptr and labels must not be NULL");
	if (row_ptr[0] != 0)
		return boar_fail(err, BOAR_EINVAL,
				 "row_ptr[0] is %llu: it must be 0",
				 (unsigned long long)row_ptr[0]);
	for (uint64_t r = 0; r < n_rows; r++)
		if (row_ptr[r + 1] < row_ptr[r])
			return boar_fail(err, BOAR_EINVAL,
					 "row %llu: row_ptr decreases",
					 (unsigned long long)r);
	uint64_t nnz = row_ptr[n_rows];
	if (nnz && (!idx || !val))
		return boar_fail(err, BOAR_EINVAL,
				 "idx and val must not be NULL when there are non-zeros");
	for (uint64_t r = 0; r < n_rows; r++) {
		if (!isfinite(labels[r]))
			return boar_fail(err, BOAR_EINVAL,
					 "row %llu: label is NaN or infinite",
					 (unsigned long long)r);
		for (uint64_t k = row_ptr[r]; k < row_ptr[r + 1]; k++) {
			if (idx[k] >= n_features)
				return boar_fail(err, BOAR_EINVAL,
						 "row %llu: feature id %u is not below n_features %u",
						 (unsigned long long)r, idx[k],
						 n_features);
			if (k > row_ptr[r] && idx[k] <= idx[k - 1])
				return boar_fail(err, BOAR_EINVAL,
						 "row %llu: feature ids must be strictly ascending (%u %s %u)",
						 (unsigned long long)r, idx[k],
						 idx[k] == idx[k - 1] ? "repeats" : "after",
						 idx[k - 1]);
			if (!isfinite(val[k]))
				return boar_fail(err, BOAR_EINVAL,
						 "row %llu: value of feature %u is NaN or infinite",
						 (unsigned long long)r, idx[k]);
		}
	}
	struct boar_dataset *d = boar_dataset_alloc(BOAR_TASK_LINEAR);
	if (!d)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	d->n_rows = n_rows;
	d->nnz = nnz;
	d->dim = n_features;
	d->row_ptr = malloc((n_rows + 1) * sizeof *d->row_ptr);
	d->idx = malloc((nnz ? nnz : 1) * sizeof *d->idx);
	d->val = malloc((nnz ? nnz : 1) * sizeof *d->val);
	d->label = malloc(n_rows * sizeof *d->label);
	d->owned[0] = d->row_ptr;
	d->owned[1] = d->idx;
	d->owned[2] = d->val;
	d->owned[3] = d->label;
	if (!d->row_ptr || !d->idx || !d->val || !d->label) {
		boar_dataset_free(d);
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	}
	memcpy(d->row_ptr, row_ptr, (n_rows + 1) * sizeof *row_ptr);
	if (nnz) {
		memcpy(d->idx, idx, nnz * sizeof *idx);
		memcpy(d->val, val, nnz * sizeof *val);
	}
	memcpy(d->label, labels, n_rows * sizeof *labels);
	boar_dataset_classify(d);
	*out = d;
	return 0;
}

int boar_dataset_from_ratings(uint64_t n, const uint32_t *users,
			      const uint32_t *items, const float *ratings,
			      boar_dataset **out, boar_error *err)
{
	if (!out)
		return boar_fail(err, BOAR_EINVAL, "out must not be NULL");
	if (n == 0)
		return boar_fail(err, BOAR_EINVAL, "n is 0: no ratings");
	if (!users || !items || !ratings)
		return boar_fail(err, BOAR_EINVAL,
				 "users, items and ratings must not be NULL");
	uint64_t mu = 0, mi = 0;
	for (uint64_t k = 0; k < n; k++) {
		if (!isfinite(ratings[k]))
			return boar_fail(err, BOAR_EINVAL,
					 "rating %llu is NaN or infinite",
					 (unsigned long long)k);
		if (users[k] >= mu)
			mu = (uint64_t)users[k] + 1;
		if (items[k] >= mi)
			mi = (uint64_t)items[k] + 1;
	}
	struct boar_dataset *d = boar_dataset_alloc(BOAR_TASK_MF);
	if (!d)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	d->n_rows = d->nnz = n;
	d->dim = mu;
	d->n_items = mi;
	d->user = malloc(n * sizeof *d->user);
	d->item = malloc(n * sizeof *d->item);
	d->label = malloc(n * sizeof *d->label);
	d->owned[0] = d->user;
	d->owned[1] = d->item;
	d->owned[2] = d->label;
	if (!d->user || !d->item || !d->label) {
		boar_dataset_free(d);
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	}
	memcpy(d->user, users, n * sizeof *users);
	memcpy(d->item, items, n * sizeof *items);
	memcpy(d->label, ratings, n * sizeof *ratings);
	boar_dataset_classify(d);
	*out = d;
	return 0;
}

void boar_dataset_adopt_rows(struct boar_dataset *d, uint64_t *row_ptr,
			     uint32_t *idx, float *val, float *label,
			     float *weight)
{
	d->row_ptr = row_ptr;
	d->idx = idx;
	d->val = val;
	d->label = label;
	d->weight = weight;
	d->owned[0] = row_ptr;
	d->owned[1] = idx;
	d->owned[2] = val;
	d->owned[3] = label;
	d->owned[5] = weight; /* owned[5] is the weights' slot */
}
