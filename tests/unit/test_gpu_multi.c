/* test_gpu_multi.c - --gpus 2 trains to what one GPU does.
 *
 * The same initial model is trained with n_gpus 1 and n_gpus 2 through
 * the GPU engine's C API, and the test metrics are compared after every
 * epoch: MF's test RMSE (the N x N grid of blocks, item blocks passed
 * between the GPUs: fp32 SGD with biases at rank 32, AdaGrad at rank 128,
 * bf16 rows at rank 64). "Within noise" at the
 * last epoch: at most a fixed tolerance or twice the spread between two
 * one-GPU runs in other orders (seeds), whichever is larger; before it
 * the two-GPU curve may run ahead (its strata are another order) but not
 * behind by more than a looser bound. The downloaded MF model must have
 * moved every user's and item's row (each block was swept). A linear
 * model with n_gpus 2 is refused (linear models take one GPU).
 *
 * With fewer than two devices, n_gpus 2 must be refused with
 * BOAR_ENODEVICE and a message naming the devices asked for and present;
 * the test then skips (77). Without GPU support it skips at once.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boar.h"
#include "data/dataset.h"
#include "gpu/gpu_engine.h"
#include "model/model.h"
#include "model/model_copy.h"
#include "testutil.h"
#include "test_gpu_ratings.h"

#define EPOCHS 6

/* A small linear problem: n rows of 16 features (for the refusal:
 * linear models take one GPU). */
static struct boar_dataset *rows(uint64_t n)
{
	uint64_t *row_ptr = malloc((n + 1) * sizeof *row_ptr);
	uint32_t *idx = malloc(n * 16 * sizeof *idx);
	float *val = malloc(n * 16 * sizeof *val), *label = malloc(n * 4);
	for (uint64_t z = 0; z < n * 16; z++) {
		idx[z] = (uint32_t)(z % 16) * 125 + (uint32_t)(test_rng() % 125);
		val[z] = 1.0f;
	}
	for (uint64_t r = 0; r <= n; r++)
		row_ptr[r] = r * 16;
	for (uint64_t r = 0; r < n; r++)
		label[r] = r % 2 ? 1.0f : -1.0f;
	struct boar_dataset *d = NULL;
	CHECK_EQ_INT(boar_dataset_from_csr(n, 2000, row_ptr, idx, val, label,
					   &d, NULL), 0);
	free(row_ptr);
	free(idx);
	free(val);
	free(label);
	return d;
}

/* Test RMSE after each epoch of a run on n_gpus from a copy of m0; 0 or
 * the open's code. */
static int train(const struct boar_dataset *tr, const struct boar_dataset *te,
		 boar_options o, int n_gpus, const struct boar_model *m0,
		 double rmse[EPOCHS], struct boar_model **out,
		 boar_error *err)
{
	struct boar_model *m = NULL;
	boar_gpu_ctx *c = NULL;
	o.n_gpus = n_gpus;
	if (boar_model_copy_into(&m, m0))
		return BOAR_ENOMEM;
	int rc = boar_gpu_open(tr, &o, m, &c, err);
	for (int e = 1; !rc && e <= EPOCHS; e++) {
		double loss = 0;
		boar_metrics t;
		rc = boar_gpu_epoch(c, e, o.eta, &loss, err);
		if (!rc)
			rc = boar_gpu_download(c, m, err);
		if (!rc)
			rc = boar_evaluate(m, te, &t, 1, err);
		if (!rc)
			rmse[e - 1] = t.rmse;
	}
	boar_gpu_close(c);
	if (out && !rc)
		*out = m;
	else
		boar_model_free(m);
	return rc;
}

/* Rows of P (users) or Q (items) that still equal the initial model's. */
static uint64_t unmoved(const struct boar_model *a, const struct boar_model *b,
			int items)
{
	uint64_t n = items ? a->n_items : a->dim, same = 0;
	const float *x = items ? a->Q : a->P, *y = items ? b->Q : b->P;
	for (uint64_t r = 0; r < n; r++)
		same += !memcmp(x + r * a->rank, y + r * a->rank,
				a->rank * sizeof(float));
	return same;
}

/* Runs 1 GPU (two seeds) and 2 GPUs; checks every epoch's metric:
 * within fixed_tol (relative) or twice the seeds' spread at the last
 * epoch, no more than early_worse worse before. */
