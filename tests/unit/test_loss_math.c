/* test_loss_math.c - the shared math of src/math/ says what it should.
 *
 * For every loss of BOAR_LOSS_MAP (a loss added to the list is tested
 * without an edit here): the derivative is the slope of the loss (central
 * differences), the loss is never negative, and its description is
 * complete. Squared loss is (m - y)^2 / 2 everywhere it is reported: the
 * library's evaluation and the progressive training loss (the CPU
 * reported (m - y)^2 and the GPU half of it, while both optimized the
 * half). Also: softmax's float and double forms agree, AdaGrad's rate and
 * the step schedule.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boar.h"
#include "math/loss.h"
#include "math/mf_step.h"
#include "math/step.h"
#include "testutil.h"

/* The slope of every loss at margins away from its kinks. */
static void check_derivatives(void)
{
	static const float margins[] = {-3.1f, -0.7f, 0.3f, 1.6f, 4.2f};
	static const float labels[] = {-1.0f, 1.0f, 2.5f};
	for (int loss = 0; loss < BOAR_LOSS_COUNT; loss++) {
		const boar_loss_desc *l = boar_loss_describe(loss);
		CHECK(l && l->name[0] && l->help[0], "loss %d undescribed", loss);
		CHECK_EQ_INT(boar_loss_from_name(l->name), loss);
		float param = l->param[0] ? (float)l->param_default : 0.0f;
		CHECK(!l->param[0] || param > 0, "%s: default %g", l->name,
		      param);
		for (size_t i = 0; i < sizeof margins / sizeof *margins; i++) {
			for (size_t j = 0; j < sizeof labels / sizeof *labels;
			     j++) {
				float m = margins[i];
				float y = boar_loss_target(loss, labels[j]);
				double h = 1e-3, dd;
				float d, dl, dr;
				float f = boar_loss_eval(loss, m, y, param, &d);
				double lo = boar_loss_eval(loss, (float)(m - h),
							   y, param, &dl);
				double hi = boar_loss_eval(loss, (float)(m + h),
							   y, param, &dr);
				dd = (hi - lo) / (2 * h);
				CHECK(f >= 0, "%s(%g, %g) = %g", l->name, m, y,
				      f);
				CHECK(fabs(dd - d) <= 2e-3 * (1 + fabs(d)),
				      "%s at m %g y %g: derivative %g, slope %g",
				      l->name, m, y, d, dd);
			}
		}
	}
	CHECK_EQ_INT(boar_loss_from_name("nope"), BOAR_EINVAL);
	CHECK(boar_loss_describe(BOAR_LOSS_COUNT) == NULL, "past the end");
	CHECK(boar_loss_describe(-1) == NULL, "negative");
	CHECK_EQ_INT(boar_optimizer_from_name("adagrad"), BOAR_OPT_ADAGRAD);
	CHECK_EQ_INT(boar_optimizer_from_name("auto"), BOAR_OPT_AUTO);
	CHECK(!strcmp(boar_optimizer_name(BOAR_OPT_SGD), "sgd"), "sgd");
	CHECK(boar_optimizer_name(BOAR_OPT_CODES) == NULL, "past the end");
}

static void check_squared_definition(void)
{
	float d;
	CHECK_NEAR(boar_loss_eval(BOAR_LOSS_SQUARED, 3.0f, 1.0f, 0, &d), 2.0,
		   0);
	CHECK_NEAR(d, 2.0, 0);
	/* MF rates a rating with the same loss. */
	float e;
	CHECK_NEAR(boar_mf_loss(BOAR_MF_LOSS_SQUARED, 1.0f, 0.5f, 0.5f, 1.0f,
			       1.0f, &e), 2.0, 0);
	CHECK_NEAR(e, 2.0, 0);
	/* Absolute loss (LIBMF's -f 1): |error|, derivative its sign. */
	CHECK_NEAR(boar_mf_loss(BOAR_MF_LOSS_ABSOLUTE, 1.0f, 0.5f, 0.5f, 1.0f,
			       1.0f, &e), 2.0, 0);
	CHECK_NEAR(e, 1.0, 0);
	CHECK_NEAR(boar_mf_rating_loss(BOAR_MF_LOSS_ABSOLUTE, 1.0f, 4.0f, &e),
		   3.0, 0);
	CHECK_NEAR(e, -1.0, 0);
	CHECK_NEAR(boar_mf_rating_loss(BOAR_MF_LOSS_ABSOLUTE, 2.0f, 2.0f, &e),
		   0.0, 0);
	CHECK_NEAR(e, 0.0, 0);
}

