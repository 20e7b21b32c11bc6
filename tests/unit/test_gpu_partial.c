/* test_gpu_partial.c - slices of an epoch and weights by key on the GPU.
 *
 * What a cluster worker needs from the GPU engine (net/worker.c):
 * - boar_gpu_order is a permutation of the rows, fresh each epoch, and the
 *   same in a second context with the same seed (the workers split the
 *   epoch by it);
 * - boar_gpu_sweep(begin, end) visits exactly the rows order[begin..end):
 *   checked with one private feature per row, so the weights a slice
 *   changes name the rows it swept; resident and streamed (slices across
 *   chunk boundaries, chunks kept in their slots between slices);
 * - sweeping [0, n/2) then [n/2, n), or in clocks of 500 rows, trains as
 *   well as whole epochs (test accuracy and loss within noise);
 * - boar_gpu_set_weights/get_weights round-trip exactly, touch only the
 *   keys named, agree with boar_gpu_download, in the SGD and the AdaGrad
 *   layouts; bad keys and slices are refused.
 *
 * Exit 77 (skip) when the build has no GPU support or no device is present.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boar.h"
#include "data/dataset.h"
#include "model/model.h"
#include "gpu/gpu_engine.h"
#include "testutil.h"

#define N_TRAIN 40000
#define N_TEST 10000
#define DIM 3000
#define NNZ 16

static int failures;

#define RNG_SEED 0x9e3779b97f4a7c15ULL

static struct boar_dataset *alloc_data(uint64_t n, uint64_t nnz, uint64_t dim)
{
	struct boar_dataset *d = calloc(1, sizeof *d);
	d->task = BOAR_TASK_LINEAR;
	d->n_rows = n;
	d->dim = dim;
	d->nnz = nnz;
	d->row_ptr = malloc((n + 1) * sizeof *d->row_ptr);
	d->idx = malloc(nnz * sizeof *d->idx);
	d->val = malloc(nnz * sizeof *d->val);
	d->label = malloc(n * sizeof *d->label);
	return d;
}

/* A classification problem with a hidden model and power-law feature
 * frequencies (id = DIM * u^2), ascending ids per row. */
static struct boar_dataset *make_data(uint64_t n, const float *truth)
{
	struct boar_dataset *d = alloc_data(n, n * NNZ, DIM);
	uint64_t z = 0;
	for (uint64_t r = 0; r < n; r++) {
		unsigned char seen[DIM] = { 0 };
		int k = 0;
		d->row_ptr[r] = z;
		while (k < NNZ) {
			double u = test_unif();
			uint32_t f = (uint32_t)(DIM * u * u);
			if (f < DIM && !seen[f]) {
				seen[f] = 1;
				k++;
			}
		}
		double m = truth[DIM];
		for (uint32_t f = 0; f < DIM; f++) {
			if (!seen[f])
				continue;
			float x = (float)(0.2 + test_unif());
			d->idx[z] = f;
			d->val[z] = x;
			m += truth[f] * x;
			z++;
		}
		m += 0.5 * test_gauss();
		d->label[r] = m > 0 ? 1.0f : -1.0f;
	}
	d->row_ptr[n] = z;
	d->label_kind = BOAR_LABELS_BINARY;
	return d;
}

/* Row r has the one feature r (value 1, target 1): after a sweep from zero
 * weights, w[r] != 0 exactly for the rows it visited. */
static struct boar_dataset *make_private(uint64_t n)
{
	struct boar_dataset *d = alloc_data(n, n, n);
	for (uint64_t r = 0; r < n; r++) {
		d->row_ptr[r] = r;
		d->idx[r] = (uint32_t)r;
		d->val[r] = 1.0f;
		d->label[r] = 1.0f;
	}
	d->row_ptr[n] = n;
	d->label_kind = BOAR_LABELS_REAL;
	return d;
}

