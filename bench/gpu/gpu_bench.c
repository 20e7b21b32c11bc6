/* gpu_bench.c - epoch time and update rate of the GPU engine on synthetic data.
 *
 * Builds a boar_dataset in memory (no parser, no core needed) shaped like
 * ../shared/tools/gpu_roofline.cu's runs, or Netflix-shaped ratings, drives
 * boar_gpu_open/epoch/download/close, and prints one line per run:
 *
 *   gpu_bench linear ROWS NNZ_PER_ROW LOG2_DIM [options]
 *   gpu_bench mf RATINGS USERS ITEMS RANK [options]
 *
 * options: --epochs E (default 6)  --update atomic|racy (atomic)
 *          --opt sgd|adagrad  --l2 X  --l1 X  --skew S (ids D*u^(1+S))
 *          --streams S  --chunk BYTES (forces streaming: BOAR_GPU_CHUNK_BYTES)
 *          --eta X  --storage f32|f16|bf16 (MF factors on the device)
 *
 * Linear data: ids uniform (or power-law with --skew) over 2^LOG2_DIM, every
 * value 1/sqrt(NNZ) as in the roofline tool, labels from a hashed hidden
 * model so the loss falls. MF data: users and items uniform, ratings from a
 * hashed rank-4 model plus noise.
 *
 * Times: `open` includes the host-to-device upload of resident data; each
 * epoch is timed on the host around boar_gpu_epoch, which returns only after
 * the device finished (it synchronizes to read the loss), so an epoch time
 * includes every copy of streamed data. The rate is the median over epochs
 * 2..E (epoch 1 also loads the kernels).
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boar.h"
#include "data/dataset.h"
#include "model/model.h"
#include "gpu/gpu_engine.h"

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double unit(uint64_t *s)
{
	*s = mix64(*s + 0x9e3779b97f4a7c15ULL);
	return (*s >> 11) * (1.0 / 9007199254740992.0);
}

/* A hidden weight per feature without storing 2^28 of them. */
static float truth_w(uint64_t f)
{
	return (float)((mix64(f * 0x9e3779b97f4a7c15ULL + 17) >> 40) /
			       8388608.0 -
		       1.0);
}

struct cfg {
	int epochs, update, opt, streams;
	double l1, l2, skew, eta;
	const char *chunk;
	int storage; /* BOAR_STORAGE_* */
};

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int run(const char *what, struct boar_dataset *d, struct boar_model *m,
	       const struct cfg *c, uint64_t work, const char *shape)
{
	boar_options o;
	memset(&o, 0, sizeof o);
	o.task = d->task;
	o.loss = m->loss;
	o.optimizer = c->opt;
	o.update = c->update;
	o.epochs = c->epochs;
	o.eta = c->eta;
	o.eta_decay = 0.9;
	o.l1 = c->l1;
	o.l2 = c->l2;
	o.seed = 1;
	o.streams = c->streams;
	o.mf_storage = c->storage;
	/* racy asks for the plain-store kernels (the engine serves racy with
	 * atomicAdd unless told otherwise). */
	setenv("BOAR_GPU_RACY", c->update == BOAR_UPDATE_RACY ? "1" : "0", 1);
	if (c->chunk)
		setenv("BOAR_GPU_CHUNK_BYTES", c->chunk, 1);
	else
		unsetenv("BOAR_GPU_CHUNK_BYTES");

	boar_error err;
	boar_gpu_ctx *ctx = NULL;
	double t0 = omp_get_wtime();
	int rc = boar_gpu_open(d, &o, m, &ctx, &err);
	double t_open = omp_get_wtime() - t0;
	if (rc) {
		printf("%s %s: open failed: %d %s\n", what, shape, rc, err.message);
		return 1;
	}
	double *sec = calloc(c->epochs, sizeof *sec), last_loss = 0;
	for (int e = 1; e <= c->epochs; e++) {
		double loss = 0, eta = c->eta * pow(0.9, e - 1);
		t0 = omp_get_wtime();
		rc = boar_gpu_epoch(ctx, e, eta, &loss, &err);
		sec[e - 1] = omp_get_wtime() - t0;
		if (rc) {
			printf("%s %s: epoch %d failed: %d %s\n", what, shape, e, rc,
			       err.message);
			boar_gpu_close(ctx);
			return 1;
		}
		last_loss = loss / d->n_rows;
		fprintf(stderr, "  epoch %d: %.4f s, loss %.5f\n", e, sec[e - 1],
			last_loss);
	}
	t0 = omp_get_wtime();
	rc = boar_gpu_download(ctx, m, &err);
	double t_down = omp_get_wtime() - t0;
	boar_gpu_close(ctx);
	if (rc) {
		printf("%s: download failed: %s\n", what, err.message);
		return 1;
	}
	int k = c->epochs > 1 ? c->epochs - 1 : 1;
	double *s = c->epochs > 1 ? sec + 1 : sec;
	qsort(s, k, sizeof *s, cmp_d);
	double med = s[k / 2];
	printf("%-6s %s update=%s opt=%s storage=%s streams=%d data=%s | open %.3f s, "
	       "epoch %.2f ms (min %.2f), %.3f G updates/s, download %.1f ms, "
	       "last loss %.5f\n",
	       what, shape, c->update == BOAR_UPDATE_ATOMIC ? "atomic" : "racy",
	       c->opt == BOAR_OPT_ADAGRAD ? "adagrad" : "sgd",
	       c->storage == BOAR_STORAGE_F16	 ? "f16"
	       : c->storage == BOAR_STORAGE_BF16 ? "bf16"
						 : "f32",
	       c->streams,
	       c->chunk ? "streamed" : "resident", t_open, med * 1e3, s[0] * 1e3,
	       work / med / 1e9, t_down * 1e3, last_loss);
	free(sec);
	return 0;
}

