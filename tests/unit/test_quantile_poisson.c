/* test_quantile_poisson.c - the quantile (pinball) and Poisson losses.
 *
 * The math at points worked out by hand (loss and derivative), the
 * parameter and label rules, predictions in the label's scale, and what
 * each loss is for: a quantile model trained on y = 1 + x + U(0, 4) noise
 * puts a fraction tau of the labels below its predictions; a Poisson model
 * on counts drawn with mean exp(0.5 + w.x) finds w, and its mean
 * prediction on the training rows equals the mean count (the score
 * equation of a Poisson fit with an intercept). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boar.h"
#include "math/loss.h"
#include "testutil.h"

#define N 4000
#define DIM 4

static void check_math(void)
{
	float d;
	/* tau 0.9: a target 2 above the prediction costs 0.9 * 2 */
	CHECK_NEAR(boar_loss_eval(BOAR_LOSS_QUANTILE, 1, 3, 0.9f, &d), 1.8,
		   1e-6);
	CHECK_NEAR(d, -0.9, 1e-6);
	/* 2 below costs (1 - 0.9) * 2 */
	CHECK_NEAR(boar_loss_eval(BOAR_LOSS_QUANTILE, 3, 1, 0.9f, &d), 0.2,
		   1e-6);
	CHECK_NEAR(d, 0.1, 1e-6);
	/* on the kink: no loss, the midpoint of the slopes */
	CHECK_NEAR(boar_loss_eval(BOAR_LOSS_QUANTILE, 2, 2, 0.9f, &d), 0, 0);
	CHECK_NEAR(d, -0.4, 1e-6);
	/* tau 0.5 is half the absolute error */
	CHECK_NEAR(boar_loss_eval(BOAR_LOSS_QUANTILE, -1, 2, 0.5f, &d), 1.5,
		   1e-6);
	CHECK_NEAR(d, -0.5, 1e-6);

	/* Poisson, half deviance: exp(m) - y m - y + y log y */
	CHECK_NEAR(boar_loss_eval(BOAR_LOSS_POISSON, 0, 0, 0, &d), 1, 1e-6);
	CHECK_NEAR(d, 1, 1e-6);
	CHECK_NEAR(boar_loss_eval(BOAR_LOSS_POISSON, 0, 1, 0, &d), 0, 1e-6);
	CHECK_NEAR(d, 0, 1e-6);
	CHECK_NEAR(boar_loss_eval(BOAR_LOSS_POISSON, logf(2), 2, 0, &d), 0,
		   1e-6);
	CHECK_NEAR(d, 0, 1e-6);
	/* e - 6 + 3 ln 3 = 0.0141193; e - 3 */
	CHECK_NEAR(boar_loss_eval(BOAR_LOSS_POISSON, 1, 3, 0, &d), 0.0141193,
		   1e-5);
	CHECK_NEAR(d, -0.2817182, 1e-6);
	/* beyond the cap the mean goes on as its tangent: finite */
	float big = boar_loss_eval(BOAR_LOSS_POISSON, 35, 1, 0, &d);
	CHECK(isfinite(big) && isfinite(d), "poisson at m 35: %g, %g", big, d);
	CHECK_NEAR(d / (6 * exp(30.0)), 1, 1e-5);
	CHECK_NEAR(boar_loss_response(BOAR_LOSS_POISSON, 1), exp(1.0), 1e-12);
	CHECK_NEAR(boar_loss_response(BOAR_LOSS_QUANTILE, 1.5), 1.5, 0);
	CHECK_NEAR(boar_loss_response(BOAR_LOSS_LOGISTIC, 0), 0.5, 0);

	CHECK(!boar_loss_label_ok(BOAR_LOSS_POISSON, -1), "negative count");
	CHECK(boar_loss_label_ok(BOAR_LOSS_POISSON, 0), "zero count");
	CHECK(boar_loss_label_ok(BOAR_LOSS_QUANTILE, -1), "quantile label");
	CHECK(!boar_loss_param_ok(BOAR_LOSS_QUANTILE, 1), "tau 1");
	CHECK(!boar_loss_param_ok(BOAR_LOSS_QUANTILE, 0), "tau 0");
	CHECK(boar_loss_param_ok(BOAR_LOSS_QUANTILE, 0.99), "tau 0.99");
	CHECK(boar_loss_param_ok(BOAR_LOSS_HUBER, 5), "delta 5");
}

static const float true_w[DIM] = {-0.4f, -0.2f, 0.2f, 0.4f};

/* Rows of DIM features in [-1, 1); labels from `label` of the margin
 * w.x (quantile: 1 + w.x + U(0, 4); Poisson: a count of mean
 * exp(0.5 + w.x), by Knuth's product of uniforms). */
static boar_dataset *data(int poisson, uint64_t seed)
{
	static uint64_t row_ptr[N + 1];
	static uint32_t idx[N * DIM];
	static float val[N * DIM], label[N];
	uint64_t s = seed;
	for (int r = 0; r < N; r++) {
		double m = 0;
		row_ptr[r] = (uint64_t)r * DIM;
		for (int j = 0; j < DIM; j++) {
			float x = (float)(test_lcg_unif(&s) * 2 - 1);
			idx[r * DIM + j] = (uint32_t)j;
			val[r * DIM + j] = x;
			m += true_w[j] * x;
		}
		if (!poisson) {
			label[r] = (float)(1 + m + 4 * test_lcg_unif(&s));
			continue;
		}
		double floor_p = exp(-exp(0.5 + m)), p = test_lcg_unif(&s);
		int k = 0;
		while (p > floor_p) {
			p *= test_lcg_unif(&s);
			k++;
		}
		label[r] = (float)k;
	}
	row_ptr[N] = (uint64_t)N * DIM;
	boar_dataset *d = NULL;
	boar_error err;
	CHECK_EQ_INT(boar_dataset_from_csr(N, DIM, row_ptr, idx, val, label,
					   &d, &err), 0);
	return d;
}

