/* test_model_check.c - a model whose file checksum is valid but whose
 * contents lie is refused field by field (model_check.c), and the AUC of
 * NaN scores is NaN at once instead of an endless tie loop (metrics.c).
 */
#include <math.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "boar.h"
#include "model/model.h"
#include "model/model_check.h"
#include "testutil.h"

/* 4 rows, 2 features, both classes: the AUC is defined. */
static boar_dataset *tiny_binary(void)
{
	static const uint64_t ptr[] = {0, 1, 2, 3, 4};
	static const uint32_t idx[] = {0, 1, 0, 1};
	static const float val[] = {1, 1, 1, 1}, lab[] = {1, -1, 1, -1};
	boar_dataset *d = NULL;
	boar_error err;
	int rc = boar_dataset_from_csr(4, 2, ptr, idx, val, lab, &d, &err);
	CHECK(rc == 0, "from_csr: %s", err.message);
	return d;
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "FAIL: boar_evaluate hung on a NaN score\n";
	(void)!write(2, msg, sizeof msg - 1);
	_exit(1);
}

static void test_auc_of_nan_scores_ends(void)
{
	boar_dataset *d = tiny_binary();
	if (!d)
		return;
	struct boar_model *m =
		boar_model_alloc(BOAR_TASK_LINEAR, BOAR_LOSS_LOGISTIC, 2, 0, 0, 0);
	m->w[0] = NAN;
	m->w[1] = 1;
	boar_metrics r;
	signal(SIGALRM, on_alarm);
	alarm(10);
	CHECK_EQ_INT(boar_evaluate(m, d, &r, 1, NULL), 0);
	alarm(0);
	CHECK(isnan(r.auc), "AUC of NaN scores is %g, want NaN", r.auc);
	m->w[0] = 2; /* finite again: a real AUC (positives score higher) */
	CHECK_EQ_INT(boar_evaluate(m, d, &r, 1, NULL), 0);
	CHECK_NEAR(r.auc, 1.0, 1e-12);
	boar_model_free(m);
	boar_dataset_free(d);
}

/* check_shape on m must fail naming `field`. */
static void expect_field(const struct boar_model *m, const char *field)
{
	boar_error err;
	err.message[0] = 0;
	int rc = boar_model_check_shape(m, "x.model", &err);
	CHECK(rc == BOAR_ECORRUPT, "%s: rc %d", field, rc);
	CHECK(strstr(err.message, "x.model") && strstr(err.message, field),
	      "message '%s' names neither the file nor field %s", err.message,
	      field);
}

static void test_shapes(void)
{
	const struct boar_model lin = {.task = BOAR_TASK_LINEAR,
				       .loss = BOAR_LOSS_LOGISTIC, .dim = 8};
	const struct boar_model mf = {.task = BOAR_TASK_MF,
				      .loss = BOAR_LOSS_SQUARED, .dim = 8,
				      .n_items = 4, .rank = 2};
	boar_error err;
	CHECK_EQ_INT(boar_model_check_shape(&lin, "x.model", &err), 0);
	CHECK_EQ_INT(boar_model_check_shape(&mf, "x.model", &err), 0);
	struct boar_model b = lin;
	b.task = 7;
	expect_field(&b, "task");
	b = lin, b.loss = 4;
	expect_field(&b, "loss");
	b = lin, b.loss = BOAR_LOSS_SOFTMAX; /* softmax needs classes */
	expect_field(&b, "loss");
	b = lin, b.n_classes = 1;
	expect_field(&b, "n_classes");
	b = lin, b.n_classes = BOAR_MAX_CLASSES + 1;
	expect_field(&b, "n_classes");
	b = lin, b.n_classes = 3, b.loss = BOAR_LOSS_SQUARED;
	expect_field(&b, "loss");
	b = lin, b.rank = 3;
	expect_field(&b, "rank");
	b = lin, b.hash_bits = 4; /* dim 8 is not 2^4 */
	expect_field(&b, "dim");
	b = lin, b.hash_bits = -1;
	expect_field(&b, "hash_bits");
	b = lin, b.mu = INFINITY;
	expect_field(&b, "mu");
	b = mf, b.rank = 0;
	expect_field(&b, "rank");
	b = mf, b.loss = BOAR_LOSS_HINGE;
	expect_field(&b, "loss");
	b = mf, b.n_classes = 2;
	expect_field(&b, "n_classes");
	b = mf, b.has_bias = 2;
	expect_field(&b, "has_bias");
}

static void test_values(void)
{
	boar_error err;
	float classes[3] = {1, 2, 3};
	struct boar_model *m =
		boar_model_alloc_multiclass(BOAR_LOSS_SOFTMAX, 4, 3, classes);
	CHECK_EQ_INT(boar_model_check_values(m, "x.model", &err), 0);
	m->classes[2] = 2; /* a duplicate label */
	CHECK_EQ_INT(boar_model_check_values(m, "x.model", &err),
		     BOAR_ECORRUPT);
	CHECK(strstr(err.message, "classes[2]"), "%s", err.message);
	m->classes[2] = 3;
	m->w[7] = -INFINITY;
	CHECK_EQ_INT(boar_model_check_values(m, "x.model", &err),
		     BOAR_ECORRUPT);
	CHECK(strstr(err.message, "weights[7]"), "%s", err.message);
	boar_model_free(m);
	m = boar_model_alloc(BOAR_TASK_MF, BOAR_LOSS_SQUARED, 3, 2, 2, 1);
	m->bi[1] = NAN;
	CHECK_EQ_INT(boar_model_check_values(m, "x.model", &err),
		     BOAR_ECORRUPT);
	CHECK(strstr(err.message, "bi"), "%s", err.message);
	boar_model_free(m);
}

int main(void)
{
	test_auc_of_nan_scores_ends();
	test_shapes();
	test_values();
	return TEST_RESULT();
}
