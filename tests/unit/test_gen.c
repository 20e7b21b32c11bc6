/* test_gen.c - the synthetic data generators: the same data for a seed at
 * any thread count, the promised shape (distinct sorted ids, unit-norm rows,
 * power-law head), labels a linear model can learn, low-rank ratings of the
 * promised variance, option checks, and a text round trip. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boar.h"
#include "data/dataset.h"
#include "testutil.h"

static boar_dataset *gen_at(const boar_gen_options *o, int threads)
{
	boar_dataset *d = NULL;
	boar_error e;
	omp_set_num_threads(threads);
	int r = boar_generate(o, &d, &e);
	CHECK(r == 0, "generate at %d threads: %s", threads, e.message);
	return d;
}

static int equal(const boar_dataset *a, const boar_dataset *b)
{
	if (!a || !b || a->n_rows != b->n_rows || a->nnz != b->nnz ||
	    a->dim != b->dim || a->n_items != b->n_items)
		return 0;
	uint64_t n = a->n_rows;
	if (a->task == BOAR_TASK_LINEAR)
		return !memcmp(a->row_ptr, b->row_ptr, (n + 1) * 8) &&
		       !memcmp(a->idx, b->idx, a->nnz * 4) &&
		       !memcmp(a->val, b->val, a->nnz * 4) &&
		       !memcmp(a->label, b->label, n * 4);
	return !memcmp(a->user, b->user, n * 4) &&
	       !memcmp(a->item, b->item, n * 4) &&
	       !memcmp(a->label, b->label, n * 4);
}

static void test_determinism(void)
{
	boar_gen_options o;
	boar_gen_options_default(&o);
	o.rows = 100003; /* not a multiple of the block */
	o.features = 100000;
	o.nnz_per_row = 17;
	for (int sk = 0; sk < 2; sk++) {
		o.skew = sk ? 1.5 : 0;
		boar_dataset *a = gen_at(&o, 1), *b = gen_at(&o, 2),
			     *c = gen_at(&o, 3);
		CHECK(equal(a, b) && equal(a, c),
		      "linear skew %g: data differs across thread counts", o.skew);
		o.seed = 2;
		boar_dataset *other = gen_at(&o, 2);
		o.seed = 1;
		CHECK(!equal(a, other), "another seed gives other data");
		boar_dataset_free(a);
		boar_dataset_free(b);
		boar_dataset_free(c);
		boar_dataset_free(other);
	}
	o.task = BOAR_TASK_MF;
	o.features = 3000;
	o.items = 2000;
	o.rank = 8;
	boar_dataset *a = gen_at(&o, 1), *b = gen_at(&o, 2), *c = gen_at(&o, 3);
	CHECK(equal(a, b) && equal(a, c), "MF data differs across thread counts");
	boar_dataset_free(a);
	boar_dataset_free(b);
	boar_dataset_free(c);
	omp_set_num_threads(omp_get_num_procs());
}

static void test_linear_shape(void)
{
	boar_gen_options o;
	boar_gen_options_default(&o);
	o.rows = 200000;
	o.features = 1u << 16;
	o.nnz_per_row = 30;
	o.noise = 0;
	for (int sk = 0; sk < 2; sk++) {
		o.skew = sk ? 1.0 : 0;
		boar_dataset *d = gen_at(&o, 2);
		if (!d)
			return;
		CHECK_EQ_INT(boar_dataset_task(d), BOAR_TASK_LINEAR);
		CHECK_EQ_INT(d->n_rows, o.rows);
		CHECK_EQ_INT(d->nnz, o.rows * 30);
		CHECK_EQ_INT(d->dim, o.features);
		CHECK_EQ_INT(d->label_kind, BOAR_LABELS_BINARY);
		uint64_t bad = 0, head = 0, pos = 0;
		float v = 1.0f / sqrtf(30.0f);
		for (uint64_t r = 0; r < d->n_rows; r++) {
			bad += d->row_ptr[r + 1] - d->row_ptr[r] != 30;
			for (uint64_t k = d->row_ptr[r]; k < d->row_ptr[r + 1]; k++) {
				bad += d->idx[k] >= o.features || d->val[k] != v;
				if (k > d->row_ptr[r])
					bad += d->idx[k] <= d->idx[k - 1];
				head += d->idx[k] < o.features / 10;
			}
			bad += d->label[r] != 1 && d->label[r] != -1;
			pos += d->label[r] > 0;
		}
		CHECK_EQ_INT(bad, 0);
		double fh = (double)head / d->nnz, fp = (double)pos / d->n_rows;
		/* P(id < D/10) is 0.1 uniform, 0.1^(1/2) = 0.32 at skew 1 */
		if (sk)
			CHECK(fh > 0.28 && fh < 0.36, "skew 1: head share %.3f", fh);
		else
			CHECK(fh > 0.09 && fh < 0.11, "uniform: head share %.3f", fh);
		CHECK(fp > 0.35 && fp < 0.65, "positive share %.3f", fp);
		boar_dataset_free(d);
	}
}

