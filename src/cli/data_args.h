/* data_args.h - the options that say how a data file is read (--format
 * and the --csv-* family), shared by train, eval and predict.
 *
 * A command puts CLI_DATA_OPTS into its option table, hands ids from
 * CLI_DATA_FIRST on to cli_data_apply() and asks cli_data_default() for
 * their --help defaults; the values land in a boar_load_options. A model
 * remembers how its training data was read, so eval and predict need none
 * of them again: cli_data_for_model() merges what the model says with what
 * the user gave and refuses a contradiction.
 */
#ifndef BOAR_CLI_DATA_ARGS_H
#define BOAR_CLI_DATA_ARGS_H

#include <stddef.h>

#include "args.h"
#include "boar.h"

enum {
	CLI_DATA_FIRST = 1000, /* above every command's own ids */
	CLI_DATA_FORMAT = CLI_DATA_FIRST,
	CLI_DATA_CSV_LABEL,
	CLI_DATA_CSV_IGNORE,
	CLI_DATA_CSV_CATEGORICAL,
	CLI_DATA_CSV_NUMERIC,
	CLI_DATA_CSV_SEPARATOR,
	CLI_DATA_CSV_HEADER,
	CLI_DATA_NO_CSV_HEADER,
	CLI_DATA_CSV_LOG,
	CLI_DATA_VW_IGNORE,
	CLI_DATA_VW_KEEP,
	CLI_DATA_VW_QUADRATIC,
	CLI_DATA_VW_CUBIC,
	CLI_DATA_VW_INTERACTIONS,
	CLI_DATA_VW_NGRAM,
	CLI_DATA_VW_SKIPS,
	CLI_DATA_MAX_MEMORY,
	CLI_DATA_LAST = CLI_DATA_MAX_MEMORY,
};

/* "auto|libsvm|ratings|vw|csv" from boar.h's list. */
#define CLI_FORMAT_BAR_(N, code, name, task, hashed, help) "|" #name
#define CLI_FORMAT_METAVAR "auto" BOAR_FORMAT_MAP(CLI_FORMAT_BAR_)

#define CLI_DATA_OPTS                                                        \
	{ CLI_DATA_FORMAT, "format", 0, CLI_FORMAT_METAVAR,                  \
	  "input format (gzip-compressed files are read as well); auto "     \
	  "tells VW, CSV, LIBSVM and ratings apart from the first lines" },  \
	{ CLI_DATA_CSV_LABEL, "csv-label", 0, "COL",                         \
	  "csv: the label column, a 0-based index or a header name" },       \
	{ CLI_DATA_CSV_IGNORE, "csv-ignore", 0, "COLS",                      \
	  "csv: columns to skip, e.g. Id or 0,3-5 or C1-C9 (names need "     \
	  "a header)" },                                                     \
	{ CLI_DATA_CSV_CATEGORICAL, "csv-categorical", 0, "COLS",            \
	  "csv: columns hashed as (column, value) features even if their "   \
	  "values are numbers; other columns are categorical when a value "  \
	  "is not a number" },                                               \
	{ CLI_DATA_CSV_NUMERIC, "csv-numeric", 0, "COLS",                    \
	  "csv: columns that must hold numbers (the value is the "           \
	  "feature's; empty = missing)" },                                   \
	{ CLI_DATA_CSV_SEPARATOR, "csv-separator", 0, "C",                   \
	  "csv: the field separator, one character or 'tab'" },             \
	{ CLI_DATA_CSV_HEADER, "csv-header", 0, NULL,                        \
	  "csv: line 1 is a header" },                                       \
	{ CLI_DATA_NO_CSV_HEADER, "no-csv-header", 0, NULL,                  \
	  "csv: line 1 is data" },                                           \
	{ CLI_DATA_CSV_LOG, "csv-log", 0, NULL,                              \
	  "csv: numeric values v become sign(v) log(1+|v|) (long-tailed "    \
	  "counts such as Criteo's I1-I13)" },                            \
	{ CLI_DATA_VW_IGNORE, "ignore", 0, "NS",                             \
	  "vw: drop the features of these namespaces, named by first "      \
	  "letter as VW's --ignore (' ' the unnamed one)" },                 \
	{ CLI_DATA_VW_KEEP, "keep", 0, "NS",                                 \
	  "vw: keep only these namespaces' features (VW's --keep)" },        \
	{ CLI_DATA_VW_QUADRATIC, "quadratic", 0, "AB",                       \
	  "vw: cross namespaces A and B (VW's -q; train reads -q AB as "    \
	  "this when AB names no file, -q alone is --quiet): a "            \
	  "feature per pair, value the product, VW's hash; ':' is any "      \
	  "namespace; repeatable" },                                         \
	{ CLI_DATA_VW_CUBIC, "cubic", 0, "ABC",                              \
	  "vw: cross three namespaces (VW's --cubic); repeatable" },         \
	{ CLI_DATA_VW_INTERACTIONS, "interactions", 0, "AB...",              \
	  "vw: cross 2 to 8 namespaces (VW's --interactions); a namespace "  \
	  "crossed with itself gives combinations; repeatable" },            \
	{ CLI_DATA_VW_NGRAM, "ngram", 0, "[A]N",                             \
	  "vw: add the 2..N-grams of consecutive tokens of every namespace " \
	  "(or of namespace A: a2) as features t1^t2...; repeatable" },      \
	{ CLI_DATA_VW_SKIPS, "skips", 0, "[A]K",                             \
	  "vw: n-grams may skip up to K tokens (VW's --skips; needs "        \
	  "--ngram); repeatable" },                                          \
	{ CLI_DATA_MAX_MEMORY, "max-memory", 0, "SIZE",                      \
	  "refuse data or a model that would need more memory than SIZE "   \
	  "(bytes, or with K, M, G, T: powers of 1024), with the size it "   \
	  "would need, before allocating it" }

/* Applies a data option to lo. @return 0, or -1 with p->why set. */
int cli_data_apply(boar_load_options *lo, struct cli_parser *p, int id);

/* The bit of a data option id in a mask of the options given. */
#define CLI_DATA_BIT(id) (1u << ((id) - CLI_DATA_FIRST))

/* Data for model m (from model_path): *lo starts as the way m's training
 * data was read (format, hashing, CSV columns and transforms) and keeps
 * the options the user gave (bits in `given`) where they agree with it;
 * the CSV separator and header describe one file and may differ.
 * @return 0, or -1 with why naming the option that contradicts the model. */
int cli_data_for_model(const boar_model *m, const char *model_path,
		       boar_load_options *lo, unsigned given, char *why,
		       size_t why_len);

/* The --help default of a data option id (empty for others). */
void cli_data_default(int id, char *buf, size_t n);

#endif
