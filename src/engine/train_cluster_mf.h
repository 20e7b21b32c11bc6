/* train_cluster_mf.h - matrix factorization trained by the parameter
 * server (engine-internal): train_cluster_mf.c runs the clocks against
 * the transport, cluster_mf_local.c builds a worker's local problem (its
 * ratings, its users and items renumbered, its clocks), cluster_mf_agree.c
 * makes workers that read parts agree on the file's statistics and on
 * whose users are private. The design is at the top of train_cluster_mf.c.
 */
#ifndef BOAR_ENGINE_TRAIN_CLUSTER_MF_H
#define BOAR_ENGINE_TRAIN_CLUSTER_MF_H

#include <stdint.h>

#include "boar.h"
#include "data/dataset.h"
#include "model/model.h"

/* A worker's ratings as a dataset of its own: users and items numbered
 * 0..nu-1 and 0..ni-1 in the order of their global ids (so a clock's keys
 * come out ascending), and the ratings cut into clocks: fixed slices of
 * the shuffled ratings (blocks 0), or strata cells (blocks W, the
 * workers): user block a x item block b, cell b*W + a, each global id's
 * block drawn from a hash of the seed, the same in every worker, each
 * cell in `rounds` parts (clock (b*W + a)*rounds + j) (cluster_mf_local.c). */
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
	uint64_t max_rows;      /* users + items of the largest clock
				   (strata: the most users of a cell or
				   items of a block) */
	uint32_t blocks;        /* strata: W blocks a side; 0: clocks */
	uint32_t rounds;        /* strata: parts per cell (clocks: W^2 x) */
	/* strata: item block b's items bi[bi_at[b] .. bi_at[b + 1]) and
	 * user block a's shared users bu[bu_at[a] .. bu_at[a + 1]), local
	 * ids ascending; ub[u]: user u's block */
	uint32_t *bi, *bu, *ub;
	uint64_t *bi_at, *bu_at;
};

/* Worker `rank` of `n_workers`' problem from train (its part of the
 * ratings where local_rows, else its 1/n_workers of them, chosen by a
 * hash of seed and user so that the workers' shares partition the
 * file), cut into clocks of about sync_every ratings, shuffled by seed,
 * or with strata into cells (mf_local_cut_cells).
 * Global ids must be below train->dim (users) and train->n_items.
 * @return 0, or BOAR_ENOMEM with err. */
int mf_local_build(const boar_dataset *train, int local_rows, uint32_t rank,
		   uint32_t n_workers, uint64_t seed, uint64_t sync_every,
		   int strata, struct mf_local *l, boar_error *err);
/* Strata cells swept in this many rounds an epoch (with 2 workers or
 * more), round j sweeping every cell's j-th part: swept whole, one cell
 * after another, each cell's rows fit factors of their own that the next
 * cells must undo (sweep_mf.c, MF_ROUNDS: the same on threads). 2 workers
 * on 1M ratings sorted by user (5000 x 2000, rank 16), test RMSE after
 * epoch 2: whole cells 0.34, 2 rounds 0.077, 4 rounds 0.075, one worker
 * 0.082; 2 rounds move the blocks half as often as 4. */
#define MF_STRATA_ROUNDS 2

/* Instead of clocks (mf_local_build calls it): the ratings cut into
 * n_workers^2 strata cells, shuffled within each by seed, each cut into
 * `rounds` parts (clocks); cu and ci list each part's users and items, bi
 * each item block's items (bu, the user blocks' shared users, comes with
 * mf_local_drop_users). @return 0 or BOAR_ENOMEM. */
int mf_local_cut_cells(struct mf_local *l, uint32_t rank, uint32_t n_workers,
		       uint64_t seed);
/* The block (of n) of global user (item 0) or item (item 1) id g. */
uint32_t mf_block_of(uint64_t seed, int item, uint32_t g, uint32_t n);
/* Takes the users with drop[local id] set out of every clock's list
 * (their rows are private: not moved per clock; drop NULL: none), lists
 * the rest by block (strata) and sets max_rows. @return 0 or
 * BOAR_ENOMEM. */
int mf_local_drop_users(struct mf_local *l, const uint8_t *drop);
void mf_local_free(struct mf_local *l);

/* The keys of a row (S = rank + 3 of them): its factors, then these. */
#define SLOT_BIAS(R) (R)
#define SLOT_SUM(R) ((R) + 1)     /* its AdaGrad sum */
#define SLOT_HOLDERS(R) ((R) + 2) /* users: how many workers hold ratings
				     of the user (--read-part) */
/* Keys per worker after the rows, for the agreement: its ratings' count,
 * mean and mean square, its shared users and items (cluster_mf_agree.c). */
