/* train.c - `boar train`: load, fit, report progress, save.
 *
 * Human-readable progress goes to stderr (one line per epoch, or one line
 * rewritten in place when stderr is a terminal); --json objects go to
 * stdout, one per epoch, so `boar train --json ... | jq` sees only JSON.
 * The first Ctrl-C stops training at the end of the running epoch and
 * keeps (and saves, with -m) the model trained so far; a second one
 * kills the process.
 */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "commands.h"
#include "common.h"
#include "json.h"
#include "progress.h"
#include "train_args.h"

void cmd_train_help(FILE *out)
{
	train_args_help(out);
	cluster_train_help(out);
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	interrupted = 1;
	signal(sig, SIG_DFL);
}

struct run {
	const struct train_args *a;
	struct progress pr;
	int binary; /* test metrics are accuracy/AUC rather than RMSE */
	int last_epoch;
};

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
			if (r->binary) {
				json_num(&j, "test_accuracy", s->test_accuracy);
				json_num(&j, "test_auc", s->test_auc);
			} else {
				json_num(&j, "test_rmse", s->test_rmse);
			}
		}
		json_end(&j);
	}
	progress_epoch(&r->pr, s, r->a->opt.epochs, r->binary);
	return interrupted;
}

static void describe(const char *what, const char *path, const boar_dataset *d,
		     double secs)
{
	if (boar_dataset_task(d) == BOAR_TASK_MF)
		fprintf(stderr,
			"%s %s: %llu ratings, %llu users, %llu items (%.2f s)\n",
			what, path, (unsigned long long)boar_dataset_rows(d),
			(unsigned long long)boar_dataset_features(d),
			(unsigned long long)boar_dataset_items(d), secs);
	else
		fprintf(stderr,
			"%s %s: %llu rows, %llu features, %llu non-zeros "
			"(%.2f s)\n",
			what, path, (unsigned long long)boar_dataset_rows(d),
			(unsigned long long)boar_dataset_features(d),
			(unsigned long long)boar_dataset_nnz(d), secs);
}

int cmd_train(int argc, char **argv)
{
	struct train_args a;
	char why[512];
	boar_error err = { 0 };
	boar_dataset *train = NULL, *test = NULL;
	boar_model *model = NULL;
	int rc, status = CLI_EXIT_RUNTIME;

	if (cluster_train_wanted(argc, argv))
		return cluster_train(argc, argv);
	switch (train_args_parse(&a, argc, argv, why, sizeof why)) {
	case TRAIN_ARGS_HELP:
		cmd_train_help(stdout);
		return CLI_EXIT_OK;
	case TRAIN_ARGS_ERROR:
		return cli_usage("train", "%s", why);
	}

	double t0 = cli_now();
	rc = boar_dataset_load(a.train_path, &a.load, &train, &err);
	if (rc) {
		status = cli_report(&err, rc);
		goto out;
	}
	if (!a.quiet)
		describe("train", a.train_path, train, cli_now() - t0);
	if (a.test_path) {
		/* The test file is read as the training file was: same task
		 * and hashing, so feature ids land on the same weights. */
		boar_load_options lo = a.load;
		lo.task = boar_dataset_task(train);
		double t1 = cli_now();
		rc = boar_dataset_load(a.test_path, &lo, &test, &err);
		if (rc) {
			status = cli_report(&err, rc);
			goto out;
		}
		if (!a.quiet)
			describe("test", a.test_path, test, cli_now() - t1);
		a.opt.test = test;
	}
	const char *reason = boar_options_check(&a.opt, train);
	if (reason) {
		status = cli_usage("train", "%s", reason);
		goto out;
	}

	struct run r = { .a = &a };
	r.binary = boar_dataset_task(train) == BOAR_TASK_LINEAR &&
		   a.opt.loss != BOAR_LOSS_SQUARED;
	progress_init(&r.pr, a.quiet);
	a.opt.progress = on_epoch;
	a.opt.progress_ctx = &r;

	signal(SIGINT, on_interrupt);
	double t_train = cli_now();
	rc = boar_train(train, &a.opt, &model, &err);
	t_train = cli_now() - t_train;
	signal(SIGINT, SIG_DFL);
	progress_done(&r.pr);
	if (rc == BOAR_ECANCELLED && model) {
		fprintf(stderr, "boar: interrupted: keeping the model of "
				"epoch %d\n", r.last_epoch);
	} else if (rc) {
		status = cli_report(&err, rc);
		goto out;
	}

	if (a.model_out) {
		rc = boar_model_save(model, a.model_out, &err);
		if (rc) {
			status = cli_report(&err, rc);
			goto out;
		}
	}
	if (!a.quiet) {
		fprintf(stderr, "trained %s model in %.2f s (%d epoch%s)\n",
			boar_model_task(model) == BOAR_TASK_MF
				? "matrix-factorization"
				: cli_loss_name(boar_model_loss(model)),
			t_train, r.last_epoch, r.last_epoch == 1 ? "" : "s");
		if (test) {
			boar_metrics m;
			rc = boar_evaluate(model, test, &m, a.opt.threads);
			if (rc) {
				status = cli_report(NULL, rc);
				goto out;
			}
			progress_summary(stderr, a.test_path, model, &m);
		}
		if (a.model_out)
			fprintf(stderr, "model saved to %s\n", a.model_out);
	}
	status = interrupted ? 128 + SIGINT : CLI_EXIT_OK;
out:
	boar_model_free(model);
	boar_dataset_free(test);
	boar_dataset_free(train);
	return status;
}
