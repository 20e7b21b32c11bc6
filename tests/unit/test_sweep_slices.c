/* test_sweep_slices.c - how the CPU engine spreads a sweep over its
 * threads and keeps its memory (src/engine/sweep_common.c, engine_pack.c,
 * engine.c, src/base/huge_pages.c).
 *
 * A sweep's range is cut into contiguous slices that the threads take in
 * turn: every position must be swept exactly once, by slices of nearly
 * equal length, one slice on one thread (the one-thread run stays what it
 * was), at most eight per thread and none under 1024 rows unless there
 * are fewer than one per thread. The 2 MiB page advice must leave any
 * range usable (it is advice only). An AdaGrad engine that keeps its
 * weights beside their sums hands them to the model at a sync, not after
 * every sweep: the model must then hold exactly the engine's weights,
 * and a run stopped by its progress callback must hand back the model of
 * its last epoch (the same, at one thread, as a run of that many epochs).
 * A cluster worker's engine (interleaved, rows not packed) moves weights
 * by key: what it loads is what a sweep reads and what a sync hands back,
 * and the deltas it stores are the sweep's steps, exactly as with the sums
 * apart.
 */
#include <stdlib.h>
#include <string.h>

#include "base/huge_pages.h"
#include "boar.h"
#include "engine/engine.h"
#include "engine/engine_ops.h"
#include "engine/sweep_common.h"
#include "model/model.h"
#include "testutil.h"

#define MAX_SLICES 4096

struct visit {
	uint32_t *seen;          /* per position: times swept */
	uint64_t lo[MAX_SLICES]; /* the slices, in any order */
	uint64_t hi[MAX_SLICES];
	int n;                   /* slices taken */
};

static double mark(const void *args, const uint32_t *order, uint64_t lo,
		   uint64_t hi)
{
	struct visit *v = (struct visit *)args;
	for (uint64_t i = lo; i < hi; i++)
		__atomic_fetch_add(&v->seen[i], 1, __ATOMIC_RELAXED);
	int at = __atomic_fetch_add(&v->n, 1, __ATOMIC_RELAXED);
	if (at < MAX_SLICES) {
		v->lo[at] = lo;
		v->hi[at] = hi;
	}
	return (double)(hi - lo);
}

/* Sweeps [begin, begin + n) on `threads` threads and checks the cover;
 * returns the number of slices. */
static int sweep_once(int threads, uint64_t begin, uint64_t n)
{
	struct visit *v = calloc(1, sizeof *v);
	uint32_t *seen = calloc(begin + n + 1, sizeof *seen);
	if (!v || !seen) {
		free(v), free(seen);
		CHECK(0, "out of memory");
		return 0;
	}
	v->seen = seen;
	double total = boar_run_slices(threads, mark, v, NULL, begin, begin + n);
	CHECK(total == (double)n, "%d threads, %llu rows: loss sum %g", threads,
	      (unsigned long long)n, total);
	uint64_t bad = 0;
	for (uint64_t i = 0; i < begin + n + 1; i++)
		bad += seen[i] != (i >= begin && i < begin + n);
	CHECK(bad == 0, "%d threads, %llu rows: %llu positions swept not once",
	      threads, (unsigned long long)n, (unsigned long long)bad);
	uint64_t shortest = UINT64_MAX, longest = 0;
	for (int s = 0; s < v->n && s < MAX_SLICES; s++) {
		uint64_t len = v->hi[s] - v->lo[s];
		shortest = len < shortest ? len : shortest;
		longest = len > longest ? len : longest;
	}
	CHECK(longest - shortest <= 1, "%d threads: slices of %llu to %llu rows",
	      threads, (unsigned long long)shortest,
	      (unsigned long long)longest);
	int n_slices = v->n;
	free(seen);
	free(v);
	return n_slices;
}

static void check_slices(void)
{
	/* one thread: the whole range in one call */
	CHECK_EQ_INT(sweep_once(1, 5, 100000), 1);
	/* too few rows for the threads: one thread, one call */
	CHECK_EQ_INT(sweep_once(4, 0, 200), 1);
	/* at least one slice per thread, none under 1024 rows when there is
	 * more than one per thread */
	CHECK_EQ_INT(sweep_once(4, 0, 3000), 4);
	CHECK_EQ_INT(sweep_once(4, 7, 10 * 1024 + 5), 10);
	CHECK_EQ_INT(sweep_once(2, 0, 5 * 1024), 5);
	/* at most eight per thread */
	CHECK_EQ_INT(sweep_once(4, 3, 1000000), 32);
	CHECK_EQ_INT(sweep_once(3, 0, 1000000), 24);
}

