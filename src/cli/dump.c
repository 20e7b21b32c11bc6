/* dump.c - `boar dump -m MODEL [--json] [--top K]`: look inside a model.
 *
 * Text without --top is the library's export (boar export). --top K lists
 * the K features with the largest |weight|, largest first: "feature weight"
 * lines for a binary or regression model, "label feature weight" lines, K
 * per class, for a multiclass one. --json writes the model as one JSON
 * object: the shape, the bias (per class), and the non-zero weights as
 * parallel arrays of feature ids and weights (or only the top K); for
 * matrix factorization the global mean, the biases and both factor
 * matrices. Feature ids are 1-based as in LIBSVM files, or hash slots
 * (0-based) for a hashed model, as in boar export.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "common.h"

enum { O_MODEL = 1, O_OUTPUT, O_JSON, O_TOP, O_HELP };

static const struct cli_opt dump_opts[] = {
	{ O_MODEL, "model", 'm', "MODEL", "model file from boar train -m (required)" },
	{ O_OUTPUT, "output", 'o', "OUT", "write to OUT instead of stdout" },
	{ O_JSON, "json", 0, NULL, "the model as one JSON object" },
	{ O_TOP, "top", 0, "K",
	  "only the K features with the largest |weight| (per class for "
	  "multiclass), largest first; linear models" },
	{ O_HELP, "help", 'h', NULL, "this help" },
	{ 0 },
};

static void default_of(int id, char *buf, size_t n)
{
	buf[0] = '\0';
	if (id == O_OUTPUT)
		snprintf(buf, n, "stdout");
	else if (id == O_JSON)
		snprintf(buf, n, "off: text");
	else if (id == O_TOP)
		snprintf(buf, n, "all non-zero weights");
}

void cmd_dump_help(FILE *out)
{
	fputs("usage: boar dump -m MODEL [--json] [--top K] [-o OUT]\n"
	      "\n"
	      "Shows what a model learned. As text: the export of `boar export`\n"
	      "(header lines, then \"feature weight\" lines; multiclass \"feature w_1 ...\n"
	      "w_K\"; MF \"u ID bias factors...\" and \"i ID ...\"). With --top K: K\n"
	      "\"feature weight\" lines by decreasing |weight|, or K \"label feature\n"
	      "weight\" lines per class for a multiclass model. With --json one\n"
	      "object: task, loss, dim, hash_bits, feature_ids (\"1-based\" or\n"
	      "\"slot\"), then bias, features and weights (non-zero, or the top K),\n"
	      "or classes: [{label, bias, features, weights}, ...] for multiclass;\n"
	      "MF: users, items, rank, mu, user_bias, item_bias, user_factors,\n"
	      "item_factors.\n"
	      "\n"
	      "options:\n",
	      out);
	cli_print_options(out, dump_opts, default_of);
}

/* ----------------------------------------------------- choosing weights */

struct entry {
	uint64_t feature; /* index into the weight array */
	float w;
};

/* Orders by |w| descending, then feature id ascending, so ties print the
 * same way every time. */
static int before(const struct entry *a, const struct entry *b)
{
	float x = fabsf(a->w), y = fabsf(b->w);
	if (x != y)
		return x > y;
	return a->feature < b->feature;
}

/* Min-heap on "before": the root is the weakest of the best K so far. */
static void sift_down(struct entry *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && before(&h[m], &h[l]))
			m = l;
		if (r < n && before(&h[m], &h[r]))
			m = r;
		if (m == i)
			return;
		struct entry t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static int cmp_before(const void *a, const void *b)
{
	return before(a, b) ? -1 : before(b, a) ? 1 : 0;
}

static int cmp_feature(const void *a, const void *b)
{
	uint64_t x = ((const struct entry *)a)->feature;
	uint64_t y = ((const struct entry *)b)->feature;
	return (x > y) - (x < y);
}