static void free_data(struct boar_dataset *d)
{
	free(d->row_ptr);
	free(d->idx);
	free(d->val);
	free(d->label);
	free(d);
}

static struct boar_model *make_model(int loss, uint64_t dim)
{
	struct boar_model *m = calloc(1, sizeof *m);
	m->task = BOAR_TASK_LINEAR;
	m->loss = loss;
	m->dim = dim;
	m->w = calloc(dim + 1, sizeof *m->w);
	return m;
}

static void free_model(struct boar_model *m)
{
	if (!m)
		return;
	free(m->w);
	free(m);
}

/* Streamed chunk size for the next cases (0: the engine's choice). */
static uint64_t chunk_bytes;

static void base_options(boar_options *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
	o->gpu_chunk_bytes = chunk_bytes;
	o->task = BOAR_TASK_LINEAR;
	o->loss = BOAR_LOSS_LOGISTIC;
	o->optimizer = BOAR_OPT_SGD;
	o->update = BOAR_UPDATE_ATOMIC;
	o->epochs = 5;
	o->eta = 0.1;
	o->eta_decay = 0.9;
	o->seed = 11;
	o->streams = 3;
}

/* Opens a context; 77 when no GPU is usable, 1 on another failure. */
static int open_ctx(const char *name, const struct boar_dataset *d,
		    const boar_options *o, const struct boar_model *m,
		    boar_gpu_ctx **c)
{
	boar_error err;
	memset(&err, 0, sizeof err);
	int rc = boar_gpu_open(d, o, m, c, &err);
	if (rc == BOAR_ENOGPU || rc == BOAR_ENODEVICE) {
		printf("skip: %s\n", err.message);
		return 77;
	}
	if (rc) {
		printf("FAIL %s: open: %d %s\n", name, rc, err.message);
		failures++;
		return 1;
	}
	return 0;
}

/* ---- the order */

static void check_order(const char *name, const struct boar_dataset *d,
			const boar_options *o)
{
	struct boar_model *m = make_model(o->loss, d->dim);
	boar_gpu_ctx *a = NULL, *b = NULL;
	boar_error err;
	memset(&err, 0, sizeof err);
	if (open_ctx(name, d, o, m, &a) || open_ctx(name, d, o, m, &b))
		goto out;
	uint64_t n = d->n_rows;
	unsigned char *seen = malloc(n);
	uint32_t *first = malloc(n * sizeof *first);
	for (int e = 1; e <= 2; e++) {
		const uint32_t *oa, *ob;
		if (boar_gpu_order(a, e, &oa, &err) ||
		    boar_gpu_order(b, e, &ob, &err)) {
			printf("FAIL %s: order: %s\n", name, err.message);
			failures++;
			break;
		}
		memset(seen, 0, n);
		uint64_t bad = 0, differ = 0, same_as_first = 0;
		for (uint64_t p = 0; p < n; p++) {
			if (oa[p] >= n || seen[oa[p]]++)
				bad++;
			differ += oa[p] != ob[p];
			if (e == 2)
				same_as_first += oa[p] == first[p];
		}
		if (bad || differ) {
			printf("FAIL %s: epoch %d order: expected a permutation "
			       "equal in both contexts, got %llu repeats or "
			       "strays, %llu positions differing\n",
			       name, e, (unsigned long long)bad,
			       (unsigned long long)differ);
			failures++;
		}
		if (e == 2 && same_as_first > n / 10) {
			printf("FAIL %s: epoch 2 order: expected a fresh order, "
			       "got %llu of %llu positions as in epoch 1\n",
			       name, (unsigned long long)same_as_first,
			       (unsigned long long)n);
			failures++;
		}
		memcpy(first, oa, n * sizeof *first);
	}
	free(seen);
	free(first);
	printf("done %s\n", name);
out:
	boar_gpu_close(a);
	boar_gpu_close(b);
	free_model(m);
}

/* ---- slices visit exactly their rows */

