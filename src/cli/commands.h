/* commands.h - the table of boar's subcommands.
 *
 * One X(name, summary) line per command. main.c turns the list into its
 * dispatch table and `boar --help` overview; each command lives in its own
 * file as
 *
 *   int cmd_NAME(int argc, char **argv);   argv[0] is "NAME"; returns the
 *                                          process exit status
 *   void cmd_NAME_help(FILE *out);         usage and every option with
 *                                          its default
 *
 * Adding a command is one line here plus its file (the Makefile picks up
 * every .c file in src/cli).
 */
#ifndef BOAR_CLI_COMMANDS_H
#define BOAR_CLI_COMMANDS_H

#include <stdio.h>

#define BOAR_COMMANDS(X)                                                      \
	X(train, "fit a linear or matrix-factorization model to a file")     \
	X(predict, "score every row of a file with a saved model")           \
	X(eval, "test metrics (accuracy, AUC, log loss or RMSE) of a model")  \
	X(gen, "write synthetic data drawn from a hidden model")             \
	X(export, "write a saved model as text")                             \
	X(dump, "show a model's weights as text or JSON, or its top features") \
	X(serve, "run one shard of the parameter server (cluster training)")

#define BOAR_COMMAND_DECL(name, summary)        \
	int cmd_##name(int argc, char **argv); \
	void cmd_##name##_help(FILE *out);
BOAR_COMMANDS(BOAR_COMMAND_DECL)
#undef BOAR_COMMAND_DECL

/* Exit statuses shared by every command. */
enum {
	CLI_EXIT_OK = 0,
	CLI_EXIT_RUNTIME = 1, /* the library failed: bad input file, I/O, ... */
	CLI_EXIT_USAGE = 2,   /* bad options or arguments */
};

#endif
