/* gen.c - `boar gen ... -o FILE`: synthetic data with a known ground truth.
 *
 * Every field of boar_gen_options is an option here. Linear data is LIBSVM
 * rows labelled by a hidden sparse weight vector (feature ids drawn
 * uniformly or from a power law); MF data is "user item rating" lines from
 * hidden low-rank factors. The library writes the file atomically.
 */
#include "args.h"
#include "commands.h"
#include "common.h"

enum {
	O_TASK = 1, O_ROWS, O_FEATURES, O_USERS, O_ITEMS, O_NNZ, O_SKEW, O_RANK,
	O_NOISE, O_SEED, O_OUTPUT, O_QUIET, O_HELP,
};

static const struct cli_opt gen_opts[] = {
	{ O_TASK, "task", 0, "linear|mf", "sparse classification or ratings" },
	{ O_ROWS, "rows", 0, "N", "rows (linear) or ratings (mf)" },
	{ O_FEATURES, "features", 0, "D", "linear: dimension (mf: same as --users)" },
	{ O_USERS, "users", 0, "U", "mf: users (mf: same as --features)" },
	{ O_ITEMS, "items", 0, "I", "mf: items" },
	{ O_NNZ, "nnz", 0, "K", "linear: mean non-zeros per row" },
	{ O_SKEW, "skew", 0, "S",
	  "0: uniform feature ids; S > 0: id = D * u^(1+S), a power law" },
	{ O_RANK, "rank", 0, "K", "mf: rank of the hidden factors" },
	{ O_NOISE, "noise", 0, "X",
	  "label-flip probability (linear) or rating noise stddev (mf)" },
	{ O_SEED, "seed", 0, "S", "random seed" },
	{ O_OUTPUT, "output", 'o', "FILE", "where to write the data (required)" },
	{ O_QUIET, "quiet", 'q', NULL, "no summary on stderr" },
	{ O_HELP, "help", 'h', NULL, "this help" },
	{ 0 },
};

static void default_of(int id, char *buf, size_t n)
{
	boar_gen_options g;
	boar_gen_options_default(&g);
	buf[0] = '\0';
	switch (id) {
	case O_TASK:
		snprintf(buf, n, "%s", cli_task_name(g.task));
		break;
	case O_ROWS:
		snprintf(buf, n, "%llu", (unsigned long long)g.rows);
		break;
	case O_FEATURES:
	case O_USERS:
		snprintf(buf, n, "%u", g.features);
		break;
	case O_ITEMS:
		snprintf(buf, n, "%u", g.items);
		break;
	case O_NNZ:
		snprintf(buf, n, "%u", g.nnz_per_row);
		break;
	case O_SKEW:
		snprintf(buf, n, "%g", g.skew);
		break;
	case O_RANK:
		snprintf(buf, n, "%u", g.rank);
		break;
	case O_NOISE:
		snprintf(buf, n, "%g", g.noise);
		break;
	case O_SEED:
		snprintf(buf, n, "%llu", (unsigned long long)g.seed);
		break;
	}
}

void cmd_gen_help(FILE *out)
{
	fputs("usage: boar gen [options] -o FILE\n"
	      "\n"
	      "Draws a dataset from a hidden model, so that a fit can be checked\n"
	      "against a known optimum, and writes it as LIBSVM text (linear) or\n"
	      "\"user item rating\" lines (mf). For example:\n"
	      "  boar gen --task linear --rows 1000000 --features 1048576 --nnz 30 --skew 1 -o big.svm\n"
	      "  boar gen --task mf --rows 9000000 --users 20000 --items 10000 --rank 16 -o ratings.txt\n"
	      "\n"
	      "options:\n",
	      out);
	cli_print_options(out, gen_opts, default_of);
}

static const char *const task_names[] = { "auto", "linear", "mf", NULL };

int cmd_gen(int argc, char **argv)
{
	struct cli_parser p;
	boar_gen_options g;
	const char *out_path = NULL;
	int quiet = 0, id, task, bad = 0;
	boar_error err = { 0 };
	boar_dataset *d = NULL;

	boar_gen_options_default(&g);
	cli_init(&p, argc, argv);
	while ((id = cli_next(&p, gen_opts)) != CLI_END) {
		switch (id) {
		case CLI_ERROR:
			return cli_usage("gen", "%s", p.why);
		case CLI_POSITIONAL:
			return cli_usage("gen", "unexpected argument '%s' (the "
					 "output file goes after -o)", p.value);
		case O_TASK:
			bad = cli_choice(&p, task_names, &task);
			if (!bad && task == BOAR_TASK_AUTO)
				bad = cli_fail(&p, "--task: gen needs linear "
					       "or mf");
			g.task = task;
			break;
		case O_ROWS:
			bad = cli_u64(&p, 1, UINT64_MAX, &g.rows);
			break;
		case O_FEATURES:
		case O_USERS:
			bad = cli_u32(&p, 1, UINT32_MAX, &g.features);
			break;
		case O_ITEMS:
			bad = cli_u32(&p, 1, UINT32_MAX, &g.items);
			break;
		case O_NNZ:
			bad = cli_u32(&p, 1, UINT32_MAX, &g.nnz_per_row);
			break;
		case O_SKEW:
			bad = cli_double(&p, 0, 1e3, &g.skew);
			break;
		case O_RANK:
			bad = cli_u32(&p, 1, 65536, &g.rank);
			break;
		case O_NOISE:
			bad = cli_double(&p, 0, 1e6, &g.noise);
			break;
		case O_SEED:
			bad = cli_u64(&p, 0, UINT64_MAX, &g.seed);
			break;
		case O_OUTPUT:
			out_path = p.value;
			break;
		case O_QUIET:
			quiet = 1;
			break;
		case O_HELP:
			cmd_gen_help(stdout);
			return CLI_EXIT_OK;
		}
		if (bad)
			return cli_usage("gen", "%s", p.why);
	}
	if (!out_path)
		return cli_usage("gen", "gen needs -o FILE");

	double t0 = cli_now();
	int rc = boar_generate(&g, &d, &err);
	if (rc == BOAR_EINVAL)
		return cli_usage("gen", "%s", err.message[0] ? err.message
							     : boar_strerror(rc));
	if (rc)
		return cli_report(&err, rc);
	double t1 = cli_now();
	rc = boar_dataset_write_text(d, out_path, &err);
	if (rc) {
		boar_dataset_free(d);
		return cli_report(&err, rc);
	}
	if (!quiet)
		fprintf(stderr,
			"wrote %s: %llu %s, %llu non-zeros (%.2f s to draw, "
			"%.2f s to write)\n",
			out_path, (unsigned long long)boar_dataset_rows(d),
			g.task == BOAR_TASK_MF ? "ratings" : "rows",
			(unsigned long long)boar_dataset_nnz(d), t1 - t0,
			cli_now() - t1);
	boar_dataset_free(d);
	return CLI_EXIT_OK;
}