static boar_model *fit(const boar_dataset *d, int loss, double param)
{
	boar_options o;
	boar_options_default(&o);
	o.loss = loss;
	o.loss_param = param;
	o.epochs = 20;
	o.threads = 1;
	return test_train(d, &o);
}

/* A fraction tau of fresh labels falls below the predictions: 2000 test
 * rows put the sampling error near 0.007, the fit's adds a little. */
static void check_quantile(void)
{
	boar_dataset *tr = data(0, 7), *te = NULL;
	static const double taus[] = {0.1, 0.5, 0.9};
	for (size_t t = 0; tr && t < 3; t++) {
		boar_model *m = fit(tr, BOAR_LOSS_QUANTILE, taus[t]);
		if (!te)
			te = data(0, 99);
		boar_metrics mt;
		if (!m || !te || boar_evaluate(m, te, &mt, 1, NULL))
			break;
		printf("tau %.1f: %.4f of the labels below the prediction\n",
		       taus[t], mt.below);
		CHECK(fabs(mt.below - taus[t]) < 0.03, "tau %g: below %g",
		      taus[t], mt.below);
		/* the bias is the noise's tau-quantile: 1 + 4 tau */
		uint64_t n;
		const float *w = NULL;
		CHECK_EQ_INT(boar_model_weights(m, &w, &n, NULL), 0);
		if (w)
			CHECK_NEAR(w[DIM], 1 + 4 * taus[t], 0.2);
		/* the tau reaches the file and comes back */
		char path[] = "/tmp/boar_quantile_XXXXXX";
		int fd = mkstemp(path);
		boar_model *back = NULL;
		if (fd >= 0) {
			close(fd);
			CHECK_EQ_INT(boar_model_save(m, path, NULL), 0);
			CHECK_EQ_INT(boar_model_load(path, &back, NULL), 0);
			boar_metrics mb;
			if (back && !boar_evaluate(back, te, &mb, 1, NULL))
				CHECK_NEAR(mb.loss, mt.loss, 0);
			unlink(path);
		}
		boar_model_free(back);
		boar_model_free(m);
	}
	boar_dataset_free(tr);
	boar_dataset_free(te);
}

static void check_poisson(void)
{
	boar_dataset *d = data(1, 3);
	boar_model *m = d ? fit(d, BOAR_LOSS_POISSON, BOAR_AUTO) : NULL;
	if (!m) {
		boar_dataset_free(d);
		return;
	}
	uint64_t n;
	const float *w = NULL;
	CHECK_EQ_INT(boar_model_weights(m, &w, &n, NULL), 0);
	for (int j = 0; w && j < DIM; j++)
		CHECK_NEAR(w[j], true_w[j], 0.08);
	if (w)
		CHECK_NEAR(w[DIM], 0.5, 0.08);
	/* predictions are counts: their mean is the labels' mean */
	double *p = malloc(N * sizeof *p), sp = 0, sy = 0;
	CHECK_EQ_INT(boar_predict(m, d, p, 1, NULL), 0);
	for (int r = 0; p && r < N; r++) {
		const uint32_t *ix;
		const float *v;
		float y;
		boar_dataset_row(d, (uint64_t)r, &ix, &v, &y, NULL);
		sp += p[r];
		sy += y;
	}
	printf("poisson: mean prediction %.4f, mean count %.4f\n", sp / N,
	       sy / N);
	CHECK_NEAR(sp / sy, 1, 0.02);
	free(p);

	/* a parameter for a loss without one is refused */
	boar_options o;
	boar_options_default(&o);
	o.loss = BOAR_LOSS_POISSON;
	o.loss_param = 2;
	CHECK(boar_options_check(&o, d, NULL) != 0, "poisson takes no parameter");
	o.loss = BOAR_LOSS_QUANTILE;
	o.loss_param = 1;
	CHECK(boar_options_check(&o, d, NULL) != 0, "tau 1 accepted");
	o.loss_param = 0.25;
	CHECK(boar_options_check(&o, d, NULL) == 0, "tau 0.25 refused");
	boar_model_free(m);
	boar_dataset_free(d);
}

/* A negative count is refused naming the row. */
static void check_negative_count(void)
{
	static const float label[] = {2, -1, 0};
	boar_dataset *d = test_one_feature_rows(3, label);
	boar_model *m = NULL;
	boar_error err;
	boar_options o;
	boar_options_default(&o);
	o.loss = BOAR_LOSS_POISSON;
	CHECK_EQ_INT(boar_train(d, &o, &m, &err), BOAR_EINVAL);
	CHECK(strstr(err.message, "row 2: label -1"), "message: %s",
	      err.message);
	CHECK(m == NULL, "a model was returned");
	o.loss = BOAR_LOSS_QUANTILE;
	CHECK_EQ_INT(boar_train(d, &o, &m, &err), 0);
	boar_model_free(m);
	boar_dataset_free(d);
}

int main(void)
{
	check_math();
	check_quantile();
	check_poisson();
	check_negative_count();
	return TEST_RESULT();
}
