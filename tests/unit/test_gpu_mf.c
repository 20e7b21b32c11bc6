/* test_gpu_mf.c - the GPU matrix-factorization sweep matches the rules.
 *
 * Ratings are drawn from a hidden low-rank model plus noise; the same
 * initial factors are trained for a few epochs by the GPU engine and by a
 * sequential CPU implementation of the MF rules (pred = mu + bu + bi + p.q,
 * both factor updates from the old values, L2 on factors and biases,
 * SGD with decay or per-row AdaGrad). Held-out RMSE and the per-epoch
 * mean squared error seen during the sweep must agree within noise: within
 * a fixed tolerance or twice the spread between two CPU runs in different
 * orders, whichever is larger.
 * Ranks 16, 100 (not a multiple of 32) and 256 exercise the register
 * layouts; one case streams small chunks on several streams. Factors
 * stored as fp16 and bf16 (fp32 arithmetic, stochastic rounding) must
 * reach the fp32 CPU rules' RMSE within the same tolerance, at ranks 32
 * (one factor a lane) and 128 (four consecutive factors a lane), with
 * atomic adds of the rounded deltas and (f16) with plain stores.
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
#include "test_gpu_ratings.h"

#define N_TRAIN 200000
#define N_TEST 20000

#define RNG_SEED 0x9e3779b97f4a7c15ULL

static struct boar_model *make_model(uint32_t rank, int biases, float mu)
{
	struct boar_model *m = calloc(1, sizeof *m);
	m->task = BOAR_TASK_MF;
	m->loss = BOAR_LOSS_SQUARED;
	m->dim = USERS;
	m->n_items = ITEMS;
	m->rank = rank;
	m->has_bias = biases;
	m->mu = biases ? mu : 0;
	m->P = malloc((size_t)USERS * rank * sizeof *m->P);
	m->Q = malloc((size_t)ITEMS * rank * sizeof *m->Q);
	float a = 0.1f / sqrtf((float)rank);
	for (size_t k = 0; k < (size_t)USERS * rank; k++)
		m->P[k] = (float)((2 * test_unif() - 1) * a);
	for (size_t k = 0; k < (size_t)ITEMS * rank; k++)
		m->Q[k] = (float)((2 * test_unif() - 1) * a);
	if (biases) {
		m->bu = calloc(USERS, sizeof *m->bu);
		m->bi = calloc(ITEMS, sizeof *m->bi);
	}
	return m;
}

static struct boar_model *copy_model(const struct boar_model *s)
{
	struct boar_model *m = make_model(s->rank, s->has_bias, s->mu);
	memcpy(m->P, s->P, (size_t)USERS * s->rank * sizeof *m->P);
	memcpy(m->Q, s->Q, (size_t)ITEMS * s->rank * sizeof *m->Q);
	return m;
}

static void free_model(struct boar_model *m)
{
	free(m->P);
	free(m->Q);
	free(m->bu);
	free(m->bi);
	free(m);
}

static double cpu_epoch(const struct boar_dataset *d, const boar_options *o,
			struct boar_model *m, float *Gu, float *Gi, double eta,
			uint64_t *order)
{
	uint32_t R = m->rank;
	float l2 = (float)o->l2;
	double sum = 0;
	TEST_SHUFFLE(order, d->n_rows);
	for (uint64_t k = 0; k < d->n_rows; k++) {
		uint64_t r = order[k];
		uint32_t u = d->user[r], i = d->item[r];
		float *p = m->P + (size_t)u * R, *q = m->Q + (size_t)i * R;
		float pred = m->mu, bu = 0, bi = 0;
		if (m->has_bias) {
			bu = m->bu[u];
			bi = m->bi[i];
			pred += bu + bi;
		}
		for (uint32_t t = 0; t < R; t++)
			pred += p[t] * q[t];
		float e = pred - d->label[r];
		sum += 0.5 * (double)e * e; /* squared loss, e^2 / 2 */
		float su = (float)eta, si = (float)eta;
		if (o->optimizer == BOAR_OPT_ADAGRAD) {
			float gu = 0, gi = 0;
			for (uint32_t t = 0; t < R; t++) {
				float a = e * q[t] + l2 * p[t], b = e * p[t] + l2 * q[t];
				gu += a * a;
				gi += b * b;
			}
			Gu[u] += gu / R;
			Gi[i] += gi / R;
			su = (float)eta / (sqrtf(Gu[u]) + 1e-6f);
			si = (float)eta / (sqrtf(Gi[i]) + 1e-6f);
		}
		for (uint32_t t = 0; t < R; t++) {
			float pp = p[t], qq = q[t];
			p[t] = pp - su * (e * qq + l2 * pp);
			q[t] = qq - si * (e * pp + l2 * qq);
		}
		if (m->has_bias) {
			m->bu[u] = bu - su * (e + l2 * bu);
			m->bi[i] = bi - si * (e + l2 * bi);
		}
	}
	return sum;
}

