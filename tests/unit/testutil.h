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
#include <stdint.h>
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

/* Test data from a fixed stream: xorshift64 (test_rng_seed() first; the
 * stream, not its quality, is what the tests need: the same data every
 * run), uniform in [0, 1) and standard normal (Box-Muller). */
static uint64_t test_rng_state = 1;

static inline void test_rng_seed(uint64_t seed)
{
	test_rng_state = seed ? seed : 1;
}

static inline uint64_t test_rng(void)
{
	test_rng_state ^= test_rng_state << 13;
	test_rng_state ^= test_rng_state >> 7;
	test_rng_state ^= test_rng_state << 17;
	return test_rng_state;
}

static inline double test_unif(void)
{
	return (test_rng() >> 11) * (1.0 / 9007199254740992.0);
}

static inline double test_gauss(void)
{
	double u = test_unif() + 1e-12, v = test_unif();
	return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* Shuffles a[0..n) in place, an array of any element type: Fisher-Yates
 * on test_rng, from the end (a[i - 1] swapped with a[test_rng() % i]). */
#define TEST_SHUFFLE(a, n)                                                 \
	do {                                                               \
		for (uint64_t i_ = (n); i_ > 1; i_--) {                    \
			uint64_t j_ = test_rng() % i_;                     \
			__typeof__(*(a)) t_ = (a)[i_ - 1];                 \
			(a)[i_ - 1] = (a)[j_];                             \
			(a)[j_] = t_;                                      \
		}                                                          \
	} while (0)

/* A 64-bit LCG (Knuth's MMIX constants), its top 53 bits, from the
 * caller's state *s, and those as a uniform double in [0, 1): a stream a
 * test can keep apart from test_rng's. */
static inline uint64_t test_lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 11;
}

static inline double test_lcg_unif(uint64_t *s)
{
	return (double)test_lcg(s) / 9007199254740992.0;
}

/* n rows (at most 64) of one feature, id 0 of value 1, labelled label[]:
 * data small enough that a loss's rule or first step is worked by hand.
 * NULL (and a failure) when the library refuses it. */
static inline boar_dataset *test_one_feature_rows(uint64_t n,
						  const float *label)
{
	uint64_t row_ptr[65];
	uint32_t idx[64] = {0};
	float val[64];
	boar_dataset *d = NULL;
	boar_error err;
	for (uint64_t r = 0; r <= n && r <= 64; r++) {
		row_ptr[r] = r;
		if (r < 64)
			val[r] = 1.0f;
	}
	if (n > 64 ||
	    boar_dataset_from_csr(n, 1, row_ptr, idx, val, label, &d, &err)) {
		fprintf(stderr, "FAIL test_one_feature_rows(%llu): %s\n",
			(unsigned long long)n, n > 64 ? "too many" : err.message);
		test_failures++;
	}
	return d;
}

/* boar_train's model of d, or NULL and a failure saying why. */
#define test_train(d, o) test_train_at(__FILE__, __LINE__, (d), (o))
static inline boar_model *test_train_at(const char *file, int line,
					const boar_dataset *d,
					const boar_options *o)
{
	boar_model *m = NULL;
	boar_error err;
	if (boar_train(d, o, &m, &err)) {
		fprintf(stderr, "FAIL %s:%d: boar_train: %s\n", file, line,
			err.message);
		test_failures++;
	}
	return m;
}

/* n ratings 3 + P[u].Q[i] + N(0, 0.2) of 120 users and 90 items, P and Q
 * of rank 3 in U(-1, 1) (the same every call), where one in seven is an
 * outlier pushed up by 15 (a typo, a bot); seed draws the pairs and the
 * noise. Where MAE and RMSE training part ways. */
#define OUT_USERS 120
#define OUT_ITEMS 90
static inline boar_dataset *test_outlier_ratings(uint64_t n, uint64_t seed)
{
	static float P[OUT_USERS * 3], Q[OUT_ITEMS * 3];
	uint64_t s = 5;
	for (int k = 0; k < OUT_USERS * 3; k++)
		P[k] = (float)(2 * test_lcg_unif(&s) - 1);
	for (int k = 0; k < OUT_ITEMS * 3; k++)
		Q[k] = (float)(2 * test_lcg_unif(&s) - 1);
	uint32_t *u = malloc(n * sizeof *u), *it = malloc(n * sizeof *it);
	float *r = malloc(n * sizeof *r);
	boar_dataset *d = NULL;
	boar_error err;
	s = seed;
	test_rng_seed(seed);
	for (uint64_t k = 0; u && it && r && k < n; k++) {
		u[k] = (uint32_t)(test_lcg(&s) % OUT_USERS);
		it[k] = (uint32_t)(test_lcg(&s) % OUT_ITEMS);
		float dot = 0;
		for (int f = 0; f < 3; f++)
			dot += P[u[k] * 3 + f] * Q[it[k] * 3 + f];
		r[k] = 3 + dot + 0.2f * (float)test_gauss() +
		       (test_lcg(&s) % 7 == 0 ? 15.0f : 0.0f);
	}
	if (u && it && r)
		CHECK_EQ_INT(boar_dataset_from_ratings(n, u, it, r, &d, &err), 0);
	free(u);
	free(it);
	free(r);
	return d;
}

/* boar_options.gpu_plugin for a GPU test: this build's plugin,
 * $BUILD/libboar-gpu.so.0 (tests/run-tests exports BUILD; the plugin sits
 * there, not beside the test), or NULL without BUILD. */
static inline const char *test_gpu_plugin(void)
{
	static char plugin[4096];
	const char *build = getenv("BUILD");
	if (!build || snprintf(plugin, sizeof plugin, "%s/libboar-gpu.so.0",
			       build) >= (int)sizeof plugin)
		return NULL;
	return plugin;
}

/* How test_outlier_ratings are fitted: rank 3, 20 epochs, one thread, no
 * early stopping, the MF loss mf_loss, seed. */
static inline void test_outlier_options(boar_options *o, int mf_loss,
					uint64_t seed)
{
	boar_options_default(o);
	o->rank = 3;
	o->epochs = 20;
	o->early_stop = 0;
	o->threads = 1;
	o->seed = seed;
	o->mf_loss = mf_loss;
}

/* A scratch directory for the test's files, test_dir, made from `name`
 * under $TMPDIR (or /tmp); test_dir_remove() removes it and its files. */
static inline void test_dir_make(const char *name)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(test_dir, sizeof test_dir, "%s/boar-test-%s.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp", name);
	if (!mkdtemp(test_dir)) {
		perror("mkdtemp");
		exit(1);
	}
}

static inline void test_dir_remove(void)
{
	char cmd[sizeof test_dir + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", test_dir);
	if (test_dir[0] && system(cmd) != 0)
		fprintf(stderr, "warning: %s not removed\n", test_dir);
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
