/* test_features.c - issue 6 features through the public API: multiclass
 * (one-vs-rest and softmax), instance and class weights, warm start, early
 * stopping, and deterministic training at any thread count.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boar.h"
#include "testutil.h"

/* K well-separated classes: class c's rows draw most of their features
 * from the block [c * B, (c + 1) * B) and a few from anywhere. */
static boar_dataset *clusters(uint32_t K, uint64_t rows, uint64_t seed)
{
	const uint32_t B = 50, nnz = 10, dim = K * B + 100;
	uint64_t *rp = malloc((rows + 1) * sizeof *rp);
	uint32_t *idx = malloc(rows * nnz * sizeof *idx);
	float *val = malloc(rows * nnz * sizeof *val), *y = malloc(rows * 4);
	uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
	rp[0] = 0;
	for (uint64_t r = 0; r < rows; r++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		uint32_t c = (uint32_t)(s % K);
		y[r] = (float)(c + 1); /* labels 1..K */
		/* ids ascending: one "noise" id from the tail block, then
		 * in-class ids spaced so that they stay distinct */
		uint32_t base = c * B;
		for (uint32_t k = 0; k < nnz - 1; k++) {
			s ^= s << 13, s ^= s >> 7, s ^= s << 17;
			idx[r * nnz + k] = base + k * 5 + (uint32_t)(s % 5);
			val[r * nnz + k] = 1;
		}
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		idx[r * nnz + nnz - 1] = K * B + (uint32_t)(s % 100);
		val[r * nnz + nnz - 1] = 1;
		rp[r + 1] = rp[r] + nnz;
	}
	boar_dataset *d = NULL;
	boar_error err;
	int rc = boar_dataset_from_csr(rows, dim, rp, idx, val, y, &d, &err);
	CHECK(rc == 0, "from_csr: %s", err.message);
	free(rp);
	free(idx);
	free(val);
	free(y);
	return d;
}

static boar_model *fit(const boar_dataset *tr, boar_options *o, int expect)
{
	boar_model *m = NULL;
	boar_error err;
	int rc = boar_train(tr, o, &m, &err);
	CHECK(rc == expect, "train: rc %d, expected %d (%s)", rc, expect,
	       err.message);
	return m;
}

static void test_multiclass(void)
{
	boar_dataset *tr = clusters(5, 20000, 1), *te = clusters(5, 5000, 2);
	int losses[] = {BOAR_LOSS_LOGISTIC, BOAR_LOSS_HINGE, BOAR_LOSS_SOFTMAX};
	for (int i = 0; i < 3; i++) {
		boar_options o;
		boar_metrics mt;
		boar_options_default(&o);
		o.loss = losses[i];
		o.epochs = 3;
		boar_model *m = fit(tr, &o, 0);
		if (!m)
			continue;
		const float *labels;
		CHECK(boar_model_classes(m, &labels) == 5 && labels[0] == 1 &&
			       labels[4] == 5,
		       "loss %d: classes", losses[i]);
		boar_evaluate(m, te, &mt, 0, NULL);
		CHECK(mt.accuracy > 0.95, "loss %d: accuracy %.4f", losses[i],
		       mt.accuracy);
		/* one row's scores: a distribution for softmax */
		const uint32_t *idx;
		const float *val;
		float y;
		int64_t nnz = boar_dataset_row(te, 0, &idx, &val, &y, NULL);
		double sc[5], sum = 0;
		CHECK(boar_model_predict_scores(m, (size_t)nnz, idx, val, sc, NULL) == 5,
		       "scores");
		for (int c = 0; c < 5; c++)
			sum += sc[c];
		if (losses[i] == BOAR_LOSS_SOFTMAX)
			CHECK(fabs(sum - 1) < 1e-6, "softmax sums to %.6f", sum);
		CHECK(test_model_predict_row(m, (size_t)nnz, idx, val) == y,
		       "predict_row label");
		/* save/load keeps the classes */
		boar_model *l = NULL;
		boar_error err;
		CHECK(boar_model_save(m, "/tmp/boar-mc.model", &err) == 0 &&
			       boar_model_load("/tmp/boar-mc.model", &l, &err) == 0,
		       "mc save/load: %s", err.message);
		if (l) {
			boar_metrics ml;
			boar_evaluate(l, te, &ml, 0, NULL);
			CHECK(ml.accuracy == mt.accuracy, "loaded mc model differs");
			boar_model_free(l);
		}
		boar_model_free(m);
	}
	remove("/tmp/boar-mc.model");
	boar_dataset_free(tr);
	boar_dataset_free(te);
}

static void test_deterministic(void)
{
	boar_dataset *tr = clusters(3, 20000, 3);
	boar_model *m[3];
	for (int t = 0; t < 3; t++) {
		boar_options o;
		boar_options_default(&o);
		o.deterministic = 1;
		o.threads = t + 1;
		o.l2 = 1e-4;
		m[t] = fit(tr, &o, 0);
	}
	for (int t = 1; t < 3; t++) {
		uint64_t na, nb;
		const float *a = test_model_weights(m[0], &na);
		const float *b = m[t] ? test_model_weights(m[t], &nb) : NULL;
		CHECK(b && na == nb && !memcmp(a, b, na * sizeof *a),
		       "deterministic: %d threads differ from 1", t + 1);
		boar_model_free(m[t]);
	}
	boar_model_free(m[0]);
	boar_dataset_free(tr);
}

