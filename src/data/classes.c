/* classes.c - the distinct labels of a dataset, kept sorted in a small
 * array: K is at most BOAR_MAX_CLASSES, so a binary search per row is cheap
 * and no hash table is needed. */
#include <math.h>
#include <string.h>

#include "classes.h"
#include "dataset.h"
#include "base/error.h"

/* Could y be an integer label that a float no longer holds exactly? */
static int beyond_exact(float y)
{
	return fabsf(y) > BOAR_CLASS_LABEL_MAX;
}

int boar_check_class_range(const struct boar_dataset *d, boar_error *err)
{
	for (uint64_t r = 0; r < d->n_rows; r++) {
		float y = d->label[r];
		if (!beyond_exact(y) || y != floorf(y))
			continue;
		return boar_fail_line(err, BOAR_EINVAL,
				      d->path ? d->path : "(data)", 0,
				      "row %llu: integer label %.0f is beyond 2^24 in magnitude, where 32-bit float labels cannot tell neighbouring integers apart (classes would merge); renumber the classes",
				      (unsigned long long)r + 1, y);
	}
	return 0;
}

int boar_collect_classes(const struct boar_dataset *d, float *out,
			 uint32_t max, uint32_t *k)
{
	uint32_t n = 0;
	for (uint64_t r = 0; r < d->n_rows; r++) {
		float y = d->label[r];
		if (y != floorf(y) || beyond_exact(y))
			return -1;
		uint32_t lo = 0, hi = n;
		while (lo < hi) {
			uint32_t mid = (lo + hi) / 2;
			if (out[mid] < y)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n && out[lo] == y)
			continue;
		if (n == max)
			return -1;
		memmove(&out[lo + 1], &out[lo], (n - lo) * sizeof *out);
		out[lo] = y;
		n++;
	}
	*k = n;
	return 0;
}
