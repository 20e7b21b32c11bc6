/* testutil.h - tiny assertion helpers for the unit tests.
 *
 * Each check prints "FAIL file:line: what (expected vs got)" and counts the
 * failure instead of stopping, so one run shows every broken expectation.
 * End main with `return TEST_RESULT();` (0 pass, 1 fail); call TEST_SKIP()
 * to exit 77 with a reason. Stable: other tests include this file.
 */
#ifndef BOAR_TESTUTIL_H
#define BOAR_TESTUTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "boar.h"

static int test_failures;

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__,        \
				__LINE__, #cond);                            \
			fprintf(stderr, __VA_ARGS__);                        \
			fputc('\n', stderr);                                 \
			test_failures++;                                     \
		}                                                            \
	} while (0)

#define CHECK_EQ_INT(got, want)                                              \
	do {                                                                 \
		long long g_ = (long long)(got), w_ = (long long)(want);     \
		if (g_ != w_) {                                              \
			fprintf(stderr,                                      \
				"FAIL %s:%d: %s: expected %lld, got %lld\n", \
				__FILE__, __LINE__, #got, w_, g_);           \
			test_failures++;                                     \
		}                                                            \
	} while (0)

#define CHECK_NEAR(got, want, tol)                                           \
	do {                                                                 \
		double g_ = (double)(got), w_ = (double)(want);              \
		if (!(fabs(g_ - w_) <= (tol))) {                             \
			fprintf(stderr,                                      \
				"FAIL %s:%d: %s: expected %.9g +- %g, got "  \
				"%.9g\n",                                    \
				__FILE__, __LINE__, #got, w_, (double)(tol), \
				g_);                                         \
			test_failures++;                                     \
		}                                                            \
	} while (0)

#define TEST_SKIP(...)                                                       \
	do {                                                                 \
		fprintf(stderr, "SKIP: ");                                   \
		fprintf(stderr, __VA_ARGS__);                                \
		fputc('\n', stderr);                                         \
		exit(77);                                                    \
	} while (0)

/* A scratch directory the test creates (mkdtemp) and files written into
 * it; a file that cannot be written ends the test. */
static char test_dir[256];

static inline const char *test_put_file(const char *name, const void *data,
					size_t len)
{
	static char path[512];
	snprintf(path, sizeof path, "%s/%s", test_dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "cannot write %s\n", path);
		exit(1);
	}
	return path;
}

/* A linear model's weights and their count, or NULL (and a failure) when
 * the library refuses: the value form the checks compare. */
#define test_model_weights(m, n) test_model_weights_at(__FILE__, __LINE__, (m), (n))
static inline const float *test_model_weights_at(const char *file, int line,
					   const boar_model *m, uint64_t *n)
{
	const float *w = NULL;
	boar_error err;
	if (boar_model_weights(m, &w, n, &err)) {
		fprintf(stderr, "FAIL %s:%d: boar_model_weights: %s\n", file,
			line, err.message);
		test_failures++;
		*n = 0;
	}
	return w;
}

/* boar_model_predict_row's score, or NAN (and a failure) when refused. */
#define test_model_predict_row(m, nnz, idx, val) \
	test_model_predict_row_at(__FILE__, __LINE__, (m), (nnz), (idx), (val))
static inline double test_model_predict_row_at(const char *file, int line,
					 const boar_model *m, size_t nnz,
					 const uint32_t *idx, const float *val)
{
	double s = NAN;
	boar_error err;
	if (boar_model_predict_row(m, nnz, idx, val, &s, &err)) {
		fprintf(stderr, "FAIL %s:%d: boar_model_predict_row: %s\n",
			file, line, err.message);
		test_failures++;
	}
	return s;
}

#define TEST_RESULT() (test_failures ? 1 : 0)

#endif
