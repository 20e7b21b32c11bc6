/* search.c - `boar train --search` (search.h): the table and the model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "commands.h"
#include "common.h"
#include "interrupt.h"
#include "json.h"
#include "progress.h"
#include "search.h"

struct search_ui {
	const struct train_args *a;
	struct progress pr;  /* the live line and the final model's epochs */
	char metric[40];     /* "RMSE", "log loss", ... */
	int regression, mae, folds;
	int n, reported;     /* configurations, and results shown */
	long epochs_done, epochs_all;
	double t0, shown;    /* start, and when the live line was drawn */
};

/* What the choice minimizes, as people say it, into u->metric. */
static void metric_name(struct search_ui *u, const boar_dataset *d,
			const boar_options *o)
{
	const boar_loss_desc *l = boar_loss_describe(o->loss);
	int mf = boar_dataset_task(d) == BOAR_TASK_MF;
	u->regression = mf || l->kind == BOAR_LOSS_KIND_REGRESSION;
	/* the library judges MF for MAE by its loss, the MAE */
	u->mae = mf && o->mf_loss == BOAR_MF_LOSS_ABSOLUTE;
	if (u->mae)
		snprintf(u->metric, sizeof u->metric, "MAE");
	else if (u->regression)
		snprintf(u->metric, sizeof u->metric, "RMSE");
	else if (l->probabilistic)
		snprintf(u->metric, sizeof u->metric, "log loss");
	else
		snprintf(u->metric, sizeof u->metric, "%s loss", l->name);
}

static void table_head(struct search_ui *u)
{
	fprintf(stderr, " %9s %10s %10s  %10s", "eta", "l1", "l2", u->metric);
	if (u->folds > 1)
		fprintf(stderr, " %9s", "+- sd");
	if (!u->regression)
		fprintf(stderr, " %9s %7s", "accuracy", "AUC");
	fprintf(stderr, " %6s %8s\n", "epochs", "seconds");
}

static void table_row(struct search_ui *u, const boar_search_result *r,
		      int best)
{
	fprintf(stderr, "%c%9.4g %10.4g %10.4g  ", best ? '*' : ' ', r->eta,
		r->l1, r->l2);
	if (r->rc) {
		fprintf(stderr, "failed: %s\n", boar_strerror(r->rc));
		return;
	}
	fprintf(stderr, "%10.4f", r->score);
	if (u->folds > 1)
		fprintf(stderr, " %9.4f", r->score_sd);
	if (!u->regression) {
		fprintf(stderr, " %9.4f", r->accuracy);
		if (r->binary && isfinite(r->auc))
			fprintf(stderr, " %7.4f", r->auc);
		else
			fprintf(stderr, " %7s", "-");
	}
	fprintf(stderr, " %6d %8.2f\n", r->epochs, r->seconds);
}

static void json_result(const struct search_ui *u, const boar_search_result *r,
			int index, int best)
{
	struct json_obj j;
	json_begin(&j, stdout);
	json_int(&j, "config", index);
	json_bool(&j, "best", best);
	json_num(&j, "eta", r->eta);
	json_num(&j, "l1", r->l1);
	json_num(&j, "l2", r->l2);
	json_str(&j, "status", r->rc ? boar_strerror(r->rc) : "ok");
	json_str(&j, "metric", u->mae ? "mae" : u->regression ? "rmse" : "loss");
	json_num(&j, "score", r->score);
	if (u->folds > 1)
		json_num(&j, "score_sd", r->score_sd);
	json_num(&j, "loss", r->loss);
	if (u->regression) {
		json_num(&j, "rmse", r->rmse);
	} else {
		json_num(&j, "accuracy", r->accuracy);
		json_num(&j, "auc", r->binary ? r->auc : NAN);
	}
	json_int(&j, "epochs", r->epochs);
	json_num(&j, "seconds", r->seconds);
	json_end(&j);
}

static int on_result(const boar_search_result *r, int index, void *ctx)
{
	struct search_ui *u = ctx;
	u->reported++;
	return 0;
}

/* The table (stderr) and the objects (--json) in configuration order,
 * the best (best >= 0) marked. */
static void report(struct search_ui *u, const boar_search_result *res,
		   int best)
{
	if (!u->a->quiet) {
		table_head(u);
		for (int i = 0; i < u->n; i++)
			table_row(u, &res[i], i == best);
	}
	for (int i = 0; u->a->json && i < u->n; i++)
		json_result(u, &res[i], i, i == best);
}

/* Every epoch of the search: a live share of the work on a terminal
 * (at most ten times a second); after the last result, the final
 * model's epochs as `boar train` shows them. */
