/* cluster_mf.h - a cluster worker's ratings: the model's shape. */
#ifndef BOAR_CLI_CLUSTER_MF_H
#define BOAR_CLI_CLUSTER_MF_H

#include <stdint.h>

#include "boar.h"

/* For a ratings dataset d read from path: raises its users and items to
 * --users and --items (0: not given), refusing ids at or beyond them;
 * with read_part both are required. Other tasks: nothing.
 * @return 0, or the exit status (a usage error or a data error, reported). */
int cluster_mf_shape(boar_dataset *d, int read_part, uint64_t users,
		     uint64_t items, const char *path, boar_error *err);

#endif
