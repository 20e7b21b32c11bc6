/* cluster_mf_local.c - a cluster MF worker's local problem
 * (train_cluster_mf.h): which ratings are its own, its users and items
 * renumbered densely, and its clocks with the rows each one touches.
 *
 * Renumbering keeps the engine's arrays (factors, AdaGrad sums) the size
 * of the worker's working set, not the model's: a worker holding a tenth
 * of the users holds a tenth of P. The maps from global ids cost 4 bytes
 * per user and item of the model while they are built (one factor column
 * of the dense model) and are freed before training.
 *
 * The clocks are fixed for the whole run (as LIBMF's blocks are): the
 * worker's ratings are shuffled once and cut into equal slices, and each
 * slice's users and items are listed once, so finding a clock's keys
 * costs nothing per epoch. Within a clock the engine draws a fresh block
 * order every epoch.
 */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/rng.h"
#include "train_cluster_mf.h"

#define ABSENT UINT32_MAX

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* Block (of n) of id g under hash seed hseed: (hash * n) >> 32, so the
 * blocks are even in expectation whatever the ids' order. */
static uint32_t hash_block(uint64_t hseed, uint32_t g, uint32_t n)
{
	uint64_t s = hseed ^ (g * 0xA24BAED4963EE407ULL);
	return (uint32_t)(((boar_splitmix64(&s) >> 32) * n) >> 32);
}

/* Whether the ratings of user u of the whole file are this worker's: a
 * hash of seed and u, so every worker, holding the same file, agrees on
 * the partition, and each user's row has one writer (train_cluster_mf.c:
 * private rows). */
static int mine(uint64_t seed, uint32_t u, uint32_t rank, uint32_t n_workers)
{
	return hash_block(seed, u, n_workers) == rank;
}

uint32_t mf_block_of(uint64_t seed, int item, uint32_t g, uint32_t n)
{
	return hash_block(boar_rng_make(seed, 7 + item, 0).s, g, n);
}

/* Local ids in global order: map[g] for the ids present, gl[local]. */
static int renumber(const uint32_t *ids, uint64_t n, uint64_t n_global,
		    uint32_t **map_out, uint32_t **gl_out, uint32_t *count)
{
	uint32_t *map = malloc((n_global ? n_global : 1) * sizeof *map);
	if (!map)
		return BOAR_ENOMEM;
	memset(map, 0xff, n_global * sizeof *map);
	for (uint64_t j = 0; j < n; j++)
		map[ids[j]] = 0;
	uint32_t m = 0;
	for (uint64_t g = 0; g < n_global; g++)
		if (map[g] != ABSENT)
			map[g] = m++;
	uint32_t *gl = malloc((m ? m : 1) * sizeof *gl);
	if (!gl) {
		free(map);
		return BOAR_ENOMEM;
	}
	for (uint64_t g = 0; g < n_global; g++)
		if (map[g] != ABSENT)
			gl[map[g]] = (uint32_t)g;
	*map_out = map;
	*gl_out = gl;
	*count = m;
	return 0;
}

/* The worker's ratings, copied out of train, with global ids: counted,
 * then copied. */
static int pick_ratings(const boar_dataset *train, int local_rows,
			uint32_t rank, uint32_t n_workers, uint64_t seed,
			struct mf_local *l)
{
	uint64_t hseed = boar_rng_make(seed, 5, 0).s, n = 0;
	for (uint64_t j = 0; j < train->n_rows; j++)
		n += local_rows || mine(hseed, train->user[j], rank, n_workers);
	struct boar_dataset *d = &l->d;
	d->user = malloc((n ? n : 1) * sizeof *d->user);
	d->item = malloc((n ? n : 1) * sizeof *d->item);
	d->label = malloc((n ? n : 1) * sizeof *d->label);
	if (!d->user || !d->item || !d->label)
		return BOAR_ENOMEM;
	n = 0;
	for (uint64_t j = 0; j < train->n_rows; j++) {
		if (!local_rows && !mine(hseed, train->user[j], rank, n_workers))
			continue;
		d->user[n] = train->user[j];
		d->item[n] = train->item[j];
		d->label[n++] = train->label[j];
	}
	d->n_rows = d->nnz = n;
	return 0;
}