static void test_weights(void)
{
	boar_dataset *tr = clusters(2, 4000, 5);
	uint64_t n = boar_dataset_rows(tr);
	float *w = malloc(n * sizeof *w);
	boar_options o;
	boar_error err;
	boar_options_default(&o);
	o.threads = 1;
	boar_model *a = fit(tr, &o, 0);
	for (uint64_t r = 0; r < n; r++)
		w[r] = r % 2 ? 0.0f : 1.0f;
	CHECK(boar_dataset_set_weights(tr, w, n, &err) == 0, "set_weights");
	boar_model *b = fit(tr, &o, 0);
	uint64_t na, nb;
	const float *wa = test_model_weights(a, &na), *wb = test_model_weights(b, &nb);
	CHECK(memcmp(wa, wb, na * 4) != 0, "zero weights changed nothing");
	w[3] = -1;
	CHECK(boar_dataset_set_weights(tr, w, n, &err) == BOAR_EINVAL,
	       "negative weight accepted");
	CHECK(boar_dataset_set_weights(tr, w, n - 1, &err) == BOAR_EINVAL,
	       "short weights accepted");
	boar_model_free(a);
	boar_model_free(b);
	free(w);
	boar_dataset_free(tr);

	/* class weights: up-weighting class 2 raises its predicted share */
	tr = clusters(2, 4000, 6);
	float lab[] = {2}, val[] = {50};
	boar_options_default(&o);
	o.epochs = 2;
	boar_model *plain = fit(tr, &o, 0);
	o.class_weight_labels = lab;
	o.class_weight_values = val;
	o.n_class_weights = 1;
	boar_model *heavy = fit(tr, &o, 0);
	if (plain && heavy) {
		uint64_t k;
		const float *p = test_model_weights(plain, &k);
		const float *h = test_model_weights(heavy, &k);
		/* binary 1/2 labels are classes, K=2: the bias of class 2 */
		CHECK(h[k - 1] - h[k - 2] > p[k - 1] - p[k - 2],
		       "class weight did not move the bias towards class 2");
	}
	boar_model_free(plain);
	boar_model_free(heavy);
	boar_dataset_free(tr);
}

static void test_warm_start(void)
{
	boar_dataset *tr = clusters(4, 10000, 7), *te = clusters(4, 2000, 8);
	boar_options o;
	boar_metrics a, b;
	boar_options_default(&o);
	o.epochs = 1;
	o.optimizer = BOAR_OPT_SGD;
	o.eta = 0.01;
	boar_model *first = fit(tr, &o, 0);
	boar_evaluate(first, te, &a, 0, NULL);
	o.init_model = first;
	o.epochs = 3;
	boar_model *more = fit(tr, &o, 0);
	boar_evaluate(more, te, &b, 0, NULL);
	CHECK(b.loss < a.loss, "warm start: loss %.4f not below %.4f", b.loss,
	       a.loss);
	boar_model_free(more);

	/* a model of another task is refused */
	boar_gen_options g;
	boar_dataset *mf = NULL;
	boar_error err;
	boar_gen_options_default(&g);
	g.task = BOAR_TASK_MF;
	g.rows = 1000;
	g.features = 50;
	g.items = 50;
	boar_generate(&g, &mf, &err);
	boar_options_default(&o);
	o.init_model = first;
	boar_model *bad = NULL;
	CHECK(boar_train(mf, &o, &bad, &err) == BOAR_EINVAL && !bad,
	       "linear init model accepted for MF data");
	boar_dataset_free(mf);
	boar_model_free(first);

	boar_dataset_free(tr);
	boar_dataset_free(te);
}

static int count_epochs(const boar_epoch_stats *s, void *ctx)
{
	*(int *)ctx = s->epoch;
	return 0;
}

static void test_early_stop_epochs(void)
{
	/* few rows, many features, noisy labels: the holdout loss turns up
	 * once the model starts memorizing the noise */
	boar_gen_options g;
	boar_dataset *tr = NULL;
	boar_error err;
	boar_gen_options_default(&g);
	g.rows = 3000;
	g.features = 20000;
	g.nnz_per_row = 20;
	g.noise = 0.2;
	CHECK(boar_generate(&g, &tr, &err) == 0, "gen: %s", err.message);
	boar_options o;
	int epochs = 0;
	boar_options_default(&o);
	o.epochs = 200;
	o.early_stop = 3;
	o.holdout = 0.2;
	o.eta_decay = 1;
	o.progress = count_epochs;
	o.progress_ctx = &epochs;
	boar_model *m = fit(tr, &o, 0);
	CHECK(epochs < 200, "early stopping never stopped (%d epochs)", epochs);
	boar_model_free(m);
	boar_dataset_free(tr);
}

int main(void)
{
	test_multiclass();
	test_deterministic();
	test_weights();
	test_warm_start();
	test_early_stop_epochs();
	return TEST_RESULT();
}
