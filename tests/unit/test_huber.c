/* test_huber.c - Huber loss fits through outliers where squared loss
 * cannot.
 *
 * A regression problem y = w.x + b + small noise, with one row in ten
 * pushed up by 30: squared loss pulls the fit towards the outliers (its
 * gradient grows with the error), Huber's gradient is capped at delta, so
 * its weights must land closer to the true ones. Also: the delta reaches
 * the model and its file, and bad deltas are refused.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boar.h"
#include "testutil.h"

#define N 3000
#define DIM 10

static float truth[DIM + 1];

static boar_dataset *outlier_data(void)
{
	static uint64_t row_ptr[N + 1];
	static uint32_t idx[N * DIM];
	static float val[N * DIM], label[N];
	uint64_t s = 12345;
	for (int j = 0; j <= DIM; j++)
		truth[j] = (float)j / DIM - 0.5f; /* truth[DIM]: the bias */
	for (int r = 0; r < N; r++) {
		double y = truth[DIM];
		row_ptr[r] = (uint64_t)r * DIM;
		for (int j = 0; j < DIM; j++) {
			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			float x = (float)((s >> 11) * (1.0 / 9007199254740992.0)) * 2 - 1;
			idx[r * DIM + j] = (uint32_t)j;
			val[r * DIM + j] = x;
			y += truth[j] * x;
		}
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		y += 0.05 * ((double)(s >> 11) / 9007199254740992.0 - 0.5);
		label[r] = (float)(r % 10 == 3 ? y + 30 : y);
	}
	row_ptr[N] = (uint64_t)N * DIM;
	boar_dataset *d = NULL;
	boar_error err;
	CHECK_EQ_INT(boar_dataset_from_csr(N, DIM, row_ptr, idx, val, label,
					   &d, &err), 0);
	return d;
}

/* Euclidean distance of a model's weights and bias from the truth. */
static double distance(const boar_model *m)
{
	uint64_t n;
	const float *w = test_model_weights(m, &n);
	double s = 0;
	for (uint64_t j = 0; j < n && j <= DIM; j++)
		s += (w[j] - truth[j]) * (w[j] - truth[j]);
	return sqrt(s);
}

static boar_model *fit(const boar_dataset *d, int loss, double param)
{
	boar_options o;
	boar_error err;
	boar_model *m = NULL;
	boar_options_default(&o);
	o.loss = loss;
	o.loss_param = param;
	o.optimizer = BOAR_OPT_SGD;
	o.eta = 0.02;
	o.epochs = 20;
	o.threads = 1;
	int rc = boar_train(d, &o, &m, &err);
	CHECK(rc == 0, "training: %s", err.message);
	return m;
}

int main(void)
{
	boar_dataset *d = outlier_data();
	if (!d)
		return TEST_RESULT();
	boar_model *sq = fit(d, BOAR_LOSS_SQUARED, BOAR_AUTO);
	boar_model *hu = fit(d, BOAR_LOSS_HUBER, BOAR_AUTO);
	if (!sq || !hu)
		return TEST_RESULT();
	double ds = distance(sq), dh = distance(hu);
	printf("distance to the true weights: squared %.4f, huber %.4f\n", ds,
	       dh);
	CHECK(dh < 0.5 * ds, "huber %.4f should be well below squared %.4f",
	      dh, ds);
	CHECK(dh < 0.3, "huber is %.4f from the truth", dh);

	/* The default delta (1) is the model's and survives its file. */
	CHECK_EQ_INT(boar_model_loss(hu), BOAR_LOSS_HUBER);
	boar_metrics before, after;
	CHECK_EQ_INT(boar_evaluate(hu, d, &before, 1, NULL), 0);
	strcpy(test_dir, "/tmp/boar-huber-XXXXXX");
	CHECK(mkdtemp(test_dir) != NULL, "mkdtemp");
	char path[300];
	snprintf(path, sizeof path, "%s/m", test_dir);
	boar_model *back = NULL;
	CHECK_EQ_INT(boar_model_save(hu, path, NULL), 0);
	CHECK_EQ_INT(boar_model_load(path, &back, NULL), 0);
	if (back) {
		CHECK_EQ_INT(boar_evaluate(back, d, &after, 1, NULL), 0);
		CHECK_NEAR(after.loss, before.loss, 0);
	}
	unlink(path);
	rmdir(test_dir);
	/* A smaller delta caps more rows: a smaller loss on the same fit. */
	boar_model *small = fit(d, BOAR_LOSS_HUBER, 0.1);
	boar_metrics ms;
	if (small) {
		CHECK_EQ_INT(boar_evaluate(small, d, &ms, 1, NULL), 0);
		CHECK(ms.loss < before.loss, "delta 0.1: loss %g, delta 1: %g",
		      ms.loss, before.loss);
	}

	boar_options o;
	boar_options_default(&o);
	o.loss = BOAR_LOSS_HUBER;
	o.loss_param = 0;
	CHECK(boar_options_check(&o, d, NULL) == BOAR_EINVAL, "delta 0 accepted");
	o.loss_param = NAN;
	CHECK(boar_options_check(&o, d, NULL) == BOAR_EINVAL, "delta NaN accepted");
	o.loss = BOAR_LOSS_LOGISTIC;
	o.loss_param = 2;
	CHECK(boar_options_check(&o, d, NULL) == BOAR_EINVAL, "logistic with a delta");
	CHECK(!strcmp(boar_loss_describe(BOAR_LOSS_HUBER)->param, "delta"),
	      "huber's parameter is its delta");

	boar_model_free(back);
	boar_model_free(small);
	boar_model_free(sq);
	boar_model_free(hu);
	boar_dataset_free(d);
	return TEST_RESULT();
}
