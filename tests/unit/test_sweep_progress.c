/* test_sweep_progress.c - progress inside an epoch (sweep_progress):
 * - on an epoch long enough (the data grows until an epoch takes 0.25 s
 *   on this machine), the callback is called, with the running epoch, rows
 *   that never go back within an epoch and never pass the epoch's rows,
 *   and never after that epoch's own progress call;
 * - calls come at most about every 100 ms (fewer calls than 12 per second
 *   of sweeping, with slack for a late wake-up);
 * - the model is the same bytes at one thread with and without it (the
 *   sweep does not know it is watched);
 * - short epochs (a tiny dataset) never call it.
 */
#include <string.h>

#include "boar.h"
#include "testutil.h"

struct watch {
	int calls, bad_order, epoch_done;
	uint64_t last_rows;
	int last_epoch;
	double sweep_s, longest; /* all epochs' sweeps, the longest one */
};

static void on_sweep(const boar_sweep_stats *s, void *ctx)
{
	struct watch *w = ctx;
	w->calls++;
	if (s->epoch != w->epoch_done + 1 || s->rows_done > s->rows ||
	    (s->epoch == w->last_epoch && s->rows_done < w->last_rows))
		w->bad_order++;
	w->last_epoch = s->epoch;
	w->last_rows = s->rows_done;
}

static int on_epoch(const boar_epoch_stats *s, void *ctx)
{
	struct watch *w = ctx;
	w->epoch_done = s->epoch;
	w->sweep_s += s->seconds;
	w->longest = s->seconds > w->longest ? s->seconds : w->longest;
	return 0;
}

static boar_dataset *gen(uint64_t rows)
{
	boar_gen_options g;
	boar_gen_options_default(&g);
	g.rows = rows;
	g.features = 1 << 16;
	g.nnz_per_row = 20;
	boar_dataset *d = NULL;
	if (boar_generate(&g, &d, NULL))
		exit(1);
	return d;
}

static boar_model *train(boar_dataset *d, int watched, struct watch *w)
{
	boar_options o;
	boar_model *m = NULL;
	boar_options_default(&o);
	o.threads = 1;
	o.epochs = 2;
	o.progress = on_epoch;
	o.progress_ctx = w;
	if (watched)
		o.sweep_progress = on_sweep;
	memset(w, 0, sizeof *w);
	CHECK_EQ_INT(boar_train(d, &o, &m, NULL), 0);
	return m;
}

int main(void)
{
	struct watch w;
	boar_dataset *d = gen(200);
	boar_model_free(train(d, 1, &w));
	CHECK_EQ_INT(w.calls, 0);
	boar_dataset_free(d);

	uint64_t rows = 400000;
	boar_model *m = NULL;
	for (;;) {
		d = gen(rows);
		m = train(d, 1, &w);
		if (w.longest >= 0.25 || rows >= 16000000)
			break;
		boar_model_free(m);
		boar_dataset_free(d);
		rows *= 2;
	}
	CHECK(w.calls >= 1, "no call in %.2f s of sweeps", w.sweep_s);
	CHECK_EQ_INT(w.bad_order, 0);
	CHECK(w.calls <= 12 * w.sweep_s + 2, "%d calls in %.2f s", w.calls,
	      w.sweep_s);
	struct watch plain;
	boar_model *m2 = train(d, 0, &plain);
	uint64_t n1 = 0, n2 = 0;
	const float *w1 = NULL, *w2 = NULL;
	CHECK_EQ_INT(boar_model_weights(m, &w1, &n1, NULL), 0);
	CHECK_EQ_INT(boar_model_weights(m2, &w2, &n2, NULL), 0);
	CHECK(n1 == n2 && !memcmp(w1, w2, n1 * sizeof *w1),
	      "watching the sweep changed the model");
	fprintf(stderr, "%llu rows: %d calls in %.2f s of sweeps\n",
		(unsigned long long)rows, w.calls, w.sweep_s);
	boar_model_free(m);
	boar_model_free(m2);
	boar_dataset_free(d);
	return TEST_RESULT();
}
