/* engine_compact.c - AdaGrad's interleaved weights for the features the
 * rows use, and for nothing else.
 *
 * The interleaved array (engine.c: w_j at 2j, its sum at 2j + 1) is twice
 * the plain weights. At 2^26 features that is 512 MiB against 256, and on
 * a 16-core Xeon with a 300 MiB L3 plain SGD on that same layout lost what
 * AdaGrad lost against plain SGD (0.6-0.8 of its rate at 8 and 16 threads;
 * the square roots and divisions cost nothing measurable:
 * bench/RESULTS-cores.md). A row set seldom uses every feature of a large
 * space (1M rows of 40 uniform ids use 30M of 2^26), so before the first
 * sweep the engine renumbers the features its rows use densely, in id
 * order, in its own copy of the rows, and keeps only their slots: 240 MB
 * there. The model gets the weights back under their own ids
 * (boar_engine_export); features no row uses never step (regularization
 * is lazy: a feature shrinks when a row touches it), so the model's copy
 * of them is already right. The regularization scales are renumbered with
 * the weights.
 *
 * Done at the first sweep rather than at the engine's creation because a
 * warm start writes the sums (train_state.c) in between: the sums of the
 * features left out are kept aside, so a later checkpoint still has them.
 * Only when the copy of the rows is the engine's own (packed, or remapped
 * for hot features) and the used features are at most COMPACT_SHARE of
 * them; at one thread, the sweep does the same operations in the same
 * order on the same values, so the weights are the same bits.
 */
#include <stdlib.h>
#include <string.h>

#include "base/huge_pages.h"
#include "atomics/atomics.h"
#include "data/dataset.h"
#include "engine.h"
#include "model/model.h"

#define COMPACT_SHARE 0.75
#define NOT_USED UINT32_MAX

/* The engine's own copy of the row ids (writable), or NULL. */
static uint32_t *own_ids(const struct boar_engine *e, uint64_t *rows)
{
	if (e->packed[0]) {
		*rows = e->n;
		return e->packed[1];
	}
	*rows = e->d->n_rows;
	return e->remapped[0];
}

/* map[j] = 0 for the features the rows (cold ids) and the hot replicas
 * use, NOT_USED for the others; returns how many are used. */
static uint64_t mark_used(const struct boar_engine *e, const uint32_t *idx,
			  uint64_t rows, uint32_t *map, uint64_t dim)
{
	const uint64_t *rp = e->rows.row_ptr;
	const uint16_t *hot_n = e->rows.hot_n;
#pragma omp parallel for num_threads(e->threads) schedule(static)
	for (uint64_t j = 0; j < dim; j++)
		map[j] = NOT_USED;
#pragma omp parallel for num_threads(e->threads) schedule(static)
	for (uint64_t i = 0; i < rows; i++)
		for (uint64_t k = rp[i] + (hot_n ? hot_n[i] : 0); k < rp[i + 1];
		     k++)
			__atomic_store_n(&map[idx[k]], 0, __ATOMIC_RELAXED);
	for (uint32_t s = 0; s < e->n_hot; s++)
		map[e->rep_at[s] / 2] = 0;
	uint64_t used = 0;
	for (uint64_t j = 0; j < dim; j++)
		used += map[j] == 0;
	return used;
}

/* The left-out features' nonzero sums, kept aside (ids ascending). */
static int keep_idle_sums(struct boar_engine *e, const uint32_t *map,
			  uint64_t dim)
{
	uint64_t n = 0;
	for (uint64_t j = 0; j < dim; j++)
		n += map[j] == NOT_USED && e->wg[2 * j + 1] != 0.0f;
	e->wg_idle_n = n;
	if (!n)
		return 0;
	e->wg_idle_ids = malloc(n * sizeof *e->wg_idle_ids);
	e->wg_idle_sums = malloc(n * sizeof *e->wg_idle_sums);
	if (!e->wg_idle_ids || !e->wg_idle_sums)
		return BOAR_ENOMEM;
	n = 0;
	for (uint64_t j = 0; j < dim; j++)
		if (map[j] == NOT_USED && e->wg[2 * j + 1] != 0.0f) {
			e->wg_idle_ids[n] = (uint32_t)j;
			e->wg_idle_sums[n++] = e->wg[2 * j + 1];
		}
	return 0;
}