/* The labels come from a linear rule: a few passes of a perceptron-like
 * SGD on half the rows must classify the other half far above chance, and
 * label noise must cost about what it says. */
static double learnability(double noise)
{
	boar_gen_options o;
	boar_gen_options_default(&o);
	o.rows = 200000;
	o.features = 2000;
	o.nnz_per_row = 20;
	o.noise = noise;
	boar_dataset *d = gen_at(&o, 2);
	if (!d)
		return 0;
	float *w = calloc(o.features, sizeof *w);
	uint64_t half = d->n_rows / 2;
	for (int ep = 0; ep < 5; ep++)
		for (uint64_t r = 0; r < half; r++) {
			double m = 0;
			for (uint64_t k = d->row_ptr[r]; k < d->row_ptr[r + 1]; k++)
				m += w[d->idx[k]] * d->val[k];
			double y = d->label[r], g = y / (1 + exp(y * m));
			for (uint64_t k = d->row_ptr[r]; k < d->row_ptr[r + 1]; k++)
				w[d->idx[k]] += (float)(0.5 * g * d->val[k]);
		}
	uint64_t ok = 0;
	for (uint64_t r = half; r < d->n_rows; r++) {
		double m = 0;
		for (uint64_t k = d->row_ptr[r]; k < d->row_ptr[r + 1]; k++)
			m += w[d->idx[k]] * d->val[k];
		ok += (m >= 0) == (d->label[r] > 0);
	}
	free(w);
	double acc = (double)ok / (double)(d->n_rows - half);
	boar_dataset_free(d);
	return acc;
}

static void test_learnable(void)
{
	double clean = learnability(0), noisy = learnability(0.2);
	CHECK(clean > 0.85, "accuracy on clean labels %.3f", clean);
	CHECK(noisy < clean - 0.1 && noisy > 0.6,
	      "accuracy with 20%% flips %.3f (clean %.3f)", noisy, clean);
}

static void test_mf_shape(void)
{
	boar_gen_options o;
	boar_gen_options_default(&o);
	o.task = BOAR_TASK_MF;
	o.rows = 300000;
	o.features = 1000;
	o.items = 500;
	o.rank = 16;
	o.noise = 0.5;
	boar_dataset *d = gen_at(&o, 2);
	if (!d)
		return;
	CHECK_EQ_INT(boar_dataset_task(d), BOAR_TASK_MF);
	CHECK_EQ_INT(d->n_rows, o.rows);
	CHECK_EQ_INT(d->nnz, o.rows);
	CHECK(d->dim <= 1000 && d->dim > 990, "users %llu",
	      (unsigned long long)d->dim);
	CHECK(d->n_items <= 500 && d->n_items > 490, "items %llu",
	      (unsigned long long)d->n_items);
	double s = 0, s2 = 0;
	uint64_t bad = 0;
	for (uint64_t k = 0; k < d->n_rows; k++) {
		s += d->label[k];
		s2 += (double)d->label[k] * d->label[k];
		bad += d->user[k] >= o.features || d->item[k] >= o.items;
	}
	CHECK_EQ_INT(bad, 0);
	double mean = s / d->n_rows, var = s2 / d->n_rows - mean * mean;
	/* p.q has variance 1, the noise 0.25 more */
	CHECK(fabs(mean) < 0.1, "rating mean %.3f", mean);
	CHECK(var > 1.0 && var < 1.5, "rating variance %.3f (want ~1.25)", var);
	/* the same (user, item) pair gets the same true rating: spread of
	 * repeated pairs is the noise alone */
	double dsum = 0;
	uint64_t dn = 0;
	for (uint64_t a = 0; a < 20000; a++)
		for (uint64_t b = a + 1; b < 20000; b++)
			if (d->user[a] == d->user[b] && d->item[a] == d->item[b]) {
				double x = d->label[a] - d->label[b];
				dsum += x * x;
				dn++;
			}
	if (dn > 20)
		CHECK(dsum / dn / 2 < 0.5, "repeat-pair variance %.3f (noise^2 0.25)",
		      dsum / dn / 2);
	boar_dataset_free(d);
}

