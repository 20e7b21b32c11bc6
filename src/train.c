/* train.c - boar_train(): the epoch loop shared by every place the sweep
 * runs. It shapes and initializes the model, hands each epoch's sweep to
 * the CPU engine or the GPU, evaluates the test set, reports progress, and
 * refuses to return a model that diverged.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "dataset.h"
#include "engine.h"
#include "error.h"
#include "gpu/gpu_engine.h"
#include "model.h"
#include "options.h"

static double mean_label(const struct boar_dataset *d)
{
	double s = 0;
	for (uint64_t r = 0; r < d->n_rows; r++)
		s += d->label[r];
	return d->n_rows ? s / d->n_rows : 0;
}

static struct boar_model *new_model(const struct boar_dataset *d,
				    const boar_options *o)
{
	struct boar_model *m;
	if (d->task == BOAR_TASK_LINEAR) {
		m = boar_model_alloc(BOAR_TASK_LINEAR, o->loss, d->dim, 0, 0, 0);
	} else {
		m = boar_model_alloc(BOAR_TASK_MF, BOAR_LOSS_SQUARED, d->dim,
				     d->n_items, o->rank, o->mf_biases);
		if (m)
			boar_model_init_factors(m, o->init_scale, o->seed,
						mean_label(d));
	}
	if (m)
		m->hash_bits = d->hash_bits;
	return m;
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
		return all_finite(m->w, m->dim + 1);
	return all_finite(m->P, m->dim * m->rank) &&
	       all_finite(m->Q, m->n_items * m->rank) &&
	       (!m->has_bias || (all_finite(m->bu, m->dim) &&
				 all_finite(m->bi, m->n_items)));
}

/* Where the sweeps run: the CPU engine or the GPU context. */
struct runner {
	struct boar_engine *cpu;
	boar_gpu_ctx *gpu;
};

static int runner_epoch(struct runner *r, const struct boar_dataset *d,
			int epoch, double eta, double *loss, boar_error *err)
{
	if (r->gpu)
		return boar_gpu_epoch(r->gpu, epoch, eta, loss, err);
	int rc = boar_engine_sweep(r->cpu, epoch, 0, d->n_rows, loss);
	return rc ? boar_fail(err, rc, "training diverged in epoch %d "
				       "(non-finite loss); lower --eta",
			      epoch)
		  : 0;
}

static int evaluate_test(struct runner *r, struct boar_model *m,
			 const boar_options *o, boar_epoch_stats *st,
			 boar_error *err)
{
	boar_metrics t;
	int rc = 0;
	if (r->gpu && (rc = boar_gpu_download(r->gpu, m, err)))
		return rc;
	if ((rc = boar_evaluate(m, o->test, &t, o->threads)))
		return boar_fail(err, rc, "evaluating the test set: %s",
				 boar_strerror(rc));
	st->has_test = 1;
	st->test_loss = t.loss;
	st->test_accuracy = t.accuracy;
	st->test_auc = t.auc;
	st->test_rmse = m->task == BOAR_TASK_MF ? sqrt(t.loss) : t.rmse;
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
	boar_options o = *o_in;
	boar_options_resolve(&o, train);
	boar_error_clear(err);

	struct boar_model *m = new_model(train, &o);
	if (!m)
		return boar_fail(err, BOAR_ENOMEM, "out of memory for the model");
	struct runner r = {0};
	int rc = o.device == BOAR_DEVICE_GPU
			 ? boar_gpu_open(train, &o, m, &r.gpu, err)
			 : boar_engine_create(train, &o, m, &r.cpu, err);
	if (rc)
		goto fail;

	uint64_t work = train->task == BOAR_TASK_LINEAR ? train->nnz
						       : train->n_rows;
	for (int epoch = 1; epoch <= o.epochs; epoch++) {
		boar_epoch_stats st = {.epoch = epoch};
		double loss = 0, eta = o.eta * pow(o.eta_decay, epoch - 1);
		double t0 = omp_get_wtime();
		if ((rc = runner_epoch(&r, train, epoch, eta, &loss, err)))
			goto fail;
		st.seconds = omp_get_wtime() - t0;
		st.updates_per_sec = st.seconds > 0 ? work / st.seconds : 0;
		st.train_loss = loss / train->n_rows;
		st.eta = eta;
		if (!isfinite(st.train_loss)) {
			rc = boar_fail(err, BOAR_EDIVERGED,
				       "training diverged in epoch %d "
				       "(non-finite loss); lower --eta",
				       epoch);
			goto fail;
		}
		if (o.test && (rc = evaluate_test(&r, m, &o, &st, err)))
			goto fail;
		if (o.progress && o.progress(&st, o.progress_ctx)) {
			rc = boar_fail(err, BOAR_ECANCELLED,
				       "stopped after epoch %d by the progress "
				       "callback",
				       epoch);
			break;
		}
	}
	if (r.gpu && (rc = boar_gpu_download(r.gpu, m, err)))
		goto fail;
	if (!model_finite(m)) {
		rc = boar_fail(err, BOAR_EDIVERGED,
			       "training diverged (non-finite weights); lower "
			       "--eta or add regularization");
		goto fail;
	}
	boar_engine_free(r.cpu);
	boar_gpu_close(r.gpu);
	*out = m;
	return rc; /* 0, or BOAR_ECANCELLED with the model so far */
fail:
	boar_engine_free(r.cpu);
	boar_gpu_close(r.gpu);
	boar_model_free(m);
	return rc;
}
