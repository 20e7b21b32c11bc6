/* test_mf_extras.c - what LIBMF and LIBLINEAR users ask for: non-negative
 * MF, L2 for users and items apart, MAE, and the bias's scale.
 *
 * Non-negative MF (mf_nonneg) on ratings drawn from non-negative rank-4
 * factors: every learned factor is >= 0 and the fit is close, where the
 * same run without it learns negative factors. L2 apart: a strong l2_item
 * shrinks the item factors and leaves the users', and the other way round.
 * MAE: boar_evaluate's equals the mean |prediction - rating| computed here
 * from boar_model_predict_pair, and training for it (mf_loss absolute)
 * beats squared loss at it on ratings with heavy outliers. Bias scale B (LIBLINEAR's -B), checked on
 * one row y = 2 worked by hand: the first SGD step moves the kept bias
 * (its contribution B b) by eta B^2 y, AdaGrad's by eta B, and B = 0
 * keeps it at 0. Options in the wrong task are refused.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/options.h"
#include "boar.h"
#include "engine/engine_ops.h"
#include "math/mf_step.h"
#include "testutil.h"

#define USERS 200
#define ITEMS 150
#define RANK 4
#define N 20000

/* Ratings P[u].Q[i] with P, Q ~ U(0, 1) (non-negative) and no noise. */
static float ratings[N];
static uint32_t users[N], items[N];

static boar_dataset *nonneg_ratings(void)
{
	static float P[USERS * RANK], Q[ITEMS * RANK];
	float *r = ratings;
	uint32_t *u = users, *it = items;
	uint64_t s = 17;
	for (int k = 0; k < USERS * RANK; k++)
		P[k] = (float)test_lcg_unif(&s);
	for (int k = 0; k < ITEMS * RANK; k++)
		Q[k] = (float)test_lcg_unif(&s);
	for (int n = 0; n < N; n++) {
		u[n] = (uint32_t)(test_lcg(&s) % USERS);
		it[n] = (uint32_t)(test_lcg(&s) % ITEMS);
		float dot = 0;
		for (int f = 0; f < RANK; f++)
			dot += P[u[n] * RANK + f] * Q[it[n] * RANK + f];
		r[n] = dot;
	}
	boar_dataset *d = NULL;
	boar_error err;
	CHECK_EQ_INT(boar_dataset_from_ratings(N, u, it, r, &d, &err), 0);
	return d;
}

static boar_model *fit_mf(const boar_dataset *d, int nonneg, double l2u,
			  double l2i)
{
	boar_options o;
	boar_options_default(&o);
	o.rank = RANK;
	o.mf_biases = 0;
	o.mf_nonneg = nonneg;
	o.l2_user = l2u;
	o.l2_item = l2i;
	o.epochs = 40;
	o.eta = 0.02;
	o.early_stop = 0;
	o.threads = 1;
	o.init_scale = 1.0;
	return test_train(d, &o);
}

/* The smallest factor and the mean |factor| of each side. */
static float factor_stats(const boar_model *m, double *mean_p, double *mean_q)
{
	const float *P, *Q, *bu, *bi;
	float mu, least = INFINITY;
	uint64_t n_items;
	boar_model_factors(m, &P, &Q, &bu, &bi, &mu, &n_items, NULL);
	double sp = 0, sq = 0;
	uint64_t np = boar_model_dim(m) * RANK, nq = n_items * RANK;
	for (uint64_t k = 0; k < np; k++) {
		least = fminf(least, P[k]);
		sp += fabsf(P[k]);
	}
	for (uint64_t k = 0; k < nq; k++) {
		least = fminf(least, Q[k]);
		sq += fabsf(Q[k]);
	}
	*mean_p = sp / np;
	*mean_q = sq / nq;
	return least;
}

