/* search.h - `boar train --search SPEC`: model selection over eta, l1 and
 * l2 (LIBLINEAR's -C) with boar_search. Each configuration is judged by
 * --cv K folds (5 when nothing is said), a --holdout fraction or a --test
 * file; its row of the table goes to stderr as its result is final (--json:
 * one object per configuration on stdout, then one naming the best). The
 * best is trained again on all the training rows (with --test: the model
 * judged is kept) and saved with -m. */
#ifndef BOAR_CLI_SEARCH_H
#define BOAR_CLI_SEARCH_H

#include "boar.h"
#include "train_args.h"

struct cli_parser;
/* The command line's --search against its other options (one judge; its
 * --holdout moves from early stopping to the search). 0, or -1 with p->why
 * filled. */
int search_args_check(struct train_args *a, struct cli_parser *p);

/* Runs the search of a->search on train (test: the --test set, or NULL).
 * @return the process exit status. */
int search_run(const struct train_args *a, const boar_dataset *train,
	       const boar_dataset *test);

#endif