/* Keeps the epoch's train and test loss. */
static int on_epoch(const boar_epoch_stats *s, void *ctx)
{
	double *seen = ctx;
	seen[0] = s->train_loss;
	seen[1] = s->test_loss;
	return 0;
}

/* A regression problem whose trained model is all zeros after a step too
 * small to move it: every reported loss must then be mean(y^2) / 2. */
static void check_reported_squared_loss(void)
{
	enum { N = 64 };
	uint64_t row_ptr[N + 1];
	uint32_t idx[N];
	float val[N], label[N];
	double half_sq = 0;
	for (int r = 0; r < N; r++) {
		row_ptr[r] = (uint64_t)r;
		idx[r] = (uint32_t)(r % 8);
		val[r] = 1.0f;
		label[r] = (float)(r % 5) - 1.5f;
		half_sq += 0.5 * label[r] * label[r];
	}
	row_ptr[N] = N;
	half_sq /= N;
	boar_dataset *d = NULL;
	boar_model *m = NULL;
	boar_error err;
	CHECK_EQ_INT(boar_dataset_from_csr(N, 8, row_ptr, idx, val, label,
					   &d, &err), 0);
	if (!d)
		return;
	boar_options o;
	boar_options_default(&o);
	o.loss = BOAR_LOSS_SQUARED;
	o.optimizer = BOAR_OPT_SGD;
	o.eta = 1e-12;
	o.epochs = 1;
	o.threads = 1;
	o.test = d;
	double seen[2] = {NAN, NAN};
	o.progress = on_epoch;
	o.progress_ctx = seen;
	CHECK_EQ_INT(boar_train(d, &o, &m, &err), 0);
	CHECK_NEAR(seen[0], half_sq, 1e-6);
	CHECK_NEAR(seen[1], half_sq, 1e-6);
	boar_metrics mt;
	if (m) {
		CHECK_EQ_INT(boar_evaluate(m, d, &mt, 1, NULL), 0);
		CHECK_NEAR(mt.loss, half_sq, 1e-6);
		CHECK_NEAR(mt.rmse, sqrt(2 * half_sq), 1e-6);
	}
	boar_model_free(m);
	boar_dataset_free(d);
}

static void check_softmax_and_steps(void)
{
	float mf[3] = {1.0f, -2.0f, 0.5f}, pf[3];
	double md[3] = {1.0, -2.0, 0.5}, pd[3];
	float lf = boar_softmax_f(mf, 3, pf);
	double ld = boar_softmax_d(md, 3, pd);
	CHECK_NEAR(lf, ld, 1e-6);
	for (int c = 0; c < 3; c++)
		CHECK_NEAR(pf[c], pd[c], 1e-6);
	CHECK_NEAR(pd[0] + pd[1] + pd[2], 1.0, 1e-12);
	/* In place, as predict uses it. */
	boar_softmax_d(md, 3, md);
	CHECK_NEAR(md[2], pd[2], 0);

	float dacc;
	CHECK_NEAR(boar_opt_rate(BOAR_OPT_ADAGRAD, 0.5f, 4.0f, 0.0f, &dacc),
		   0.5 / (2 + BOAR_ADAGRAD_EPS), 1e-7);
	CHECK_NEAR(dacc, 4.0, 0);
	CHECK_NEAR(boar_opt_rate(BOAR_OPT_SGD, 0.5f, 4.0f, 9.0f, &dacc), 0.5,
		   0);
	CHECK_NEAR(dacc, 0.0, 0);
	CHECK_EQ_INT(boar_opt_accumulates(BOAR_OPT_ADAGRAD), 1);
	CHECK_EQ_INT(boar_opt_accumulates(BOAR_OPT_SGD), 0);
	CHECK_NEAR(boar_step_size(0.1, 0.5, 3), 0.025, 1e-15);

	/* L2's shrink never flips a sign; L1 clips to zero. */
	struct coord_params cp = {.eta = 1.0f, .l1 = 0.0f, .l2 = 10.0f,
				  .opt = BOAR_OPT_SGD};
	float t;
	float delta = boar_coord_step(&cp, 0, REG_L2, 0.0f, 2.0f, 0, 1.0f,
				      &dacc, &t);
	CHECK_NEAR(2.0f + delta, 0.0, 0);
	cp.l1 = 1.0f;
	cp.l2 = 0.0f;
	delta = boar_coord_step(&cp, 0, REG_L1, 0.5f, 1.2f, 0, 1.0f, &dacc, &t);
	CHECK_NEAR(boar_soft_threshold(1.2f + delta, t), 0.0, 0);
}

int main(void)
{
	check_derivatives();
	check_squared_definition();
	check_reported_squared_loss();
	check_softmax_and_steps();
	return TEST_RESULT();
}