static void check_advice(void)
{
	boar_advise_huge(NULL, 0);
	char small[100];
	boar_advise_huge(small, sizeof small); /* no whole huge page */
	uint64_t bytes = (6u << 20) + 123;
	unsigned char *p = calloc(1, bytes);
	if (!p)
		TEST_SKIP("no memory for 6 MiB");
	boar_advise_huge(p + 1, bytes - 1);
	uint64_t nonzero = 0;
	for (uint64_t i = 0; i < bytes; i++)
		nonzero += p[i] != 0;
	CHECK(nonzero == 0, "advised memory changed: %llu bytes",
	      (unsigned long long)nonzero);
	for (uint64_t i = 0; i < bytes; i += 4093)
		p[i] = (unsigned char)(i * 7);
	uint64_t wrong = 0;
	for (uint64_t i = 0; i < bytes; i += 4093)
		wrong += p[i] != (unsigned char)(i * 7);
	CHECK_EQ_INT(wrong, 0);
	free(p);
}

/* AdaGrad with interleaved weights: the model lags the engine between
 * syncs and equals it after one. */
static void check_export(int optimizer)
{
	boar_gen_options g;
	boar_gen_options_default(&g);
	g.task = BOAR_TASK_LINEAR;
	g.rows = 4000;
	g.nnz_per_row = 10;
	g.features = 500;
	g.seed = 3;
	boar_dataset *d = NULL;
	boar_error err;
	if (boar_generate(&g, &d, &err)) {
		CHECK(0, "generate: %s", err.message);
		return;
	}
	struct boar_model *m = boar_model_alloc(BOAR_TASK_LINEAR,
						BOAR_LOSS_LOGISTIC, g.features,
						0, 0, 0);
	boar_options o;
	boar_options_default(&o);
	o.threads = 2;
	o.optimizer = optimizer;
	struct boar_engine *e = NULL;
	int rc = m ? boar_engine_create_subset(d, &o, m, NULL, g.rows,
					       BOAR_LAYOUT_ALL, &e, &err)
		   : BOAR_ENOMEM;
	CHECK(rc == 0, "engine: %s", rc == BOAR_ENOMEM ? "no memory" : err.message);
	if (!rc && e->wg) {
		double loss = 0;
		CHECK(boar_engine_sweep(e, 1, 0, g.rows, 0.1, &loss) == 0,
		      "sweep failed");
		uint64_t moved = 0;
		for (uint64_t j = 0; j <= g.features; j++)
			moved += m->w[j] != 0.0f;
		CHECK(moved == 0, "the model moved before a sync (%llu weights)",
		      (unsigned long long)moved);
		CHECK(boar_engine_cpu_ops.sync(e, m, &err) == 0, "sync failed");
		uint64_t differ = 0, nonzero = 0;
		for (uint64_t j = 0; j <= g.features; j++) {
			float want = e->norm_scale ? e->wg[2 * j] / e->norm_scale[j]
						   : e->wg[2 * j];
			differ += m->w[j] != want;
			nonzero += m->w[j] != 0.0f;
		}
		CHECK(differ == 0 && nonzero > 0,
		      "after a sync: %llu weights differ, %llu nonzero",
		      (unsigned long long)differ, (unsigned long long)nonzero);
	} else if (!rc) {
		CHECK(0, "no interleaved weights for optimizer %d", optimizer);
	}
	boar_engine_free(e);
	boar_model_free(m);
	boar_dataset_free(d);
}

/* Engine e's weights of keys[0..n) loaded from vals, one sweep, then the
 * deltas stored; the model synced. */
static void sweep_by_key(struct boar_engine *e, const uint64_t *keys,
			 const float *vals, float *deltas, uint64_t n,
			 uint64_t rows)
{
	boar_error err;
	double loss = 0;
	CHECK(boar_engine_cpu_ops.load_keys(e, keys, vals, n, &err) == 0,
	      "load_keys failed");
	CHECK(boar_engine_sweep(e, 1, 0, rows, 0.1, &loss) == 0,
	      "sweep failed");
	CHECK(boar_engine_cpu_ops.store_deltas(e, keys, vals, deltas, n,
					       &err) == 0,
	      "store_deltas failed");
	CHECK(boar_engine_cpu_ops.sync(e, e->m, &err) == 0, "sync failed");
}

/* Weights by key on the interleaved layout against the sums apart, one
 * thread: the same deltas and the same synced model, bit for bit. */
