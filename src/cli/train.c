/* train.c - `boar train`: load, fit, report progress, save.
 *
 * Human-readable progress goes to stderr (one line per epoch, or one line
 * rewritten in place when stderr is a terminal); --json objects go to
 * stdout, one per epoch, so `boar train --json ... | jq` sees only JSON.
 * The first Ctrl-C or SIGTERM stops training at the end of the running
 * epoch and keeps (and saves, with -m) the best model so far; a second one
 * quits at once (interrupt.h). FILE "-" is standard input.
 *
 * Warm start (--init-model) loads the model first, because it decides how
 * the data is read (its feature hashing) and what is trained (its task,
 * loss and classes). Early stopping is the library's; this file only says
 * what happened: which epoch's model was kept and why.
 */
#include <math.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "commands.h"
#include "common.h"
#include "cv.h"
#include "search.h"
#include "data_args.h"
#include "data_summary.h"
#include "engine/engine_ops.h"
#include "flag_words.h"
#include "interrupt.h"
#include "json.h"
#include "progress.h"
#include "same_file.h"
#include "train_args.h"

void cmd_train_help(FILE *out)
{
	train_args_help(out);
	cluster_train_help(out);
}

struct run {
	const struct train_args *a;
	struct progress pr;
	int kind; /* PROGRESS_*: which test columns the model has */
	int last_epoch;
	int best_epoch;     /* early stopping: the epoch whose model is kept */
	double best_loss;   /* and its holdout (or test) loss */
	double t_start;     /* when boar_train began (cli_now) */
	double sweep_s;     /* seconds of sweeps so far */
	int target_epoch;   /* --target-rmse: the epoch that reached it, or 0 */
	double target_sweep_s, target_wall_s; /* the time it took */
};

/* --target-rmse: the first epoch whose test RMSE is at most the target
 * stops the run; returns 1 then. */
static int target_reached(struct run *r, const boar_epoch_stats *s)
{
	r->sweep_s += s->seconds;
	if (!(r->a->target_rmse > 0) || !s->has_test ||
	    r->kind != PROGRESS_RMSE || !(s->test_rmse <= r->a->target_rmse))
		return 0;
	r->target_epoch = s->epoch;
	r->target_sweep_s = r->sweep_s;
	r->target_wall_s = cli_now() - r->t_start;
	return 1;
}

static void say_target(const struct run *r)
{
	const struct train_args *a = r->a;
	if (!(a->target_rmse > 0))
		return;
	if (a->json) {
		struct json_obj j;
		json_begin(&j, stdout);
		json_num(&j, "target_rmse", a->target_rmse);
		json_int(&j, "target_epoch", r->target_epoch);
		if (r->target_epoch) {
			json_num(&j, "target_sweep_seconds", r->target_sweep_s);
			json_num(&j, "target_wall_seconds", r->target_wall_s);
		}
		json_end(&j);
	}
	if (a->quiet)
		return;
	if (r->target_epoch)
		fprintf(stderr, "target RMSE %g reached in epoch %d: %.3f s of "
				"sweeps, %.3f s since training began\n",
			a->target_rmse, r->target_epoch, r->target_sweep_s,
			r->target_wall_s);
	else
		fprintf(stderr, "target RMSE %g not reached in %d epochs\n",
			a->target_rmse, r->last_epoch);
}

/* Inside a long epoch, on a terminal: rows, rate and ETA, live. */
static void on_sweep(const boar_sweep_stats *s, void *ctx)
{
	progress_sweep(s, &((struct run *)ctx)->pr);
}