/* The non-zero weights of class c (stride K) into out[], all of them in
 * feature order (top == 0) or the `top` largest by |w|, largest first.
 * out has room for min(dim, top or dim) entries. @return how many. */
static size_t pick(const float *w, uint64_t dim, uint32_t K, uint32_t c,
		   uint64_t top, struct entry *out)
{
	size_t n = 0;
	for (uint64_t j = 0; j < dim; j++) {
		float v = w[j * K + c];
		if (v == 0.0f)
			continue;
		struct entry e = { j, v };
		if (!top || n < top) {
			out[n++] = e;
			if (top && n == top) /* heapify once full */
				for (size_t i = n / 2; i-- > 0;)
					sift_down(out, n, i);
		} else if (before(&e, &out[0])) {
			out[0] = e;
			sift_down(out, n, 0);
		}
	}
	qsort(out, n, sizeof *out, top ? cmp_before : cmp_feature);
	return n;
}

/* ---------------------------------------------------------------- output */

static void num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.9g", v);
	else
		fputs("null", f);
}

static void float_array(FILE *f, const float *a, uint64_t n)
{
	fputc('[', f);
	for (uint64_t k = 0; k < n; k++) {
		if (k)
			fputc(',', f);
		num(f, a[k]);
	}
	fputc(']', f);
}

/* "features": [...], "weights": [...] of the chosen entries. */
static void entries_json(FILE *f, const struct entry *e, size_t n, int base)
{
	fputs("\"features\": [", f);
	for (size_t k = 0; k < n; k++)
		fprintf(f, "%s%llu", k ? "," : "",
			(unsigned long long)(e[k].feature + base));
	fputs("], \"weights\": [", f);
	for (size_t k = 0; k < n; k++) {
		if (k)
			fputc(',', f);
		num(f, e[k].w);
	}
	fputc(']', f);
}

static const char *loss_json(const boar_model *m)
{
	return cli_loss_name(boar_model_loss(m));
}

static int dump_linear(FILE *f, const boar_model *m, int json, uint64_t top)
{
	uint64_t n_w;
	const float *w;
	int rc = boar_model_weights(m, &w, &n_w, NULL);
	if (rc)
		return rc;
	const float *labels = NULL;
	uint32_t K = boar_model_classes(m, &labels);
	uint32_t width = K ? K : 1;
	uint64_t dim = n_w / width - 1; /* the biases come last */
	int hashed = boar_model_hash_bits(m) > 0;
	int base = hashed ? 0 : 1; /* as in the LIBSVM input */
	uint64_t room = top && top < dim ? top : dim;
	struct entry *e = malloc((room ? room : 1) * sizeof *e);
	if (!e)
		return BOAR_ENOMEM;

	if (json) {
		fprintf(f, "{\"task\": \"linear\", \"loss\": \"%s\", \"dim\": "
			   "%llu, \"hash_bits\": %d, \"feature_ids\": \"%s\"",
			loss_json(m), (unsigned long long)dim,
			boar_model_hash_bits(m), hashed ? "slot" : "1-based");
		if (top)
			fprintf(f, ", \"top\": %llu", (unsigned long long)top);
		if (!K) {
			fputs(", \"bias\": ", f);
			num(f, w[dim]);
			fputs(", ", f);
			entries_json(f, e, pick(w, dim, 1, 0, top, e), base);
		} else {
			fputs(", \"classes\": [", f);
			for (uint32_t c = 0; c < K; c++) {
				fprintf(f, "%s\n  {\"label\": ", c ? "," : "");
				num(f, labels[c]);
				fputs(", \"bias\": ", f);
				num(f, w[dim * K + c]);
				fputs(", ", f);
				entries_json(f, e, pick(w, dim, K, c, top, e),
					     base);
				fputc('}', f);
			}
			fputs("\n]", f);
		}
		fputs("}\n", f);
	} else {
		for (uint32_t c = 0; c < width; c++) {
			size_t n = pick(w, dim, width, c, top, e);
			for (size_t k = 0; k < n; k++) {
				if (K)
					fprintf(f, "%.9g ", labels[c]);
				fprintf(f, "%llu %.9g\n",
					(unsigned long long)(e[k].feature + base),
					e[k].w);
			}
		}
	}
	free(e);
	return 0;
}