/* Zeroes the model, sweeps [b, e) of epoch ep and checks that exactly the
 * features order[b..e) moved. Returns 0 when it did. */
static int slice_rows(const char *name, boar_gpu_ctx *c,
		      const struct boar_dataset *d, int ep, uint64_t b,
		      uint64_t e, uint32_t *keys, float *vals,
		      unsigned char *want)
{
	boar_error err;
	memset(&err, 0, sizeof err);
	uint64_t n = d->n_rows;
	const uint32_t *order;
	double loss = 0;
	memset(vals, 0, (n + 1) * sizeof *vals);
	if (boar_gpu_set_weights(c, keys, vals, n + 1, &err) ||
	    boar_gpu_order(c, ep, &order, &err) ||
	    boar_gpu_sweep(c, ep, b, e, 1e-5, &loss, &err) ||
	    boar_gpu_get_weights(c, keys, vals, n + 1, &err)) {
		printf("FAIL %s: [%llu, %llu): %s\n", name,
		       (unsigned long long)b, (unsigned long long)e,
		       err.message);
		return 1;
	}
	memset(want, 0, n);
	for (uint64_t p = b; p < e; p++)
		want[order[p]] = 1;
	uint64_t missed = 0, extra = 0;
	for (uint64_t r = 0; r < n; r++) {
		missed += want[r] && vals[r] == 0.0f;
		extra += !want[r] && vals[r] != 0.0f;
	}
	/* Squared loss from 0 towards 1, with a step so small that the bias
	 * stays near 0: each row's loss is about 0.5. */
	double per_row = loss / (double)(e - b);
	if (missed || extra || !(per_row > 0.35 && per_row <= 0.5 + 1e-9)) {
		printf("FAIL %s: epoch %d slice [%llu, %llu): expected the "
		       "features of its %llu rows to move (loss about 0.5 a "
		       "row), got %llu of them still, %llu others moved, "
		       "loss %.4f a row\n",
		       name, ep, (unsigned long long)b, (unsigned long long)e,
		       (unsigned long long)(e - b), (unsigned long long)missed,
		       (unsigned long long)extra, per_row);
		return 1;
	}
	return 0;
}

static void check_slices(const char *name, const boar_options *o)
{
	const uint64_t n = 20000;
	struct boar_dataset *d = make_private(n);
	struct boar_model *m = make_model(BOAR_LOSS_SQUARED, n);
	boar_options so = *o;
	so.loss = BOAR_LOSS_SQUARED;
	so.optimizer = BOAR_OPT_SGD;
	boar_gpu_ctx *c = NULL;
	uint32_t *keys = malloc((n + 1) * sizeof *keys);
	float *vals = malloc((n + 1) * sizeof *vals);
	unsigned char *want = malloc(n);
	int bad = 0, slices = 0;
	for (uint64_t k = 0; k <= n; k++)
		keys[k] = (uint32_t)k;
	if (open_ctx(name, d, &so, m, &c))
		goto out;
	/* Halves, odd slices in a row (the clocks of a worker, crossing the
	 * streamed chunks' boundaries), one row, everything. */
	for (int ep = 1; ep <= 2 && !bad; ep++) {
		bad |= slice_rows(name, c, d, ep, 0, n / 2, keys, vals, want);
		bad |= slice_rows(name, c, d, ep, n / 2, n, keys, vals, want);
		slices += 2;
		for (uint64_t b = 0; b < n && !bad; b += 1777, slices++)
			bad |= slice_rows(name, c, d, ep, b,
					  b + 1777 < n ? b + 1777 : n, keys,
					  vals, want);
		bad |= slice_rows(name, c, d, ep, 12345, 12346, keys, vals, want);
		bad |= slice_rows(name, c, d, ep, 0, n, keys, vals, want);
		slices += 2;
	}
	/* Out of range is refused, not swept. */
	{
		boar_error err;
		double l = 0;
		uint32_t big = (uint32_t)n + 1;
		float v = 1;
		memset(&err, 0, sizeof err);
		if (boar_gpu_sweep(c, 1, 10, n + 1, 0.1, &l, &err) != BOAR_EINVAL ||
		    boar_gpu_sweep(c, 1, 10, 5, 0.1, &l, &err) != BOAR_EINVAL ||
		    boar_gpu_set_weights(c, &big, &v, 1, &err) != BOAR_EINVAL ||
		    boar_gpu_get_weights(c, &big, &v, 1, &err) != BOAR_EINVAL) {
			printf("FAIL %s: expected BOAR_EINVAL for a slice past "
			       "the rows, a reversed slice and a key past dim\n",
			       name);
			bad = 1;
		}
	}
	failures += bad;
	printf("%s %s: %d slices swept exactly their rows\n",
	       bad ? "FAIL" : "ok  ", name, slices);
out:
	boar_gpu_close(c);
	free_model(m);
	free_data(d);
	free(keys);
	free(vals);
	free(want);
}

