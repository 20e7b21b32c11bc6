/* test_gpu_grid.c - the N x N grid that --gpus N sweeps (rating_grid.h),
 * plain C, no GPU needed.
 *
 * For grids of 1 to 5 blocks a side over uniform ratings, ratings with
 * popular items (item ~ x^2) and heavy users, and more blocks than users:
 * every rating lands in exactly one block, in the block of its user range
 * and item range, with ids made relative to the ranges, keeping its order
 * inside the block; the ranges tile the ids; the strata of the N
 * sub-epochs give each GPU row a different item block and together cover
 * every block once; and the blocks are balanced by rating count (largest
 * within 10% of the mean on independent users and items).
 */
#include <stdlib.h>
#include <string.h>

#include "data/dataset.h"
#include "data/rating_grid.h"
#include "testutil.h"

/* n ratings (rating k is k, to identify it) over users x items ids (dim
 * and n_items those, whatever ids the draws hit), built by the library;
 * no ratings is an empty dataset (the library's constructor refuses
 * none). */
static struct boar_dataset *ratings(uint64_t n, uint32_t users, uint32_t items,
				    int skew)
{
	uint32_t *user = malloc((n ? n : 1) * sizeof *user);
	uint32_t *item = malloc((n ? n : 1) * sizeof *item);
	float *label = malloc((n ? n : 1) * sizeof *label);
	for (uint64_t k = 0; k < n; k++) {
		double x = test_unif();
		user[k] = (uint32_t)(test_rng() % users);
		item[k] = skew ? (uint32_t)(items * x * x)
			       : (uint32_t)(test_rng() % items);
		if (skew && k % 7 == 0)
			user[k] = 0; /* one heavy user */
		label[k] = (float)k; /* identifies the rating */
	}
	struct boar_dataset *d = NULL;
	if (n)
		CHECK_EQ_INT(boar_dataset_from_ratings(n, user, item, label,
						       &d, NULL), 0);
	else
		d = boar_dataset_alloc(BOAR_TASK_MF);
	d->dim = users;
	d->n_items = items;
	free(user);
	free(item);
	free(label);
	return d;
}

static uint32_t range_of(const uint64_t *cut, uint32_t n, uint64_t id)
{
	uint32_t b = 0;
	while (b + 1 < n && cut[b + 1] <= id)
		b++;
	return b;
}

/* Every rating exactly once, in its block, in order, ids relative. */
static void check_placement(const struct boar_dataset *d,
			    const struct boar_rating_grid *g)
{
	uint32_t n = g->n;
	uint64_t nb = (uint64_t)n * n;
	CHECK_EQ_INT(g->start[0], 0);
	CHECK_EQ_INT(g->start[nb], d->n_rows);
	CHECK_EQ_INT(g->user_cut[0], 0);
	CHECK_EQ_INT(g->user_cut[n], d->dim);
	CHECK_EQ_INT(g->item_cut[0], 0);
	CHECK_EQ_INT(g->item_cut[n], d->n_items);
	for (uint32_t b = 0; b < n; b++) {
		CHECK(g->user_cut[b] <= g->user_cut[b + 1], "user cut %u", b);
		CHECK(g->item_cut[b] <= g->item_cut[b + 1], "item cut %u", b);
	}
	uint64_t *next = malloc(nb * sizeof *next);
	memcpy(next, g->start, nb * sizeof *next);
	int bad = 0;
	for (uint64_t k = 0; k < d->n_rows && bad < 5; k++) {
		uint32_t b = range_of(g->user_cut, n, d->user[k]);
		uint32_t j = range_of(g->item_cut, n, d->item[k]);
		uint64_t at = next[b * n + j]++;
		if (at >= g->start[b * n + j + 1] || g->rating[at] != d->label[k] ||
		    g->user[at] + g->user_cut[b] != d->user[k] ||
		    g->item[at] + g->item_cut[j] != d->item[k]) {
			CHECK(0, "n %u: rating %llu not at position %llu of block (%u, %u)",
			      n, (unsigned long long)k, (unsigned long long)at, b, j);
			bad++;
		}
	}
	/* each block filled exactly: nothing else was put there */
	for (uint64_t b = 0; b < nb && !bad; b++)
		CHECK_EQ_INT(next[b], g->start[b + 1]);
	free(next);
}

