/* engine_rate.c - the engine's sweep rate on the roofline tool's shape.
 *
 * usage: engine_rate ROWS NNZ_PER_ROW DIM THREADS racy|atomic [SKEW [EPOCHS
 *        [OPTIMIZERS [TEST_FRACTION]]]]
 *   THREADS        a count, or a comma list (1,2,4,8,16): one run each
 *   OPTIMIZERS     sgd (the default), adagrad, normalized, or a comma list;
 *                  every one at eta 0.1, but "defaults": boar's own
 *                  optimizer and step (boar_options_default untouched)
 *   TEST_FRACTION  0 (the default) or a share of the rows (boar_dataset_split,
 *                  seed 42) held out as a test set, whose loss after each
 *                  epoch is printed beside the progressive loss
 *
 * Generates data of the shape bench/tools/roofline.c uses (same rows,
 * non-zeros per row, dimension, skew) once, trains logistic regression
 * through the public API at every thread count with every optimizer (plain
 * SGD is the bare loop's; AdaGrad is boar's default), and prints per run
 * the best epoch's rate in the roofline's units (M nnz-updates/s), so
 * bench/roofline.sh can put the two side by side, and the progressive
 * training loss of every epoch, so the loss at N threads can be held
 * against one thread's. An epoch here is the real thing: shuffled row
 * order, bias, progressive loss.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boar.h"

#define MAX_EPOCHS 64

struct best {
	double rate;
	int n;
	double loss[MAX_EPOCHS];
	double test_loss[MAX_EPOCHS]; /* when a test set is given */
};

static int on_epoch(const boar_epoch_stats *s, void *ctx)
{
	struct best *b = ctx;
	if (s->updates_per_sec > b->rate)
		b->rate = s->updates_per_sec;
	if (b->n < MAX_EPOCHS) {
		b->test_loss[b->n] = s->has_test ? s->test_loss : -1;
		b->loss[b->n++] = s->train_loss;
	}
	return 0;
}

static int train_once(const boar_dataset *d, const boar_dataset *test,
		      const boar_gen_options *g, int threads, const char *mode,
		      const char *opt, int epochs)
{
	boar_options o;
	boar_options_default(&o);
	o.threads = threads;
	o.update = strcmp(mode, "atomic") ? BOAR_UPDATE_RACY
					  : BOAR_UPDATE_ATOMIC;
	o.epochs = epochs;
	o.test = test;
	if (strcmp(opt, "defaults")) {
		o.eta = 0.1;
		o.optimizer = boar_optimizer_from_name(opt);
		if (o.optimizer < 0 || o.optimizer == BOAR_OPT_AUTO)
			o.optimizer = BOAR_OPT_SGD;
	}
	struct best b = {0};
	o.progress = on_epoch;
	o.progress_ctx = &b;
	boar_model *m;
	boar_error err;
	if (boar_train(d, &o, &m, &err)) {
		fprintf(stderr, "engine_rate: %s\n", err.message);
		return 1;
	}
	printf("rows=%llu nnz=%llu dim=%u threads=%d mode=%s skew=%.2f "
	       "opt=%s: %.1f M nnz-updates/s (best of %d epochs; train loss "
	       "%.4f; per epoch",
	       (unsigned long long)boar_dataset_rows(d),
	       (unsigned long long)boar_dataset_nnz(d), g->features, threads,
	       mode, g->skew, strcmp(opt, "defaults") ? boar_optimizer_name(o.optimizer) : opt,
	       b.rate / 1e6, epochs, b.n ? b.loss[b.n - 1] : 0.0);
	for (int k = 0; k < b.n; k++)
		printf(" %.4f", b.loss[k]);
	if (test) {
		printf("; test loss per epoch");
		for (int k = 0; k < b.n; k++)
			printf(" %.4f", b.test_loss[k]);
	}
	printf(")\n");
	fflush(stdout);
	boar_model_free(m);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: engine_rate ROWS NNZ_PER_ROW DIM THREADS "
				"racy|atomic [SKEW [EPOCHS [sgd|adagrad|normalized|defaults,... "
				"[TEST_FRACTION]]]]\n");
		return 2;
	}
	boar_gen_options g;
	boar_gen_options_default(&g);
	g.task = BOAR_TASK_LINEAR;
	g.rows = strtoull(argv[1], NULL, 10);
	g.nnz_per_row = (uint32_t)strtoul(argv[2], NULL, 10);
	g.features = (uint32_t)strtoul(argv[3], NULL, 10);
	g.skew = argc > 6 ? atof(argv[6]) : 0;
	g.seed = 42;
	int epochs = argc > 7 ? atoi(argv[7]) : 3;
	char opts[64] = "sgd";
	if (argc > 8)
		snprintf(opts, sizeof opts, "%s", argv[8]);

	double test_fraction = argc > 9 ? atof(argv[9]) : 0;
	if (!(test_fraction >= 0 && test_fraction < 1)) {
		fprintf(stderr, "engine_rate: TEST_FRACTION must be in [0, 1)\n");
		return 2;
	}

	boar_error err;
	boar_dataset *d, *test = NULL;
	if (boar_generate(&g, &d, &err)) {
		fprintf(stderr, "engine_rate: %s\n", err.message);
		return 1;
	}
	if (test_fraction > 0) {
		boar_dataset *all = d;
		int rc = boar_dataset_split(all, 42, 0, test_fraction, &d, &test,
					    &err);
		boar_dataset_free(all);
		if (rc) {
			fprintf(stderr, "engine_rate: %s\n", err.message);
			return 1;
		}
	}
	int rc = 0;
	char threads[256];
	snprintf(threads, sizeof threads, "%s", argv[4]);
	for (char *ts = strtok(threads, ","); ts && !rc; ts = strtok(NULL, ",")) {
		char list[64], *save;
		memcpy(list, opts, sizeof list);
		for (char *op = strtok_r(list, ",", &save); op && !rc;
		     op = strtok_r(NULL, ",", &save))
			rc = train_once(d, test, &g, atoi(ts), argv[5], op,
					epochs);
	}
	boar_dataset_free(d);
	boar_dataset_free(test);
	return rc;
}