static void factors_json(FILE *f, const char *name, const float *F,
			 uint64_t rows, uint32_t rank)
{
	fprintf(f, ",\n \"%s\": [", name);
	for (uint64_t r = 0; r < rows; r++) {
		fputs(r ? ",\n  " : "\n  ", f);
		float_array(f, &F[r * rank], rank);
	}
	fputs("]", f);
}

static int dump_mf_json(FILE *f, const boar_model *m)
{
	const float *P, *Q, *bu, *bi;
	float mu;
	uint64_t items;
	int rc = boar_model_factors(m, &P, &Q, &bu, &bi, &mu, &items, NULL);
	if (rc)
		return rc;
	uint64_t users = boar_model_dim(m);
	uint32_t rank = boar_model_rank(m);
	fprintf(f, "{\"task\": \"mf\", \"users\": %llu, \"items\": %llu, "
		   "\"rank\": %u, \"mu\": ",
		(unsigned long long)users, (unsigned long long)items, rank);
	num(f, mu);
	fputs(",\n \"user_bias\": ", f);
	if (bu)
		float_array(f, bu, users);
	else
		fputs("null", f);
	fputs(",\n \"item_bias\": ", f);
	if (bi)
		float_array(f, bi, items);
	else
		fputs("null", f);
	factors_json(f, "user_factors", P, users, rank);
	factors_json(f, "item_factors", Q, items, rank);
	fputs("}\n", f);
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	struct cli_parser p;
	const char *model_path = NULL, *out_path = NULL;
	int json = 0, id, rc;
	uint64_t top = 0;
	boar_error err = { 0 };
	boar_model *m = NULL;
	struct cli_out out = { 0 };
	int status = CLI_EXIT_RUNTIME;

	cli_init(&p, argc, argv);
	while ((id = cli_next(&p, dump_opts)) != CLI_END) {
		switch (id) {
		case CLI_ERROR:
			return cli_usage("dump", "%s", p.why);
		case CLI_POSITIONAL:
			if (model_path)
				return cli_usage("dump", "unexpected argument "
						 "'%s'", p.value);
			model_path = p.value; /* `boar dump MODEL` */
			break;
		case O_MODEL:
			model_path = p.value;
			break;
		case O_OUTPUT:
			out_path = p.value;
			break;
		case O_JSON:
			json = 1;
			break;
		case O_TOP:
			if (cli_u64(&p, 1, UINT64_MAX, &top))
				return cli_usage("dump", "%s", p.why);
			break;
		case O_HELP:
			cmd_dump_help(stdout);
			return CLI_EXIT_OK;
		}
	}
	if (!model_path)
		return cli_usage("dump", "dump needs -m MODEL");

	rc = boar_model_load(model_path, &m, &err);
	if (rc)
		return cli_report(&err, rc);
	int linear = boar_model_task(m) == BOAR_TASK_LINEAR;
	if (top && !linear) {
		status = cli_usage("dump", "--top is for linear models; %s is "
				   "matrix factorization (use --json for its "
				   "factors)", model_path);
		goto out;
	}
	if (!json && !top) {
		rc = cli_export_text(m, out_path, &err);
		status = rc ? cli_report(&err, rc) : CLI_EXIT_OK;
		goto out;
	}
	rc = cli_out_open(&out, out_path, &err);
	if (rc) {
		status = cli_report(&err, rc);
		goto out;
	}
	rc = linear ? dump_linear(out.f, m, json, top) : dump_mf_json(out.f, m);
	if (!rc)
		rc = cli_out_commit(&out, &err);
	status = rc ? cli_report(&err, rc) : CLI_EXIT_OK;
out:
	cli_out_abort(&out);
	boar_model_free(m);
	return status;
}
