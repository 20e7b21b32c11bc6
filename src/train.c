/* train.c - boar_train(): the epoch loop shared by every place the sweep
 * runs. It shapes the model (or continues a given one), hands each epoch's
 * sweep to the CPU engine or the GPU, evaluates the test set or a holdout,
 * stops early when asked, reports progress, and refuses to return a model
 * that diverged.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "classes.h"
#include "dataset.h"
#include "engine.h"
#include "error.h"
#include "gpu/gpu_engine.h"
#include "math/loss.h"
#include "math/step.h"
#include "metrics.h"
#include "model.h"
#include "model_copy.h"
#include "options.h"
#include "rng.h"

static double mean_label(const struct boar_dataset *d)
{
	double s = 0;
	for (uint64_t r = 0; r < d->n_rows; r++)
		s += d->label[r];
	return d->n_rows ? s / d->n_rows : 0;
}

/* A fresh linear model for d: binary, regression, or K classes when the
 * labels are classes (softmax always; logistic/hinge beyond two labels). */
static int new_linear(const struct boar_dataset *d, const boar_options *o,
		      struct boar_model **out, boar_error *err)
{
	int binary = d->label_kind == BOAR_LABELS_BINARY;
	int kind = boar_loss_kind(o->loss);
	if (kind == BOAR_LOSS_KIND_REGRESSION ||
	    (binary && kind != BOAR_LOSS_KIND_MULTINOMIAL)) {
		*out = boar_model_alloc(BOAR_TASK_LINEAR, o->loss, d->dim, 0, 0, 0);
		return *out ? 0 : BOAR_ENOMEM;
	}
	float classes[BOAR_MAX_CLASSES];
	uint32_t k;
	if (boar_collect_classes(d, classes, BOAR_MAX_CLASSES, &k) || k < 2)
		return boar_fail(err, BOAR_EINVAL,
				 "%s loss needs class labels (+1/-1, 1/0, or up "
				 "to %d distinct integers); use --loss squared "
				 "for real-valued targets",
				 boar_loss_describe(o->loss)->name,
				 BOAR_MAX_CLASSES);
	*out = boar_model_alloc_multiclass(o->loss, d->dim, k, classes);
	return *out ? 0 : BOAR_ENOMEM;
}

static int new_model(const struct boar_dataset *d, const boar_options *o,
		     struct boar_model **out, boar_error *err)
{
	struct boar_model *m = NULL;
	int rc = 0;
	if (o->init_model) {
		rc = boar_model_grow_copy(o->init_model, d, &m, err);
	} else if (d->task == BOAR_TASK_LINEAR) {
		rc = new_linear(d, o, &m, err);
		if (!rc)
			m->loss_param = (float)o->loss_param;
	} else {
		m = boar_model_alloc(BOAR_TASK_MF, BOAR_LOSS_SQUARED, d->dim,
				     d->n_items, o->rank, o->mf_biases);
		if (m)
			boar_model_init_factors(m, o->init_scale, o->seed,
						mean_label(d));
	}
	if (!rc && !m)
		rc = boar_fail(err, BOAR_ENOMEM, "out of memory for the model");
	if (rc)
		return rc;
	m->hash_bits = d->hash_bits;
	m->slot_ids = d->slot_ids;
	*out = m;
	return 0;
}

/* Where the sweeps run (the CPU engine or the GPU), and what early stopping
 * watches. */
struct run {
	const struct boar_dataset *d;
	boar_options o;
	struct boar_model *m;
	struct boar_engine *cpu;
	boar_gpu_ctx *gpu;
	uint32_t *train_rows, *holdout_rows; /* a holdout split, or NULL */
	uint64_t n_train, n_holdout;
	struct boar_model *best; /* early stopping: best model so far */
	double best_loss;
	int best_epoch;
};

/* Splits rows into training and holdout by a hash of (seed, row), so the
 * split is the same at any thread count and independent of the order. */
