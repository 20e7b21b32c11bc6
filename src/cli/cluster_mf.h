/* cluster_mf.h - what a cluster worker starts from: its training data
 * (its part of the file, or all of it), its test set and, for ratings,
 * the model's shape every worker must agree on. */
#ifndef BOAR_CLI_CLUSTER_MF_H
#define BOAR_CLI_CLUSTER_MF_H

#include <stdint.h>

#include "boar.h"
#include "read_part.h"
#include "train_args.h"

struct cluster_input {
	int read_part;            /* --read-part: parse only part rank */
	uint32_t rank, n_workers;
	uint64_t features;        /* --features (0: none) */
	uint64_t users, items;    /* --users, --items (0: none) */
};

/* Refuses what a worker cannot start from (a warm start: the shards start
 * from zero), then reads a->train_path whole or its part (into *part),
 * a ratings file raised to --users and --items (ids at or beyond them
 * refused; with --read-part both are required).
 * @return 0 and *train, or the exit status (reported on stderr). */
int cluster_worker_input(const struct train_args *a,
			 const struct cluster_input *in, boar_dataset **train,
			 struct part_info *part);

/* The test set (a->test_path; none without one) read for train's task,
 * on all cores as the training data, into *test and a->opt.test.
 * @return 0, or the exit status (reported on stderr). */
int cluster_worker_test(struct train_args *a, const boar_dataset *train,
			boar_dataset **test);

/* Whether a worker's progress shows accuracy and AUC (a binary or
 * multiclass loss on rows) rather than RMSE (regression, ratings). */
int cluster_binary_metrics(const boar_dataset *train, int loss);

#endif
