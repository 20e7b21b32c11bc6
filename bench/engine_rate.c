/* engine_rate.c - the engine's sweep rate on the roofline tool's shape.
 *
 * usage: engine_rate ROWS NNZ_PER_ROW DIM THREADS racy|atomic [SKEW [EPOCHS
 *        [sgd|adagrad]]]
 *
 * Generates data of the shape bench/tools/roofline.c uses (same rows,
 * non-zeros per row, dimension, skew), trains logistic regression with plain
 * SGD (or AdaGrad, boar's default, to compare the two) through the public API, and prints the best epoch's rate in the
 * roofline's units (M nnz-updates/s), so bench/roofline.sh can put the two
 * side by side in one run. An epoch here is the real thing: shuffled row
 * order, bias, progressive loss.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boar.h"

struct best {
	double rate;
	double loss;
};

static int on_epoch(const boar_epoch_stats *s, void *ctx)
{
	struct best *b = ctx;
	if (s->updates_per_sec > b->rate)
		b->rate = s->updates_per_sec;
	b->loss = s->train_loss;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: engine_rate ROWS NNZ_PER_ROW DIM THREADS "
				"racy|atomic [SKEW [EPOCHS [sgd|adagrad]]]\n");
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

	boar_error err;
	boar_dataset *d;
	if (boar_generate(&g, &d, &err)) {
		fprintf(stderr, "engine_rate: %s\n", err.message);
		return 1;
	}
	boar_options o;
	boar_options_default(&o);
	o.threads = atoi(argv[4]);
	o.update = strcmp(argv[5], "atomic") ? BOAR_UPDATE_RACY
					      : BOAR_UPDATE_ATOMIC;
	o.epochs = argc > 7 ? atoi(argv[7]) : 3;
	o.eta = 0.1;
	/* the bare loop is plain SGD */
	int ada = argc > 8 && !strcmp(argv[8], "adagrad");
	o.optimizer = ada ? BOAR_OPT_ADAGRAD : BOAR_OPT_SGD;
	struct best b = {0, 0};
	o.progress = on_epoch;
	o.progress_ctx = &b;
	boar_model *m;
	if (boar_train(d, &o, &m, &err)) {
		fprintf(stderr, "engine_rate: %s\n", err.message);
		return 1;
	}
	printf("rows=%llu nnz=%llu dim=%u threads=%d mode=%s skew=%.2f "
	       "opt=%s: %.1f M nnz-updates/s (best of %d epochs; train loss "
	       "%.4f)\n",
	       (unsigned long long)boar_dataset_rows(d),
	       (unsigned long long)boar_dataset_nnz(d), g.features, o.threads,
	       argv[5], g.skew, ada ? "adagrad" : "sgd", b.rate / 1e6,
	       o.epochs, b.loss);
	boar_model_free(m);
	boar_dataset_free(d);
	return 0;
}
