/* test_search.c - model selection through the public API:
 * - boar_dataset_split: K folds hold every row out exactly once, the same
 *   call gives the same split, a split that leaves a side empty is refused;
 * - boar_search_size and bad search options (negative or zero eta, folds 1,
 *   an unknown struct size) are refused with BOAR_EINVAL;
 * - the choice follows the data: on pure label noise the strongest L2 has
 *   the lowest held-out loss, on clean plentiful rows none does; the best
 *   index is the lowest score, results come eta slowest and l2 fastest;
 * - configurations trained side by side (parallel 2, one thread each) give
 *   the same scores as one at a time (one-thread training is exact), so
 *   nothing leaks between concurrent trainings;
 * - the model returned is the chosen configuration trained on all the rows
 *   (the weights of boar_train with it), or with a test set the model
 *   judged; on_result sees every configuration and can stop the search.
 */
#include <string.h>

#include "boar.h"
#include "testutil.h"

static boar_dataset *gen(uint64_t rows, uint32_t features, double noise)
{
	boar_gen_options g;
	boar_gen_options_default(&g);
	g.rows = rows;
	g.features = features;
	g.nnz_per_row = 20;
	g.noise = noise;
	g.seed = 3;
	boar_dataset *d = NULL;
	boar_error err;
	if (boar_generate(&g, &d, &err)) {
		fprintf(stderr, "generate: %s\n", err.message);
		exit(1);
	}
	return d;
}

static void test_split(void)
{
	boar_dataset *d = gen(1000, 100, 0.1), *rest, *held, *again;
	boar_error err;
	uint64_t held_total = 0;
	for (int f = 0; f < 4; f++) {
		int rc = boar_dataset_split(d, 7, f / 4.0, (f + 1) / 4.0, &rest,
					    &held, &err);
		CHECK_EQ_INT(rc, 0);
		if (rc)
			continue;
		CHECK_EQ_INT(boar_dataset_rows(rest) + boar_dataset_rows(held),
			     1000);
		held_total += boar_dataset_rows(held);
		CHECK_EQ_INT(boar_dataset_split(d, 7, f / 4.0, (f + 1) / 4.0,
						NULL, &again, &err), 0);
		CHECK_EQ_INT(boar_dataset_nnz(again), boar_dataset_nnz(held));
		boar_dataset_free(again);
		boar_dataset_free(rest);
		boar_dataset_free(held);
	}
	CHECK_EQ_INT(held_total, 1000);
	CHECK_EQ_INT(boar_dataset_split(d, 7, 0, 1, &rest, &held, &err),
		     BOAR_EINVAL);
	CHECK_EQ_INT(boar_dataset_split(d, 7, 0.5, 0.5, &rest, &held, &err),
		     BOAR_EINVAL);
	boar_dataset_free(d);
}

static void test_bad_options(void)
{
	boar_search_options s;
	boar_options o;
	boar_search_result res[4];
	boar_error err;
	int best;
	double bad_eta[] = { 0.1, 0 }, l2[] = { 0, 1e-3, 1 };
	boar_dataset *d = gen(200, 100, 0.1);
	boar_options_default(&o);
	boar_search_options_default(&s);
	CHECK_EQ_INT(boar_search_size(&s), 1);
	s.l2 = l2;
	s.n_l2 = 3;
	CHECK_EQ_INT(boar_search_size(&s), 3);
	s.eta = bad_eta;
	s.n_eta = 2;
	CHECK_EQ_INT(boar_search_size(&s), BOAR_EINVAL);
	CHECK_EQ_INT(boar_search(d, &o, &s, res, sizeof *res, &best, NULL, &err),
		     BOAR_EINVAL);
	s.n_eta = 1;
	s.folds = 1;
	CHECK_EQ_INT(boar_search(d, &o, &s, res, sizeof *res, &best, NULL, &err),
		     BOAR_EINVAL);
	s.folds = 0;
	s.size = 3;
	CHECK_EQ_INT(boar_search(d, &o, &s, res, sizeof *res, &best, NULL, &err),
		     BOAR_EINVAL);
	boar_dataset_free(d);
}

struct seen {
	int calls, stop_at;
};

static int on_result(const boar_search_result *r, int index, void *ctx)
{
	struct seen *s = ctx;
	s->calls++;
	return s->stop_at && s->calls >= s->stop_at;
}

