/* test_store_load.c - a cluster worker's store of one clock's weights and
 * load of the next clock's in one pass (boar_engine_store_load,
 * src/engine/engine.c).
 *
 * It must do exactly what the three passes it replaces do: store_deltas
 * of the clock's keys, the next clock's pulled values plus the deltas of
 * the keys both clocks have (the client's merge of a push into a pull
 * asked before it), then load_keys of those values. So each case runs
 * both ways on two engines in the same state and compares the deltas, the
 * values as loaded and the synced models bit for bit: lists that overlap
 * by about half (the power-law head of two clocks), that are the same,
 * that do not meet, that interleave one for one, one empty or both; on
 * one thread and on three (the pass cut at the next clock's keys, each
 * thread's slice of the clock's keys found by a search); with the sums
 * beside the weights and apart.
 */
#include <stdlib.h>
#include <string.h>

#include "boar.h"
#include "data/dataset.h"
#include "engine/engine.h"
#include "engine/engine_ops.h"
#include "model/model.h"
#include "testutil.h"

#define DIM (1u << 18)

static float small_float(void)
{
	return (float)((int)(test_rng() % 2001) - 1000) / 997.0f;
}

/* Keys of [0, DIM] (the bias is DIM) kept where pick says, ascending. */
enum pick { HALF, ALL, EVEN, ODD, LOW, HIGH, NONE };

static uint64_t make_keys(uint64_t *keys, enum pick p)
{
	uint64_t n = 0;
	for (uint64_t k = 0; k <= DIM; k++) {
		int in = p == HALF   ? test_rng() % 2 == 0
			 : p == ALL  ? 1
			 : p == EVEN ? k % 2 == 0
			 : p == ODD  ? k % 2 == 1
			 : p == LOW  ? k < DIM / 2
			 : p == HIGH ? k >= DIM / 2
				     : 0;
		if (in)
			keys[n++] = k;
	}
	return n;
}

/* The reference: store, merge (as the client adds a push to a pull),
 * load, on engine e. */
static void three_passes(struct boar_engine *e, const uint64_t *a,
			 const float *before, float *deltas, uint64_t na,
			 const uint64_t *b, float *vals, uint64_t nb)
{
	boar_engine_store_deltas(e, a, before, deltas, na);
	for (uint64_t i = 0, j = 0; i < nb && j < na;) {
		if (a[j] < b[i])
			j++;
		else if (b[i] < a[j])
			i++;
		else
			vals[i++] += deltas[j++];
	}
	boar_engine_load_keys(e, b, vals, nb);
}

static uint64_t differ(const float *x, const float *y, uint64_t n)
{
	uint64_t d = 0;
	for (uint64_t i = 0; i < n; i++)
		d += memcmp(&x[i], &y[i], sizeof *x) != 0;
	return d;
}

static void check_case(const boar_dataset *d, int threads, int layout,
		       enum pick pa, enum pick pb)
{
	uint64_t n = DIM + 1;
	uint64_t *all = malloc(n * sizeof *all), *a = malloc(n * sizeof *a),
		 *b = malloc(n * sizeof *b);
	float *start = malloc(n * sizeof *start),
	      *before = malloc(n * sizeof *before),
	      *pulled = malloc(n * sizeof *pulled);
	float *deltas[2] = { malloc(n * sizeof(float)),
			     malloc(n * sizeof(float)) };
	float *vals[2] = { malloc(n * sizeof(float)),
			   malloc(n * sizeof(float)) };
	struct boar_model *m[2] = { NULL, NULL };
	struct boar_engine *e[2] = { NULL, NULL };
	boar_error err;
	if (!all || !a || !b || !start || !before || !pulled || !deltas[0] ||
	    !deltas[1] || !vals[0] || !vals[1]) {
		CHECK(0, "out of memory");
		goto out;
	}
	make_keys(all, ALL);
	uint64_t na = make_keys(a, pa), nb = make_keys(b, pb);
	for (uint64_t k = 0; k < n; k++) {
		start[k] = small_float();
		before[k] = small_float();
		pulled[k] = small_float();
	}
	boar_options o;
	boar_options_default(&o);
	o.threads = threads;
	o.optimizer = BOAR_OPT_ADAGRAD;
	for (int k = 0; k < 2; k++) {
		m[k] = boar_model_alloc(BOAR_TASK_LINEAR, BOAR_LOSS_LOGISTIC,
					DIM, 0, 0, 0);
		int rc = m[k] ? boar_engine_create_subset(d, &o, m[k], NULL,
							  d->n_rows, layout,
							  &e[k], &err)
			      : BOAR_ENOMEM;
		CHECK(rc == 0, "engine: %s",
		      rc == BOAR_ENOMEM ? "no memory" : err.message);
		if (rc)
			goto out;
		CHECK((e[k]->wg != NULL) == (layout != 0), "layout %d: wg %s",
		      layout, e[k]->wg ? "kept" : "not kept");
		/* the clock's weights as its sweep left them */
		boar_engine_load_keys(e[k], all, start, n);
		memcpy(vals[k], pulled, nb * sizeof(float));
	}
	three_passes(e[0], a, before, deltas[0], na, b, vals[0], nb);
	boar_engine_store_load(e[1], a, before, deltas[1], na, b, vals[1], nb);
	for (int k = 0; k < 2; k++)
		CHECK(boar_engine_cpu_ops.sync(e[k], m[k], &err) == 0,
		      "sync failed");
	uint64_t dd = differ(deltas[0], deltas[1], na);
	uint64_t dv = differ(vals[0], vals[1], nb);
	uint64_t dw = differ(m[0]->w, m[1]->w, n);
	CHECK(dd == 0 && dv == 0 && dw == 0,
	      "%d threads, layout %d, lists %d and %d (%llu, %llu keys): "
	      "%llu deltas, %llu values and %llu weights differ",
	      threads, layout, pa, pb, (unsigned long long)na,
	      (unsigned long long)nb, (unsigned long long)dd,
	      (unsigned long long)dv, (unsigned long long)dw);
out:
	for (int k = 0; k < 2; k++) {
		boar_engine_free(e[k]);
		boar_model_free(m[k]);
		free(deltas[k]);
		free(vals[k]);
	}
	free(all);
	free(a);
	free(b);
	free(start);
	free(before);
	free(pulled);
}

int main(void)
{
	test_rng_seed(0x2545f4914f6cdd1dull);
	boar_gen_options g;
	boar_gen_options_default(&g);
	g.task = BOAR_TASK_LINEAR;
	g.rows = 2000;
	g.nnz_per_row = 8;
	g.features = DIM;
	g.seed = 4;
	boar_dataset *d = NULL;
	boar_error err;
	if (boar_generate(&g, &d, &err)) {
		CHECK(0, "generate: %s", err.message);
		return TEST_RESULT();
	}
	static const enum pick pairs[][2] = {
		{ HALF, HALF }, { ALL, ALL },  { LOW, HIGH }, { HIGH, LOW },
		{ EVEN, ODD },  { ALL, HALF }, { HALF, ALL }, { NONE, HALF },
		{ HALF, NONE }, { NONE, NONE },
	};
	for (int t = 1; t <= 3; t += 2)
		for (int layout = 0; layout < 2; layout++)
			for (size_t p = 0; p < sizeof pairs / sizeof *pairs; p++)
				check_case(d, t, layout ? BOAR_LAYOUT_INTERLEAVE : 0,
					   pairs[p][0], pairs[p][1]);
	boar_dataset_free(d);
	return TEST_RESULT();
}