static int bench_linear(uint64_t rows, uint32_t k, int log2dim,
			const struct cfg *c)
{
	uint64_t dim = 1ULL << log2dim, nnz = rows * k;
	struct boar_dataset d;
	memset(&d, 0, sizeof d);
	d.task = BOAR_TASK_LINEAR;
	d.label_kind = BOAR_LABELS_BINARY;
	d.n_rows = rows;
	d.nnz = nnz;
	d.dim = dim;
	d.row_ptr = malloc((rows + 1) * sizeof *d.row_ptr);
	d.idx = malloc(nnz * sizeof *d.idx);
	d.val = malloc(nnz * sizeof *d.val);
	d.label = malloc(rows * sizeof *d.label);
	if (!d.row_ptr || !d.idx || !d.val || !d.label) {
		printf("linear: out of host memory\n");
		return 1;
	}
	double t0 = omp_get_wtime();
	const float x = 1.0f / sqrtf((float)k);
#pragma omp parallel for schedule(static)
	for (uint64_t r = 0; r < rows; r++) {
		uint64_t s = mix64(r + 42);
		double m = 0;
		d.row_ptr[r] = r * k;
		for (uint32_t j = 0; j < k; j++) {
			double u = unit(&s);
			uint64_t f = c->skew > 0 ? (uint64_t)(dim * pow(u, 1 + c->skew))
						 : (uint64_t)(u * dim);
			if (f >= dim)
				f = dim - 1;
			d.idx[r * k + j] = (uint32_t)f;
			d.val[r * k + j] = x;
			m += truth_w(f) * x;
		}
		d.label[r] = m + 0.3 * (unit(&s) - 0.5) > 0 ? 1.0f : -1.0f;
	}
	d.row_ptr[rows] = nnz;
	fprintf(stderr, "generated %llu x %u in %.2f s\n",
		(unsigned long long)rows, k, omp_get_wtime() - t0);

	struct boar_model m;
	memset(&m, 0, sizeof m);
	m.task = BOAR_TASK_LINEAR;
	m.loss = BOAR_LOSS_LOGISTIC;
	m.dim = dim;
	m.w = calloc(dim + 1, sizeof *m.w);
	char shape[160];
	snprintf(shape, sizeof shape, "rows=%llu nnz/row=%u dim=2^%d skew=%g l2=%g",
		 (unsigned long long)rows, k, log2dim, c->skew, c->l2);
	int rc = run("linear", &d, &m, c, nnz, shape);
	free(m.w);
	free(d.row_ptr);
	free(d.idx);
	free(d.val);
	free(d.label);
	return rc;
}