static int on_epoch(const boar_epoch_stats *s, void *ctx)
{
	struct run *r = ctx;
	r->last_epoch = s->epoch;
	if (r->a->json) {
		struct json_obj j;
		json_begin(&j, stdout);
		json_int(&j, "epoch", s->epoch);
		json_num(&j, "seconds", s->seconds);
		json_num(&j, "updates_per_sec", s->updates_per_sec);
		json_num(&j, "train_loss", s->train_loss);
		json_num(&j, "eta", s->eta);
		if (s->has_test) {
			json_num(&j, "test_loss", s->test_loss);
			if (r->kind != PROGRESS_RMSE) {
				json_num(&j, "test_accuracy", s->test_accuracy);
				/* NaN for multiclass: null */
				json_num(&j, "test_auc", s->test_auc);
			} else {
				json_num(&j, "test_rmse", s->test_rmse);
				json_num(&j, "test_mae", s->test_mae);
			}
		}
		if (s->has_holdout || r->pr.holdout)
			json_num(&j, "holdout_loss", s->holdout_loss);
		if (s->has_holdout)
			json_int(&j, "best_epoch", s->best_epoch);
		json_end(&j);
	}
	if (s->has_holdout) {
		r->best_epoch = s->best_epoch;
		if (s->best_epoch == s->epoch)
			r->best_loss = s->holdout_loss;
	}
	progress_epoch(&r->pr, s, r->a->opt.epochs, r->kind);
	return interrupt_requested() || target_reached(r, s);
}

/* Labels other than all +1/-1 or all 1/0 are classes (as the library
 * decides): the test columns are then accuracy and loss, no AUC. */
static int labels_are_classes(const boar_dataset *d)
{
	int pm = 1, zo = 1;
	for (uint64_t r = 0; r < boar_dataset_rows(d) && (pm || zo); r++) {
		const uint32_t *idx;
		const float *val;
		float y;
		if (boar_dataset_row(d, r, &idx, &val, &y, NULL) < 0)
			return 0;
		pm = pm && (y == 1 || y == -1);
		zo = zo && (y == 1 || y == 0);
	}
	return !pm && !zo;
}

/* A --class-weight for a label no training row has is a typo more often
 * than not (LIBLINEAR warns too); it does no harm, so warn, not refuse. */
static void warn_unused_class_weights(const boar_dataset *d,
				      const struct train_args *a)
{
	int n = a->opt.n_class_weights;
	unsigned char seen[TRAIN_ARGS_MAX_CLASS_WEIGHTS] = { 0 };
	if (!n || boar_dataset_task(d) != BOAR_TASK_LINEAR)
		return;
	for (uint64_t r = 0; r < boar_dataset_rows(d); r++) {
		const uint32_t *idx;
		const float *val;
		float y;
		if (boar_dataset_row(d, r, &idx, &val, &y, NULL) < 0)
			return;
		for (int k = 0; k < n; k++)
			seen[k] |= a->cw_labels[k] == y;
	}
	for (int k = 0; k < n; k++)
		if (!seen[k])
			fprintf(stderr, "boar: warning: --class-weight %g:%g: no "
					"row of %s has label %g\n",
				a->cw_labels[k], a->cw_values[k], a->train_path,
				a->cw_labels[k]);
}

static int metric_kind(const boar_dataset *train, const boar_options *o,
		       const boar_model *init)
{
	int kind = boar_loss_describe(o->loss)->kind;
	if (boar_dataset_task(train) != BOAR_TASK_LINEAR ||
	    kind == BOAR_LOSS_KIND_REGRESSION)
		return PROGRESS_RMSE;
	if (init)
		return boar_model_classes(init, NULL) ? PROGRESS_CLASSES
						      : PROGRESS_BINARY;
	if (kind == BOAR_LOSS_KIND_MULTINOMIAL || labels_are_classes(train))
		return PROGRESS_CLASSES;
	return PROGRESS_BINARY;
}

static const char *model_kind(const boar_model *m)
{
	if (boar_model_task(m) == BOAR_TASK_MF)
		return "matrix-factorization";
	return cli_loss_name(boar_model_loss(m));
}

/* Warm start: the initial model decides hashing and loss. Options that
 * contradict it are refused rather than half-applied. */
