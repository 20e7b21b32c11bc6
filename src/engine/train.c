/* train.c - the training driver: the epoch loop of every engine and every
 * place (see train.h). It shapes the model (or continues a given one),
 * checks the run against the engine's capabilities, hands each epoch's
 * sweep to the engine through its ops (engine_ops.h), in clocks when a
 * cluster hook is given, evaluates the test set or a holdout, stops early
 * when asked, reports progress, and refuses to return a model that
 * diverged.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "data/classes.h"
#include "data/dataset.h"
#include "engine_ops.h"
#include "base/error.h"
#include "math/loss.h"
#include "math/step.h"
#include "base/mem_limit.h"
#include "model/metrics.h"
#include "model/model.h"
#include "model/model_copy.h"
#include "base/options.h"
#include "base/rng.h"
#include "data/input_spec.h"
#include "model/model_input.h"
#include "model/model_memory.h"
#include "train.h"
#include "sweep_watch.h"
#include "model/train_state.h"

static double mean_label(const struct boar_dataset *d)
{
	double s = 0;
	for (uint64_t r = 0; r < d->n_rows; r++)
		s += d->label[r];
	return d->n_rows ? s / d->n_rows : 0;
}

/* The model every run starts from (boar_train and cluster workers alike):
 * zeros or MF factors drawn from the seed, or a grown copy of a warm start;
 * it keeps the input's hashing so that data loaded the same way fits it. */

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
	int rc = boar_check_class_range(d, err);
	if (rc)
		return rc;
	if (boar_collect_classes(d, classes, BOAR_MAX_CLASSES, &k) || k < 2)
		return boar_fail(err, BOAR_EINVAL,
				 "%s loss needs class labels (+1/-1, 1/0, or up "
				 "to %d distinct integers); use the squared "
				 "loss for real-valued targets",
				 boar_loss_describe(o->loss)->name,
				 BOAR_MAX_CLASSES);
	*out = boar_model_alloc_multiclass(o->loss, d->dim, k, classes);
	return *out ? 0 : BOAR_ENOMEM;
}

/* The first label of d (if any) that `loss` cannot fit: Poisson's are
 * counts. Rows are counted as the dataset holds them. */
static int check_labels(const struct boar_dataset *d, int loss,
			boar_error *err)
{
	for (uint64_t r = 0; d && d->task == BOAR_TASK_LINEAR && r < d->n_rows;
	     r++)
		if (!boar_loss_label_ok(loss, d->label[r]))
			return boar_fail_line(
				err, BOAR_EINVAL, d->path ? d->path : "(data)",
				0, "row %llu: label %g: %s loss needs labels "
				   ">= 0 (counts)",
				(unsigned long long)r + 1, d->label[r],
				boar_loss_describe(loss)->name);
	return 0;
}

