/* predict.c - `boar predict -m MODEL FILE [-o OUT]`: one score per row.
 *
 * Scores are what the model's loss makes of a row: a probability for
 * logistic, the margin for hinge, the value for squared loss, the rating
 * for matrix factorization, the predicted label for a multiclass model;
 * one per line in the order of FILE. --probabilities writes a multiclass
 * model's K class scores per line instead. With -o the file appears only
 * when complete (temp file + rename).
 */
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "common.h"
#include "same_file.h"
#include "data_args.h"
#include "ps_model.h"
#include "predict_stream.h"
#include "vw_tags.h"

enum { O_MODEL = 1, O_OUTPUT, O_THREADS, O_PROBABILITIES, O_PS,
       O_SECRET, O_HELP };

static const struct cli_opt predict_opts[] = {
	{ O_MODEL, "model", 'm', "MODEL", "model file from boar train -m (required)" },
	{ O_OUTPUT, "output", 'o', "OUT", "write the scores to OUT instead of stdout" },
	{ O_THREADS, "threads", 0, "N", "threads, 0 = all cores" },
	{ O_PROBABILITIES, "probabilities", 0, NULL,
	  "multiclass: the K class scores per row, classes in ascending "
	  "label order: softmax probabilities (summing to 1), one-vs-rest "
	  "logistic each class's own P(class), hinge margins; binary "
	  "logistic: P(+1)" },
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
	if (id == O_OUTPUT)
		snprintf(buf, n, "stdout");
	else if (id == O_THREADS)
		snprintf(buf, n, "0");
	else if (id == O_PROBABILITIES)
		snprintf(buf, n, "off");
}

void cmd_predict_help(FILE *out)
{
	fputs("usage: boar predict -m MODEL [options] FILE\n"
	      "\n"
	      "Writes one score per row of FILE, in order: the probability of the\n"
	      "positive class (logistic), the margin (hinge), the value (squared)\n"
	      "or the predicted rating (matrix factorization); for a multiclass model\n"
	      "the predicted label, or with --probabilities the K class scores, one\n"
	      "column per class in ascending label order (`boar dump` lists them).\n"
	      "FILE is read the way the model's training data was (format, hashing,\n"
	      "CSV columns and transforms: the model remembers them); a --format or\n"
	      "--csv-* option that contradicts the model is refused.\n"
	      "Labels are optional: a row without one is scored all the same.\n"
	      "\n"
	      "options:\n",
	      out);
	cli_print_options(out, predict_opts, default_of);
}

/* Standard input, a line at a time (predict_stream.h), into out_path. */
static int stream(const boar_model *m, const char *model_path,
		  boar_load_options *data, unsigned given, uint64_t width,
		  const char *out_path)
{
	char why[400];
	boar_error err = { 0 };
	struct cli_out out;
	if (cli_data_for_model(m, model_path, data, given, why, sizeof why))
		return cli_usage("predict", "%s", why);
	if (!data->format)
		return cli_usage("predict", "%s does not say how its data was "
				 "read: give --format to predict from "
				 "standard input", model_path);
	int rc = cli_out_open(&out, out_path, &err);
	if (!rc)
		rc = predict_stream(m, data, width, stdin, out.f, &err);
	if (!rc)
		rc = cli_out_commit(&out, &err);
	cli_out_abort(&out);
	return rc ? cli_report(&err, rc) : CLI_EXIT_OK;
}

/* A file, scored all at once on the threads, into out_path; with a
 * sharded model (ps set) the weights its rows use pulled first. */
static int batch(const boar_model *m, const char *model_path,
		 const char *data_path, boar_load_options *data,
		 unsigned given, uint64_t width, const char *out_path,
		 const struct ps_where *where, const struct ps_model_info *ps)
{
	struct ps_rows rows = { 0 };
	boar_error err = { 0 };
	boar_dataset *d = NULL;
	double *scores = NULL;
	char **tags = NULL;
	size_t n_tags = 0;
	struct cli_out out = { 0 };
	int rc, status = CLI_EXIT_RUNTIME;

	rc = cli_load_for_model("predict", data_path, model_path, m, data,
				given, &d, &err);
	if (rc == CLI_LOAD_USAGE) {
		status = CLI_EXIT_USAGE;
		goto out;
	}
	if (rc) {
		status = cli_report(&err, rc);
		goto out;
	}
	/* VW rows carry tags: read them to print beside the scores. */
	if (data->format == BOAR_FORMAT_VW &&
	    vw_tags_read(data_path, &tags, &n_tags)) {
		status = cli_report(NULL, BOAR_EIO);
		goto out;
	}
	uint64_t n = boar_dataset_rows(d);
	if (tags && n_tags != n) {
		fprintf(stderr, "boar: %s: %zu VW rows with tags, but %llu "
				"rows parsed\n", data_path, n_tags,
			(unsigned long long)n);
		goto out;
	}
	if (n && width > UINT64_MAX / sizeof *scores / n) {
		status = cli_report(NULL, BOAR_ENOMEM);
		goto out;
	}
	scores = malloc((n ? n * width : 1) * sizeof *scores);
	if (!scores) {
		status = cli_report(NULL, BOAR_ENOMEM);
		goto out;
	}
	const boar_dataset *rd = d;
	if (ps) {
		if ((rc = ps_rows_pull(where, model_path, m, ps, d, &rows,
				       &err))) {
			status = cli_report(&err, rc);
			goto out;
		}
		m = rows.m;
		rd = &rows.view;
	}
	rc = width > 1 ? boar_predict_scores(m, rd, scores, data->threads, &err)
		       : boar_predict(m, rd, scores, data->threads, &err);
	if (rc) {
		status = cli_report(&err, rc);
		goto out;
	}
	rc = cli_out_open(&out, out_path, &err);
	if (rc) {
		status = cli_report(&err, rc);
		goto out;
	}
	for (uint64_t r = 0; r < n; r++)
		predict_put_row(out.f, &scores[r * width], width,
				tags ? tags[r] : NULL, tags ? strlen(tags[r]) : 0);
	rc = cli_out_commit(&out, &err);
	if (rc) {
		status = cli_report(&err, rc);
		goto out;
	}
	status = CLI_EXIT_OK;
out:
	cli_out_abort(&out);
	ps_rows_free(&rows);
	vw_tags_free(tags, n_tags);
	free(scores);
	boar_dataset_free(d);
	return status;
}