static void test_options(void)
{
	boar_gen_options o;
	memset(&o, 0x77, sizeof o);
	boar_gen_options_default(&o);
	CHECK_EQ_INT(o.task, BOAR_TASK_LINEAR);
	CHECK(o.rows > 0 && o.features > 0 && o.nnz_per_row > 0 && o.rank > 0 &&
		      o.items > 0 && o.skew == 0 && o.noise >= 0,
	      "defaults");
	boar_dataset *d = NULL;
	boar_error e;
	static const char *want[] = {
		"task", "rows", "features", "nnz_per_row", "nnz_per_row",
		"skew", "skew", "noise", "rank", "items", "noise",
	};
	for (int k = 0; k < (int)(sizeof want / sizeof want[0]); k++) {
		boar_gen_options_default(&o);
		switch (k) {
		case 0: o.task = BOAR_TASK_AUTO; break;
		case 1: o.rows = 0; break;
		case 2: o.features = 0; break;
		case 3: o.nnz_per_row = 0; break;
		case 4: o.features = 10; o.nnz_per_row = 11; break;
		case 5: o.skew = -1; break;
		case 6: o.skew = NAN; break;
		case 7: o.noise = 1.5; break;
		case 8: o.task = BOAR_TASK_MF; o.rank = 0; break;
		case 9: o.task = BOAR_TASK_MF; o.items = 0; break;
		case 10: o.task = BOAR_TASK_MF; o.noise = -1; break;
		}
		memset(&e, 0, sizeof e);
		int r = boar_generate(&o, &d, &e);
		CHECK(r == BOAR_EINVAL && d == NULL && strstr(e.message, want[k]),
		      "case %d: expected EINVAL about %s, got %d \"%s\"", k,
		      want[k], r, e.message);
	}
	CHECK_EQ_INT(boar_generate(NULL, &d, &e), BOAR_EINVAL);

	/* every id in every row: terminates, rows are 0..D-1 */
	boar_gen_options_default(&o);
	o.rows = 1000;
	o.features = 40;
	o.nnz_per_row = 40;
	o.skew = 4;
	CHECK_EQ_INT(boar_generate(&o, &d, &e), 0);
	if (d) {
		uint64_t bad = 0;
		for (uint64_t k = 0; k < d->nnz; k++)
			bad += d->idx[k] != k % 40;
		CHECK_EQ_INT(bad, 0);
		boar_dataset_free(d);
	}
}

static void test_text_round_trip(void)
{
	char dir[256], p[300];
	snprintf(dir, sizeof dir, "%s/boar-test-gen.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	snprintf(p, sizeof p, "%s/g.txt", dir);
	boar_gen_options o;
	boar_gen_options_default(&o);
	o.rows = 70001;
	o.skew = 0.5;
	for (int task = BOAR_TASK_LINEAR; task <= BOAR_TASK_MF; task++) {
		o.task = task;
		boar_dataset *g = NULL, *back = NULL;
		boar_error e;
		CHECK_EQ_INT(boar_generate(&o, &g, &e), 0);
		CHECK_EQ_INT(boar_dataset_write_text(g, p, &e), 0);
		boar_load_options lo;
		boar_load_options_default(&lo);
		CHECK_EQ_INT(boar_dataset_load(p, &lo, &back, &e), 0);
		if (task == BOAR_TASK_LINEAR && back)
			back->dim = g->dim; /* the file only shows used ids */
		CHECK(equal(g, back), "task %d: text round trip differs", task);
		boar_dataset_free(g);
		boar_dataset_free(back);
	}
	unlink(p);
	rmdir(dir);
}

int main(void)
{
	test_determinism();
	test_linear_shape();
	test_learnable();
	test_mf_shape();
	test_options();
	test_text_round_trip();
	return TEST_RESULT();
}
