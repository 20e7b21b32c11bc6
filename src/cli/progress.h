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

struct progress {
	int quiet;
	int tty;  /* stderr is a terminal */
	int open; /* a '\r' line is showing and needs its newline */
};

void progress_init(struct progress *p, int quiet);
void progress_epoch(struct progress *p, const boar_epoch_stats *s, int epochs,
		    int binary);
/* Ends a line left open on a terminal. */
void progress_done(struct progress *p);

/* "NAME (N rows): accuracy A  AUC B  log loss C", or RMSE for ratings and
 * squared loss. */
void progress_summary(FILE *out, const char *name, const boar_model *m,
		      const boar_metrics *mt);

/* The name of a model's loss as people say it ("log loss"). */
const char *progress_loss_name(const boar_model *m);

#endif
