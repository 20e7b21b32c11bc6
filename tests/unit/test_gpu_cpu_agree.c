/* test_gpu_cpu_agree.c - the CPU engine and the GPU engine train the same
 * small problem to the same model.
 *
 * Both engines call the same math (src/math/), so for every loss of
 * BOAR_LOSS_MAP (softmax as a 2-class model) and every
 * optimizer of BOAR_OPTIMIZER_MAP, with and without L2, the per-epoch
 * training losses and the final weights must agree. They cannot agree bit
 * for bit: the CPU visits rows in its shuffled order one at a time (one
 * thread), the GPU in a Feistel permutation with eight rows in flight, so
 * the tolerances are those of two row orders. Two CPU runs of other seeds
 * on two threads differ by up to 22% in the first epoch's loss (regression
 * with AdaGrad, the transient), 1.2% in later epochs, and their weights
 * by up to 6.5% (relative Euclidean distance; hinge with SGD, whose
 * weights still grow; 4% for the others). The test allows 30% (epoch 1)
 * or 3%, + 0.002, and 10%: far below what a different loss definition,
 * step rule or derivative gives (squared loss reported as
 * (m - y)^2 against (m - y)^2 / 2 is a factor 2).
 *
 * Weighted rows (instance and class weights) agree the same way, and
 * differ from the unweighted run by far more.
 *
 * Exit 77 (skip) when the build has no GPU support or no device is present.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boar.h"
#include "testutil.h"
#include "gpu_agree.h"

#define N_ROWS 4000
#define DIM 64
#define NNZ 8

enum labels { CLASSES, REAL, COUNTS };

/* Rows of NNZ distinct ascending ids with values in [-1, 1]; labels from
 * a hidden model: its value plus noise (REAL), the sign of that (CLASSES),
 * or a count around exp of half of it (COUNTS, for Poisson). */
static boar_dataset *make_data(enum labels kind)
{
	static uint64_t row_ptr[N_ROWS + 1];
	static uint32_t idx[N_ROWS * NNZ];
	static float val[N_ROWS * NNZ], label[N_ROWS], truth[DIM];
	lcg = 7;
	for (int j = 0; j < DIM; j++)
		truth[j] = (float)(2 * unif() - 1);
	for (int r = 0; r < N_ROWS; r++) {
		row_ptr[r] = (uint64_t)r * NNZ;
		uint32_t at = below(DIM / NNZ);
		double m = 0.3;
		for (int k = 0; k < NNZ; k++) {
			/* one id from each eighth of the ids: ascending */
			uint32_t j = (uint32_t)k * (DIM / NNZ) +
				     (at + below(3)) % (DIM / NNZ);
			idx[r * NNZ + k] = j;
			val[r * NNZ + k] = (float)(2 * unif() - 1);
			m += truth[j] * val[r * NNZ + k];
		}
		double noisy = m + 0.1 * (2 * unif() - 1);
		label[r] = kind == REAL	    ? (float)noisy
			   : kind == COUNTS ? (float)floor(exp(0.5 * noisy) +
							   unif())
					    : (noisy > 0 ? 1.0f : -1.0f);
	}
	row_ptr[N_ROWS] = (uint64_t)N_ROWS * NNZ;
	boar_dataset *d = NULL;
	boar_error err;
	if (boar_dataset_from_csr(N_ROWS, DIM, row_ptr, idx, val, label, &d,
				  &err)) {
		fprintf(stderr, "FAIL: dataset: %s\n", err.message);
		exit(1);
	}
	return d;
}

/* How far apart two models are as a whole: ||w_a - w_b|| / ||w_a||. */
static double distance(const boar_model *ma, const boar_model *mb)
{
	uint64_t na, nb;
	const float *wa = test_model_weights(ma, &na);
	const float *wb = test_model_weights(mb, &nb);
	CHECK_EQ_INT(nb, na);
	double diff = 0, norm = 0;
	for (uint64_t j = 0; j < na && j < nb; j++) {
		diff += (wa[j] - wb[j]) * (wa[j] - wb[j]);
		norm += (double)wa[j] * wa[j];
	}
	return sqrt(diff / (norm > 0 ? norm : 1));
}

/* Trains o on both engines and checks the losses and weights agree; with
 * `gpu` given, hands back the GPU's model and run. */