#define AGREE_KEYS 5

/* A worker's state (train_cluster_mf.c). */
struct mfc {
	const boar_ps_transport *t;
	boar_options o;      /* resolved */
	int local_rows;      /* t->local_rows: the data is this worker's part */
	int (*pull_ahead)(void *ctx, const uint64_t *keys, uint32_t n,
			  boar_error *err);
	/* the transport's barrier: strata (cluster_mf_strata.c) */
	int (*wait_clock)(void *ctx, uint64_t clock, boar_error *err);
	uint64_t ticks, waited;    /* clocks ticked; the last barrier's */
	int outer_users;           /* strata: user blocks stay for a group */
	uint64_t U, I;       /* the model's users and items */
	uint32_t R, S;       /* rank; keys per row (R + 3) */
	uint32_t w;          /* slots moved per row */
	uint32_t off[2];     /* the slots moved after the factors */
	struct boar_factor_init fi;
	float mu;
	struct mf_local l;
	struct boar_model *lm;     /* the worker's rows, local ids */
	float *P0, *Q0;            /* their initial factors */
	struct boar_engine **eng;  /* one per clock */
	float *sums;               /* AdaGrad row sums, shared by them */
	uint64_t n_keys, stats_key;
	uint64_t *keys, *ahead_keys, nk, ahead_nk;
	int64_t ahead_k;           /* clock asked ahead, or -1 */
	float *vals, *before;
	uint64_t cap;
	uint64_t *bkeys;           /* strata: the item block owned */
	float *bvals, *bbefore;
	uint64_t *test_keys, n_test_keys; /* what an evaluation pulls */
	/* Private users (this worker holds all their ratings): not moved
	 * per clock; pu[0..npu) local ids, their keys, and their values as
	 * last pulled or pushed. */
	uint8_t *is_private;       /* per local user */
	uint32_t *pu;
	uint64_t npu, npk;
	uint64_t *pkeys;
	float *pvals, *pbefore;
	double phase[BOAR_PS_PHASES], mark;
};

/* Rows of the layout: users u[0..nu) then items i[0..ni), local ids
 * ascending (so their keys are). */
struct mf_rows {
	const uint32_t *u, *i;
	uint64_t nu, ni;
};

enum mf_walk { WALK_KEYS, WALK_LOAD, WALK_STORE };

/* The rows' slots in key order: their keys into keys (KEYS); the values
 * vals pulled into the worker's model, remembered in before (LOAD); or
 * what changed since before into vals, before then updated (STORE).
 * @return the number of keys. */
uint64_t mf_walk(struct mfc *c, const struct mf_rows *rs, enum mf_walk mode,
		 uint64_t *keys, float *vals, float *before);

/* The ratings of clock (or cell) k swept by its engine, timed as the
 * sweep; a non-finite loss refused by name (train_cluster_mf.c). */
int mf_sweep_block(struct mfc *c, uint64_t k, int epoch, double eta,
		   double *loss, boar_error *err);

/* What the private rows changed since they last travelled, pushed
 * (train_cluster_mf.c); whether they travel every epoch (for worker 0's
 * evaluations: not worker 0's own, pushed once at the end). */
int mf_push_private(struct mfc *c, boar_error *err);
int mf_private_travels(const struct mfc *c);

/* Strata (cluster_mf_strata.c): one epoch of W groups of W clocks; and
 * the barrier, waiting until every worker has ticked as many clocks as
 * this one (none with one worker, or where it already waited). */
int mf_strata_epoch(struct mfc *c, int epoch, double eta, double *loss,
		    boar_error *err);
int mf_barrier(struct mfc *c, boar_error *err);
/* The epoch's order, the same in every worker: in group g worker r owns
 * item block (r + P[g]) mod W, and in its clock h sweeps the cell of
 * user block (r + Q[h]) mod W (P, Q permutations of 0..W-1). */
void mf_strata_order(uint32_t W, uint64_t seed, int epoch, uint32_t *P,
		     uint32_t *Q);

/* --read-part: every worker's count, mean and mean square of its ratings
 * (mine) summed into all (count, mean, mean square of the whole file),
 * and which of this worker's users no other worker holds (is_private).
 * Waits for every worker, at any staleness (cluster_mf_agree.c). */
int mf_agree(struct mfc *c, const double mine[3], double all[3],
	     boar_error *err);

/* Cluster training of an MF dataset (boar_train_ps hands it over). */
int boar_train_ps_mf(const boar_dataset *train, const boar_options *o,
		     const boar_ps_transport *t, boar_model **out,
		     boar_error *err);

#endif
