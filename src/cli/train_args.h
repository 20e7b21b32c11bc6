/* train_args.h - `boar train`'s options, parsed into one struct.
 *
 * Kept apart from the command itself so that other commands that train
 * (a cluster worker, a benchmark driver) can parse the same options the
 * same way: train_args_default() takes every default from the library
 * (boar_options_default, boar_load_options_default), train_args_parse()
 * fills the struct from argv, train_args_help() documents each option with
 * that default.
 */
#ifndef BOAR_CLI_TRAIN_ARGS_H
#define BOAR_CLI_TRAIN_ARGS_H

#include <stdio.h>

#include "boar.h"
#include "search_spec.h"

/* As many --class-weight options as a model can have classes, and then
 * some: beyond this nobody is typing them by hand. */
#define TRAIN_ARGS_MAX_CLASS_WEIGHTS 1024

struct train_args {
	boar_options opt;       /* engine options (opt.test set by the caller) */
	boar_load_options load; /* how FILE and --test FILE are read */
	const char *train_path; /* the one positional argument */
	const char *test_path;  /* --test, or NULL */
	const char *model_out;  /* -m/--model-out, or NULL */
	int json;               /* --json: one object per epoch on stdout */
	int quiet;              /* --quiet: no progress or summary */
	const char *vw_q;       /* AB of the first VW -q AB read as
				   --quadratic, and how many there were */
	int vw_q_count;
	const char *weights_path;    /* --weights: one weight per training row */
	const char *init_model_path; /* --init-model: warm start from it */
	int loss_given;         /* --loss was on the command line */
	int loss_param_of;      /* 1 + the loss whose parameter was given */
	int hash_bits_given;    /* --hash-bits was on the command line */
	double target_rmse;     /* --target-rmse: stop at this test RMSE; 0 off */
	int rank_given;         /* --rank was on the command line */
	int mf_loss_given;      /* --mf-loss was on the command line */
	int cv;                 /* --cv K: K-fold cross-validation, or 0 */
	struct search_spec search; /* --search: the grid (search.given) */
	double search_holdout;  /* --holdout with --search: its judge */
	int search_parallel;    /* --search-parallel: at once, 0 = auto */
	unsigned data_given;    /* CLI_DATA_BIT()s of the data options given */
	int biases_given;       /* --mf-biases or --no-mf-biases was */
	int bias_given;         /* 1: --bias on, 2: --bias off, 4: --bias-scale */
	/* --class-weight LABEL:W, in the order given; opt.class_weight_*
	 * point here once parsing is done (re-point them after copying the
	 * struct). */
	float cw_labels[TRAIN_ARGS_MAX_CLASS_WEIGHTS];
	float cw_values[TRAIN_ARGS_MAX_CLASS_WEIGHTS];
};

enum {
	TRAIN_ARGS_OK = 0,
	TRAIN_ARGS_HELP = 1,   /* --help was given */
	TRAIN_ARGS_ERROR = -1, /* why[] says what is wrong */
};

void train_args_default(struct train_args *a);

/* argv[0] is the command name. Checks each value's syntax and range, then
 * the whole with boar_options_check() (without a dataset).
 * @return TRAIN_ARGS_OK, TRAIN_ARGS_HELP or TRAIN_ARGS_ERROR. */
int train_args_parse(struct train_args *a, int argc, char **argv, char *why,
		     size_t why_len);

/* Every option, one a line, with its default. */
void train_args_help(FILE *out);

#endif
