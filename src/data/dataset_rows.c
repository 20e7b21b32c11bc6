/* dataset_rows.c - read access to single rows, for callers that score or
 * inspect data row by row (the CLI's per-class probabilities, servers). */
#include "base/error.h"
#include "dataset.h"

int64_t boar_dataset_row(const boar_dataset *d, uint64_t r,
			 const uint32_t **idx, const float **val, float *label,
			 boar_error *err)
{
	if (d->task != BOAR_TASK_LINEAR)
		return boar_fail(err, BOAR_EINVAL,
				 "boar_dataset_row: the dataset holds ratings");
	if (r >= d->n_rows)
		return boar_fail(err, BOAR_EINVAL,
				 "boar_dataset_row: row %llu of %llu",
				 (unsigned long long)r,
				 (unsigned long long)d->n_rows);
	uint64_t lo = d->row_ptr[r], hi = d->row_ptr[r + 1];
	*idx = d->idx + lo;
	*val = d->val + lo;
	*label = d->label[r];
	return (int64_t)(hi - lo);
}