static void check_nonneg(const boar_dataset *d)
{
	CHECK_NEAR(boar_mf_project(-0.5f, 1), 0, 0);
	CHECK_NEAR(boar_mf_project(0.25f, 1), 0.25, 0);
	CHECK_NEAR(boar_mf_project(-0.5f, 0), -0.5, 0);
	boar_model *free_m = fit_mf(d, 0, BOAR_AUTO, BOAR_AUTO);
	boar_model *nn = fit_mf(d, 1, BOAR_AUTO, BOAR_AUTO);
	if (!free_m || !nn)
		goto out;
	double mp, mq;
	float least_free = factor_stats(free_m, &mp, &mq);
	float least_nn = factor_stats(nn, &mp, &mq);
	boar_metrics a, b;
	CHECK_EQ_INT(boar_evaluate(free_m, d, &a, 1, NULL), 0);
	CHECK_EQ_INT(boar_evaluate(nn, d, &b, 1, NULL), 0);
	printf("smallest factor: %g free, %g non-negative; train RMSE %.4f "
	       "free, %.4f non-negative (ratings' mean about %g)\n",
	       least_free, least_nn, a.rmse, b.rmse, RANK * 0.25);
	CHECK(least_free < -0.05f, "the free run has no negative factor: %g",
	      least_free);
	CHECK(least_nn >= 0.0f, "a negative factor %g under mf_nonneg",
	      least_nn);
	CHECK(b.rmse < 0.15, "non-negative fit RMSE %g", b.rmse);
out:
	boar_model_free(free_m);
	boar_model_free(nn);
}

/* Per-rating L2 of l2_u |p|^2 + l2_i |q|^2 on a product p q that the data
 * fixes is least when |p| / |q| = sqrt(l2_i / l2_u): with 0.25 and 0.01,
 * the users' factors come out about 5 times the items', and the other way
 * round when swapped (equal L2 would give about 1). */
static void check_l2_apart(const boar_dataset *d)
{
	boar_model *items_held = fit_mf(d, 0, 0.01, 0.25);
	boar_model *users_held = fit_mf(d, 0, 0.25, 0.01);
	if (items_held && users_held) {
		double p1, q1, p2, q2;
		factor_stats(items_held, &p1, &q1);
		factor_stats(users_held, &p2, &q2);
		printf("mean |P| / mean |Q|: %.3f with l2_item 0.25, %.3f with "
		       "l2_user 0.25 (5 and 0.2 at the optimum)\n",
		       p1 / q1, p2 / q2);
		CHECK(p1 / q1 > 3 && p1 / q1 < 8, "l2_item 0.25: P/Q %g",
		      p1 / q1);
		CHECK(q2 / p2 > 3 && q2 / p2 < 8, "l2_user 0.25: Q/P %g",
		      q2 / p2);
	}
	boar_model_free(items_held);
	boar_model_free(users_held);
}

/* boar_evaluate's MAE and RMSE against the mean |error| and the root mean
 * squared error of the pairs, computed here. */
static void check_mae(const boar_dataset *d)
{
	boar_options o;
	boar_options_default(&o);
	o.rank = RANK;
	o.epochs = 2;
	o.threads = 1;
	boar_model *m = test_train(d, &o);
	if (!m)
		return;
	double ab = 0, sq = 0;
	for (int n = 0; n < N; n++) {
		double pr = NAN;
		boar_model_predict_pair(m, users[n], items[n], &pr, NULL);
		double e = pr - ratings[n];
		ab += fabs(e);
		sq += e * e;
	}
	boar_metrics mt;
	CHECK_EQ_INT(boar_evaluate(m, d, &mt, 1, NULL), 0);
	printf("MAE %.5f (by hand %.5f), RMSE %.5f\n", mt.mae, ab / N,
	       mt.rmse);
	CHECK_NEAR(mt.mae, ab / N, 1e-9 + 1e-9 * ab);
	CHECK_NEAR(mt.rmse, sqrt(sq / N), 1e-9 + 1e-9 * sq);
	CHECK(mt.mae < mt.rmse, "mae %g rmse %g", mt.mae, mt.rmse);
	boar_model_free(m);
}

static boar_model *fit_loss(const boar_dataset *d, int mf_loss,
			    const boar_model *init)
{
	boar_options o;
	test_outlier_options(&o, mf_loss, 9);
	o.init_model = init;
	return test_train(d, &o);
}

/* mf_loss ABSOLUTE (LIBMF's -f 1) fits the median: on ratings with heavy
 * outliers its test MAE is well below squared loss's, whose mean the
 * outliers drag; the model keeps the loss through its file and a warm
 * start, and its evaluation loss is the MAE. */
