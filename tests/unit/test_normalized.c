/* test_normalized.c - optimizer NORMALIZED (math/step.h, engine_norm.c):
 * its math by hand, one step of training by hand, and what it is for: a
 * column multiplied by 8 trains to a weight divided by 8 exactly, the same
 * predictions, where AdaGrad's predictions change. The default for linear
 * models on the CPU, AdaGrad on the GPU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boar.h"
#include "math/step.h"
#include "testutil.h"

static void check_math(void)
{
	/* the power of 2 at or above the value; 1 for nothing */
	CHECK_NEAR(boar_norm_scale(3.0f), 4.0, 0);
	CHECK_NEAR(boar_norm_scale(4.0f), 4.0, 0);
	CHECK_NEAR(boar_norm_scale(4.5f), 8.0, 0);
	CHECK_NEAR(boar_norm_scale(0.3f), 0.5, 0);
	CHECK_NEAR(boar_norm_scale(1.0f), 1.0, 0);
	CHECK_NEAR(boar_norm_scale(0.0f), 1.0, 0);
	CHECK_NEAR(boar_norm_scale(INFINITY), 1.0, 0);
	CHECK_NEAR(boar_norm_scale(NAN), 1.0, 0);
	/* 1 / s stays a normal float for the tiniest values, s finite for
	 * the largest */
	CHECK(isnormal(1.0f / boar_norm_scale(1e-42f)), "tiny");
	CHECK(isfinite(boar_norm_scale(3e38f)), "huge");
	/* sqrt(t / N): 4 rows whose normalized norms sum to 16 */
	CHECK_NEAR(boar_norm_step_factor(4, 16), 0.5, 1e-15);
	CHECK_NEAR(boar_norm_step_factor(0, 0), 1.0, 0);
	/* the coordinate's rate is AdaGrad's: sum 0 + 4, eta 0.5 / 2 */
	float dacc;
	CHECK_NEAR(boar_opt_rate(BOAR_OPT_NORMALIZED, 0.5f, 4.0f, 0.0f, &dacc),
		   0.5 / (2 + BOAR_ADAGRAD_EPS), 1e-7);
	CHECK_NEAR(dacc, 4.0, 0);
	CHECK_EQ_INT(boar_opt_accumulates(BOAR_OPT_NORMALIZED), 1);
	CHECK_EQ_INT(boar_optimizer_from_name("normalized"),
		     BOAR_OPT_NORMALIZED);
}

static boar_dataset *csr(uint64_t n, uint32_t dim, const uint64_t *rp,
			 const uint32_t *idx, const float *val, const float *y)
{
	boar_dataset *d = NULL;
	boar_error err;
	int rc = boar_dataset_from_csr(n, dim, rp, idx, val, y, &d, &err);
	CHECK(rc == 0, "from_csr: %s", err.message);
	return d;
}

static boar_model *train(const boar_dataset *d, int optimizer, int epochs,
			 int threads)
{
	boar_options o;
	boar_options_default(&o);
	o.optimizer = optimizer;
	o.epochs = epochs;
	o.threads = threads;
	boar_model *m = NULL;
	boar_error err;
	int rc = boar_train(d, &o, &m, &err);
	CHECK(rc == 0, "train: %s", err.message);
	return m;
}

/* One row, x_0 = 3, label +1, one epoch at eta 0.5 (the default): s_0 =
 * 4 (3 rounded up), z = 3/4, N = 9/16 over t = 1 row, so the step is
 * 0.5 * sqrt(16/9) = 2/3. Logistic at margin 0: d = -1/2, the normalized
 * gradient g = -3/8, G = 9/64, u = 2/3 * (3/8) / (3/8) = 2/3, w = u / 4 =
 * 1/6. The bias (value 1, scale 1): g = -1/2, b = 2/3. */
static void check_one_step(void)
{
	uint64_t rp[] = {0, 1};
	uint32_t idx[] = {0};
	float val[] = {3.0f}, y[] = {1.0f};
	boar_dataset *d = csr(1, 1, rp, idx, val, y);
	boar_model *m = d ? train(d, BOAR_OPT_AUTO, 1, 1) : NULL;
	if (m) {
		uint64_t n = 0;
		const float *w = NULL;
		CHECK_EQ_INT(boar_model_weights(m, &w, &n, NULL), 0);
		CHECK_EQ_INT(n, 2);
		CHECK_NEAR(w[0], 1.0 / 6, 1e-5);
		CHECK_NEAR(w[1], 2.0 / 3, 1e-5);
	}
	boar_model_free(m);
	boar_dataset_free(d);
}

/* A noisy linear problem of 4 count features; copy b has feature 2 times
 * 8. NORMALIZED: feature 2's weight is a's / 8 bit for bit at one thread,
 * the others equal (at two threads, within the races' noise). AdaGrad:
 * the scaled copy trains another model. 70000 rows, so that the engine
 * packs its rows (more than 65536) and, at two threads, replicates the
 * four features as hot ones: every path that scales values. */