static int compare(const char *name, const struct boar_dataset *tr,
		   const struct boar_dataset *te, boar_options o,
		   const struct boar_model *m0, double fixed_tol,
		   double early_worse)
{
	double one[EPOCHS], other[EPOCHS], two[EPOCHS];
	struct boar_model *m2 = NULL;
	boar_error err;
	memset(&err, 0, sizeof err);
	int rc = train(tr, te, o, 1, m0, one, NULL, &err);
	if (rc == BOAR_ENOGPU || rc == BOAR_ENODEVICE)
		TEST_SKIP("%s", err.message);
	CHECK(rc == 0, "%s: one GPU: %s", name, err.message);
	o.seed += 100;
	CHECK_EQ_INT(train(tr, te, o, 1, m0, other, NULL, &err), 0);
	o.seed -= 100;
	rc = train(tr, te, o, 2, m0, two, &m2, &err);
	if (rc == BOAR_ENODEVICE) {
		/* one device: the refusal must say what was asked and found */
		CHECK(strstr(err.message, "n_gpus 2") &&
			      strstr(err.message, "present"),
		      "%s", err.message);
		TEST_SKIP("needs two GPUs; n_gpus 2 here: %s", err.message);
	}
	CHECK(rc == 0, "%s: two GPUs: %d %s", name, rc, err.message);
	if (rc)
		return 1;
	int bad = 0;
	for (int e = 0; e < EPOCHS; e++) {
		const double a = one[e], b = two[e];
		const double spread = 2 * fabs(a - other[e]);
		const double tol = fmax(fixed_tol * a, spread);
		/* The strata visit the ratings in another order than one
		 * GPU's permutation: the curves may part on the way
		 * (measured: 2 GPUs up to 7% ahead in early epochs), never
		 * worse beyond early_worse, never implausibly better, and
		 * they meet by the last epoch. */
		int ok = isfinite(b) && b <= a + fmax(early_worse * a, spread) &&
			 b >= 0.8 * a - spread;
		if (e == EPOCHS - 1)
			ok = ok && fabs(b - a) <= tol;
		printf("%s %s epoch %d: 1 GPU %.4f (other seed %.4f) 2 GPUs "
		       "%.4f\n",
		       ok ? "ok  " : "FAIL", name, e + 1, a, other[e], b);
		CHECK(ok, "%s epoch %d: 2 GPUs %.4f vs 1 GPU %.4f (tol %.4f)",
		      name, e + 1, b, a, tol);
		bad |= !ok;
	}
	CHECK_EQ_INT(unmoved(m2, m0, 0), 0);
	CHECK_EQ_INT(unmoved(m2, m0, 1), 0);
	boar_model_free(m2);
	return bad;
}

static struct boar_model *mf_model(uint32_t rank, double mean)
{
	struct boar_model *m = boar_model_alloc(BOAR_TASK_MF, BOAR_LOSS_SQUARED,
						USERS, ITEMS, rank, 1);
	boar_model_init_factors(m, 0.1, 7, mean);
	return m;
}

/* Linear models take one GPU: n_gpus 2 is refused by name, before any
 * device is looked for. */
static void linear_refused(void)
{
	struct boar_dataset *d = rows(100);
	struct boar_model *m = boar_model_alloc(BOAR_TASK_LINEAR,
						BOAR_LOSS_LOGISTIC, 2000, 0, 0, 0);
	boar_options o;
	boar_options_default(&o);
	o.device = BOAR_DEVICE_GPU;
	o.n_gpus = 2;
	boar_gpu_ctx *c = NULL;
	boar_error err;
	memset(&err, 0, sizeof err);
	int rc = boar_gpu_open(d, &o, m, &c, &err);
	if (rc == BOAR_ENOGPU)
		TEST_SKIP("%s", err.message);
	CHECK_EQ_INT(rc, BOAR_EINVAL);
	CHECK(strstr(err.message, "matrix factorization") != NULL, "%s",
	      err.message);
	CHECK(c == NULL, "a context after a refusal");
	boar_model_free(m);
	free_data(d);
}

int main(int argc, char **argv)
{
	/* quick: one MF case, on fewer ratings (for compute-sanitizer) */
	const int quick = argc > 1 && !strcmp(argv[1], "quick");
	linear_refused();
	test_rng_seed(0x5eed);
	hidden_model();
	struct boar_dataset *tr = make_ratings(quick ? 100000 : 400000);
	struct boar_dataset *te = make_ratings(40000);
	double mean = 0;
	for (uint64_t k = 0; k < tr->n_rows; k++)
		mean += tr->label[k];
	mean /= (double)tr->n_rows;

	boar_options o;
	boar_options_default(&o);
	o.device = BOAR_DEVICE_GPU;
	o.task = BOAR_TASK_MF;
	o.optimizer = BOAR_OPT_SGD;
	o.eta = 0.02;
	o.l2 = 0.02;
	o.seed = 3;
	struct boar_model *m0 = mf_model(32, mean);
	compare("mf rank 32 sgd", tr, te, o, m0, 0.02, 0.03);
	boar_model_free(m0);

	if (!quick) {
		o.optimizer = BOAR_OPT_ADAGRAD;
		o.eta = 0.05;
		m0 = mf_model(128, mean);
		/* AdaGrad on 2 GPUs trails in the first epochs on this small
		 * set, then meets one GPU (measured on two H200s: test RMSE
		 * 1.117 vs 0.813 after epoch 1, 0.744 vs 0.701 after 2,
		 * within the seeds' spread by 6; cause not established, see
		 * bench/RESULTS-gpu.md): a looser bound on the way. */
		compare("mf rank 128 adagrad", tr, te, o, m0, 0.03, 0.40);
		boar_model_free(m0);

		o.optimizer = BOAR_OPT_SGD;
		o.eta = 0.02;
		o.mf_storage = BOAR_STORAGE_BF16;
		m0 = mf_model(64, mean);
		compare("mf rank 64 sgd bf16", tr, te, o, m0, 0.02, 0.03);
		boar_model_free(m0);
	}
	free_data(tr);
	free_data(te);

	return TEST_RESULT();
}
