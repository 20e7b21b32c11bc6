/* test_gpu_ratings.h - ratings from a hidden low-rank model, for the GPU
 * matrix-factorization tests (test_gpu_mf.c, test_gpu_multi.c).
 *
 * USERS x ITEMS, a hidden model of rank TRUE_RANK with N(0, 0.25) factors,
 * ratings 3.5 + p.q + N(0, 0.09) noise; items popular by a power law
 * (item = ITEMS x^2), users uniform. All drawn from testutil.h's stream,
 * so a test that seeds it gets the same data every run.
 */
#ifndef BOAR_TEST_GPU_RATINGS_H
#define BOAR_TEST_GPU_RATINGS_H

#include <stdlib.h>

#include "data/dataset.h"
#include "testutil.h"

#define USERS 3000
#define ITEMS 1500
#define TRUE_RANK 6

static float tu[USERS][TRUE_RANK], ti[ITEMS][TRUE_RANK];

/* Draws the hidden model (users' factors, then items'). */
static void hidden_model(void)
{
	for (int u = 0; u < USERS; u++)
		for (int t = 0; t < TRUE_RANK; t++)
			tu[u][t] = (float)(0.5 * test_gauss());
	for (int i = 0; i < ITEMS; i++)
		for (int t = 0; t < TRUE_RANK; t++)
			ti[i][t] = (float)(0.5 * test_gauss());
}

/* n ratings, users and items as the hidden model's shape (dim USERS and
 * n_items ITEMS, whatever ids the draws hit), built by the library. */
static struct boar_dataset *make_ratings(uint64_t n)
{
	uint32_t *user = malloc(n * sizeof *user);
	uint32_t *item = malloc(n * sizeof *item);
	float *rating = malloc(n * sizeof *rating);
	for (uint64_t k = 0; k < n; k++) {
		uint32_t u = (uint32_t)(test_rng() % USERS);
		double x = test_unif();
		uint32_t i = (uint32_t)(ITEMS * x * x); /* popular items */
		double r = 3.5;
		for (int t = 0; t < TRUE_RANK; t++)
			r += tu[u][t] * ti[i][t];
		r += 0.3 * test_gauss();
		user[k] = u;
		item[k] = i;
		rating[k] = (float)r;
	}
	struct boar_dataset *d = NULL;
	CHECK_EQ_INT(boar_dataset_from_ratings(n, user, item, rating, &d, NULL),
		     0);
	d->dim = USERS;
	d->n_items = ITEMS;
	free(user);
	free(item);
	free(rating);
	return d;
}

static void free_data(struct boar_dataset *d)
{
	boar_dataset_free(d);
}

#endif
