/* main.c - the boar command-line tool: dispatch to a subcommand.
 *
 * `boar CMD [options]` runs CMD from the table in commands.h; `boar help
 * CMD` and `boar CMD --help` print its options with their defaults;
 * `boar --help` prints the overview and then every command's options.
 * The CLI is a thin consumer of the public header boar.h: everything it
 * knows about data and models it asks the library.
 */
#include <string.h>

#include "boar.h"
#include "commands.h"
#include "common.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	void (*help)(FILE *out);
	const char *summary;
};

static const struct command commands[] = {
#define BOAR_COMMAND_ENTRY(name, summary) \
	{ #name, cmd_##name, cmd_##name##_help, summary },
	BOAR_COMMANDS(BOAR_COMMAND_ENTRY)
#undef BOAR_COMMAND_ENTRY
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])

static const struct command *find(const char *name)
{
	for (size_t k = 0; k < N_COMMANDS; k++)
		if (!strcmp(commands[k].name, name))
			return &commands[k];
	return NULL;
}

static void overview(FILE *out)
{
	fprintf(out,
		"boar %s - lock-free Hogwild! SGD for sparse linear models and "
		"matrix factorization\n"
		"\n"
		"usage: boar COMMAND [options] [FILE]\n"
		"       boar help COMMAND | boar COMMAND --help | boar --version\n"
		"\n"
		"commands:\n",
		boar_version());
	for (size_t k = 0; k < N_COMMANDS; k++)
		fprintf(out, "  %-10s %s\n", commands[k].name,
			commands[k].summary);
	fputs("\n"
	      "Exit status: 0 success, 1 the work failed (bad input file, I/O),\n"
	      "2 bad options or arguments.\n"
	      "\n"
	      "examples:\n"
	      "  boar train --test a9a.t -m a9a.model a9a\n"
	      "  boar eval -m a9a.model a9a.t\n"
	      "  boar predict -m a9a.model a9a.t -o scores.txt\n"
	      "  boar dump --top 10 -m a9a.model\n"
	      "  boar train --task mf --rank 32 --epochs 20 ratings.csv\n",
	      out);
}

static void full_help(FILE *out)
{
	overview(out);
	for (size_t k = 0; k < N_COMMANDS; k++) {
		fprintf(out, "\n------------------------------------------------"
			     "------------- boar %s\n\n",
			commands[k].name);
		commands[k].help(out);
	}
}

int main(int argc, char **argv)
{
	cli_started = cli_now();
	cli_argv = argv;
	if (argc < 2) {
		overview(stderr);
		return CLI_EXIT_USAGE;
	}
	const char *a = argv[1];
	if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
		full_help(stdout);
		return CLI_EXIT_OK;
	}
	if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
		printf("boar %s\n", boar_version());
		return CLI_EXIT_OK;
	}
	if (!strcmp(a, "help")) {
		if (argc < 3) {
			full_help(stdout);
			return CLI_EXIT_OK;
		}
		const struct command *c = find(argv[2]);
		if (!c)
			return cli_usage(NULL, "no command '%s'", argv[2]);
		c->help(stdout);
		return CLI_EXIT_OK;
	}
	const struct command *c = find(a);
	if (!c) {
		if (a[0] == '-')
			return cli_usage(NULL, "unknown option %s (options go "
					 "after the command)", a);
		return cli_usage(NULL, "unknown command '%s'", a);
	}
	return c->run(argc - 1, argv + 1);
}