/* Searches l2 in {0, 1e-3, 1} (two etas) on d; returns best's l2. */
static double search_l2(boar_dataset *d, int parallel, boar_search_result *res,
			boar_model **model)
{
	double eta[] = { 0.1, 0.3 }, l2[] = { 0, 1e-3, 1 };
	boar_search_options s;
	boar_options o;
	boar_error err;
	struct seen seen = { 0 };
	int best = -1;
	boar_options_default(&o);
	o.threads = parallel;
	o.epochs = 5;
	boar_search_options_default(&s);
	s.eta = eta;
	s.n_eta = 2;
	s.l2 = l2;
	s.n_l2 = 3;
	s.folds = 3;
	s.parallel = parallel;
	s.on_result = on_result;
	s.ctx = &seen;
	int rc = boar_search(d, &o, &s, res, sizeof *res, &best, model, &err);
	CHECK(rc == 0, "%s", err.message);
	CHECK_EQ_INT(seen.calls, 6);
	for (int i = 0; i < 6; i++) {
		CHECK_NEAR(res[i].eta, eta[i / 3], 0);
		CHECK_NEAR(res[i].l2, l2[i % 3], 0);
		CHECK(res[best].score <= res[i].score, "best %d, %d lower", best, i);
	}
	return best >= 0 ? res[best].l2 : -1;
}

static void test_choice(void)
{
	boar_search_result r1[6], r2[6];
	boar_dataset *noise = gen(300, 2000, 0.5), *clean = gen(3000, 200, 0.02);
	boar_model *m = NULL;
	CHECK_NEAR(search_l2(noise, 1, r1, NULL), 1, 0);
	CHECK_NEAR(search_l2(clean, 1, r1, &m), 0, 0);
	CHECK_NEAR(search_l2(clean, 2, r2, NULL), 0, 0);
	for (int i = 0; i < 6; i++)
		CHECK_NEAR(r2[i].score, r1[i].score, 0);
	/* the model: the best configuration (eta 0.3 or 0.1, l2 0) on all
	 * the rows at one thread */
	int best = r1[0].score <= r1[3].score ? 0 : 3;
	boar_options o;
	boar_options_default(&o);
	o.threads = 1;
	o.epochs = 5;
	o.eta = r1[best].eta;
	o.l2 = 0;
	boar_model *direct = NULL;
	CHECK_EQ_INT(boar_train(clean, &o, &direct, NULL), 0);
	uint64_t n1 = 0, n2 = 0;
	const float *w1 = NULL, *w2 = NULL;
	if (m)
		boar_model_weights(m, &w1, &n1, NULL);
	if (direct)
		boar_model_weights(direct, &w2, &n2, NULL);
	CHECK(n1 == n2 && n1 && !memcmp(w1, w2, n1 * sizeof *w1),
	      "the model is not the best configuration on all rows");
	boar_model_free(m);
	boar_model_free(direct);
	boar_dataset_free(noise);
	boar_dataset_free(clean);
}

static void test_test_set_and_stop(void)
{
	boar_dataset *tr = gen(2000, 200, 0.05), *te = gen(500, 200, 0.05);
	double l2[] = { 0, 1e-2, 1 };
	boar_search_options s;
	boar_search_result res[3];
	boar_options o;
	boar_model *m = NULL;
	boar_metrics mt;
	struct seen seen = { 0 };
	int best = -1;
	boar_options_default(&o);
	o.epochs = 3;
	boar_search_options_default(&s);
	s.l2 = l2;
	s.n_l2 = 3;
	s.test = te;
	CHECK_EQ_INT(boar_search(tr, &o, &s, res, sizeof *res, &best, &m, NULL), 0);
	CHECK(m && best >= 0, "no model");
	if (m && best >= 0) {
		CHECK_EQ_INT(boar_evaluate(m, te, &mt, 1, NULL), 0);
		CHECK_NEAR(mt.loss, res[best].loss, 1e-9);
	}
	boar_model_free(m);
	seen.stop_at = 1;
	s.on_result = on_result;
	s.ctx = &seen;
	s.parallel = 1;
	m = NULL;
	CHECK_EQ_INT(boar_search(tr, &o, &s, res, sizeof *res, &best, &m, NULL),
		     BOAR_ECANCELLED);
	CHECK(m == NULL, "a stopped search returned a model");
	CHECK_EQ_INT(seen.calls, 1);
	boar_dataset_free(tr);
	boar_dataset_free(te);
}

int main(void)
{
	test_split();
	test_bad_options();
	test_choice();
	test_test_set_and_stop();
	return TEST_RESULT();
}