/* ---- set/get */

static void check_weights(const char *name, const struct boar_dataset *d,
			  const boar_options *o)
{
	struct boar_model *m = make_model(o->loss, d->dim);
	struct boar_model *dl = make_model(o->loss, d->dim);
	boar_gpu_ctx *c = NULL;
	boar_error err;
	const uint64_t nk = d->dim + 1;
	uint32_t *keys = malloc(nk * sizeof *keys);
	float *set = malloc(nk * sizeof *set), *got = malloc(nk * sizeof *got);
	int bad = 0;
	memset(&err, 0, sizeof err);
	if (open_ctx(name, d, o, m, &c))
		goto out;
	/* Train a little first, so AdaGrad sums are not zero. */
	double l = 0;
	if (boar_gpu_epoch(c, 1, o->eta, &l, &err)) {
		printf("FAIL %s: epoch: %s\n", name, err.message);
		bad = 1;
		goto done;
	}
	/* The whole model, in a shuffled key order. */
	for (uint64_t k = 0; k < nk; k++)
		keys[k] = (uint32_t)k;
	TEST_SHUFFLE(keys, nk);
	for (uint64_t k = 0; k < nk; k++)
		set[k] = (float)test_gauss();
	if (boar_gpu_set_weights(c, keys, set, nk, &err) ||
	    boar_gpu_get_weights(c, keys, got, nk, &err) ||
	    boar_gpu_download(c, dl, &err)) {
		printf("FAIL %s: set/get: %s\n", name, err.message);
		bad = 1;
		goto done;
	}
	for (uint64_t k = 0; k < nk && !bad; k++)
		if (memcmp(&got[k], &set[k], sizeof(float)) ||
		    memcmp(&dl->w[keys[k]], &set[k], sizeof(float))) {
			printf("FAIL %s: key %u: expected %.9g, got %.9g (get) "
			       "%.9g (download)\n",
			       name, keys[k], set[k], got[k], dl->w[keys[k]]);
			bad = 1;
		}
	/* A few keys (the bias among them): only those change. */
	uint32_t few[5] = { 0, 17, (uint32_t)(nk / 2), (uint32_t)(nk - 2),
			    (uint32_t)(nk - 1) };
	float fv[5] = { 1.5f, -2.25f, 3e-7f, 1e6f, -0.125f };
	if (!bad && (boar_gpu_set_weights(c, few, fv, 5, &err) ||
		     boar_gpu_download(c, dl, &err))) {
		printf("FAIL %s: set few: %s\n", name, err.message);
		bad = 1;
	}
	for (uint64_t k = 0; k < nk && !bad; k++) {
		float want = set[k];
		uint32_t key = keys[k];
		for (int i = 0; i < 5; i++)
			if (few[i] == key)
				want = fv[i];
		if (memcmp(&dl->w[key], &want, sizeof want)) {
			printf("FAIL %s: after setting 5 keys, key %u: expected "
			       "%.9g, got %.9g\n",
			       name, key, want, dl->w[key]);
			bad = 1;
		}
	}
	/* And training goes on from the values set. */
	l = 0;
	if (!bad && boar_gpu_sweep(c, 2, 0, d->n_rows, o->eta, &l, &err)) {
		printf("FAIL %s: sweep after set: %s\n", name, err.message);
		bad = 1;
	}
done:
	failures += bad;
	printf("%s %s: %llu keys round-trip exactly\n", bad ? "FAIL" : "ok  ",
	       name, (unsigned long long)nk);
out:
	boar_gpu_close(c);
	free_model(m);
	free_model(dl);
	free(keys);
	free(set);
	free(got);
}

