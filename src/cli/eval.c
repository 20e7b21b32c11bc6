/* eval.c - `boar eval -m MODEL FILE [--json]`: test metrics of a model.
 *
 * Accuracy, AUC and the loss for binary models; accuracy and the loss for
 * multiclass models (AUC is not defined: null in JSON); RMSE and the
 * squared loss for ratings and regression. --json prints one object with
 * the same keys `boar train --json` uses for its test columns.
 */
#include "args.h"
#include "commands.h"
#include "common.h"
#include "data_args.h"
#include "ps_model.h"
#include "json.h"
#include "progress.h"

enum { O_MODEL = 1, O_JSON, O_THREADS, O_PS, O_SECRET, O_HELP };

static const struct cli_opt eval_opts[] = {
	{ O_MODEL, "model", 'm', "MODEL", "model file from boar train -m (required)" },
	{ O_JSON, "json", 0, NULL, "print one JSON object on stdout" },
	{ O_THREADS, "threads", 0, "N", "threads, 0 = all cores" },
	PS_MODEL_OPTS,
	CLI_DATA_OPTS,
	{ O_HELP, "help", 'h', NULL, "this help" },
	{ 0 },
};

static void default_of(int id, char *buf, size_t n)
{
	buf[0] = '\0';
	if (id >= CLI_DATA_FIRST && id <= CLI_DATA_LAST) {
		cli_data_default(id, buf, n);
		return;
	}
	if (id == O_JSON)
		snprintf(buf, n, "off");
	else if (id == O_THREADS)
		snprintf(buf, n, "0");
}

void cmd_eval_help(FILE *out)
{
	fputs("usage: boar eval -m MODEL [options] FILE\n"
	      "\n"
	      "Scores every row of FILE and compares with its labels: accuracy, AUC\n"
	      "and the model's loss (log loss, hinge) for binary models; accuracy and\n"
	      "loss for multiclass models; RMSE, MAE and the model's loss for ratings and\n"
	      "regression. --json keys: rows, test_loss, test_accuracy and test_auc\n"
	      "(binary and multiclass, where test_auc is null) or test_rmse, test_mae\n"
	      "and test_below (the fraction of labels below the prediction: a\n"
	      "quantile model's is near its tau).\n"
	      "FILE is read the way the model's training data was (format, hashing,\n"
	      "CSV columns and transforms: the model remembers them); a --format or\n"
	      "--csv-* option that contradicts the model is refused.\n"
	      "\n"
	      "options:\n",
	      out);
	cli_print_options(out, eval_opts, default_of);
}

/* The metrics on stdout: one JSON object, or the summary lines. */
static void say_metrics(int json, const char *data_path, const boar_model *m,
			const boar_metrics *mt)
{
	if (json) {
		struct json_obj j;
		json_begin(&j, stdout);
		json_uint(&j, "rows", mt->rows);
		json_num(&j, "test_loss", mt->loss);
		if (mt->binary || boar_model_classes(m, NULL)) {
			json_num(&j, "test_accuracy", mt->accuracy);
			json_num(&j, "test_auc", mt->auc);
		} else {
			json_num(&j, "test_rmse", mt->rmse);
			json_num(&j, "test_mae", mt->mae);
			json_num(&j, "test_below", mt->below);
		}
		json_end(&j);
	} else {
		progress_summary(stdout, data_path, m, mt);
	}
}

int cmd_eval(int argc, char **argv)
{
	struct cli_parser p;
	const char *model_path = NULL, *data_path = NULL;
	int threads = 0, json = 0, id;
	boar_error err = { 0 };
	boar_model *m = NULL;
	boar_dataset *d = NULL;
	boar_metrics mt;
	int rc, status = CLI_EXIT_RUNTIME, sharded = 0;
	struct ps_where where = { 0 };
	struct ps_model_info ps;
	struct ps_rows rows = { 0 };

	boar_load_options data;
	unsigned given = 0; /* data options on the command line */
	boar_load_options_default(&data);
	cli_init(&p, argc, argv);
	while ((id = cli_next(&p, eval_opts)) != CLI_END) {
		if (id >= CLI_DATA_FIRST && id <= CLI_DATA_LAST) {
			if (cli_data_apply(&data, &p, id))
				return cli_usage("eval", "%s", p.why);
			given |= CLI_DATA_BIT(id);
			continue;
		}
		switch (id) {
		case CLI_ERROR:
			return cli_usage("eval", "%s", p.why);
		case CLI_POSITIONAL:
			if (data_path)
				return cli_usage("eval", "one FILE expected, "
						 "got '%s' and '%s'", data_path,
						 p.value);
			data_path = p.value;
			break;
		case O_MODEL:
			model_path = p.value;
			break;
		case O_JSON:
			json = 1;
			break;
		case O_THREADS:
			if (cli_int(&p, 0, 4096, &threads))
				return cli_usage("eval", "%s", p.why);
			break;
		case O_PS:
			where.ps = p.value;
			break;
		case O_SECRET:
			where.secret_file = p.value;
			break;
		case O_HELP:
			cmd_eval_help(stdout);
			return CLI_EXIT_OK;
		}
	}
	if (!model_path)
		return cli_usage("eval", "eval needs -m MODEL");
	if (!data_path)
		return cli_usage("eval", "eval needs a data FILE");

	data_path = cli_data_path(data_path);
	if ((status = ps_model_open("eval", model_path, &where, &m, &ps,
				    &sharded)))
		goto out;
	status = CLI_EXIT_RUNTIME;
	data.threads = threads;
	rc = cli_load_for_model("eval", data_path, model_path, m, &data,
				given, &d, &err);
	if (rc == CLI_LOAD_USAGE) {
		status = CLI_EXIT_USAGE;
		goto out;
	}
	if (rc) {
		status = cli_report(&err, rc);
		goto out;
	}
	if (sharded && (rc = ps_rows_pull(&where, model_path, m, &ps, d, &rows,
					  &err))) {
		status = cli_report(&err, rc);
		goto out;
	}
	rc = boar_evaluate(sharded ? rows.m : m, sharded ? &rows.view : d, &mt,
			   threads, &err);
	if (rc) {
		status = cli_report(&err, rc);
		goto out;
	}
	say_metrics(json, data_path, m, &mt);
	status = fflush(stdout) ? CLI_EXIT_RUNTIME : CLI_EXIT_OK;
out:
	ps_rows_free(&rows);
	boar_dataset_free(d);
	boar_model_free(m);
	return status;
}