static int split_holdout(struct run *r)
{
	uint64_t n = r->d->n_rows;
	r->train_rows = malloc((n ? n : 1) * sizeof *r->train_rows);
	r->holdout_rows = malloc((n ? n : 1) * sizeof *r->holdout_rows);
	if (!r->train_rows || !r->holdout_rows)
		return BOAR_ENOMEM;
	uint64_t cut = (uint64_t)(r->o.holdout * 18446744073709551615.0);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t s = r->o.seed ^ (i * 0x9E3779B97F4A7C15ULL);
		if (boar_splitmix64(&s) < cut)
			r->holdout_rows[r->n_holdout++] = (uint32_t)i;
		else
			r->train_rows[r->n_train++] = (uint32_t)i;
	}
	return 0;
}

static int start(struct run *r, boar_error *err)
{
	if (r->o.early_stop && !r->o.test && r->o.holdout == 0)
		r->o.holdout = 0.1; /* early stopping needs something to watch */
	if (r->o.holdout > 0 && !r->o.test) {
		if (split_holdout(r))
			return boar_fail(err, BOAR_ENOMEM, "out of memory");
		if (!r->n_train || !r->n_holdout)
			return boar_fail(err, BOAR_EINVAL,
					 "holdout %.3g leaves no rows to train "
					 "or to hold out",
					 r->o.holdout);
	}
	if (r->o.device == BOAR_DEVICE_GPU && r->m->n_classes)
		return boar_fail(err, BOAR_EINVAL,
				 "the GPU engine has no multiclass models yet; "
				 "use the CPU");
	if (r->o.device == BOAR_DEVICE_GPU && r->train_rows)
		return boar_fail(err, BOAR_EINVAL,
				 "early stopping on the GPU needs a test set "
				 "(--test); the GPU engine cannot hold rows out");
	if (r->o.device == BOAR_DEVICE_GPU)
		return boar_gpu_open(r->d, &r->o, r->m, &r->gpu, err);
	if (r->train_rows)
		return boar_engine_create_subset(r->d, &r->o, r->m,
						 r->train_rows, r->n_train,
						 r->o.epochs > 1, &r->cpu, err);
	return boar_engine_create_subset(r->d, &r->o, r->m, NULL,
					 r->d->n_rows, r->o.epochs > 1,
					 &r->cpu, err);
}

static void finish(struct run *r)
{
	boar_engine_free(r->cpu);
	boar_gpu_close(r->gpu);
	boar_model_free(r->best);
	free(r->train_rows);
	free(r->holdout_rows);
}

static int sweep(struct run *r, int epoch, double eta, double *loss,
		 boar_error *err)
{
	if (r->gpu)
		return boar_gpu_epoch(r->gpu, epoch, eta, loss, err);
	int rc = boar_engine_sweep(r->cpu, epoch, 0, boar_engine_rows(r->cpu),
				   loss);
	return rc ? boar_fail(err, rc, "training diverged in epoch %d "
				       "(non-finite loss); lower --eta",
			      epoch)
		  : 0;
}

/* Test-set metrics and the holdout loss of this epoch into st. */
static int evaluate(struct run *r, boar_epoch_stats *st, boar_error *err)
{
	boar_metrics t;
	int rc;
	if (!r->o.test && !r->holdout_rows)
		return 0;
	if (r->gpu && (rc = boar_gpu_download(r->gpu, r->m, err)))
		return rc;
	if (r->o.test) {
		if ((rc = boar_evaluate(r->m, r->o.test, &t, r->o.threads)))
			return boar_fail(err, rc, "evaluating the test set: %s",
					 boar_strerror(rc));
		st->has_test = 1;
		st->test_loss = t.loss;
		st->test_accuracy = t.accuracy;
		st->test_auc = t.auc;
		st->test_rmse = t.rmse;
		st->holdout_loss = t.loss;
	} else {
		rc = boar_evaluate_rows(r->m, r->d, r->holdout_rows,
					r->n_holdout, &t, r->o.threads);
		if (rc)
			return boar_fail(err, rc, "evaluating the holdout");
		st->holdout_loss = t.loss;
	}
	st->has_holdout = r->o.early_stop > 0;
	return 0;
}

/* Keeps the best model so far; 1 when patience has run out. */
static int early_stop_check(struct run *r, boar_epoch_stats *st,
			    boar_error *err)
{
	if (!r->o.early_stop)
		return 0;
	if (!r->best || st->holdout_loss < r->best_loss) {
		if (boar_model_copy_into(&r->best, r->m)) {
			boar_fail(err, BOAR_ENOMEM, "out of memory");
			return -1;
		}
		r->best_loss = st->holdout_loss;
		r->best_epoch = st->epoch;
	}
	st->best_epoch = r->best_epoch;
	return st->epoch - r->best_epoch >= r->o.early_stop;
}