enum { N = 70000, D = 4 };
static uint64_t rp[N + 1];
static uint32_t idx[N * D];
static float va[N * D], vb[N * D], y[N];

static void check_invariance(int threads)
{
	uint64_t s = 12345;
	for (int r = 0; r < N; r++) {
		rp[r] = (uint64_t)r * D;
		float m = 0;
		for (int j = 0; j < D; j++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			float x = (float)(1 + (s >> 60)); /* counts 1..16 */
			idx[r * D + j] = (uint32_t)j;
			va[r * D + j] = x;
			vb[r * D + j] = j == 2 ? x * 8 : x;
			m += (j & 1 ? -0.3f : 0.2f) * x;
		}
		y[r] = m + (float)((s >> 40) % 7) - 3 > 0 ? 1.0f : -1.0f;
	}
	rp[N] = (uint64_t)N * D;
	boar_dataset *a = csr(N, D, rp, idx, va, y), *b = csr(N, D, rp, idx, vb, y);
	if (!a || !b)
		goto out;
	int opts[2] = {BOAR_OPT_NORMALIZED, BOAR_OPT_ADAGRAD};
	for (int k = 0; k < 2; k++) {
		boar_model *ma = train(a, opts[k], 5, threads);
		boar_model *mb = train(b, opts[k], 5, threads);
		if (ma && mb) {
			uint64_t n = 0;
			const float *wa = NULL, *wb = NULL;
			CHECK_EQ_INT(boar_model_weights(ma, &wa, &n, NULL), 0);
			CHECK_EQ_INT(boar_model_weights(mb, &wb, &n, NULL), 0);
			double diff = 0;
			for (uint64_t j = 0; j < n; j++)
				diff += fabs(wa[j] - (j == 2 ? 8 * wb[j] : wb[j]));
			double size = 0;
			for (uint64_t j = 0; j < n; j++)
				size += fabs(wa[j]);
			if (opts[k] == BOAR_OPT_NORMALIZED && threads == 1)
				CHECK(diff == 0, "normalized: column x8 changed "
				      "the model by %g", diff);
			else if (opts[k] == BOAR_OPT_NORMALIZED) {
				/* racing threads: against the spread of two
				 * runs of the same data (7.5% of the weights'
				 * size once on a loaded 2-core machine) */
				boar_model *mc = train(a, opts[k], 5, threads);
				const float *wc = NULL;
				double noise = 0;
				if (mc && !boar_model_weights(mc, &wc, &n, NULL))
					for (uint64_t j = 0; j < n; j++)
						noise += fabs(wa[j] - wc[j]);
				boar_model_free(mc);
				CHECK(diff < 3 * noise + 0.1 * size,
				      "normalized, %d threads: column x8 changed "
				      "the model by %g of %g (two runs differ by "
				      "%g)", threads, diff, size, noise);
			}
			else if (opts[k] == BOAR_OPT_ADAGRAD)
				CHECK(diff > 1e-3, "adagrad: column x8 made no "
				      "difference (%g): the test shows nothing",
				      diff);
		}
		boar_model_free(ma);
		boar_model_free(mb);
	}
out:
	boar_dataset_free(a);
	boar_dataset_free(b);
}

/* auto: normalized for linear models on the CPU, adagrad on the GPU (which
 * refuses normalized by its capabilities), sgd for MF; normalized is
 * refused for MF. */
static void check_defaults(void)
{
	boar_options o;
	boar_options_default(&o);
	boar_options_resolve_task(&o, BOAR_TASK_LINEAR);
	CHECK_EQ_INT(o.optimizer, BOAR_OPT_NORMALIZED);
	CHECK_NEAR(o.eta, 0.5, 0);
	boar_options_default(&o);
	o.device = BOAR_DEVICE_GPU;
	boar_options_resolve_task(&o, BOAR_TASK_LINEAR);
	CHECK_EQ_INT(o.optimizer, BOAR_OPT_ADAGRAD);
	boar_options_default(&o);
	boar_options_resolve_task(&o, BOAR_TASK_MF);
	CHECK_EQ_INT(o.optimizer, BOAR_OPT_SGD);
	boar_options_default(&o);
	o.task = BOAR_TASK_MF;
	o.optimizer = BOAR_OPT_NORMALIZED;
	boar_error err = {0};
	CHECK_EQ_INT(boar_options_check(&o, NULL, &err), BOAR_EINVAL);
	CHECK(strstr(err.message, "normalized") != NULL,
	      "MF took normalized: %s", err.message);
}

int main(void)
{
	check_math();
	check_one_step();
	check_invariance(1);
	check_invariance(2);
	check_defaults();
	return TEST_RESULT();
}
