/* predict_latency.c - how long one boar_model_predict_row call takes, the
 * serving path of an embedding application.
 *
 * usage: predict_latency MODEL DATA
 * Scores every row of DATA (loaded as the model expects) one call at a time
 * from the caller's arrays, REPEATS passes, and prints the median
 * microseconds per call over the passes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "boar.h"

#define REPEATS 5

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	boar_model *m = NULL;
	boar_dataset *d = NULL;
	boar_load_options lo;
	boar_error err;
	if (argc < 3) {
		fprintf(stderr, "usage: predict_latency MODEL DATA\n");
		return 2;
	}
	if (boar_model_load(argv[1], &m, &err)) {
		fprintf(stderr, "predict_latency: %s\n", err.message);
		return 1;
	}
	boar_load_options_default(&lo);
	lo.hash_bits = boar_model_hash_bits(m);
	if (boar_dataset_load(argv[2], &lo, &d, &err)) {
		fprintf(stderr, "predict_latency: %s\n", err.message);
		return 1;
	}
	/* The caller's arrays: rows copied out of the dataset as 0-based ids
	 * (unhashed data only, so the model's own hashing does not apply
	 * twice). */
	uint64_t n = boar_dataset_rows(d);
	double per_call[REPEATS], sink = 0;
	for (int rep = 0; rep < REPEATS; rep++) {
		double t0 = now();
		for (uint64_t r = 0; r < n; r++) {
			const uint32_t *idx;
			const float *val;
			float y;
			double s = 0;
			int64_t k = boar_dataset_row(d, r, &idx, &val, &y, NULL);
			boar_model_predict_row(m, (size_t)k, idx, val, &s, NULL);
			sink += s;
		}
		per_call[rep] = (now() - t0) / n * 1e6;
	}
	qsort(per_call, REPEATS, sizeof *per_call, by_value);
	printf("%llu rows, %.0f non-zeros per row: %.3f us per "
	       "boar_model_predict_row (median of %d passes; checksum %.3g)\n",
	       (unsigned long long)n,
	       (double)boar_dataset_nnz(d) / (n ? n : 1), per_call[REPEATS / 2],
	       REPEATS, sink);
	boar_model_free(m);
	boar_dataset_free(d);
	return 0;
}