static int all_finite(const float *a, uint64_t n)
{
	int ok = 1;
#pragma omp parallel for reduction(&& : ok) schedule(static)
	for (uint64_t i = 0; i < n; i++)
		ok = ok && isfinite(a[i]);
	return ok;
}

static int model_finite(const struct boar_model *m)
{
	if (m->task == BOAR_TASK_LINEAR)
		return all_finite(m->w, (m->dim + 1) * boar_model_width(m));
	return all_finite(m->P, m->dim * m->rank) &&
	       all_finite(m->Q, m->n_items * m->rank) &&
	       (!m->has_bias || (all_finite(m->bu, m->dim) &&
				 all_finite(m->bi, m->n_items)));
}

static int epochs(struct run *r, boar_error *err)
{
	uint64_t rows = r->cpu ? boar_engine_rows(r->cpu) : r->d->n_rows;
	uint64_t work = r->d->task == BOAR_TASK_LINEAR
				? (uint64_t)((double)r->d->nnz * rows /
					     (r->d->n_rows ? r->d->n_rows : 1))
				: rows;
	for (int epoch = 1; epoch <= r->o.epochs; epoch++) {
		boar_epoch_stats st = {.epoch = epoch, .best_epoch = epoch};
		double loss = 0;
		double eta = boar_step_size(r->o.eta, r->o.eta_decay, epoch);
		double t0 = omp_get_wtime();
		int rc = sweep(r, epoch, eta, &loss, err);
		if (rc)
			return rc;
		st.seconds = omp_get_wtime() - t0;
		st.updates_per_sec = st.seconds > 0 ? work / st.seconds : 0;
		st.train_loss = loss / (rows ? rows : 1);
		st.eta = eta;
		if (!isfinite(st.train_loss))
			return boar_fail(err, BOAR_EDIVERGED,
					 "training diverged in epoch %d "
					 "(non-finite loss); lower --eta",
					 epoch);
		if ((rc = evaluate(r, &st, err)))
			return rc;
		int stop = early_stop_check(r, &st, err);
		if (stop < 0)
			return BOAR_ENOMEM;
		if (r->o.progress && r->o.progress(&st, r->o.progress_ctx))
			return boar_fail(err, BOAR_ECANCELLED,
					 "stopped after epoch %d by the "
					 "progress callback",
					 epoch);
		if (stop)
			break;
	}
	if (r->gpu)
		return boar_gpu_download(r->gpu, r->m, err);
	return 0;
}

int boar_train(const boar_dataset *train, const boar_options *o_in,
	       boar_model **out, boar_error *err)
{
	const char *why = boar_options_check(o_in, train);
	if (why)
		return boar_fail(err, BOAR_EINVAL, "%s", why);
	if (o_in->hash_bits && o_in->hash_bits != train->hash_bits)
		return boar_fail(err, BOAR_EINVAL,
				 "options ask for hash-bits %d but the data was "
				 "loaded with %d",
				 o_in->hash_bits, train->hash_bits);
	boar_error_clear(err);
	struct run r = {.d = train, .o = *o_in};
	boar_options_resolve(&r.o, train);
	int rc = new_model(train, &r.o, &r.m, err);
	if (rc)
		return rc;
	if (!(rc = start(&r, err)))
		rc = epochs(&r, err);
	if (rc && rc != BOAR_ECANCELLED)
		goto fail;
	if (r.best) { /* early stopping: hand back the best epoch's model */
		struct boar_model *t = r.m;
		r.m = r.best;
		r.best = t;
	}
	if (!model_finite(r.m)) {
		rc = boar_fail(err, BOAR_EDIVERGED,
			       "training diverged (non-finite weights); lower "
			       "--eta or add regularization");
		goto fail;
	}
	finish(&r);
	*out = r.m;
	return rc; /* 0, or BOAR_ECANCELLED with the model so far */
fail:
	finish(&r);
	boar_model_free(r.m);
	return rc;
}