void boar_engine_compact(struct boar_engine *e)
{
	uint64_t dim = e->m->dim, rows;
	uint32_t *idx = own_ids(e, &rows);
	if (e->wg_tried || !e->wg || !idx || !dim)
		return;
	e->wg_tried = 1;
	uint32_t *map = malloc(dim * sizeof *map);
	if (!map)
		return;
	uint64_t n = mark_used(e, idx, rows, map, dim);
	float *wg = NULL, *rs = NULL;
	uint32_t *ids = NULL;
	if (n > COMPACT_SHARE * (double)dim ||
	    !boar_engine_room_for((n + 1) * 8 + n * 4) ||
	    !(wg = aligned_alloc(BOAR_CACHE_LINE, ((n + 1) * 8 + 63) & ~63ull)) ||
	    !(ids = malloc((n ? n : 1) * sizeof *ids)) ||
	    (e->reg_scale && !(rs = malloc((n + 1) * sizeof *rs))) ||
	    keep_idle_sums(e, map, dim)) {
		free(wg), free(ids), free(rs), free(map);
		free(e->wg_idle_ids), free(e->wg_idle_sums);
		e->wg_idle_ids = NULL, e->wg_idle_sums = NULL, e->wg_idle_n = 0;
		return;
	}
	boar_advise_huge(wg, (n + 1) * 8);
	uint32_t c = 0;
	for (uint64_t j = 0; j < dim; j++)
		if (map[j] == 0) {
			ids[c] = (uint32_t)j;
			map[j] = c++;
		}
	const float *old = e->wg;
#pragma omp parallel for num_threads(e->threads) schedule(static)
	for (uint64_t s = 0; s <= n; s++) { /* slot n: the bias */
		uint64_t j = s < n ? ids[s] : dim;
		wg[2 * s] = old[2 * j];
		wg[2 * s + 1] = old[2 * j + 1];
		if (rs) /* the sweeps read the scales by slot too */
			rs[s] = e->reg_scale[j];
	}
	const uint64_t *rp = e->rows.row_ptr;
	const uint16_t *hot_n = e->rows.hot_n;
#pragma omp parallel for num_threads(e->threads) schedule(static)
	for (uint64_t i = 0; i < rows; i++)
		for (uint64_t k = rp[i] + (hot_n ? hot_n[i] : 0); k < rp[i + 1];
		     k++)
			idx[k] = map[idx[k]];
	for (uint32_t s = 0; s < e->rep_n; s++) /* hot features, then the bias */
		e->rep_at[s] = s < e->n_hot ? 2 * (uint64_t)map[e->rep_at[s] / 2]
					    : 2 * n;
	free(map);
	if (rs) {
		free(e->reg_scale);
		e->reg_scale = rs;
	}
	free(e->wg);
	e->wg = wg;
	e->wg_ids = ids;
	e->wg_n = n;
}

/* Slot of feature j in ids[0..n) (ascending), or n. */
static uint64_t find(const uint32_t *ids, uint64_t n, uint64_t j)
{
	uint64_t lo = 0, hi = n;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (ids[mid] < j)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ids[lo] == j ? lo : n;
}

float *boar_engine_wg_sum(struct boar_engine *e, uint64_t j)
{
	if (!e->wg_ids)
		return &e->wg[2 * j + 1];
	uint64_t n = e->wg_n, s = j == e->m->dim ? n : find(e->wg_ids, n, j);
	if (s < n || j == e->m->dim)
		return &e->wg[2 * s + 1];
	s = find(e->wg_idle_ids, e->wg_idle_n, j);
	if (s < e->wg_idle_n)
		return &e->wg_idle_sums[s];
	e->wg_zero = 0.0f; /* never summed: 0 */
	return &e->wg_zero;
}

void boar_engine_export_compact(struct boar_engine *e)
{
	uint64_t n = e->wg_n, dim = e->m->dim;
	float *w = e->m->w;
	const float *wg = e->wg, *s = e->norm_scale;
	const uint32_t *ids = e->wg_ids;
#pragma omp parallel for num_threads(e->threads) schedule(static)
	for (uint64_t c = 0; c <= n; c++) {
		uint64_t j = c < n ? ids[c] : dim;
		w[j] = s ? wg[2 * c] / s[j] : wg[2 * c];
	}
}
