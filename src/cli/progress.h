/* progress.h - the human-readable training progress line and summaries.
 *
 * Each epoch gets a line of its own, so the learning curve stays on the
 * screen. On a terminal (isatty(stderr)) one more line below them is live:
 * rewritten in place ('\r') with what is happening now (rows of the running
 * epoch, bytes of a file being read) and wiped before the next permanent
 * line. Elsewhere (logs, CI, pipes) nothing is ever rewritten: no '\r' is
 * written at all. Everything goes to stderr; stdout stays free for --json
 * and scores.
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
	int open;    /* a live line is showing */
	int holdout; /* show the holdout loss even without early stopping */
	double t0;   /* when reading began (progress_bytes), or 0 */
};

void progress_init(struct progress *p, int quiet);
/* kind: PROGRESS_*; 0/1 also read as "binary or not". */
void progress_epoch(struct progress *p, const boar_epoch_stats *s, int epochs,
		    int kind);
/* Wipes the live line, if one shows (before a permanent line). */
void progress_clear(struct progress *p);
/* Draws the live line (printf-style) on a terminal; nothing elsewhere. */
void progress_live(struct progress *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Wipes the live line at the end. */
void progress_done(struct progress *p);

/* The library's progress inside an epoch (boar_options.sweep_progress,
 * ctx a struct progress): "epoch E: rows/total, rate, ETA" live. */
void progress_sweep(const boar_sweep_stats *s, void *ctx);
/* The loader's progress (boar_load_options.progress, ctx a struct
 * progress): a bar of the bytes read, live. */
void progress_bytes(uint64_t done, uint64_t total, void *ctx);
/* boar_dataset_load with that bar on a terminal (unless quiet). */
int progress_load(const char *path, const boar_load_options *o, int quiet,
		  boar_dataset **out, boar_error *err);

/* "NAME (N rows): accuracy A  AUC B  log loss C", accuracy and loss for
 * multiclass models, or RMSE for ratings and squared loss. */
void progress_summary(FILE *out, const char *name, const boar_model *m,
		      const boar_metrics *mt);

/* The name of a model's loss as people say it ("log loss"). */
const char *progress_loss_name(const boar_model *m);

#endif