static int warm_start(struct train_args *a, boar_model **init)
{
	boar_error err = { 0 };
	int rc = boar_model_load(a->init_model_path, init, &err);
	if (rc)
		return cli_report(&err, rc);
	boar_model *m = *init;
	int task = boar_model_task(m);
	int bits = boar_model_hash_bits(m);
	if (a->opt.task != BOAR_TASK_AUTO && a->opt.task != task)
		return cli_usage("train", "--task %s, but the initial model %s "
				 "is a %s model", cli_task_name(a->opt.task),
				 a->init_model_path, cli_task_name(task));
	if (task == BOAR_TASK_LINEAR) {
		if (a->hash_bits_given && a->opt.hash_bits != bits)
			return cli_usage("train", "--hash-bits %d, but the "
					 "initial model %s was trained with "
					 "hash-bits %d", a->opt.hash_bits,
					 a->init_model_path, bits);
		if (a->loss_given && a->opt.loss != boar_model_loss(m))
			return cli_usage("train", "--loss %s, but the initial "
					 "model %s has %s loss (warm start "
					 "keeps the model's loss)",
					 cli_loss_name(a->opt.loss),
					 a->init_model_path,
					 cli_loss_name(boar_model_loss(m)));
		a->opt.loss = boar_model_loss(m);
		a->opt.hash_bits = a->load.hash_bits = bits;
	} else {
		uint32_t rank = boar_model_rank(m);
		const float *P, *Q, *bu, *bi;
		float mu;
		uint64_t items;
		int biases = !boar_model_factors(m, &P, &Q, &bu, &bi, &mu,
						 &items, NULL) && bu;
		if (a->rank_given && a->opt.rank != rank)
			return cli_usage("train", "--rank %u, but the initial "
					 "model %s has rank %u (warm start "
					 "keeps the model's factors)",
					 a->opt.rank, a->init_model_path, rank);
		if (a->biases_given && a->opt.mf_biases != biases)
			return cli_usage("train", "--%smf-biases, but the initial "
					 "model %s has %s", a->opt.mf_biases
						 ? "" : "no-", a->init_model_path,
					 biases ? "biases" : "no biases");
		if (a->mf_loss_given &&
		    a->opt.mf_loss != boar_model_mf_loss(m))
			return cli_usage("train", "--mf-loss %s, but the initial "
					 "model %s was trained for %s (warm "
					 "start keeps the model's loss)",
					 cli_mf_loss_names[a->opt.mf_loss],
					 a->init_model_path,
					 cli_mf_loss_names[boar_model_mf_loss(m)]);
		a->opt.rank = rank;
		a->opt.mf_biases = biases;
		a->opt.mf_loss = boar_model_mf_loss(m);
	}
	/* The data is read the way the model's was (CSV columns, VW
	 * namespaces); options that say otherwise are refused. */
	char why[400];
	if (cli_data_for_model(m, a->init_model_path, &a->load, a->data_given,
			       why, sizeof why))
		return cli_usage("train", "%s", why);
	/* Only CSV columns cannot be told from the file: other formats are
	 * still detected, so data of another task is named as such below. */
	if (a->load.format != BOAR_FORMAT_CSV &&
	    !(a->data_given & CLI_DATA_BIT(CLI_DATA_FORMAT))) {
		a->load.format = BOAR_FORMAT_AUTO;
		a->load.task = a->opt.task;
	}
	return CLI_EXIT_OK;
}

/* After early stopping: which epoch's model is kept, and why. */
static void say_early_stop(const struct run *r, int stopped_early)
{
	const boar_options *o = &r->a->opt;
	const char *watched = o->holdout > 0 || !r->a->test_path ? "holdout"
								  : "test";
	if (!o->early_stop || !r->best_epoch)
		return;
	if (stopped_early)
		fprintf(stderr, "early stop: no improvement for %d epoch%s; "
				"keeping epoch %d (%s loss %.4f)\n",
			r->last_epoch - r->best_epoch,
			r->last_epoch - r->best_epoch == 1 ? "" : "s",
			r->best_epoch, watched, r->best_loss);
	else if (r->best_epoch != r->last_epoch)
		fprintf(stderr, "early stop: ran all %d epochs; keeping epoch "
				"%d (%s loss %.4f)\n",
			r->last_epoch, r->best_epoch, watched, r->best_loss);
}

/* The training file (its weights) and the --test file; with --cv, the
 * cross-validation too. @return the exit status so far. */