static int on_epoch(const boar_epoch_stats *s, void *ctx)
{
	struct search_ui *u = ctx;
	if (u->reported == u->n) {
		if (s->epoch == 1 && !u->a->quiet) {
			progress_clear(&u->pr);
			fprintf(stderr, "search: %d configurations judged; "
					"training the best on all the rows\n",
				u->n);
		}
		progress_epoch(&u->pr, s, u->a->opt.epochs, PROGRESS_BINARY);
		return interrupt_requested() != 0;
	}
	u->epochs_done++;
	double now = cli_now();
	if (now - u->shown >= 0.1) {
		u->shown = now;
		double share = (double)u->epochs_done / u->epochs_all;
		progress_live(&u->pr, "search: %d of %d configurations done, "
			      "%.0f%% of the epochs at most, %.1f s",
			      u->reported, u->n, 100 * (share < 1 ? share : 1),
			      now - u->t0);
	}
	return interrupt_requested() != 0;
}

/* The search's options from the command line's. */
static void search_options(const struct train_args *a,
			   const boar_dataset *test, struct search_ui *u,
			   boar_search_options *s)
{
	boar_search_options_default(s);
	s->eta = a->search.eta;
	s->n_eta = a->search.n_eta;
	s->l1 = a->search.l1;
	s->n_l1 = a->search.n_l1;
	s->l2 = a->search.l2;
	s->n_l2 = a->search.n_l2;
	s->test = test;
	s->folds = test ? 0 : a->cv;
	s->holdout = test ? 0 : a->search_holdout;
	s->parallel = a->search_parallel;
	s->on_result = on_result;
	s->ctx = u;
	u->folds = test || s->holdout > 0 ? 1 : s->folds ? s->folds : 5;
}

static void say_best(const struct search_ui *u, const boar_search_result *r,
		     boar_model *model)
{
	const struct train_args *a = u->a;
	if (a->quiet)
		return;
	fprintf(stderr, "best: eta %g  l1 %g  l2 %g  (%s %.4f", r->eta, r->l1,
		r->l2, u->metric, r->score);
	if (u->folds > 1)
		fprintf(stderr, " +- %.4f over %d folds", r->score_sd, u->folds);
	fprintf(stderr, ")\n");
	if (model && a->model_out)
		fprintf(stderr, "model (%s) saved to %s\n",
			a->test_path ? "the one judged on --test"
				     : "trained on all the training rows",
			a->model_out);
}

int search_run(const struct train_args *a, const boar_dataset *train,
	       const boar_dataset *test)
{
	struct search_ui u = { .a = a, .t0 = cli_now() };
	boar_search_options s;
	boar_options o = a->opt;
	boar_error err = { 0 };
	boar_model *model = NULL;
	int best, rc, status;
	metric_name(&u, train, &o);
	progress_init(&u.pr, a->quiet);
	search_options(a, test, &u, &s);
	if ((u.n = boar_search_size(&s)) < 0)
		return cli_usage("train", "--search: a grid this large is not "
				 "searched");
	u.epochs_all = (long)u.n * u.folds * (o.epochs > 0 ? o.epochs : 1);
	boar_search_result *res = calloc(u.n, sizeof *res);
	if (!res)
		return cli_report(NULL, BOAR_ENOMEM);
	o.progress = on_epoch;
	o.progress_ctx = &u;
	interrupt_training();
	rc = boar_search(train, &o, &s, res, sizeof *res, &best,
			 a->model_out ? &model : NULL, &err);
	progress_done(&u.pr);
	if (rc != BOAR_ECANCELLED && rc != BOAR_EINVAL && rc != BOAR_ENOMEM)
		report(&u, res, rc ? -1 : best);
	if (rc == BOAR_ECANCELLED && interrupt_requested()) {
		fprintf(stderr, "boar: interrupted: the search stopped; no "
				"model saved\n");
		status = 128 + interrupt_requested();
	} else if (rc) {
		status = cli_report(&err, rc);
	} else {
		status = CLI_EXIT_OK;
		if (model) {
			sigset_t held;
			interrupt_hold(&held); /* the file is written whole */
			rc = boar_model_save(model, a->model_out, &err);
			interrupt_release(&held);
			if (rc)
				status = cli_report(&err, rc);
		}
		if (!rc)
			say_best(&u, &res[best], model);
	}
	boar_model_free(model);
	free(res);
	return status;
}

int search_args_check(struct train_args *a, struct cli_parser *p)
{
	int judges = (a->cv > 0) + (a->opt.holdout > 0) + (a->test_path != 0);
	if (judges > 1)
		return cli_fail(p, "--search judges the configurations by one of "
				"--cv K, --holdout FRACTION or --test FILE");
	if (a->target_rmse > 0)
		return cli_fail(p, "--target-rmse does not combine with --search");
	a->search_holdout = a->opt.holdout;
	a->opt.holdout = 0;
	return 0;
}
