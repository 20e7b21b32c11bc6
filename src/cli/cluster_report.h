/* cluster_report.h - what a cluster worker says (cluster_report.c). */
#ifndef BOAR_CLI_CLUSTER_REPORT_H
#define BOAR_CLI_CLUSTER_REPORT_H

#include <stdint.h>

#include "boar.h"
#include "net/worker.h"
#include "progress.h"
#include "read_part.h"
#include "train_args.h"

/* A worker's run as its reports see it. */
struct wrun {
	const struct train_args *a;
	struct progress pr;
	uint32_t rank, n_workers;
	int read_part;
	int binary;
	int last_epoch;
	boar_epoch_stats last; /* the last epoch's (its test metrics) */
	double load_s; /* reading the training data (or part) and test set */
	double setup_s; /* boar_ps_train outside its clocks and gather: the
			   feature map, the engine, freeing them */
};

/* The progress callback (ctx: the wrun): rank 0's epoch line, and its
 * JSON object with --json. */
int cluster_on_epoch(const boar_epoch_stats *s, void *ctx);

/* What the worker did, when it is done: lines on stderr (unless
 * --quiet), and rank 0's object on stdout with --json (the model
 * evaluated on the test set, where it was gathered). */
void cluster_say_worker(const struct wrun *c, const struct train_args *a,
			uint32_t n_shards, const struct ps_worker_report *rep,
			const struct part_info *part,
			const boar_dataset *train, const boar_dataset *test,
			const boar_model *model);

#endif