/* ---- training by slices */

struct quality {
	double acc, loss;
};

static struct quality evaluate(const struct boar_dataset *d, const float *w)
{
	struct quality q = { 0, 0 };
	for (uint64_t r = 0; r < d->n_rows; r++) {
		double m = w[DIM];
		for (uint64_t j = d->row_ptr[r]; j < d->row_ptr[r + 1]; j++)
			m += w[d->idx[j]] * d->val[j];
		double z = d->label[r] > 0 ? m : -m;
		q.loss += z > 0 ? log1p(exp(-z)) : log1p(exp(z)) - z;
		q.acc += (m > 0) == (d->label[r] > 0);
	}
	q.acc /= d->n_rows;
	q.loss /= d->n_rows;
	return q;
}

/* Trains 5 epochs cutting each into slices of `slice` rows (0: whole
 * epochs by boar_gpu_epoch). Returns -1 on failure. */
static int train(const char *name, const struct boar_dataset *tr,
		 const struct boar_dataset *te, const boar_options *o,
		 uint64_t slice, struct quality *q, double *last_loss)
{
	struct boar_model *m = make_model(o->loss, DIM);
	boar_gpu_ctx *c = NULL;
	boar_error err;
	int rc = -1;
	memset(&err, 0, sizeof err);
	if (open_ctx(name, tr, o, m, &c))
		goto out;
	for (int e = 1; e <= o->epochs; e++) {
		double eta = o->eta * pow(o->eta_decay, e - 1), loss = 0;
		int r;
		if (!slice) {
			r = boar_gpu_epoch(c, e, eta, &loss, &err);
		} else {
			r = 0;
			for (uint64_t b = 0; b < tr->n_rows && !r; b += slice)
				r = boar_gpu_sweep(c, e, b,
						   b + slice < tr->n_rows
							   ? b + slice
							   : tr->n_rows,
						   eta, &loss, &err);
		}
		if (r) {
			printf("FAIL %s: epoch %d: %s\n", name, e, err.message);
			goto out;
		}
		*last_loss = loss / tr->n_rows;
	}
	if (boar_gpu_download(c, m, &err)) {
		printf("FAIL %s: download: %s\n", name, err.message);
		goto out;
	}
	*q = evaluate(te, m->w);
	rc = 0;
out:
	boar_gpu_close(c);
	free_model(m);
	return rc;
}