/* The strata: in each sub-epoch a permutation of the item blocks; over
 * the N sub-epochs every block once. */
static void check_strata(uint32_t n)
{
	int *seen = calloc((size_t)n * n, sizeof *seen);
	for (uint32_t s = 0; s < n; s++) {
		int *col = calloc(n, sizeof *col);
		for (uint32_t g = 0; g < n; g++) {
			uint32_t j = boar_grid_stratum(g, s, n);
			CHECK(j < n, "stratum %u of row %u", j, g);
			if (j >= n)
				continue;
			CHECK(!col[j], "sub-epoch %u: item block %u twice", s, j);
			col[j] = 1;
			seen[g * n + j]++;
		}
		free(col);
	}
	for (uint32_t b = 0; b < n * n; b++)
		CHECK_EQ_INT(seen[b], 1);
	free(seen);
	/* the item block held by GPU g in sub-epoch s + 1 is the one GPU
	 * g + 1 held in s: blocks move one GPU down the ring */
	for (uint32_t s = 0; s + 1 < n; s++)
		for (uint32_t g = 0; g < n; g++)
			CHECK_EQ_INT(boar_grid_stratum(g, s + 1, n),
				     boar_grid_stratum((g + 1) % n, s, n));
}

static double imbalance(const struct boar_rating_grid *g)
{
	uint64_t nb = (uint64_t)g->n * g->n, most = 0;
	if (!g->n_rows)
		return 0;
	for (uint32_t b = 0; b < g->n; b++)
		for (uint32_t j = 0; j < g->n; j++)
			if (boar_grid_block_rows(g, b, j) > most)
				most = boar_grid_block_rows(g, b, j);
	return (double)most * nb / (double)g->n_rows;
}

static void one(uint64_t rows, uint32_t users, uint32_t items, int skew,
		uint32_t n, double max_imbalance)
{
	struct boar_dataset *d = ratings(rows, users, items, skew);
	struct boar_rating_grid g;
	boar_error err;
	int rc = boar_rating_grid_build(d, n, &g, &err);
	CHECK_EQ_INT(rc, 0);
	if (!rc) {
		check_placement(d, &g);
		double imb = imbalance(&g);
		printf("n %u, %llu ratings, %u x %u%s: largest block %.3f x "
		       "the mean\n",
		       n, (unsigned long long)rows, users, items,
		       skew ? " (skewed)" : "", imb);
		if (max_imbalance > 0)
			CHECK(imb <= max_imbalance, "n %u: largest block %.3f x mean",
			      n, imb);
	}
	boar_rating_grid_free(&g);
	boar_dataset_free(d);
}

int main(void)
{
	for (uint32_t n = 1; n <= 5; n++) {
		check_strata(n);
		one(200000, 3000, 1500, 0, n, 1.10);
		one(200000, 3000, 1500, 1, n, n == 1 ? 1.0 : 0); /* placement */
	}
	/* Popular items alone (no heavy user): the quantile cuts balance them */
	{
		struct boar_dataset *d = ratings(200000, 3000, 1500, 1);
		for (uint64_t k = 0; k < d->n_rows; k++)
			d->user[k] = (uint32_t)(test_rng() % 3000);
		struct boar_rating_grid g;
		CHECK_EQ_INT(boar_rating_grid_build(d, 2, &g, NULL), 0);
		check_placement(d, &g);
		CHECK(imbalance(&g) <= 1.10, "popular items: %.3f", imbalance(&g));
		boar_rating_grid_free(&g);
		boar_dataset_free(d);
	}
	/* more blocks than users or items: empty ranges, nothing lost */
	one(5000, 3, 2, 0, 8, 0);
	one(0, 10, 10, 0, 2, 0);

	boar_error err;
	struct boar_rating_grid g;
	struct boar_dataset *d = ratings(10, 5, 5, 0);
	CHECK_EQ_INT(boar_rating_grid_build(d, 0, &g, &err), BOAR_EINVAL);
	CHECK(strstr(err.message, "blocks a side") != NULL, "%s", err.message);
	boar_rating_grid_free(&g);
	d->task = BOAR_TASK_LINEAR;
	CHECK_EQ_INT(boar_rating_grid_build(d, 2, &g, &err), BOAR_EINVAL);
	boar_rating_grid_free(&g);
	boar_dataset_free(d);
	return TEST_RESULT();
}
