/* test_auc.c - the AUC by sorted classes (model/auc.h) equals a count of
 * every (positive, negative) pair, a tie counting half, exactly: scores of
 * few values (ties), both signs, -0 beside +0, infinities, one score for
 * all; NAN with one class absent; boar_evaluate's AUC is the same. And
 * the radix sort (base/radix.h) orders words as qsort does, stably by the
 * bits it is given.
 */
#include <stdlib.h>
#include <string.h>

#include "base/radix.h"
#include "model/model.h"
#include "model/auc.h"
#include "testutil.h"

/* Every pair: wins + ties / 2 over pos * neg. */
static double auc_by_pairs(const double *s, const uint8_t *y, uint64_t n)
{
	double wins = 0, pairs = 0;
	for (uint64_t i = 0; i < n; i++)
		for (uint64_t j = 0; j < n; j++)
			if (y[i] && !y[j]) {
				pairs++;
				wins += s[i] > s[j] ? 1 : s[i] == s[j] ? 0.5 : 0;
			}
	return pairs ? wins / pairs : NAN;
}

static double auc_sorted(const double *s, const uint8_t *y, uint64_t n)
{
	uint64_t *key = malloc((n ? n : 1) * 2 * sizeof *key);
	for (uint64_t i = 0; i < n; i++)
		key[i] = auc_key(s[i]);
	double a = auc_of_keys(key, y, n, key + n);
	free(key);
	return a;
}

/* n scores drawn from `values` distinct ones (0: any double), labels
 * with chance p_pos of positive, the score shifted up for positives by
 * lift so the AUC is not only 0.5. */
static void draw(double *s, uint8_t *y, uint64_t n, int values, double p_pos,
		 double lift)
{
	for (uint64_t i = 0; i < n; i++) {
		y[i] = test_unif() < p_pos;
		double v = values ? (double)(test_rng() % values) - values / 2
				  : test_gauss() * 1e3;
		s[i] = v + (y[i] ? lift : 0);
	}
}

static void test_against_pairs(void)
{
	enum { N = 1500 };
	double s[N];
	uint8_t y[N];
	const int values[] = { 0, 1, 2, 7, 100 };
	for (int v = 0; v < 5; v++)
		for (int rep = 0; rep < 4; rep++) {
			test_rng_seed(100 * v + rep + 1);
			draw(s, y, N, values[v], 0.1 + 0.25 * rep, rep * 0.7);
			double want = auc_by_pairs(s, y, N);
			double got = auc_sorted(s, y, N);
			CHECK(got == want, "values %d rep %d: %.17g, pairs %.17g",
			      values[v], rep, got, want);
		}
}

static void test_signed_zero_and_infinities(void)
{
	/* -0 and +0 are one score: a tie, as `==` says */
	double s[] = { -0.0, 0.0, -INFINITY, INFINITY, 1e-300, -1e-300,
		       0.0, -0.0, INFINITY, -INFINITY };
	uint8_t y[] = { 1, 0, 1, 0, 1, 0, 0, 1, 1, 0 };
	CHECK(auc_sorted(s, y, 10) == auc_by_pairs(s, y, 10), "%.17g vs %.17g",
	      auc_sorted(s, y, 10), auc_by_pairs(s, y, 10));
	uint8_t z[] = { 1, 0 };
	CHECK(auc_sorted(s, z, 2) == 0.5, "-0 against +0: %g, want 0.5",
	      auc_sorted(s, z, 2));
}

static void test_one_class_or_one_score(void)
{
	double s[] = { 3, 1, 2 };
	uint8_t all[] = { 1, 1, 1 }, none[] = { 0, 0, 0 }, mix[] = { 1, 0, 1 };
	CHECK(isnan(auc_sorted(s, all, 3)), "only positives: want NaN");
	CHECK(isnan(auc_sorted(s, none, 3)), "only negatives: want NaN");
	CHECK(isnan(auc_sorted(s, mix, 0)), "no rows: want NaN");
	double same[] = { 5, 5, 5 };
	CHECK(auc_sorted(same, mix, 3) == 0.5, "one score: want 0.5");
	CHECK(auc_sorted(s, mix, 3) == 1.0, "separated: want 1");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static void test_radix(void)
{
	enum { N = 5000 };
	static uint64_t a[N], b[N], want[N];
	test_rng_seed(7);
	/* all bits, then high bytes shared (skipped passes) */
	for (int shape = 0; shape < 2; shape++) {
		for (int i = 0; i < N; i++)
			a[i] = shape ? 0xabcd000000000000ULL | (test_rng() & 0xffff00ff)
				     : test_rng();
		memcpy(want, a, sizeof a);
		qsort(want, N, sizeof *want, cmp_u64);
		uint64_t *got = boar_radix_sort_u64(a, b, N, 0);
		CHECK(!memcmp(got, want, sizeof want), "shape %d: not sorted",
		      shape);
	}
	/* by the high 32 bits only: the low ones (the index) keep order */
	for (int i = 0; i < N; i++)
		a[i] = (test_rng() % 50) << 32 | (uint64_t)i;
	uint64_t *got = boar_radix_sort_u64(a, b, N, 32);
	int ok = 1;
	for (int i = 1; i < N; i++)
		ok &= got[i - 1] >> 32 < got[i] >> 32 ||
		      (got[i - 1] >> 32 == got[i] >> 32 &&
		       (uint32_t)got[i - 1] < (uint32_t)got[i]);
	CHECK(ok, "by the high half: not stable and sorted");
}

/* boar_evaluate's AUC on rows of one feature each: margins w[id]. */
static void test_evaluate_agrees(void)
{
	enum { N = 400, D = 9 };
	static uint64_t ptr[N + 1];
	static uint32_t idx[N];
	static float val[N], lab[N];
	double s[N];
	uint8_t y[N];
	const float w[D] = { -2, -1, -0.5f, 0, -0.0f, 0.5f, 1, 1, 3 };
	test_rng_seed(11);
	for (int i = 0; i < N; i++) {
		idx[i] = (uint32_t)(test_rng() % D);
		y[i] = test_unif() < 0.2 + 0.07 * idx[i];
		lab[i] = y[i] ? 1 : -1;
		val[i] = 1;
		ptr[i + 1] = i + 1;
		s[i] = w[idx[i]];
	}
	boar_dataset *d = NULL;
	boar_error err;
	if (boar_dataset_from_csr(N, D, ptr, idx, val, lab, &d, &err)) {
		CHECK(0, "from_csr: %s", err.message);
		return;
	}
	struct boar_model *m = boar_model_alloc(BOAR_TASK_LINEAR,
						BOAR_LOSS_LOGISTIC, D, 0, 0, 0);
	memcpy(m->w, w, sizeof w);
	boar_metrics r;
	CHECK_EQ_INT(boar_evaluate(m, d, &r, 2, &err), 0);
	CHECK(r.auc == auc_by_pairs(s, y, N), "evaluate %.17g, pairs %.17g",
	      r.auc, auc_by_pairs(s, y, N));
	boar_model_free(m);
	boar_dataset_free(d);
}

int main(void)
{
	test_against_pairs();
	test_signed_zero_and_infinities();
	test_one_class_or_one_score();
	test_radix();
	test_evaluate_agrees();
	return TEST_RESULT();
}