static void check_by_key(void)
{
	boar_gen_options g;
	boar_gen_options_default(&g);
	g.task = BOAR_TASK_LINEAR;
	g.rows = 3000;
	g.nnz_per_row = 10;
	g.features = 400;
	g.seed = 9;
	boar_dataset *d = NULL;
	boar_error err;
	if (boar_generate(&g, &d, &err)) {
		CHECK(0, "generate: %s", err.message);
		return;
	}
	uint64_t n = g.features + 1; /* every weight, the bias too */
	uint64_t *keys = malloc(n * sizeof *keys);
	float *vals = malloc(n * sizeof *vals);
	float *delta[2] = { malloc(n * sizeof(float)),
			    malloc(n * sizeof(float)) };
	struct boar_model *m[2] = { NULL, NULL };
	struct boar_engine *e[2] = { NULL, NULL };
	boar_options o;
	boar_options_default(&o);
	o.threads = 1;
	o.optimizer = BOAR_OPT_ADAGRAD;
	for (uint64_t j = 0; keys && vals && j < n; j++) {
		keys[j] = j;
		vals[j] = (float)((int)(j % 7) - 3) / 16.0f; /* not the start's 0 */
	}
	for (int k = 0; k < 2 && keys && vals && delta[0] && delta[1]; k++) {
		m[k] = boar_model_alloc(BOAR_TASK_LINEAR, BOAR_LOSS_LOGISTIC,
					g.features, 0, 0, 0);
		int rc = m[k] ? boar_engine_create_subset(
					d, &o, m[k], NULL, g.rows,
					k ? BOAR_LAYOUT_INTERLEAVE : 0, &e[k], &err)
			      : BOAR_ENOMEM;
		CHECK(rc == 0, "engine: %s", rc == BOAR_ENOMEM ? "no memory" : err.message);
		if (rc)
			break;
		CHECK((e[k]->wg != NULL) == k, "layout %d: wg %s", k,
		      e[k]->wg ? "kept" : "not kept");
		sweep_by_key(e[k], keys, vals, delta[k], n, g.rows);
	}
	if (e[0] && e[1]) {
		uint64_t dd = 0, dw = 0, moved = 0;
		for (uint64_t j = 0; j < n; j++) {
			dd += memcmp(&delta[0][j], &delta[1][j], 4) != 0;
			dw += memcmp(&m[0]->w[j], &m[1]->w[j], 4) != 0;
			moved += delta[1][j] != 0.0f;
		}
		CHECK(dd == 0 && dw == 0 && moved > 0,
		      "by key, interleaved: %llu deltas and %llu weights differ "
		      "from the sums apart (%llu moved)",
		      (unsigned long long)dd, (unsigned long long)dw,
		      (unsigned long long)moved);
	}
	for (int k = 0; k < 2; k++) {
		boar_engine_free(e[k]);
		boar_model_free(m[k]);
		free(delta[k]);
	}
	free(keys);
	free(vals);
	boar_dataset_free(d);
}

static int stop_after_two(const boar_epoch_stats *s, void *ctx)
{
	return s->epoch == 2;
}

/* Stopped after two of four epochs against two epochs, one thread. */
static void check_cancel(int optimizer)
{
	boar_gen_options g;
	boar_gen_options_default(&g);
	g.task = BOAR_TASK_LINEAR;
	g.rows = 70000; /* enough to be packed (64k rows) */
	g.nnz_per_row = 8;
	g.features = 300;
	g.seed = 5;
	boar_dataset *d = NULL;
	boar_error err;
	if (boar_generate(&g, &d, &err)) {
		CHECK(0, "generate: %s", err.message);
		return;
	}
	boar_model *m[2] = {NULL, NULL};
	for (int k = 0; k < 2; k++) {
		boar_options o;
		boar_options_default(&o);
		o.threads = 1;
		o.optimizer = optimizer;
		o.epochs = k ? 4 : 2;
		if (k)
			o.progress = stop_after_two;
		int rc = boar_train(d, &o, &m[k], &err);
		CHECK(rc == (k ? BOAR_ECANCELLED : 0) && m[k],
		      "optimizer %d, run %d: rc %d", optimizer, k, rc);
	}
	if (m[0] && m[1]) {
		uint64_t differ = 0;
		for (uint64_t j = 0; j <= g.features; j++)
			differ += m[0]->w[j] != m[1]->w[j];
		CHECK(differ == 0, "optimizer %d: the stopped run's model "
				   "differs in %llu weights",
		      optimizer, (unsigned long long)differ);
	}
	boar_model_free(m[0]);
	boar_model_free(m[1]);
	boar_dataset_free(d);
}

int main(void)
{
	check_slices();
	check_advice();
	check_export(BOAR_OPT_ADAGRAD);
	check_export(BOAR_OPT_NORMALIZED);
	check_by_key();
	check_cancel(BOAR_OPT_ADAGRAD);
	check_cancel(BOAR_OPT_NORMALIZED);
	return TEST_RESULT();
}