static void compare_keep(const char *name, const boar_dataset *d,
			 const boar_options *o, double later_tol, double w_tol,
			 boar_model **gpu, struct run *gpu_run)
{
	struct run rc, rg;
	boar_model *mc = train(d, *o, BOAR_DEVICE_CPU, &rc);
	boar_model *mg = train(d, *o, BOAR_DEVICE_GPU, &rg);
	if (!mc || !mg)
		goto out;
	CHECK_EQ_INT(rg.epochs, rc.epochs);
	for (int e = 0; e < EPOCHS; e++) {
		/* epoch 1 is the transient, where the order weighs most */
		double tol = (e ? later_tol : 0.3) * fabs(rc.loss[e]) + 0.002;
		CHECK(fabs(rc.loss[e] - rg.loss[e]) <= tol,
		      "%s epoch %d: CPU loss %.6f, GPU %.6f (tolerance %.4f)",
		      name, e + 1, rc.loss[e], rg.loss[e], tol);
	}
	double rel = distance(mc, mg);
	CHECK(rel <= w_tol, "%s: weights %.1f%% apart (relative distance)",
	      name, 100 * rel);
	printf("%-28s CPU loss %.5f GPU %.5f, weights %.2f%% apart\n", name,
	       rc.loss[EPOCHS - 1], rg.loss[EPOCHS - 1], 100 * rel);
out:
	boar_model_free(mc);
	if (gpu && mg) {
		*gpu = mg;
		*gpu_run = rg;
	} else {
		boar_model_free(mg);
	}
}

static void compare(const char *name, const boar_dataset *d,
		    const boar_options *o, double later_tol, double w_tol)
{
	compare_keep(name, d, o, later_tol, w_tol, NULL, NULL);
}

/* The classes' rows with weight w[r] on row r. */
static boar_dataset *weighted_rows(const float *w)
{
	boar_dataset *d = make_data(CLASSES);
	boar_error err;
	int rc = boar_dataset_set_weights(d, w, N_ROWS, &err);
	CHECK(rc == 0, "weights: %s", err.message);
	return d;
}

/* Weighted rows: instance weights from 0.25 to 3 (by row) and a class
 * weight of 3 on the positive class, the data resident on the card. The
 * GPU must reach the CPU's weighted losses and weights, and the weights
 * must be used: the same run without them ends far away (the weighted
 * loss is a sum of scaled row losses, the model leans to the positives). */
static void weighted(const boar_dataset *plain, int opt, int l2)
{
	static float w[N_ROWS];
	for (int r = 0; r < N_ROWS; r++)
		w[r] = 0.25f + 2.75f * (float)(r % 7) / 6;
	boar_dataset *d = weighted_rows(w);
	float lab = 1, val = 3;
	boar_options o = agree_options(BOAR_LOSS_LOGISTIC, opt, l2);
	o.class_weight_labels = &lab;
	o.class_weight_values = &val;
	o.n_class_weights = 1;
	char name[96];
	snprintf(name, sizeof name, "weighted %s%s", boar_optimizer_name(opt),
		 l2 ? " l2" : "");
	boar_model *mw = NULL, *mu = NULL;
	struct run rw, ru;
	compare_keep(name, d, &o, 0.03, 0.1, &mw, &rw);
	o.n_class_weights = 0;
	if (mw)
		mu = train(plain, o, BOAR_DEVICE_GPU, &ru);
	if (mw && mu) {
		double rel = distance(mu, mw);
		double dl = fabs(rw.loss[EPOCHS - 1] - ru.loss[EPOCHS - 1]);
		/* AdaGrad's per-coordinate rate undoes much of a row's
		 * scale (CPU: 10-13% apart, against 51% with SGD); the
		 * reported losses differ by a factor 2-3 either way. */
		double min_rel = opt == BOAR_OPT_SGD ? 0.2 : 0.05;
		CHECK(rel > min_rel && dl > 0.5 * ru.loss[EPOCHS - 1],
		      "%s: the weights change nothing (model %.1f%% apart, "
		      "loss %.5f against %.5f unweighted)",
		      name, 100 * rel, rw.loss[EPOCHS - 1],
		      ru.loss[EPOCHS - 1]);
		printf("%-28s unweighted GPU loss %.5f, model %.1f%% apart\n",
		       name, ru.loss[EPOCHS - 1], 100 * rel);
	}
	boar_model_free(mw);
	boar_model_free(mu);
	boar_dataset_free(d);
}

/* Streamed chunks (4000 rows of 8 non-zeros in ~64 KiB: several chunks)
 * carry each chunk's row weights beside its labels. The GPU's streamed
 * sweep is not the CPU's order (H200: unweighted AdaGrad ends at loss
 * 0.386 streamed against 0.236 resident), so it is held to itself: weights
 * of 1 for every row must train what no weights train (the weights array
 * is uploaded and read, each row's scale exactly 1), and real weights must
 * change the model. */
