/* data_summary.c - describing training data (data_summary.h). */
#include <stdio.h>
#include <stdlib.h>

#include "data_summary.h"

uint64_t data_features_seen(const boar_dataset *d)
{
	uint64_t dim = boar_dataset_features(d), seen = 0;
	unsigned char *bit = calloc(dim / 8 + 1, 1);
	if (!bit)
		return dim;
	for (uint64_t r = 0; r < boar_dataset_rows(d); r++) {
		const uint32_t *idx;
		const float *val;
		float y;
		int64_t n = boar_dataset_row(d, r, &idx, &val, &y, NULL);
		for (int64_t k = 0; k < n; k++) {
			unsigned char b = (unsigned char)(1u << (idx[k] & 7));
			seen += !(bit[idx[k] >> 3] & b);
			bit[idx[k] >> 3] |= b;
		}
	}
	free(bit);
	return seen;
}

void data_describe(const char *what, const char *path, const boar_dataset *d,
		   double secs)
{
	unsigned long long rows = boar_dataset_rows(d);
	unsigned long long dim = boar_dataset_features(d);
	if (boar_dataset_task(d) == BOAR_TASK_MF) {
		fprintf(stderr, "%s %s: %llu ratings, %llu users, %llu items "
				"(%.2f s)\n", what, path, rows, dim,
			(unsigned long long)boar_dataset_items(d), secs);
		return;
	}
	unsigned long long seen = data_features_seen(d);
	fprintf(stderr, "%s %s: %llu rows, ", what, path, rows);
	if (seen < dim)
		fprintf(stderr, "%llu features seen (of %llu slots), ", seen,
			dim);
	else
		fprintf(stderr, "%llu features, ", dim);
	fprintf(stderr, "%llu non-zeros (%.2f s)\n",
		(unsigned long long)boar_dataset_nnz(d), secs);
}

int data_warn_one_class(const char *path, const boar_dataset *d, int loss)
{
	uint64_t n = boar_dataset_rows(d);
	const uint32_t *idx;
	const float *val;
	float first, y;
	if (boar_loss_describe(loss)->kind == BOAR_LOSS_KIND_REGRESSION ||
	    boar_dataset_task(d) != BOAR_TASK_LINEAR ||
	    !n || boar_dataset_row(d, 0, &idx, &val, &first, NULL) < 0)
		return 0;
	for (uint64_t r = 1; r < n; r++)
		if (boar_dataset_row(d, r, &idx, &val, &y, NULL) < 0 || y != first)
			return 0;
	fprintf(stderr, "boar: warning: every label of %s is %g: the model "
			"can only learn to predict that class (is the label "
			"column right? --csv-label, --format)\n", path, first);
	return 1;
}