static void check_training(const char *name, const struct boar_dataset *tr,
			   const struct boar_dataset *te, const boar_options *o)
{
	struct quality whole, half, clocks;
	double lw = 0, lh = 0, lc = 0;
	char nm[128];
	int bad = 0;
	snprintf(nm, sizeof nm, "%s whole", name);
	if (train(nm, tr, te, o, 0, &whole, &lw)) {
		failures++;
		return;
	}
	snprintf(nm, sizeof nm, "%s halves", name);
	if (train(nm, tr, te, o, tr->n_rows / 2, &half, &lh)) {
		failures++;
		return;
	}
	snprintf(nm, sizeof nm, "%s clocks of 500", name);
	if (train(nm, tr, te, o, 500, &clocks, &lc)) {
		failures++;
		return;
	}
	/* Same rules, same rows, different interleaving: equal within the
	 * noise of Hogwild! runs (as test_gpu_linear.c compares the GPU with
	 * the CPU). The last epoch's training loss agrees loosely. */
	const struct quality *q[2] = { &half, &clocks };
	const double *l[2] = { &lh, &lc };
	const char *what[2] = { "halves", "clocks of 500" };
	for (int i = 0; i < 2; i++) {
		if (q[i]->acc < whole.acc - 0.01 || q[i]->acc > whole.acc + 0.02 ||
		    q[i]->loss > whole.loss * 1.05 ||
		    q[i]->loss < whole.loss * 0.9 ||
		    fabs(*l[i] - lw) > 0.15 * lw) {
			printf("FAIL %s %s: expected test accuracy/loss %.4f/%.4f "
			       "and train loss %.4f (whole epochs), got "
			       "%.4f/%.4f and %.4f\n",
			       name, what[i], whole.acc, whole.loss, lw,
			       q[i]->acc, q[i]->loss, *l[i]);
			bad = 1;
		}
	}
	failures += bad;
	printf("%s %s: test acc/loss whole %.4f/%.4f halves %.4f/%.4f "
	       "clocks %.4f/%.4f\n",
	       bad ? "FAIL" : "ok  ", name, whole.acc, whole.loss, half.acc,
	       half.loss, clocks.acc, clocks.loss);
}

int main(void)
{
	test_rng_seed(RNG_SEED);
	float *truth = calloc(DIM + 1, sizeof *truth);
	for (int f = 0; f <= DIM; f++)
		truth[f] = (float)(test_unif() < 0.3 ? test_gauss() : 0);
	truth[DIM] = 0.3f;
	struct boar_dataset *tr = make_data(N_TRAIN, truth);
	struct boar_dataset *te = make_data(N_TEST, truth);
	boar_options o;

	/* Probe: no GPU, nothing to test. */
	{
		struct boar_model *m = make_model(BOAR_LOSS_LOGISTIC, DIM);
		boar_gpu_ctx *c = NULL;
		base_options(&o);
		int rc = open_ctx("probe", tr, &o, m, &c);
		boar_gpu_close(c);
		free_model(m);
		if (rc == 77)
			return 77;
		if (rc)
			return 1;
	}

	/* Resident, then streamed in ~64 KiB chunks on 3 streams. */
	for (int streamed = 0; streamed <= 1; streamed++) {
		const char *where = streamed ? "streamed" : "resident";
		char nm[96];
		if (streamed)
			chunk_bytes = 65536;
		base_options(&o);
		snprintf(nm, sizeof nm, "order %s", where);
		check_order(nm, tr, &o);
		snprintf(nm, sizeof nm, "slices %s", where);
		check_slices(nm, &o);
		snprintf(nm, sizeof nm, "set/get sgd %s", where);
		check_weights(nm, tr, &o);
		o.optimizer = BOAR_OPT_ADAGRAD;
		o.eta = 0.5;
		o.l2 = 1e-4;
		snprintf(nm, sizeof nm, "set/get adagrad l2 %s", where);
		check_weights(nm, tr, &o);

		base_options(&o);
		snprintf(nm, sizeof nm, "logistic sgd %s", where);
		check_training(nm, tr, te, &o);
		o.optimizer = BOAR_OPT_ADAGRAD;
		o.eta = 0.5;
		o.eta_decay = 1.0;
		snprintf(nm, sizeof nm, "logistic adagrad %s", where);
		check_training(nm, tr, te, &o);
		chunk_bytes = 0;
	}

	free_data(tr);
	free_data(te);
	free(truth);
	if (failures) {
		printf("%d failure(s)\n", failures);
		return 1;
	}
	printf("all passed\n");
	return 0;
}