/* Clock k's distinct local ids of one side, ascending, appended to out
 * from *at; stamp[id] remembers the last clock that listed id. */
static uint64_t list_clock(const uint32_t *ids, const uint32_t *rows,
			   uint64_t b, uint64_t e, uint32_t *stamp, uint32_t k,
			   uint32_t *out)
{
	uint64_t m = 0;
	for (uint64_t p = b; p < e; p++) {
		uint32_t id = ids[rows[p]];
		if (stamp[id] != k + 1) {
			stamp[id] = k + 1;
			out[m++] = id;
		}
	}
	qsort(out, m, sizeof *out, cmp_u32);
	return m;
}

static int cut_clocks(struct mf_local *l, uint32_t rank, uint64_t seed,
		      uint64_t sync_every)
{
	uint64_t n = l->d.n_rows, C = (n + sync_every - 1) / sync_every;
	if (!C)
		C = 1;
	if (C > UINT32_MAX - 1)
		C = UINT32_MAX - 1;
	l->clocks = C;
	l->rows = malloc((n ? n : 1) * sizeof *l->rows);
	l->at = malloc((C + 1) * sizeof *l->at);
	l->cu = malloc((n ? n : 1) * sizeof *l->cu);
	l->ci = malloc((n ? n : 1) * sizeof *l->ci);
	l->cu_at = malloc((C + 1) * sizeof *l->cu_at);
	l->ci_at = malloc((C + 1) * sizeof *l->ci_at);
	uint32_t *su = calloc(l->nu + 1, sizeof *su);
	uint32_t *si = calloc(l->ni + 1, sizeof *si);
	int rc = BOAR_ENOMEM;
	if (!l->rows || !l->at || !l->cu || !l->ci || !l->cu_at || !l->ci_at ||
	    !su || !si)
		goto out;
	for (uint64_t j = 0; j < n; j++)
		l->rows[j] = (uint32_t)j;
	boar_rng r = boar_rng_make(seed, 6, rank);
	boar_shuffle_u32(l->rows, n, &r);
	l->cu_at[0] = l->ci_at[0] = 0;
	l->max_rows = 0;
	for (uint64_t k = 0; k < C; k++) {
		uint64_t b = n * k / C, e = n * (k + 1) / C;
		l->at[k] = b;
		uint64_t mu = list_clock(l->d.user, l->rows, b, e, su,
					 (uint32_t)k, l->cu + l->cu_at[k]);
		uint64_t mi = list_clock(l->d.item, l->rows, b, e, si,
					 (uint32_t)k, l->ci + l->ci_at[k]);
		l->cu_at[k + 1] = l->cu_at[k] + mu;
		l->ci_at[k + 1] = l->ci_at[k] + mi;
		if (mu + mi > l->max_rows)
			l->max_rows = mu + mi;
	}
	l->at[C] = n;
	rc = 0;
out:
	free(su);
	free(si);
	return rc;
}

/* ids 0..n-1 listed by their block blk[id] (of W): out[at[b] ..
 * at[b + 1]) block b's, ascending; ids with blk UINT32_MAX left out. */
static void group_by_block(const uint32_t *blk, uint32_t n, uint32_t W,
			   uint32_t *out, uint64_t *at)
{
	memset(at, 0, ((uint64_t)W + 1) * sizeof *at);
	for (uint32_t i = 0; i < n; i++)
		if (blk[i] != ABSENT)
			at[blk[i] + 1]++;
	for (uint32_t b = 0; b < W; b++)
		at[b + 1] += at[b];
	for (uint32_t i = 0; i < n; i++)
		if (blk[i] != ABSENT)
			out[at[blk[i]]++] = i;
	for (uint32_t b = W; b > 0; b--) /* back to the starts */
		at[b] = at[b - 1];
	at[0] = 0;
}

