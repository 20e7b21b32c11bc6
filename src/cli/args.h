/* args.h - command-line option scanning and strict number parsing.
 *
 * Every boar command describes its options in a table of struct cli_opt and
 * walks argv with cli_next(), which understands "--name value",
 * "--name=value", "-x value", "-xvalue", flags, "--" and positional
 * arguments. Nothing here keeps global state (unlike getopt's optind), so a
 * command may parse, or re-parse, any argv it is handed.
 *
 * The number parsers refuse what strtod/strtol would quietly accept: empty
 * strings, leading blanks, trailing garbage ("10x"), out-of-range values,
 * "nan" and "inf". On failure they write a message naming the option into
 * the parser's why[] and return -1; the caller prints it and exits 2.
 */
#ifndef BOAR_CLI_ARGS_H
#define BOAR_CLI_ARGS_H

#include <stdint.h>
#include <stdio.h>

struct cli_opt {
	int id;               /* what cli_next() returns for it; > 0 */
	const char *name;     /* long name without the dashes */
	char short_name;      /* e.g. 'm' for -m, or 0 */
	const char *arg;      /* metavariable ("N", "FILE") or NULL: a flag */
	const char *help;     /* one line for --help */
};

enum {
	CLI_END = 0,         /* argv is used up */
	CLI_POSITIONAL = -1, /* p->value is a non-option argument */
	CLI_ERROR = -2,      /* p->why says what is wrong */
};

struct cli_parser {
	int argc;
	char **argv;
	int i;               /* next argv index to look at */
	int only_positional; /* "--" was seen */
	const char *value;   /* the option's argument, or the positional */
	char opt[64];        /* the option as written, for messages */
	char why[320];
};

/* Starts scanning at argv[1] (argv[0] is the command's name). */
void cli_init(struct cli_parser *p, int argc, char **argv);

/* @return the id of the next option (p->value = its argument or NULL),
 *         CLI_POSITIONAL, CLI_END, or CLI_ERROR for an unknown option or
 *         a missing argument. `opts` ends with an entry whose id is 0. */
int cli_next(struct cli_parser *p, const struct cli_opt *opts);

/* Strict conversions of p->value for the option just returned.
 * @return 0, or -1 with p->why filled. */
int cli_double(struct cli_parser *p, double lo, double hi, double *out);
/* Same, but the value must be strictly greater than lo. */
int cli_double_gt(struct cli_parser *p, double lo, double hi, double *out);
int cli_int(struct cli_parser *p, long long lo, long long hi, int *out);
int cli_u64(struct cli_parser *p, uint64_t lo, uint64_t hi, uint64_t *out);
int cli_u32(struct cli_parser *p, uint32_t lo, uint32_t hi, uint32_t *out);
/* p->value must be one of the NULL-terminated names; *out = its index. */
int cli_choice(struct cli_parser *p, const char *const *names, int *out);

/* Sets p->why to a printf-formatted message; returns -1. */
int cli_fail(struct cli_parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prints an option table for --help, one option a line; default_of (may be
 * NULL) fills buf with the default shown for an option id, or leaves it
 * empty for none. */
void cli_print_options(FILE *out, const struct cli_opt *opts,
		       void (*default_of)(int id, char *buf, size_t n));

#endif
