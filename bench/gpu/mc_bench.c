/* mc_bench.c - K-class training on the CPU engine against the GPU engine.
 *
 *   mc_bench ROWS LOG2_DIM NNZ K [--epochs E] [--threads T] [--loss NAME]
 *            [--opt sgd|adagrad] [--eta X] [--rows-per-block N]
 *            [--device cpu|gpu|both]
 *
 * Builds a K-class set in memory (no parser): NNZ ids a row, one drawn
 * uniformly from each NNZ-th of 2^LOG2_DIM, values 1/sqrt(NNZ), the label the argmax of
 * a hashed hidden K-class model's margins plus noise; a test set of
 * ROWS / 10 rows from the same model. Trains through boar_train (the
 * driver, as `boar train` does) on each device at the same options and
 * prints one line per epoch (seconds of the sweep, coordinate updates per
 * second: non-zeros x K, progressive training loss) and the held-out
 * accuracy and loss at the end. Built by `make build/bench/gpu/mc_bench`.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boar.h"

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double unit(uint64_t key)
{
	return (mix64(key) >> 11) * (1.0 / 9007199254740992.0);
}

struct cfg {
	uint64_t rows;
	int log2_dim, nnz, K, epochs, threads, loss, opt, device;
	uint32_t rows_per_block;
	double eta;
};

/* n rows (the stream `salt` of the generator) of the hidden model. */
static boar_dataset *make(const struct cfg *c, uint64_t n, uint64_t salt)
{
	uint64_t dim = 1ULL << c->log2_dim, nnz = n * c->nnz;
	uint64_t *row_ptr = malloc((n + 1) * sizeof *row_ptr);
	uint32_t *idx = malloc(nnz * sizeof *idx);
	float *val = malloc(nnz * sizeof *val), *label = malloc(n * 4);
	if (!row_ptr || !idx || !val || !label) {
		fprintf(stderr, "mc_bench: out of memory\n");
		exit(1);
	}
	float x = (float)(1.0 / sqrt(c->nnz));
#pragma omp parallel for schedule(static)
	for (uint64_t r = 0; r < n; r++) {
		double m[1024] = {0};
		uint64_t at = r * c->nnz;
		row_ptr[r] = at;
		for (int k = 0; k < c->nnz; k++) {
			/* one id from each NNZ-th of the ids: ascending */
			uint64_t part = dim / c->nnz;
			uint32_t j = (uint32_t)(k * part +
						mix64(salt ^ (at + k) * 0x9e37ULL) %
							part);
			idx[at + k] = j;
			val[at + k] = x;
			for (int cl = 0; cl < c->K; cl++)
				m[cl] += (2 * unit(j * 1315423911ULL + cl) - 1) * x;
		}
		int y = 0;
		for (int cl = 0; cl < c->K; cl++) {
			m[cl] += 0.1 * (2 * unit(salt * 31 + r * 977 + cl) - 1);
			if (m[cl] > m[y])
				y = cl;
		}
		label[r] = (float)y;
	}
	row_ptr[n] = nnz;
	boar_dataset *d = NULL;
	boar_error err;
	if (boar_dataset_from_csr(n, (uint32_t)dim, row_ptr, idx, val, label,
				  &d, &err)) {
		fprintf(stderr, "mc_bench: %s\n", err.message);
		exit(1);
	}
	free(row_ptr);
	free(idx);
	free(val);
	free(label);
	return d;
}

struct prog {
	const char *dev;
	double nnz_k;
};

static int on_epoch(const boar_epoch_stats *s, void *ctx)
{
	const struct prog *p = ctx;
	printf("%s epoch %d: %.4f s  %.2f G coord updates/s  train loss %.5f\n",
	       p->dev, s->epoch, s->seconds,
	       s->seconds > 0 ? p->nnz_k / s->seconds / 1e9 : 0.0,
	       s->train_loss);
	fflush(stdout);
	return 0;
}

static void run(const struct cfg *c, const boar_dataset *d,
		const boar_dataset *t, int device)
{
	boar_options o;
	boar_options_default(&o);
	o.loss = c->loss;
	o.optimizer = c->opt;
	o.epochs = c->epochs;
	o.threads = c->threads;
	o.device = device;
	o.gpu_rows_per_block = c->rows_per_block;
	if (c->eta > 0)
		o.eta = c->eta;
	const char *build = getenv("BUILD");
	static char plugin[4096];
	if (build) {
		snprintf(plugin, sizeof plugin, "%s/libboar-gpu.so.0", build);
		o.gpu_plugin = plugin;
	}
	struct prog p = {device ? "gpu" : "cpu",
			 (double)c->rows * c->nnz * c->K};
	o.progress = on_epoch;
	o.progress_ctx = &p;
	boar_model *m = NULL;
	boar_error err;
	if (boar_train(d, &o, &m, &err)) {
		printf("%s: %s\n", p.dev, err.message);
		return;
	}
	boar_metrics r;
	if (!boar_evaluate(m, t, &r, c->threads, &err))
		printf("%s held-out: accuracy %.4f loss %.5f\n", p.dev,
		       r.accuracy, r.loss);
	boar_model_free(m);
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: mc_bench ROWS LOG2_DIM NNZ K [options]\n");
		return 2;
	}
	struct cfg c = {
		.rows = strtoull(argv[1], NULL, 10), .log2_dim = atoi(argv[2]),
		.nnz = atoi(argv[3]), .K = atoi(argv[4]), .epochs = 5,
		.threads = 16, .loss = BOAR_LOSS_SOFTMAX, .opt = BOAR_OPT_ADAGRAD,
		.device = 2,
	};
	for (int i = 5; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];
		if (!strcmp(k, "--epochs"))
			c.epochs = atoi(v);
		else if (!strcmp(k, "--threads"))
			c.threads = atoi(v);
		else if (!strcmp(k, "--loss"))
			c.loss = boar_loss_from_name(v);
		else if (!strcmp(k, "--opt"))
			c.opt = boar_optimizer_from_name(v);
		else if (!strcmp(k, "--eta"))
			c.eta = atof(v);
		else if (!strcmp(k, "--rows-per-block"))
			c.rows_per_block = (uint32_t)atoi(v);
		else if (!strcmp(k, "--device"))
			c.device = !strcmp(v, "cpu") ? 0 : !strcmp(v, "gpu") ? 1 : 2;
		else {
			fprintf(stderr, "mc_bench: unknown option %s\n", k);
			return 2;
		}
	}
	if (c.K < 2 || c.K > 1024 || c.nnz < 1 || c.log2_dim < 4 ||
	    c.log2_dim > 30 || c.loss < 0 || c.opt < 0) {
		fprintf(stderr, "mc_bench: bad arguments\n");
		return 2;
	}
	boar_dataset *d = make(&c, c.rows, 1), *t = make(&c, c.rows / 10, 2);
	printf("mc_bench: %llu rows x 2^%d ids x %d nnz, K=%d, %s %s, %d "
	       "epochs, %d CPU threads\n",
	       (unsigned long long)c.rows, c.log2_dim, c.nnz, c.K,
	       boar_loss_describe(c.loss)->name, boar_optimizer_name(c.opt),
	       c.epochs, c.threads);
	if (c.device != 1)
		run(&c, d, t, BOAR_DEVICE_CPU);
	if (c.device != 0)
		run(&c, d, t, BOAR_DEVICE_GPU);
	boar_dataset_free(d);
	boar_dataset_free(t);
	return 0;
}