/* Strata cells: cell b*W + a holds the ratings of user block a and item
 * block b (counting sort by cell, then shuffled within each), cut into
 * `rounds` parts, clock k*rounds + j being cell k's j-th part; cu and ci
 * list each part's users and items; bi lists each item block's items.
 * The workers sweep the cells so that no two touch one block at once
 * (cluster_mf_strata.c). */
int mf_local_cut_cells(struct mf_local *l, uint32_t rank, uint32_t W,
		       uint64_t seed)
{
	uint32_t R = W > 1 ? MF_STRATA_ROUNDS : 1;
	uint64_t n = l->d.n_rows, C = (uint64_t)W * W, NP = C * R;
	uint32_t *ib = malloc(((uint64_t)l->ni + 1) * sizeof *ib);
	uint32_t *su = calloc(l->nu + 1, sizeof *su);
	uint32_t *si = calloc(l->ni + 1, sizeof *si);
	uint64_t *cat = calloc(C + 1, sizeof *cat);
	l->blocks = W;
	l->rounds = R;
	l->clocks = NP;
	l->ub = malloc(((uint64_t)l->nu + 1) * sizeof *l->ub);
	l->rows = malloc((n ? n : 1) * sizeof *l->rows);
	l->at = calloc(NP + 1, sizeof *l->at);
	l->cu = malloc((n ? n : 1) * sizeof *l->cu);
	l->ci = malloc((n ? n : 1) * sizeof *l->ci);
	l->cu_at = calloc(NP + 1, sizeof *l->cu_at);
	l->ci_at = calloc(NP + 1, sizeof *l->ci_at);
	l->bi = malloc(((uint64_t)l->ni + 1) * sizeof *l->bi);
	l->bi_at = calloc((uint64_t)W + 1, sizeof *l->bi_at);
	int rc = BOAR_ENOMEM;
	if (!ib || !su || !si || !cat || !l->ub || !l->rows || !l->at ||
	    !l->cu || !l->ci || !l->cu_at || !l->ci_at || !l->bi || !l->bi_at)
		goto out;
	for (uint32_t u = 0; u < l->nu; u++)
		l->ub[u] = mf_block_of(seed, 0, l->gu[u], W);
	for (uint32_t i = 0; i < l->ni; i++)
		ib[i] = mf_block_of(seed, 1, l->gi[i], W);
	group_by_block(ib, l->ni, W, l->bi, l->bi_at);
	for (uint64_t j = 0; j < n; j++)
		cat[ib[l->d.item[j]] * W + l->ub[l->d.user[j]] + 1]++;
	for (uint64_t k = 0; k < C; k++)
		cat[k + 1] += cat[k];
	for (uint64_t j = 0; j < n; j++)
		l->rows[cat[ib[l->d.item[j]] * W + l->ub[l->d.user[j]]]++] =
			(uint32_t)j;
	for (uint64_t k = C; k > 0; k--) /* back to the starts */
		cat[k] = cat[k - 1];
	cat[0] = 0;
	boar_rng r = boar_rng_make(seed, 6, rank);
	for (uint64_t k = 0; k < C; k++) {
		uint64_t len = cat[k + 1] - cat[k];
		boar_shuffle_u32(l->rows + cat[k], len, &r);
		for (uint32_t j = 0; j < R; j++)
			l->at[k * R + j] = cat[k] + len * j / R;
	}
	l->at[NP] = n;
	for (uint64_t p = 0; p < NP; p++) {
		uint64_t b = l->at[p], e = l->at[p + 1];
		l->cu_at[p + 1] = l->cu_at[p] +
				  list_clock(l->d.user, l->rows, b, e, su,
					     (uint32_t)p, l->cu + l->cu_at[p]);
		l->ci_at[p + 1] = l->ci_at[p] +
				  list_clock(l->d.item, l->rows, b, e, si,
					     (uint32_t)p, l->ci + l->ci_at[p]);
	}
	rc = mf_local_drop_users(l, NULL);
out:
	free(ib);
	free(su);
	free(si);
	free(cat);
	return rc;
}