static void streamed_weights(const boar_dataset *plain)
{
	static float ones[N_ROWS], w[N_ROWS];
	for (int r = 0; r < N_ROWS; r++) {
		ones[r] = 1;
		w[r] = 0.25f + 2.75f * (float)(r % 7) / 6;
	}
	boar_dataset *d1 = weighted_rows(ones), *dw = weighted_rows(w);
	boar_options o = agree_options(BOAR_LOSS_LOGISTIC, BOAR_OPT_ADAGRAD, 0);
	o.l2 = BOAR_AUTO; /* as measured on the H200 */
	o.gpu_chunk_bytes = 64 << 10;
	struct run ru, r1, rw;
	boar_model *mu = train(plain, o, BOAR_DEVICE_GPU, &ru),
		   *m1 = train(d1, o, BOAR_DEVICE_GPU, &r1),
		   *mw = train(dw, o, BOAR_DEVICE_GPU, &rw);
	CHECK(mu && m1 && mw, "streamed weighted runs failed");
	if (mu && m1 && mw) {
		double rel1 = distance(mu, m1), relw = distance(mu, mw);
		double l_u = ru.loss[EPOCHS - 1], l_1 = r1.loss[EPOCHS - 1],
		       l_w = rw.loss[EPOCHS - 1];
		/* The losses, not the models: the streamed sweep's
		 * atomics land in another order every run (H200: weights
		 * of 1 against none, loss 0.3% apart, models 7.8%; in
		 * another run 2.5% apart, with nothing changed in the
		 * binary sweep). */
		CHECK(fabs(l_u - l_1) <= 0.04 * l_u,
		      "streamed, weights of 1: loss %.5f against %.5f "
		      "without weights", l_1, l_u);
		CHECK(fabs(l_w - l_u) > 0.3 * l_u,
		      "streamed: the weights change nothing (loss %.5f "
		      "against %.5f without)", l_w, l_u);
		printf("%-28s weights of 1: loss %.5f (none: %.5f, model "
		       "%.2f%% apart); real weights: loss %.5f, model %.1f%% "
		       "apart\n", "weighted adagrad streamed", l_1, l_u,
		       100 * rel1, l_w, 100 * relw);
	}
	boar_model_free(mu);
	boar_model_free(m1);
	boar_model_free(mw);
	boar_dataset_free(d1);
	boar_dataset_free(dw);
}

/* `test_gpu_cpu_agree weighted` runs the weighted cases alone (quick
 * enough under compute-sanitizer). */
int main(int argc, char **argv)
{
	boar_dataset *cls = make_data(CLASSES), *reg = make_data(REAL),
		     *counts = make_data(COUNTS);
	int only_weighted = argc > 1 && !strcmp(argv[1], "weighted");
	for (int loss = 0; loss < BOAR_LOSS_COUNT && !only_weighted; loss++) {
		/* softmax on these +-1 labels is a 2-class model (the
		 * K-class sweep at its narrowest; more classes:
		 * test_gpu_multiclass) */
		const boar_loss_desc *l = boar_loss_describe(loss);
		for (int opt = 0; opt < BOAR_OPT_CODES; opt++) {
			/* normalized is the CPU engine's alone (the GPU's
			 * capabilities refuse it) */
			if (opt == BOAR_OPT_AUTO || opt == BOAR_OPT_NORMALIZED)
				continue;
			for (int l2 = 0; l2 < 2; l2++) {
				boar_options o = agree_options(loss, opt, l2);
				char name[96];
				snprintf(name, sizeof name, "%s %s%s", l->name,
					 boar_optimizer_name(opt),
					 l2 ? " l2" : "");
				/* The pinball loss's slope is +-tau however
				 * near the target: plain SGD keeps jumping by
				 * a full step, so two update orders (one
				 * thread against the GPU's warps) stay ~5-10%
				 * apart in train loss (H200: 8.6% at epoch 2);
				 * AdaGrad shrinks the steps and agrees within
				 * 0.5%. */
				double later_tol =
					loss == BOAR_LOSS_QUANTILE &&
							opt == BOAR_OPT_SGD
						? 0.12
						: 0.03;
				/* Poisson's exp link makes plain SGD's steps
				 * as large as exp(margin): the trajectory
				 * depends on the order, and the weights end
				 * ~23% apart (H200) at train losses within
				 * 0.8% per epoch; AdaGrad's end 3% apart. */
				double w_tol = loss == BOAR_LOSS_POISSON &&
							       opt == BOAR_OPT_SGD
						       ? 0.3
						       : 0.1;
				compare(name,
					loss == BOAR_LOSS_POISSON ? counts
					: l->kind == BOAR_LOSS_KIND_REGRESSION
						? reg
						: cls,
					&o, later_tol, w_tol);
			}
		}
	}
	for (int opt = BOAR_OPT_SGD; opt <= BOAR_OPT_ADAGRAD; opt++)
		for (int l2 = 0; l2 < 2; l2++)
			weighted(cls, opt, l2);
	streamed_weights(cls);
	boar_dataset_free(cls);
	boar_dataset_free(reg);
	boar_dataset_free(counts);
	return TEST_RESULT();
}