static int load_data(struct train_args *a, const boar_model *init,
		     boar_dataset **train, boar_dataset **test)
{
	boar_error err = { 0 };
	int rc;
	double t0 = cli_now();
	rc = progress_load(a->train_path, &a->load, a->quiet, train, &err);
	if (rc)
		return cli_report(&err, rc);
	if (!a->quiet)
		data_describe("train", a->train_path, *train, cli_now() - t0);
	if (init && boar_dataset_task(*train) != boar_model_task(init)) {
		int mf = boar_model_task(init) == BOAR_TASK_MF;
		fprintf(stderr, "boar: %s is a %s model but %s holds %s; "
				"warm start needs data of the model's task\n",
			a->init_model_path,
			mf ? "matrix-factorization" : "linear", a->train_path,
			mf ? "linear data (LIBSVM rows)" : "ratings");
		return CLI_EXIT_RUNTIME;
	}
	warn_unused_class_weights(*train, a);
	if (a->weights_path) {
		rc = boar_dataset_load_weights(*train, a->weights_path, &err);
		if (rc)
			return cli_report(&err, rc);
	}
	if (a->cv && !a->search.given)
		return cv_run(*train, &a->opt, a->cv, a->json, a->train_path);
	if (a->test_path) {
		/* The test file is read as the training file was: same task
		 * and hashing, so feature ids land on the same weights. */
		boar_load_options lo = a->load;
		lo.task = boar_dataset_task(*train);
		lo.rows_ready = NULL; /* only the training rows go ahead */
		double t1 = cli_now();
		rc = progress_load(a->test_path, &lo, a->quiet, test, &err);
		if (rc)
			return cli_report(&err, rc);
		if (!a->quiet)
			data_describe("test", a->test_path, *test, cli_now() - t1);
		a->opt.test = *test;
	}
	return CLI_EXIT_OK;
}

/* The closing lines of a run that is not --quiet: what was trained, its
 * test metrics, where it went. CLI_EXIT_OK, or the exit of a refusal. */
static int say_trained(const struct train_args *a, const struct run *r,
		       const boar_model *model, const boar_model *init,
		       const boar_dataset *test, double t_train)
{
	uint32_t k = boar_model_classes(model, NULL);
	fprintf(stderr, "trained %s model in %.2f s (%d epoch%s",
		model_kind(model), t_train, r->last_epoch,
		r->last_epoch == 1 ? "" : "s");
	if (k)
		fprintf(stderr, ", %u classes%s", k,
			boar_loss_describe(boar_model_loss(model))->kind ==
					BOAR_LOSS_KIND_MULTINOMIAL
				? ""
				: ", one-vs-rest");
	if (init)
		fprintf(stderr, ", from %s", a->init_model_path);
	fputs(")\n", stderr);
	if (test) {
		boar_metrics m;
		boar_error err;
		int rc = boar_evaluate(model, test, &m, a->opt.threads, &err);
		if (rc)
			return cli_report(&err, rc);
		progress_summary(stderr, a->test_path, model, &m);
	}
	if (a->model_out)
		fprintf(stderr, "model saved to %s\n", a->model_out);
	return CLI_EXIT_OK;
}

/* The library's verdict on the options with this data, in flags:
 * CLI_EXIT_OK or the usage exit. */
static int check_options(const struct train_args *a,
			 const boar_dataset *train)
{
	boar_error bad;
	char words[sizeof bad.message];
	if (!boar_options_check(&a->opt, train, &bad))
		return CLI_EXIT_OK;
	return cli_usage("train", "%s",
			 cli_flag_words(bad.message, words, sizeof words));
}

/* load_data with the engine warming up beside it: CUDA starts on a thread
 * while the data is read, and on one GPU the training rows go to the card
 * as they are parsed (engine_ops.h), a copy that a->opt.gpu_preload then
 * offers the engine (it takes it only for those rows). *warm: the handle
 * for boar_engine_warm_join. @return load_data's status. */
