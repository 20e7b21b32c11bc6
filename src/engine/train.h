/* train.h - the training driver and its per-clock hook (library-internal).
 *
 * One driver (train.c) runs every epoch for every engine: it makes the
 * model, checks the run against the engine's (and the place's)
 * capabilities, opens the engine through engine_ops.h, sweeps, evaluates,
 * stops early, reports progress and refuses a diverged model. boar_train
 * calls it with no hook: each epoch is one sweep. Cluster training
 * (train_cluster.c) is the same driver with a hook: each epoch this
 * process sweeps its share of the order in clocks, and the hook pulls the
 * keys of a clock before its sweep and pushes what changed after.
 */
#ifndef BOAR_TRAIN_H
#define BOAR_TRAIN_H

#include <stdint.h>

#include "boar.h"

struct boar_dataset;
struct boar_model;
struct boar_engine_ops;

/* A run as the hook sees it (read-only, except the model's weights). */
struct train_run {
	const struct boar_dataset *d;
	boar_options o; /* resolved */
	struct boar_model *m;
	const struct boar_engine_ops *ops;
	void *eng; /* the engine the ops opened */
};

struct train_hook {
	const char *who;    /* for refusals: "cluster training" */
	unsigned caps;      /* what training there supports (BOAR_CAP bits) */
	const char *advice; /* appended to a refusal, or NULL */
	/* What the engine may do to the layout (enum boar_engine_layout;
	 * never the rows' packing, whose orders the hook could not map back
	 * to the rows). */
	int layout;
	void *ctx;
	/* Once, with the model made and the engine open: positions
	 * [*first, *last) of every epoch's order are this process's, swept in
	 * *clocks slices. */
	int (*start)(void *ctx, const struct train_run *r, uint64_t *first,
		     uint64_t *last, uint64_t *clocks, boar_error *err);
	/* Before the sweep of positions [b, e) of order: fresh weights for
	 * the keys those rows touch, loaded into the engine. */
	int (*pull)(void *ctx, const struct train_run *r, const uint32_t *order,
		    uint64_t b, uint64_t e, boar_error *err);
	/* After it: what the sweep changed, pushed; then the clock ticks. */
	int (*push)(void *ctx, const struct train_run *r, uint64_t rows,
		    boar_error *err);
	/* Every weight an evaluation reads, fresh, into the host model. */
	int (*refresh)(void *ctx, const struct train_run *r, boar_error *err);
	/* 1: refresh writes every weight an evaluation of the test set
	 * reads, so the host model needs no copy of the engine's weights
	 * before it (ops->sync: the whole model, where the evaluation reads
	 * the test set's keys). */
	int refresh_covers_test;
	/* After the last epoch (also when the progress callback stopped it):
	 * may replace the host model's weights (a gathered model). */
	int (*finish)(void *ctx, const struct train_run *r, boar_error *err);
	/* NULL, or, asked once the last epoch is swept, where it is to be
	 * evaluated: 1 where finish will put the final model in the host
	 * model; the last epoch is then evaluated (and reported) after
	 * finish, on it, without refresh. */
	int (*final_into_host)(void *ctx, const struct train_run *r);
};

/* boar_train with an optional hook (NULL: a single process). */
int boar_train_driver(const boar_dataset *train, const boar_options *o,
		      const struct train_hook *hook, boar_model **out,
		      boar_error *err);

#endif
