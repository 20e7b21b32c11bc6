/* train_cluster_mf.h - matrix factorization trained by the parameter
 * server (engine-internal): train_cluster_mf.c runs the clocks against
 * the transport, cluster_mf_local.c builds a worker's local problem (its
 * ratings, its users and items renumbered, its clocks). The design is at
 * the top of train_cluster_mf.c.
 */
#ifndef BOAR_ENGINE_TRAIN_CLUSTER_MF_H
#define BOAR_ENGINE_TRAIN_CLUSTER_MF_H

#include <stdint.h>

#include "boar.h"
#include "data/dataset.h"

/* A worker's ratings as a dataset of its own: users and items numbered
 * 0..nu-1 and 0..ni-1 in the order of their global ids (so a clock's keys
 * come out ascending), and the ratings cut into clocks. */
struct mf_local {
	struct boar_dataset d;  /* task MF; user, item, label owned here */
	uint32_t *gu, *gi;      /* local id -> global id */
	uint32_t nu, ni;
	uint64_t clocks;
	uint32_t *rows;         /* clock k: rows[at[k] .. at[k + 1]) of d */
	uint64_t *at;           /* clocks + 1 */
	/* clock k's users cu[cu_at[k] .. cu_at[k + 1]) and items likewise,
	 * local ids ascending */
	uint32_t *cu, *ci;
	uint64_t *cu_at, *ci_at;
	uint64_t max_rows;      /* users + items of the largest clock */
};

/* Worker `rank` of `n_workers`' problem from train (its part of the
 * ratings where local_rows, else its 1/n_workers of them, chosen by a
 * hash of seed and position so that the workers' shares partition the
 * file), cut into clocks of about sync_every ratings, shuffled by seed.
 * Global ids must be below train->dim (users) and train->n_items.
 * @return 0, or BOAR_ENOMEM with err. */
int mf_local_build(const boar_dataset *train, int local_rows, uint32_t rank,
		   uint32_t n_workers, uint64_t seed, uint64_t sync_every,
		   struct mf_local *l, boar_error *err);
void mf_local_free(struct mf_local *l);

/* Cluster training of an MF dataset (boar_train_ps hands it over). */
int boar_train_ps_mf(const boar_dataset *train, const boar_options *o,
		     const boar_ps_transport *t, boar_model **out,
		     boar_error *err);

#endif
