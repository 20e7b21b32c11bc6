/* cluster_adagrad.h - AdaGrad's sums shared through the parameter servers
 * by the linear cluster driver (engine-internal; cluster_adagrad.c says
 * why and how). */
#ifndef BOAR_ENGINE_CLUSTER_ADAGRAD_H
#define BOAR_ENGINE_CLUSTER_ADAGRAD_H

#include <stdint.h>

#include "boar.h"

struct cluster;
struct train_run;

/* Whether this run shares its sums (the transport lets it, the optimizer
 * keeps sums, the engine is the CPU's): then c->key_copies = 2 and the
 * servers hold a sum key beside every weight key, else c->key_copies = 1.
 * @return 0 or BOAR_ENOMEM. */
int cluster_sums_start(struct cluster *c, const struct train_run *r,
		       boar_error *err);
void cluster_sums_free(struct cluster *c);

/* The sums' transport keys of the weight keys g[0..n) into g[n..2n). */
void cluster_sums_keys(const struct cluster *c, uint64_t *g, uint64_t n);

/* The pulled sums[0..n) of the engine's keys[0..n) into the engine. */
void cluster_sums_load(struct cluster *c, const uint64_t *keys,
		       const float *sums, uint64_t n);

/* What the sweep since cluster_sums_load added to each key's sum (sums:
 * the values loaded), into added[0..n). */
void cluster_sums_added(struct cluster *c, const uint64_t *keys,
			const float *sums, float *added, uint64_t n);

#endif