int cmd_predict(int argc, char **argv)
{
	struct cli_parser p;
	const char *model_path = NULL, *data_path = NULL, *out_path = NULL;
	int threads = 0, probabilities = 0, id;
	boar_error err = { 0 };
	boar_model *m = NULL;
	int rc, status = CLI_EXIT_RUNTIME, sharded = 0;
	struct ps_where where = { 0 };
	struct ps_model_info ps;

	boar_load_options data;
	unsigned given = 0; /* data options on the command line */
	boar_load_options_default(&data);
	cli_init(&p, argc, argv);
	while ((id = cli_next(&p, predict_opts)) != CLI_END) {
		if (id >= CLI_DATA_FIRST && id <= CLI_DATA_LAST) {
			if (cli_data_apply(&data, &p, id))
				return cli_usage("predict", "%s", p.why);
			given |= CLI_DATA_BIT(id);
			continue;
		}
		switch (id) {
		case CLI_ERROR:
			return cli_usage("predict", "%s", p.why);
		case CLI_POSITIONAL:
			if (data_path)
				return cli_usage("predict", "one FILE expected, "
						 "got '%s' and '%s'", data_path,
						 p.value);
			data_path = p.value;
			break;
		case O_MODEL:
			model_path = p.value;
			break;
		case O_OUTPUT:
			out_path = p.value;
			break;
		case O_THREADS:
			if (cli_int(&p, 0, 4096, &threads))
				return cli_usage("predict", "%s", p.why);
			break;
		case O_PROBABILITIES:
			probabilities = 1;
			break;
		case O_PS:
			where.ps = p.value;
			break;
		case O_SECRET:
			where.secret_file = p.value;
			break;
		case O_HELP:
			cmd_predict_help(stdout);
			return CLI_EXIT_OK;
		}
	}
	if (!model_path)
		return cli_usage("predict", "predict needs -m MODEL");
	if (!data_path)
		return cli_usage("predict", "predict needs a data FILE");
	const char *inputs[] = {data_path, model_path};
	if ((rc = cli_refuse_overwrite("-o", out_path, inputs, 2, &err)))
		return cli_report(&err, rc);

	data_path = cli_data_path(data_path);
	if ((status = ps_model_open("predict", model_path, &where, &m, &ps,
				    &sharded)))
		goto out;
	status = CLI_EXIT_RUNTIME;
	uint32_t K = boar_model_classes(m, NULL);
	if (probabilities && !K &&
	    (boar_model_task(m) != BOAR_TASK_LINEAR ||
	     !boar_loss_describe(boar_model_loss(m))->probabilistic)) {
		status = cli_usage("predict", "--probabilities needs a "
				   "multiclass or logistic model; %s is %s%s",
				   model_path,
				   boar_model_task(m) == BOAR_TASK_MF
					   ? "matrix factorization"
					   : cli_loss_name(boar_model_loss(m)),
				   boar_model_task(m) == BOAR_TASK_MF
					   ? "" : " loss");
		goto out;
	}
	/* Without --probabilities one score per row; with it K per row
	 * (a binary logistic model's score already is P(+1)). */
	uint64_t width = probabilities && K ? K : 1;
	data.threads = threads;
	data.labels_optional = 1; /* rows to predict need no label */
	if (!strcmp(data_path, "/dev/stdin")) {
		status = sharded ? cli_usage("predict", "--ps predicts a FILE, "
					     "not standard input")
				 : stream(m, model_path, &data, given, width,
					  out_path);
		goto out;
	}
	status = batch(m, model_path, data_path, &data, given, width,
		       out_path, &where, sharded ? &ps : NULL);
out:
	boar_model_free(m);
	return status;
}