static double rmse(const struct boar_dataset *d, const struct boar_model *m)
{
	double s = 0;
	for (uint64_t k = 0; k < d->n_rows; k++) {
		uint32_t u = d->user[k], i = d->item[k];
		double pred = m->mu;
		if (m->has_bias)
			pred += m->bu[u] + m->bi[i];
		for (uint32_t t = 0; t < m->rank; t++)
			pred += m->P[(size_t)u * m->rank + t] *
				m->Q[(size_t)i * m->rank + t];
		s += (pred - d->label[k]) * (pred - d->label[k]);
	}
	return sqrt(s / d->n_rows);
}

static int failures;

static int run_case(const char *name, const struct boar_dataset *tr,
		    const struct boar_dataset *te, const boar_options *o,
		    uint32_t rank, int biases)
{
	double mu = 0;
	for (uint64_t k = 0; k < tr->n_rows; k++)
		mu += tr->label[k];
	mu /= tr->n_rows;
	struct boar_model *mg = make_model(rank, biases, (float)mu);
	struct boar_model *mc = copy_model(mg);
	/* A second CPU run in another order measures the rules' own noise on
	 * this problem (AdaGrad with per-row steps is order-sensitive early
	 * on): the GPU must agree with the CPU within max(tolerance, twice
	 * that spread). */
	struct boar_model *mc2 = copy_model(mg);
	boar_gpu_ctx *c = NULL;
	boar_error err;
	memset(&err, 0, sizeof err);
	int rc = boar_gpu_open(tr, o, mg, &c, &err);
	if (rc == BOAR_ENOGPU || rc == BOAR_ENODEVICE) {
		printf("skip: %s\n", err.message);
		free_model(mg);
		free_model(mc);
		free_model(mc2);
		return 77;
	}
	int bad = 0;
	if (rc) {
		printf("FAIL %s: open: %d %s\n", name, rc, err.message);
		bad = 1;
	}
	float *Gu = calloc(USERS, sizeof *Gu), *Gi = calloc(ITEMS, sizeof *Gi);
	float *Gu2 = calloc(USERS, sizeof *Gu), *Gi2 = calloc(ITEMS, sizeof *Gi);
	uint64_t *order = malloc(tr->n_rows * sizeof *order);
	uint64_t *order2 = malloc(tr->n_rows * sizeof *order);
	for (uint64_t k = 0; k < tr->n_rows; k++)
		order[k] = order2[k] = k;
	for (int e = 1; e <= o->epochs && !bad; e++) {
		double eta = o->eta * pow(o->eta_decay, e - 1), gl = 0;
		rc = boar_gpu_epoch(c, e, eta, &gl, &err);
		if (rc) {
			printf("FAIL %s: epoch %d: %d %s\n", name, e, rc, err.message);
			bad = 1;
			break;
		}
		double cl = cpu_epoch(tr, o, mc, Gu, Gi, eta, order);
		double cl2 = cpu_epoch(tr, o, mc2, Gu2, Gi2, eta, order2);
		gl /= tr->n_rows;
		cl /= tr->n_rows;
		cl2 /= tr->n_rows;
		/* Epoch 1 starts from the same factors but the GPU's rows in
		 * flight see a little less progress: looser there. */
		double tol = fmax((e == 1 || o->optimizer == BOAR_OPT_ADAGRAD
					   ? 0.25 : 0.15) * cl,
				  2 * fabs(cl - cl2));
		if (!isfinite(gl) || fabs(gl - cl) > tol + 1e-3) {
			printf("FAIL %s: epoch %d train loss: expected %.5f (cpu) got %.5f (gpu)\n",
			       name, e, cl, gl);
			bad = 1;
		}
	}
	if (!bad && (rc = boar_gpu_download(c, mg, &err))) {
		printf("FAIL %s: download: %d %s\n", name, rc, err.message);
		bad = 1;
	}
	if (!bad) {
		double rg = rmse(te, mg), rcpu = rmse(te, mc), r2 = rmse(te, mc2);
		/* AdaGrad's first steps on a row are about eta / |g| (the
		 * accumulator starts at 0), large for the popular items of
		 * this skewed data; with a few dozen ratings in flight on the
		 * GPU, concurrent updates of one item from a stale row cost a
		 * few percent more than two CPU threads would (measured on an
		 * H100: 2-4% worse RMSE, shrinking with fewer rows in flight;
		 * MovieLens in tests/cli/gpu_train.sh agrees within 1%). */
		double base = o->optimizer == BOAR_OPT_ADAGRAD ? 0.05 : 0.02;
		double tol = fmax(base * rcpu, 2 * fabs(rcpu - r2));
		if (!isfinite(rg) || fabs(rg - rcpu) > tol) {
			printf("FAIL %s: test rmse: expected %.4f (cpu) got %.4f (gpu)\n",
			       name, rcpu, rg);
			bad = 1;
		}
		printf("%s %s: test rmse cpu %.4f (other order %.4f) gpu %.4f\n",
		       bad ? "FAIL" : "ok  ", name, rcpu, r2, rg);
	}
	failures += bad;
	boar_gpu_close(c);
	free(Gu);
	free(Gi);
	free(Gu2);
	free(Gi2);
	free(order);
	free(order2);
	free_model(mg);
	free_model(mc);
	free_model(mc2);
	return bad;
}