static int new_model(const struct boar_dataset *d, const boar_options *o,
		     struct boar_model **out, boar_error *err)
{
	struct boar_model *m = NULL;
	int rc = boar_model_memory_check(d, o, err); /* before any calloc */
	if (rc)
		return rc;
	if (o->init_model) {
		rc = boar_model_grow_copy(o->init_model, d, &m, err);
	} else if (d->task == BOAR_TASK_LINEAR) {
		rc = new_linear(d, o, &m, err);
		if (!rc)
			m->loss_param = (float)o->loss_param;
	} else {
		m = boar_model_alloc(BOAR_TASK_MF, BOAR_LOSS_SQUARED, d->dim,
				     d->n_items, o->rank, o->mf_biases);
		if (m) {
			m->mf_loss = o->mf_loss;
			boar_model_init_factors(m, o->init_scale, o->seed,
						mean_label(d));
		}
		/* non-negative MF starts from U(0, a) */
		for (uint64_t k = 0; m && o->mf_nonneg &&
				     k < (m->dim + m->n_items) * m->rank; k++) {
			float *f = k < m->dim * m->rank
					   ? &m->P[k] : &m->Q[k - m->dim * m->rank];
			*f = fabsf(*f);
		}
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

/* A run: the engine, the hook (cluster clocks) and what early stopping
 * watches. */
struct run {
	struct train_run t; /* what the hook sees */
	const struct train_hook *hook;
	uint64_t first, last, clocks; /* with a hook: this process's share */
	uint32_t *train_rows, *holdout_rows; /* a holdout split, or NULL */
	uint64_t n_train, n_holdout;
	struct boar_model *best; /* early stopping: best model so far */
	double best_loss;
	int best_epoch;
	int epochs_run;
	/* the last epoch's stats, to be evaluated and reported after the
	 * hook's finish (final_into_host) */
	boar_epoch_stats after_finish;
	int report_after_finish;
};

/* Splits rows into training and holdout by a hash of (seed, row), so the
 * split is the same at any thread count and independent of the order. */
static int split_holdout(struct run *r)
{
	uint64_t n = r->t.d->n_rows;
	r->train_rows = malloc((n ? n : 1) * sizeof *r->train_rows);
	r->holdout_rows = malloc((n ? n : 1) * sizeof *r->holdout_rows);
	if (!r->train_rows || !r->holdout_rows)
		return BOAR_ENOMEM;
	uint64_t cut = (uint64_t)(r->t.o.holdout * 18446744073709551615.0);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t s = r->t.o.seed ^ (i * 0x9E3779B97F4A7C15ULL);
		if (boar_splitmix64(&s) < cut)
			r->holdout_rows[r->n_holdout++] = (uint32_t)i;
		else
			r->train_rows[r->n_train++] = (uint32_t)i;
	}
	return 0;
}

/* What the run needs against what the engine and the place (a cluster)
 * can do: one table (engine_caps.c) for every refusal. */
static int check_caps(struct run *r, boar_error *err)
{
	unsigned need = boar_caps_needed(r->t.d, &r->t.o, r->t.m,
					 r->train_rows != NULL);
	int rc;
	if (r->hook && (rc = boar_caps_check(need, r->hook->caps, r->hook->who,
					     r->hook->advice, err)))
		return rc;
	if (r->hook)
		need |= BOAR_CAP(SLICES);
	return boar_caps_check(need, r->t.ops->caps, r->t.ops->name,
			       "use the CPU", err);
}

static int start(struct run *r, boar_error *err)
{
	int rc;
	if (r->t.o.early_stop && !r->t.o.test && r->t.o.holdout == 0)
		r->t.o.holdout = 0.1; /* early stopping needs something to watch */
	if (r->t.o.holdout > 0) {
		if (split_holdout(r))
			return boar_fail(err, BOAR_ENOMEM, "out of memory");
		if (!r->n_train || !r->n_holdout)
			return boar_fail(err, BOAR_EINVAL,
					 "holdout %.3g leaves no rows to train "
					 "or to hold out",
					 r->t.o.holdout);
	}
	if ((rc = boar_engine_for(&r->t.o, &r->t.ops, err)) ||
	    (rc = check_caps(r, err)))
		return rc;
	/* A packed engine's order indexes its own copy of the rows: only for
	 * whole sweeps, where nobody maps the order back to the data. */
	int layout = r->hook ? r->hook->layout & ~BOAR_LAYOUT_PACK
		     : r->t.o.epochs > 1 ? BOAR_LAYOUT_ALL
					 : 0;
	rc = r->t.ops->open(r->t.d, &r->t.o, r->t.m, r->train_rows,
			    r->train_rows ? r->n_train : r->t.d->n_rows, layout,
			    &r->t.eng, err);
	if (rc)
		return rc;
	r->first = 0;
	r->last = r->t.ops->rows(r->t.eng);
	r->clocks = 1;
	if (r->hook)
		return r->hook->start(r->hook->ctx, &r->t, &r->first, &r->last,
				      &r->clocks, err);
	return 0;
}

static void finish(struct run *r)
{
	if (r->t.eng)
		r->t.ops->close(r->t.eng);
	boar_model_free(r->best);
	free(r->train_rows);
	free(r->holdout_rows);
}

/* This process's share of an epoch: one sweep, or (with a hook) clocks of
 * pull, sweep a slice, push. */
static int sweep(struct run *r, int epoch, double eta, double *loss,
		 boar_error *err)
{
	const struct boar_engine_ops *ops = r->t.ops;
	const struct train_hook *h = r->hook;
	if (!h)
		return ops->sweep(r->t.eng, epoch, r->first, r->last, eta, loss,
				  err);
	const uint32_t *order;
	int rc = ops->order(r->t.eng, epoch, &order, err);
	for (uint64_t k = 0; !rc && k < r->clocks; k++) {
		uint64_t b = r->first + (r->last - r->first) * k / r->clocks;
		uint64_t e = r->first + (r->last - r->first) * (k + 1) / r->clocks;
		if (!(rc = h->pull(h->ctx, &r->t, order, b, e, err)) &&
		    !(rc = ops->sweep(r->t.eng, epoch, b, e, eta, loss, err)))
			rc = h->push(h->ctx, &r->t, e - b, err);
	}
	return rc;
}

/* The engine's weights into the host model (and, in a cluster, every
 * key fresh from the servers), for an evaluation: not the engine's copy
 * where the hook's refresh writes every weight the test set reads (a
 * 2^22 model's 4M weights an epoch for a test set's keys). */
static int host_model(struct run *r, boar_error *err)
{
	const struct train_hook *h = r->hook;
	int rc = h && h->refresh_covers_test && !r->holdout_rows
			 ? 0
			 : r->t.ops->sync(r->t.eng, r->t.m, err);
	if (!rc && h)
		rc = h->refresh(h->ctx, &r->t, err);
	return rc;
}

/* Whether an epoch's end evaluates anything. */
static int evaluates(const struct run *r)
{
	return r->t.o.test || r->holdout_rows;
}

/* Test-set metrics and the holdout loss of this epoch into st: of the
 * engine's weights made fresh in the host model, or (fresh 0) of the
 * host model as it is (the final one, put there by the hook's finish). */
static int evaluate(struct run *r, boar_epoch_stats *st, int fresh,
		    boar_error *err)
{
	boar_metrics t;
	boar_error why;
	int rc;
	if (!evaluates(r))
		return 0;
	if (fresh && (rc = host_model(r, err)))
		return rc;
	if (r->t.o.test) {
		if ((rc = boar_evaluate(r->t.m, r->t.o.test, &t, r->t.o.threads,
					&why)))
			return boar_fail(err, rc, "evaluating the test set: %s",
					 why.message);
		st->has_test = 1;
		st->test_loss = t.loss;
		st->test_accuracy = t.accuracy;
		st->test_auc = t.auc;
		st->test_rmse = t.rmse;
		st->test_mae = t.mae;
		st->holdout_loss = t.loss;
	}
	/* Held-out rows, when asked for, are what early stopping watches,
	 * even beside a test set: the test set then stays unseen by the
	 * choice of epoch. */
	if (r->holdout_rows) {
		rc = boar_evaluate_rows(r->t.m, r->t.d, r->holdout_rows,
					r->n_holdout, &t, r->t.o.threads, &why);
		if (rc)
			return boar_fail(err, rc, "evaluating the holdout: %s",
					 why.message);
		st->holdout_loss = t.loss;
	}
	st->has_holdout = r->t.o.early_stop > 0;
	return 0;
}

/* Keeps the best model so far; 1 when patience has run out. */
static int early_stop_check(struct run *r, boar_epoch_stats *st,
			    boar_error *err)
{
	if (!r->t.o.early_stop)
		return 0;
	if (!r->best || st->holdout_loss < r->best_loss) {
		if (boar_model_copy_into(&r->best, r->t.m)) {
			boar_fail(err, BOAR_ENOMEM, "out of memory");
			return -1;
		}
		r->best_loss = st->holdout_loss;
		r->best_epoch = st->epoch;
	}
	st->best_epoch = r->best_epoch;
	return st->epoch - r->best_epoch >= r->t.o.early_stop;
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

/* An epoch's end: its evaluation (fresh: see evaluate), early stopping's
 * watch and the progress callback; *stop set where early stopping ends
 * the run. @return 0, or an error code (BOAR_ECANCELLED where the
 * callback stopped it). */
static int epoch_end(struct run *r, boar_epoch_stats *st, int fresh,
		     int *stop, boar_error *err)
{
	int rc = evaluate(r, st, fresh, err);
	if (rc)
		return rc;
	*stop = early_stop_check(r, st, err);
	if (*stop < 0)
		return BOAR_ENOMEM;
	if (r->t.o.progress && r->t.o.progress(st, r->t.o.progress_ctx)) {
		/* the caller gets the model so far: synced (after finish the
		 * host model is the final one already) */
		if (fresh && (rc = r->t.ops->sync(r->t.eng, r->t.m, err)))
			return rc;
		return boar_fail(err, BOAR_ECANCELLED,
				 "stopped after epoch %d by the progress "
				 "callback",
				 st->epoch);
	}
	return 0;
}

/* Whether the last epoch is evaluated after the hook's finish, on the
 * final model it puts in the host model: a cluster worker that gathers
 * would otherwise pull the test set's weights for an evaluation, then
 * gather the model and have it evaluated again. */
static int last_after_finish(const struct run *r)
{
	const struct train_hook *h = r->hook;
	return h && h->final_into_host && evaluates(r) &&
	       h->final_into_host(h->ctx, &r->t);
}

static int epoch_loop(struct run *r, struct sweep_watch *watch,
		      boar_error *err)
{
	uint64_t rows = r->last - r->first;
	uint64_t work = r->t.d->task == BOAR_TASK_LINEAR
				? (uint64_t)((double)r->t.d->nnz * rows /
					     (r->t.d->n_rows ? r->t.d->n_rows : 1))
				: rows;
	for (int epoch = 1; epoch <= r->t.o.epochs; epoch++) {
		boar_epoch_stats st = {.epoch = epoch, .best_epoch = epoch};
		double loss = 0;
		double eta = boar_step_size(r->t.o.eta, r->t.o.eta_decay, epoch);
		double t0 = omp_get_wtime();
		sweep_watch_begin(watch, epoch, rows);
		int rc = sweep(r, epoch, eta, &loss, err);
		sweep_watch_end(watch);
		if (rc)
			return rc;
		st.seconds = omp_get_wtime() - t0;
		st.updates_per_sec = st.seconds > 0 ? work / st.seconds : 0;
		st.train_loss = loss / (rows ? rows : 1);
		st.eta = eta;
		if (!isfinite(st.train_loss))
			return boar_fail(err, BOAR_EDIVERGED,
					 "training diverged in epoch %d "
					 "(non-finite loss); lower eta",
					 epoch);
		r->epochs_run = epoch;
		if (epoch == r->t.o.epochs && last_after_finish(r)) {
			r->after_finish = st;
			r->report_after_finish = 1;
			break;
		}
		int stop;
		if ((rc = epoch_end(r, &st, 1, &stop, err)))
			return rc;
		if (stop)
			break;
	}
	return r->t.ops->sync(r->t.eng, r->t.m, err);
}

/* The epochs, watched for progress inside them (sweep_watch.h). */
static int epochs(struct run *r, boar_error *err)
{
	struct sweep_watch watch;
	sweep_watch_start(&watch, &r->t.o, r->t.ops, r->t.eng);
	int rc = epoch_loop(r, &watch, err);
	sweep_watch_stop(&watch);
	return rc;
}

int boar_train_driver(const boar_dataset *train, const boar_options *o_in,
		      const struct train_hook *hook, boar_model **out,
		      boar_error *err)
{
	boar_options o;
	int rc = boar_options_import(o_in, train, &o, err);
	if (rc)
		return rc;
	if (o.hash_bits && o.hash_bits != train->hash_bits)
		return boar_fail(err, BOAR_EINVAL,
				 "options ask for hash_bits %d but the data was "
				 "loaded with %d",
				 o.hash_bits, train->hash_bits);
	boar_error_clear(err);
	struct run r = {.t = {.d = train, .o = o}, .hook = hook};
	const struct boar_train_state *prev =
		o.init_model ? o.init_model->state : NULL;
	const char *why;
	if (prev && (why = boar_train_state_resume_options(prev, &r.t.o)))
		return boar_fail(err, BOAR_EINVAL, "%s", why);
	/* auto's linear optimizer where the run cannot take normalized (the
	 * GPU's is resolve's: its device is an option) */
	if (hook && !(hook->caps & BOAR_CAP(NORMALIZED)) &&
	    train->task == BOAR_TASK_LINEAR &&
	    r.t.o.optimizer == BOAR_OPT_AUTO)
		r.t.o.optimizer = BOAR_OPT_ADAGRAD;
	boar_options_resolve(&r.t.o, train);
	if ((rc = new_model(train, &r.t.o, &r.t.m, err)))
		return rc;
	if ((rc = check_labels(train, r.t.m->loss, err)) ||
	    (rc = check_labels(r.t.o.test, r.t.m->loss, err)))
		goto fail;
	if (!(rc = start(&r, err))) {
		if (prev)
			boar_train_state_resume_sums(prev, o.init_model,
						     r.t.ops, r.t.eng);
		rc = epochs(&r, err);
	}
	if (hook && r.t.eng && (!rc || rc == BOAR_ECANCELLED)) {
		int frc = hook->finish(hook->ctx, &r.t, err);
		rc = frc ? frc : rc;
	}
	if (!rc && r.report_after_finish) {
		int stop;
		rc = epoch_end(&r, &r.after_finish, 0, &stop, err);
	}
	if (rc && rc != BOAR_ECANCELLED)
		goto fail;
	if (r.best) { /* early stopping: hand back the best epoch's model */
		struct boar_model *t = r.t.m;
		r.t.m = r.best;
		r.best = t;
	}
	if (!model_finite(r.t.m)) {
		rc = boar_fail(err, BOAR_EDIVERGED,
			       "training diverged (non-finite weights); lower "
			       "eta or add regularization");
		goto fail;
	}
	int rc2 = boar_model_note_input(r.t.m, train, err);
	if (!rc2 && (r.t.o.save_resume || prev) &&
	    !(r.t.m->state = boar_train_state_take(r.t.m, r.t.ops, r.t.eng,
						   &r.t.o, prev, r.epochs_run)))
		rc2 = boar_fail(err, BOAR_ENOMEM, "out of memory");
	if (rc2) {
		rc = rc2;
		goto fail;
	}
	finish(&r);
	*out = r.t.m;
	return rc; /* 0, or BOAR_ECANCELLED with the model so far */
fail:
	finish(&r);
	boar_model_free(r.t.m);
	return rc;
}

int boar_train(const boar_dataset *train, const boar_options *o,
	       boar_model **out, boar_error *err)
{
	return boar_train_driver(train, o, NULL, out, err);
}