static void check_absolute_loss(void)
{
	boar_dataset *tr = test_outlier_ratings(15000, 11);
	boar_dataset *te = test_outlier_ratings(4000, 12);
	boar_model *sq = NULL, *ab = NULL, *back = NULL, *more = NULL;
	if (!tr || !te)
		goto out;
	sq = fit_loss(tr, BOAR_MF_LOSS_SQUARED, NULL);
	ab = fit_loss(tr, BOAR_MF_LOSS_ABSOLUTE, NULL);
	boar_metrics ms, ma, mb;
	if (!sq || !ab || boar_evaluate(sq, te, &ms, 1, NULL) ||
	    boar_evaluate(ab, te, &ma, 1, NULL)) {
		CHECK(0, "training or evaluation failed");
		goto out;
	}
	printf("test MAE: %.4f squared loss, %.4f absolute loss (outliers "
	       "alone: 15/7 = 2.14 on one rating in seven)\n", ms.mae, ma.mae);
	CHECK(ma.mae < 0.8 * ms.mae, "absolute MAE %g, squared %g", ma.mae,
	      ms.mae);
	CHECK(ma.mae < 2.6, "absolute loss MAE %g", ma.mae);
	CHECK_NEAR(ma.loss, ma.mae, 1e-6 * ma.mae);
	CHECK_NEAR(ms.loss, ms.rmse * ms.rmse / 2, 1e-4 * ms.loss);
	CHECK_EQ_INT(boar_model_mf_loss(ab), BOAR_MF_LOSS_ABSOLUTE);
	CHECK_EQ_INT(boar_model_mf_loss(sq), BOAR_MF_LOSS_SQUARED);

	/* the defaults follow the gradient's scale: the error's for squared
	 * loss (the ratings' spread), 1 for absolute loss */
	boar_options o;
	boar_options_default(&o);
	o.mf_loss = BOAR_MF_LOSS_ABSOLUTE;
	boar_options_resolve(&o, tr);
	CHECK_NEAR(o.eta, 0.08, 1e-12);
	CHECK_NEAR(o.l2, 0.002, 1e-12);
	boar_options_default(&o);
	boar_options_resolve(&o, tr);
	CHECK(o.eta < 0.08 / 4 && o.l2 > 0.002 * 4,
	      "squared loss on a spread over 4: eta %g, l2 %g", o.eta, o.l2);

	test_dir_make("mf-loss");
	const char *path = test_put_file("ab.model", "", 0);
	CHECK_EQ_INT(boar_model_save(ab, path, NULL), 0);
	CHECK_EQ_INT(boar_model_load(path, &back, NULL), 0);
	if (back) {
		CHECK_EQ_INT(boar_model_mf_loss(back), BOAR_MF_LOSS_ABSOLUTE);
		CHECK_EQ_INT(boar_evaluate(back, te, &mb, 1, NULL), 0);
		CHECK_NEAR(mb.loss, ma.loss, 0);
		/* a warm start with the default option keeps the loss */
		more = fit_loss(tr, BOAR_MF_LOSS_SQUARED, back);
		if (more)
			CHECK_EQ_INT(boar_model_mf_loss(more),
				     BOAR_MF_LOSS_ABSOLUTE);
	}
	test_dir_remove();
out:
	boar_model_free(sq);
	boar_model_free(ab);
	boar_model_free(back);
	boar_model_free(more);
	boar_dataset_free(tr);
	boar_dataset_free(te);
}

/* The bias after one epoch over the one row (x0 = 1, y = 2) from zero. */
static double bias_after_one_step(int optimizer, double B)
{
	static const float label[] = {2};
	boar_dataset *d = test_one_feature_rows(1, label);
	boar_model *m = NULL;
	boar_error err;
	boar_options o;
	boar_options_default(&o);
	o.loss = BOAR_LOSS_SQUARED;
	o.optimizer = optimizer;
	o.eta = 0.01;
	o.epochs = 1;
	o.threads = 1;
	o.bias_scale = B;
	double b = NAN;
	CHECK_EQ_INT(boar_train(d, &o, &m, &err), 0);
	if (m) {
		uint64_t n;
		const float *w = NULL;
		if (!boar_model_weights(m, &w, &n, NULL))
			b = w[1];
	}
	boar_model_free(m);
	boar_dataset_free(d);
	return b;
}

