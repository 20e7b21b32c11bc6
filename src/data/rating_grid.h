/* rating_grid.h - ratings cut into an N x N grid of user blocks x item
 * blocks, for matrix factorization on N GPUs (library-internal; the GPU
 * plugin links it too).
 *
 * The scheme is LIBMF's / DSGD's strata: users are cut into N ranges and
 * items into N ranges, block (b, j) holds the ratings of user range b and
 * item range j. In sub-epoch s of an epoch, GPU g sweeps block
 * (g, boar_grid_stratum(g, s, N)): the N blocks of one sub-epoch share no
 * user and no item, so the GPUs update disjoint rows of P and Q and need
 * no coordination inside a sub-epoch. After N sub-epochs every block has
 * been swept once. User range g lives on GPU g for the whole run; item
 * range j visits every GPU in turn, moving from GPU g to GPU g - 1 (mod N)
 * between sub-epochs (gpu/gpu_multi.cu).
 *
 * The cuts are placed at the quantiles of the rating counts (each user
 * range and each item range holds about 1/N of the ratings), so that the
 * blocks of a sub-epoch, swept side by side, take about as long when
 * users and items are independent. The ratings are copied, grouped by
 * block (row-major: b * N + j), each keeping the order it had; ids become
 * offsets from their range's first id, so each GPU's arrays index its own
 * rows and the item block it holds.
 */
#ifndef BOAR_RATING_GRID_H
#define BOAR_RATING_GRID_H

#include <stdint.h>

#include "boar.h"

struct boar_dataset;

struct boar_rating_grid {
	uint32_t n;         /* blocks per side */
	uint64_t *user_cut; /* n + 1: user range b is [user_cut[b], user_cut[b+1]) */
	uint64_t *item_cut; /* n + 1: likewise for items */
	uint64_t *start;    /* n * n + 1: block b * n + j holds positions
			       [start[b n + j], start[b n + j + 1]) */
	uint32_t *user;     /* n_rows: user id - user_cut[its range] */
	uint32_t *item;     /* n_rows: item id - item_cut[its range] */
	float *rating;      /* n_rows */
	uint64_t n_rows;
};

/* Cuts d's ratings (an MF dataset) into an n x n grid (n >= 1). 0, or
 * BOAR_ENOMEM / BOAR_EINVAL with err filled. Free with
 * boar_rating_grid_free (also after a failure). */
int boar_rating_grid_build(const struct boar_dataset *d, uint32_t n,
			   struct boar_rating_grid *g, boar_error *err);

/* Frees the copied ratings only (the cuts and block starts stay): for a
 * caller that has moved them elsewhere (the GPUs). */
void boar_rating_grid_drop_ratings(struct boar_rating_grid *g);

void boar_rating_grid_free(struct boar_rating_grid *g);

/* The item block that block row g sweeps in sub-epoch s: (g + s) mod n. */
static inline uint32_t boar_grid_stratum(uint32_t g, uint32_t s, uint32_t n)
{
	return (g + s) % n;
}

/* Ratings in block (b, j). */
static inline uint64_t boar_grid_block_rows(const struct boar_rating_grid *g,
					    uint32_t b, uint32_t j)
{
	return g->start[(uint64_t)b * g->n + j + 1] -
	       g->start[(uint64_t)b * g->n + j];
}

/* Rows of the largest range: users (items = 0) or items (items = 1). */
uint64_t boar_rating_grid_widest(const struct boar_rating_grid *g, int items);

#endif