static int load_warm(struct train_args *a, const boar_model *init,
		     boar_dataset **train, boar_dataset **test, void **warm)
{
	*warm = boar_engine_warm_start(&a->opt);
	if (*warm) {
		a->load.rows_ready = boar_engine_warm_rows;
		a->load.rows_ready_ctx = *warm;
	}
	int status = load_data(a, init, train, test);
	a->load.rows_ready = NULL;
	a->opt.gpu_preload = boar_engine_warm_done(
		*warm, status == CLI_EXIT_OK ? *train : NULL);
	return status;
}

int cmd_train(int argc, char **argv)
{
	struct train_args a;
	char why[512];
	boar_error err = { 0 };
	boar_dataset *train = NULL, *test = NULL;
	boar_model *model = NULL, *init = NULL;
	void *warm = NULL;
	int rc, status = CLI_EXIT_RUNTIME;

	if ((rc = cluster_route(argc, argv)) >= 0)
		return rc;
	interrupt_install();
	switch (train_args_parse(&a, argc, argv, why, sizeof why)) {
	case TRAIN_ARGS_HELP:
		cmd_train_help(stdout);
		return CLI_EXIT_OK;
	case TRAIN_ARGS_ERROR:
		return cli_usage("train", "%s", why);
	}
	if ((rc = cli_refuse_model_over_inputs(&a, &err)))
		return cli_report(&err, rc);

	if (a.init_model_path) {
		status = warm_start(&a, &init);
		if (status != CLI_EXIT_OK)
			goto out;
		status = CLI_EXIT_RUNTIME;
		a.opt.init_model = init;
	}

	status = load_warm(&a, init, &train, &test, &warm);
	if (status != CLI_EXIT_OK || (a.cv && !a.search.given))
		goto out;
	if (a.search.given) {
		status = search_run(&a, train, test);
		goto out;
	}
	if ((status = check_options(&a, train)) != CLI_EXIT_OK)
		goto out;
	status = CLI_EXIT_RUNTIME;

	struct run r = { .a = &a, .best_loss = NAN };
	r.kind = metric_kind(train, &a.opt, init);
	progress_init(&r.pr, a.quiet);
	r.pr.holdout = a.opt.holdout > 0;
	a.opt.progress = on_epoch;
	a.opt.progress_ctx = &r;
	if (r.pr.tty && !a.quiet)
		a.opt.sweep_progress = on_sweep;

	interrupt_training();
	double t_train = cli_now();
	r.t_start = t_train;
	rc = boar_train(train, &a.opt, &model, &err);
	t_train = cli_now() - t_train;
	progress_done(&r.pr);
	if (rc == BOAR_ECANCELLED && model && r.target_epoch &&
	    !interrupt_requested()) {
		rc = 0; /* stopped at --target-rmse */
	} else if (rc == BOAR_ECANCELLED && model) {
		fprintf(stderr, "boar: interrupted: keeping the model of "
				"epoch %d\n", a.opt.early_stop && r.best_epoch
						     ? r.best_epoch
						     : r.last_epoch);
	} else if (rc) {
		status = cli_report(&err, rc);
		goto out;
	}
	/* Said once a model exists, so that a refusal stays one line. */
	data_warn_one_class(a.train_path, train, a.opt.loss);
	/* The model kept is not the last epoch's: say which one. */
	if (rc != BOAR_ECANCELLED && !a.quiet && !r.target_epoch)
		say_early_stop(&r, r.last_epoch < a.opt.epochs);
	say_target(&r);

	if (a.model_out) {
		sigset_t held;
		interrupt_hold(&held); /* the file is written whole */
		rc = boar_model_save(model, a.model_out, &err);
		interrupt_release(&held);
		if (rc) {
			status = cli_report(&err, rc);
			goto out;
		}
	}
	if (!a.quiet && (status = say_trained(&a, &r, model, init, test,
					      t_train)) != CLI_EXIT_OK)
		goto out;
	status = interrupt_requested() ? 128 + interrupt_requested()
				       : CLI_EXIT_OK;
out:
	boar_engine_warm_join(warm);
	boar_model_free(model);
	boar_model_free(init);
	boar_dataset_free(test);
	boar_dataset_free(train);
	return status;
}
