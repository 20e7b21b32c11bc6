/* export.c - `boar export -m MODEL [-o OUT]`: a model as text.
 *
 * The text is the library's export: "key value" header lines, then one
 * "feature weight" line per non-zero weight (MF: "u ID f1 f2 ..." and
 * "i ID ..." lines; multiclass: the classes, then "feature w_1 ... w_K").
 * The library writes files atomically; for stdout the export goes through
 * a temp file that is copied out and removed (cli_export_text).
 */
#include "args.h"
#include "commands.h"
#include "common.h"

enum { O_MODEL = 1, O_OUTPUT, O_HELP };

static const struct cli_opt export_opts[] = {
	{ O_MODEL, "model", 'm', "MODEL", "model file from boar train -m (required)" },
	{ O_OUTPUT, "output", 'o', "OUT", "write the text to OUT instead of stdout" },
	{ O_HELP, "help", 'h', NULL, "this help" },
	{ 0 },
};

static void default_of(int id, char *buf, size_t n)
{
	buf[0] = '\0';
	if (id == O_OUTPUT)
		snprintf(buf, n, "stdout");
}

void cmd_export_help(FILE *out)
{
	fputs("usage: boar export -m MODEL [-o OUT]\n"
	      "\n"
	      "Writes a model as text: \"key value\" header lines, then one\n"
	      "\"feature weight\" line per non-zero weight (features 1-based as in\n"
	      "LIBSVM files), \"feature w_1 ... w_K\" lines for a multiclass model,\n"
	      "or \"u ID f1 f2 ...\" and \"i ID ...\" lines of factors. `boar dump`\n"
	      "adds JSON and the top features.\n"
	      "\n"
	      "options:\n",
	      out);
	cli_print_options(out, export_opts, default_of);
}

int cmd_export(int argc, char **argv)
{
	struct cli_parser p;
	const char *model_path = NULL, *out_path = NULL;
	int id, rc;
	boar_error err = { 0 };
	boar_model *m = NULL;

	cli_init(&p, argc, argv);
	while ((id = cli_next(&p, export_opts)) != CLI_END) {
		switch (id) {
		case CLI_ERROR:
			return cli_usage("export", "%s", p.why);
		case CLI_POSITIONAL:
			if (model_path)
				return cli_usage("export", "unexpected argument "
						 "'%s'", p.value);
			/* `boar export MODEL` reads as naturally as -m. */
			model_path = p.value;
			break;
		case O_MODEL:
			model_path = p.value;
			break;
		case O_OUTPUT:
			out_path = p.value;
			break;
		case O_HELP:
			cmd_export_help(stdout);
			return CLI_EXIT_OK;
		}
	}
	if (!model_path)
		return cli_usage("export", "export needs -m MODEL");

	rc = boar_model_load(model_path, &m, &err);
	if (rc)
		return cli_report(&err, rc);
	rc = cli_export_text(m, out_path, &err);
	boar_model_free(m);
	return rc ? cli_report(&err, rc) : CLI_EXIT_OK;
}
