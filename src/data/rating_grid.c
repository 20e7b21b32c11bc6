/* rating_grid.c - ratings cut into an N x N grid of user x item blocks
 * (see rating_grid.h): cuts at the quantiles of the rating counts, then a
 * counting sort of the ratings by block.
 */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "dataset.h"
#include "rating_grid.h"

/* cut[0..n]: ranges of ids [0, n_ids) holding about 1/n of the ratings
 * each. Range b ends at the first id where the running count reaches
 * (b + 1) / n of the total; a range may be empty (more blocks than ids, or
 * one id heavier than a share). */
static int quantile_cuts(const uint32_t *ids, uint64_t n_rows, uint64_t n_ids,
			 uint32_t n, uint64_t *cut)
{
	uint64_t *count = calloc(n_ids ? n_ids : 1, sizeof *count);
	if (!count)
		return -1;
	for (uint64_t k = 0; k < n_rows; k++)
		count[ids[k]]++;
	uint64_t run = 0, id = 0;
	cut[0] = 0;
	for (uint32_t b = 1; b < n; b++) {
		/* ceil(b * n_rows / n) ratings before cut b (no overflow:
		 * n <= 1024 and n_rows < 2^53) */
		uint64_t want = (n_rows * b + n - 1) / n;
		while (id < n_ids && run < want)
			run += count[id++];
		cut[b] = id;
	}
	cut[n] = n_ids;
	free(count);
	return 0;
}

/* The range of id among cut[0..n] (cut[0] = 0 <= id < cut[n]). */
static uint32_t range_of(const uint64_t *cut, uint32_t n, uint32_t id)
{
	uint32_t lo = 0, hi = n; /* cut[lo] <= id < cut[hi] */
	while (hi - lo > 1) {
		uint32_t mid = (lo + hi) / 2;
		if (cut[mid] <= id)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The ratings' block numbers (b * n + j), into blk. */
static void block_ids(const struct boar_dataset *d,
		      const struct boar_rating_grid *g, uint32_t *blk)
{
	for (uint64_t k = 0; k < d->n_rows; k++)
		blk[k] = range_of(g->user_cut, g->n, d->user[k]) * g->n +
			 range_of(g->item_cut, g->n, d->item[k]);
}

/* Counting sort into the grid's arrays, ids made relative to their
 * range; next: scratch of n * n entries. */
static void scatter(const struct boar_dataset *d, struct boar_rating_grid *g,
		    const uint32_t *blk, uint64_t *next)
{
	uint64_t nb = (uint64_t)g->n * g->n;
	memset(g->start, 0, (nb + 1) * sizeof *g->start);
	for (uint64_t k = 0; k < d->n_rows; k++)
		g->start[blk[k] + 1]++;
	for (uint64_t b = 0; b < nb; b++)
		g->start[b + 1] += g->start[b];
	/* next free position per block */
	memcpy(next, g->start, nb * sizeof *next);
	for (uint64_t k = 0; k < d->n_rows; k++) {
		uint32_t b = blk[k] / g->n, j = blk[k] % g->n;
		uint64_t at = next[blk[k]]++;
		g->user[at] = (uint32_t)(d->user[k] - g->user_cut[b]);
		g->item[at] = (uint32_t)(d->item[k] - g->item_cut[j]);
		g->rating[at] = d->label[k];
	}
}

int boar_rating_grid_build(const struct boar_dataset *d, uint32_t n,
			   struct boar_rating_grid *g, boar_error *err)
{
	memset(g, 0, sizeof *g);
	if (!d || d->task != BOAR_TASK_MF)
		return boar_fail(err, BOAR_EINVAL, "rating grid: not ratings");
	if (n < 1 || n > 1024 || d->n_rows >= (1ULL << 53))
		return boar_fail(err, BOAR_EINVAL,
				 "rating grid: %u blocks a side (1 to 1024) "
				 "of %llu ratings (below 2^53)",
				 n, (unsigned long long)d->n_rows);
	uint64_t nb = (uint64_t)n * n, rows = d->n_rows;
	g->n = n;
	g->n_rows = rows;
	g->user_cut = malloc((n + 1) * sizeof *g->user_cut);
	g->item_cut = malloc((n + 1) * sizeof *g->item_cut);
	g->start = malloc((nb + 1) * sizeof *g->start);
	g->user = malloc((rows ? rows : 1) * sizeof *g->user);
	g->item = malloc((rows ? rows : 1) * sizeof *g->item);
	g->rating = malloc((rows ? rows : 1) * sizeof *g->rating);
	uint32_t *blk = malloc((rows ? rows : 1) * sizeof *blk);
	uint64_t *next = malloc(nb * sizeof *next);
	int bad = !g->user_cut || !g->item_cut || !g->start || !g->user ||
		  !g->item || !g->rating || !blk || !next;
	if (!bad)
		bad = quantile_cuts(d->user, rows, d->dim, n, g->user_cut) ||
		      quantile_cuts(d->item, rows, d->n_items, n, g->item_cut);
	if (bad) {
		free(blk);
		free(next);
		return boar_fail(err, BOAR_ENOMEM,
				 "rating grid: out of memory for %llu ratings",
				 (unsigned long long)rows);
	}
	block_ids(d, g, blk);
	scatter(d, g, blk, next);
	free(blk);
	free(next);
	return 0;
}

uint64_t boar_rating_grid_widest(const struct boar_rating_grid *g, int items)
{
	const uint64_t *cut = items ? g->item_cut : g->user_cut;
	uint64_t w = 0;
	for (uint32_t b = 0; b < g->n; b++)
		if (cut[b + 1] - cut[b] > w)
			w = cut[b + 1] - cut[b];
	return w;
}

void boar_rating_grid_drop_ratings(struct boar_rating_grid *g)
{
	free(g->user);
	free(g->item);
	free(g->rating);
	g->user = g->item = NULL;
	g->rating = NULL;
}

void boar_rating_grid_free(struct boar_rating_grid *g)
{
	if (!g)
		return;
	boar_rating_grid_drop_ratings(g);
	free(g->user_cut);
	free(g->item_cut);
	free(g->start);
	memset(g, 0, sizeof *g);
}
