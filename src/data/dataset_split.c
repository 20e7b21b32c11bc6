/* dataset_split.c - held-out rows drawn by a hash of (seed, row): the folds
 * of cross-validation and the holdout of a model search (boar.h,
 * boar_dataset_split).
 *
 * Each row gets a draw u in [0, 1) from splitmix64 of (seed, row), so the
 * split does not depend on the thread count, the order rows are visited in
 * or the other rows. Fold f of K holds the rows with u in [f/K, (f+1)/K):
 * adjacent folds compute their shared boundary with the same expression,
 * so the K folds are disjoint and cover every row.
 */
#include <stdlib.h>

#include "base/error.h"
#include "base/rng.h"
#include "dataset.h"

/* Row r's draw in [0, 1) (53 bits of splitmix64 of seed and row). */
static double row_draw(uint64_t seed, uint64_t r)
{
	uint64_t s = seed + (r + 1) * 0x9E3779B97F4A7C15ULL;
	return (double)(boar_splitmix64(&s) >> 11) * 0x1.0p-53;
}

int boar_dataset_split(const boar_dataset *d, uint64_t seed, double lo,
		       double hi, boar_dataset **rest, boar_dataset **held,
		       boar_error *err)
{
	if (!d || !(lo >= 0 && lo < hi && hi <= 1))
		return boar_fail(err, BOAR_EINVAL,
				 "a split needs a dataset and 0 <= lo < hi <= 1");
	uint64_t n = d->n_rows, n_held = 0, n_rest = 0;
	uint64_t *rows = malloc((n ? n : 1) * sizeof *rows);
	if (!rows)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	/* held-out rows from the front, the others from the back */
	for (uint64_t r = 0; r < n; r++) {
		double u = row_draw(seed, r);
		if (u >= lo && u < hi)
			rows[n_held++] = r;
		else
			rows[n - 1 - n_rest++] = r;
	}
	/* the back half was filled backwards: put it in row order */
	for (uint64_t i = 0; i < n_rest / 2; i++) {
		uint64_t t = rows[n_held + i];
		rows[n_held + i] = rows[n - 1 - i];
		rows[n - 1 - i] = t;
	}
	boar_dataset *a = NULL, *b = NULL;
	int rc = 0;
	if (!n_held || !n_rest)
		rc = boar_fail(err, BOAR_EINVAL,
			       "holding out [%.3g, %.3g) of %llu rows leaves %s",
			       lo, hi, (unsigned long long)n,
			       n_held ? "no rows to train on"
				      : "no rows held out");
	if (!rc && held)
		rc = boar_dataset_subset(d, rows, n_held, &b, err);
	if (!rc && rest)
		rc = boar_dataset_subset(d, rows + n_held, n_rest, &a, err);
	free(rows);
	if (rc) {
		boar_dataset_free(b);
		return rc;
	}
	if (rest)
		*rest = a;
	if (held)
		*held = b;
	return 0;
}