int mf_local_build(const boar_dataset *train, int local_rows, uint32_t rank,
		   uint32_t n_workers, uint64_t seed, uint64_t sync_every,
		   int strata, struct mf_local *l, boar_error *err)
{
	memset(l, 0, sizeof *l);
	struct boar_dataset *d = &l->d;
	d->task = BOAR_TASK_MF;
	d->label_kind = BOAR_LABELS_REAL;
	uint32_t *umap = NULL, *imap = NULL;
	int rc = pick_ratings(train, local_rows, rank, n_workers, seed, l);
	if (!rc)
		rc = renumber(d->user, d->n_rows, train->dim, &umap, &l->gu,
			      &l->nu);
	if (!rc)
		rc = renumber(d->item, d->n_rows, train->n_items, &imap,
			      &l->gi, &l->ni);
	if (!rc) {
		for (uint64_t j = 0; j < d->n_rows; j++) {
			d->user[j] = umap[d->user[j]];
			d->item[j] = imap[d->item[j]];
		}
		d->dim = l->nu;
		d->n_items = l->ni;
	}
	free(umap);
	free(imap);
	if (!rc && strata)
		rc = mf_local_cut_cells(l, rank, n_workers, seed);
	else if (!rc)
		rc = cut_clocks(l, rank, seed, sync_every ? sync_every : 1000);
	if (rc) {
		mf_local_free(l);
		return boar_fail(err, BOAR_ENOMEM,
				 "out of memory for the worker's ratings");
	}
	return 0;
}

/* Strata: the shared users (drop unset) by block into bu, bu_at. */
static int list_shared_users(struct mf_local *l, const uint8_t *drop)
{
	uint32_t *blk = malloc(((uint64_t)l->nu + 1) * sizeof *blk);
	free(l->bu);
	free(l->bu_at);
	l->bu = malloc(((uint64_t)l->nu + 1) * sizeof *l->bu);
	l->bu_at = malloc(((uint64_t)l->blocks + 1) * sizeof *l->bu_at);
	if (!blk || !l->bu || !l->bu_at) {
		free(blk);
		return BOAR_ENOMEM;
	}
	for (uint32_t u = 0; u < l->nu; u++)
		blk[u] = drop && drop[u] ? ABSENT : l->ub[u];
	group_by_block(blk, l->nu, l->blocks, l->bu, l->bu_at);
	free(blk);
	return 0;
}

int mf_local_drop_users(struct mf_local *l, const uint8_t *drop)
{
	uint64_t n = 0, b = 0;
	l->max_rows = 0;
	for (uint64_t k = 0; k < l->clocks; k++) {
		uint64_t e = l->cu_at[k + 1];
		for (uint64_t p = b; p < e; p++)
			if (!drop || !drop[l->cu[p]])
				l->cu[n++] = l->cu[p];
		b = e;
		l->cu_at[k + 1] = n;
		uint64_t us = n - l->cu_at[k], is = l->ci_at[k + 1] - l->ci_at[k];
		uint64_t rows = l->blocks ? (us > is ? us : is) : us + is;
		if (rows > l->max_rows)
			l->max_rows = rows;
	}
	if (!l->blocks)
		return 0;
	if (list_shared_users(l, drop))
		return BOAR_ENOMEM;
	for (uint32_t q = 0; q < l->blocks; q++) {
		uint64_t is = l->bi_at[q + 1] - l->bi_at[q];
		uint64_t us = l->bu_at[q + 1] - l->bu_at[q];
		if (is > l->max_rows)
			l->max_rows = is;
		if (us > l->max_rows)
			l->max_rows = us;
	}
	return 0;
}

void mf_local_free(struct mf_local *l)
{
	free(l->d.user);
	free(l->d.item);
	free(l->d.label);
	free(l->gu);
	free(l->gi);
	free(l->rows);
	free(l->at);
	free(l->cu);
	free(l->ci);
	free(l->cu_at);
	free(l->ci_at);
	free(l->bi);
	free(l->bi_at);
	free(l->bu);
	free(l->bu_at);
	free(l->ub);
	memset(l, 0, sizeof *l);
}
