/* progress.h - the human-readable training progress line and summaries.
 *
 * On a terminal the epoch line is rewritten in place ('\r'), elsewhere
 * (logs, CI, pipes) each epoch gets a line of its own so nothing is lost.
 * Everything goes to stderr; stdout stays free for --json and scores.
 */
#ifndef BOAR_CLI_PROGRESS_H
#define BOAR_CLI_PROGRESS_H

#include <stdio.h>

#include "boar.h"

/* Which test columns a model has (progress_epoch's `kind`). */
enum {
	PROGRESS_RMSE = 0,    /* ratings and squared loss: RMSE */
	PROGRESS_BINARY = 1,  /* accuracy and AUC */
	PROGRESS_CLASSES = 2, /* multiclass: accuracy (AUC is not defined) */
};

struct progress {
	int quiet;
	int tty;     /* stderr is a terminal */
	int open;    /* a '\r' line is showing and needs its newline */
	int holdout; /* show the holdout loss even without early stopping */
};

void progress_init(struct progress *p, int quiet);
/* kind: PROGRESS_*; 0/1 also read as "binary or not". */
void progress_epoch(struct progress *p, const boar_epoch_stats *s, int epochs,
		    int kind);
/* Ends a line left open on a terminal. */
void progress_done(struct progress *p);

/* "NAME (N rows): accuracy A  AUC B  log loss C", accuracy and loss for
 * multiclass models, or RMSE for ratings and squared loss. */
void progress_summary(FILE *out, const char *name, const boar_model *m,
		      const boar_metrics *mt);

/* The name of a model's loss as people say it ("log loss"). */
const char *progress_loss_name(const boar_model *m);

#endif