int main(void)
{
	test_rng_seed(RNG_SEED);
	hidden_model();
	struct boar_dataset *tr = make_ratings(N_TRAIN);
	struct boar_dataset *te = make_ratings(N_TEST);
	boar_options o;
	memset(&o, 0, sizeof o);
	o.task = BOAR_TASK_MF;
	o.optimizer = BOAR_OPT_SGD;
	o.update = BOAR_UPDATE_RACY;
	o.epochs = 8;
	o.eta = 0.02;
	o.eta_decay = 0.95;
	o.l2 = 0.02;
	o.seed = 3;
	o.streams = 2;

	if (run_case("rank 16 sgd biases", tr, te, &o, 16, 1) == 77)
		return 77;
	run_case("rank 100 sgd", tr, te, &o, 100, 0);
	o.update = BOAR_UPDATE_ATOMIC;
	run_case("rank 32 sgd atomic biases", tr, te, &o, 32, 1);
	o.update = BOAR_UPDATE_RACY;
	o.optimizer = BOAR_OPT_ADAGRAD;
	o.eta = 0.05;
	o.eta_decay = 1.0;
	run_case("rank 64 adagrad biases", tr, te, &o, 64, 1);
	o.optimizer = BOAR_OPT_SGD;
	o.eta = 0.02;
	o.eta_decay = 0.95;
	o.epochs = 4;
	run_case("rank 256 sgd biases", tr, te, &o, 256, 1);
	o.gpu_chunk_bytes = 100000;
	o.streams = 4;
	o.epochs = 6;
	run_case("rank 48 sgd biases streamed", tr, te, &o, 48, 1);
	o.gpu_chunk_bytes = 0;
	o.streams = 2;
	o.epochs = 8;
	o.mf_storage = BOAR_STORAGE_F16;
	run_case("rank 32 sgd biases f16", tr, te, &o, 32, 1);
	run_case("rank 128 sgd biases f16", tr, te, &o, 128, 1);
	o.mf_storage = BOAR_STORAGE_BF16;
	run_case("rank 32 sgd biases bf16", tr, te, &o, 32, 1);
	run_case("rank 128 sgd bf16", tr, te, &o, 128, 0);
	o.gpu_racy_kernels = 1; /* 16-bit rows stored whole */
	o.mf_storage = BOAR_STORAGE_F16;
	run_case("rank 128 sgd biases f16 plain stores", tr, te, &o, 128, 1);
	o.gpu_racy_kernels = 0;
	o.mf_storage = BOAR_STORAGE_F32;

	free_data(tr);
	free_data(te);
	if (failures)
		printf("%d case(s) failed\n", failures);
	return failures ? 1 : 0;
}