static void check_bias_scale(void)
{
	/* SGD: the squared loss's d is m - y = -2 at m = 0: the kept bias
	 * moves by eta B^2 2 */
	CHECK_NEAR(bias_after_one_step(BOAR_OPT_SGD, 1), 0.02, 1e-7);
	CHECK_NEAR(bias_after_one_step(BOAR_OPT_SGD, 3), 0.18, 1e-6);
	CHECK_NEAR(bias_after_one_step(BOAR_OPT_SGD, 0), 0, 0);
	/* AdaGrad's first step is eta g / |g|, times B */
	CHECK_NEAR(bias_after_one_step(BOAR_OPT_ADAGRAD, 1), 0.01, 1e-6);
	CHECK_NEAR(bias_after_one_step(BOAR_OPT_ADAGRAD, 3), 0.03, 1e-6);
	CHECK_NEAR(bias_after_one_step(BOAR_OPT_ADAGRAD, 0), 0, 0);
}

/* Each option in the task it is not for is refused. */
static void check_refusals(const boar_dataset *mf)
{
	static const float label[] = {1};
	boar_dataset *lin = test_one_feature_rows(1, label);
	boar_options o;
	boar_options_default(&o);
	o.l2_user = 0.1;
	CHECK(boar_options_check(&o, lin, NULL) != 0, "l2_user on linear data");
	boar_options_default(&o);
	o.mf_nonneg = 1;
	CHECK(boar_options_check(&o, lin, NULL) != 0, "mf_nonneg on linear data");
	CHECK(boar_options_check(&o, mf, NULL) == 0, "mf_nonneg on ratings");
	boar_options_default(&o);
	o.bias_scale = 2;
	CHECK(boar_options_check(&o, mf, NULL) != 0, "bias_scale on ratings");
	CHECK(boar_options_check(&o, lin, NULL) == 0, "bias_scale on linear");
	o.bias_scale = -1;
	CHECK(boar_options_check(&o, lin, NULL) != 0, "bias_scale -1");
	boar_options_default(&o);
	o.l2_item = -0.5;
	CHECK(boar_options_check(&o, mf, NULL) != 0, "l2_item -0.5");
	boar_options_default(&o);
	o.mf_loss = BOAR_MF_LOSS_ABSOLUTE;
	CHECK(boar_options_check(&o, lin, NULL) != 0, "mf_loss on linear data");
	CHECK(boar_options_check(&o, mf, NULL) == 0, "mf_loss on ratings");
	o.mf_loss = 2;
	CHECK(boar_options_check(&o, mf, NULL) != 0, "mf_loss 2");
	boar_dataset_free(lin);
}

/* An engine without the capabilities (the GPU's before it had them)
 * refuses each by name, through the one table; the CPU engine has them
 * all. gpu_refusal: what such an engine says to o (early stopping off)
 * on ratings mf, 0 or BOAR_EINVAL with the message in err. */
static int gpu_refusal(const boar_dataset *mf, boar_options *o,
		       boar_error *err)
{
	static const unsigned gpu_like = BOAR_CAP(MF) | BOAR_CAP(EARLY_STOP);
	o->early_stop = 0;
	boar_options_resolve(o, mf);
	unsigned need = boar_caps_needed(mf, o, NULL, 0);
	CHECK_EQ_INT(boar_caps_check(need, BOAR_CAPS_ALL, "cpu", NULL, err), 0);
	return boar_caps_check(need, gpu_like, "the GPU engine", NULL, err);
}

static void check_caps(const boar_dataset *mf)
{
	static const char *const named[] = {
		"non-negative factors", "l2_item other than l2",
		"absolute (MAE) loss of MF",
	};
	for (int k = 0; k < 3; k++) {
		boar_options o;
		boar_error err;
		boar_options_default(&o);
		if (k == 0)
			o.mf_nonneg = 1;
		else if (k == 1)
			o.l2_item = 0.5;
		else
			o.mf_loss = BOAR_MF_LOSS_ABSOLUTE;
		CHECK_EQ_INT(gpu_refusal(mf, &o, &err), BOAR_EINVAL);
		CHECK(strstr(err.message, named[k]), "message: %s",
		      err.message);
	}
	/* the same value on both sides and in l2 needs nothing new */
	boar_options o;
	boar_error err;
	boar_options_default(&o);
	o.l2 = o.l2_user = o.l2_item = 0.5;
	CHECK_EQ_INT(gpu_refusal(mf, &o, &err), 0);
}

int main(void)
{
	boar_dataset *d = nonneg_ratings();
	if (d) {
		check_nonneg(d);
		check_l2_apart(d);
		check_mae(d);
		check_refusals(d);
		check_caps(d);
	}
	check_absolute_loss();
	check_bias_scale();
	boar_dataset_free(d);
	return TEST_RESULT();
}