static int bench_mf(uint64_t n, uint32_t users, uint32_t items, uint32_t rank,
		    const struct cfg *c)
{
	struct boar_dataset d;
	memset(&d, 0, sizeof d);
	d.task = BOAR_TASK_MF;
	d.label_kind = BOAR_LABELS_REAL;
	d.n_rows = d.nnz = n;
	d.dim = users;
	d.n_items = items;
	d.user = malloc(n * sizeof *d.user);
	d.item = malloc(n * sizeof *d.item);
	d.label = malloc(n * sizeof *d.label);
	double t0 = omp_get_wtime(), sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
	for (uint64_t r = 0; r < n; r++) {
		uint64_t s = mix64(r + 7);
		uint32_t u = (uint32_t)(unit(&s) * users) % users;
		uint32_t i = (uint32_t)(unit(&s) * items) % items;
		double v = 3.6;
		for (int t = 0; t < 4; t++)
			v += 0.6 * truth_w((uint64_t)u * 8 + t) *
			     truth_w(((uint64_t)i * 8 + t) ^ 0x5555);
		v += 0.5 * (unit(&s) - 0.5);
		d.user[r] = u;
		d.item[r] = i;
		d.label[r] = (float)v;
		sum += v;
	}
	fprintf(stderr, "generated %llu ratings in %.2f s\n",
		(unsigned long long)n, omp_get_wtime() - t0);

	struct boar_model m;
	memset(&m, 0, sizeof m);
	m.task = BOAR_TASK_MF;
	m.loss = BOAR_LOSS_SQUARED;
	m.dim = users;
	m.n_items = items;
	m.rank = rank;
	m.has_bias = 1;
	m.mu = (float)(sum / n);
	m.P = malloc((size_t)users * rank * sizeof *m.P);
	m.Q = malloc((size_t)items * rank * sizeof *m.Q);
	m.bu = calloc(users, sizeof *m.bu);
	m.bi = calloc(items, sizeof *m.bi);
	float a = 0.1f / sqrtf((float)rank);
	uint64_t s = 99;
	for (size_t k = 0; k < (size_t)users * rank; k++)
		m.P[k] = (float)((2 * unit(&s) - 1) * a);
	for (size_t k = 0; k < (size_t)items * rank; k++)
		m.Q[k] = (float)((2 * unit(&s) - 1) * a);
	char shape[160];
	snprintf(shape, sizeof shape, "ratings=%llu users=%u items=%u rank=%u",
		 (unsigned long long)n, users, items, rank);
	int rc = run("mf", &d, &m, c, n, shape);
	if (!rc) {
		/* train_loss is the mean e^2 seen during the sweep */
	}
	free(m.P);
	free(m.Q);
	free(m.bu);
	free(m.bi);
	free(d.user);
	free(d.item);
	free(d.label);
	return rc;
}

int main(int argc, char **argv)
{
	struct cfg c = { .epochs = 6, .update = BOAR_UPDATE_ATOMIC,
			 .opt = BOAR_OPT_SGD, .streams = 4, .eta = -1 };
	int pos = 0;
	const char *a[5] = { 0 };
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strncmp(s, "--", 2) && !v) {
			fprintf(stderr, "%s needs a value\n", s);
			return 2;
		}
		if (!strcmp(s, "--epochs"))
			c.epochs = atoi(v), i++;
		else if (!strcmp(s, "--update"))
			c.update = !strcmp(v, "racy") ? BOAR_UPDATE_RACY
						      : BOAR_UPDATE_ATOMIC, i++;
		else if (!strcmp(s, "--opt"))
			c.opt = !strcmp(v, "adagrad") ? BOAR_OPT_ADAGRAD
						      : BOAR_OPT_SGD, i++;
		else if (!strcmp(s, "--l2"))
			c.l2 = atof(v), i++;
		else if (!strcmp(s, "--l1"))
			c.l1 = atof(v), i++;
		else if (!strcmp(s, "--skew"))
			c.skew = atof(v), i++;
		else if (!strcmp(s, "--eta"))
			c.eta = atof(v), i++;
		else if (!strcmp(s, "--streams"))
			c.streams = atoi(v), i++;
		else if (!strcmp(s, "--chunk"))
			c.chunk = v, i++;
		else if (!strcmp(s, "--storage"))
			c.storage = !strcmp(v, "f16")	 ? BOAR_STORAGE_F16
				    : !strcmp(v, "bf16") ? BOAR_STORAGE_BF16
							 : BOAR_STORAGE_F32,
			i++;
		else if (pos < 5)
			a[pos++] = s;
	}
	if (c.epochs < 1)
		c.epochs = 1;
	if (pos == 4 && !strcmp(a[0], "linear")) {
		if (c.eta < 0)
			c.eta = 0.5;
		return bench_linear(strtoull(a[1], 0, 10), (uint32_t)atoi(a[2]),
				    atoi(a[3]), &c);
	}
	if (pos == 5 && !strcmp(a[0], "mf")) {
		if (c.eta < 0)
			c.eta = 0.01;
		if (c.l2 == 0)
			c.l2 = 0.02;
		return bench_mf(strtoull(a[1], 0, 10), (uint32_t)atoi(a[2]),
				(uint32_t)atoi(a[3]), (uint32_t)atoi(a[4]), &c);
	}
	fprintf(stderr,
		"usage: gpu_bench linear ROWS NNZ_PER_ROW LOG2_DIM [options]\n"
		"       gpu_bench mf RATINGS USERS ITEMS RANK [options]\n");
	return 2;
}
