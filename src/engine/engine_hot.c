/* engine_hot.c - which coordinates each thread replicates, and rows that
 * point at the replicas.
 *
 * The biases are always replicated (sweep_replica.h). With more than one
 * thread, a binary model also replicates its hot features: those that the
 * rows in flight (one per thread) would update about HOT_TAU times or more
 * from one stale value, count_j >= HOT_TAU * n_rows / threads (the rule of
 * the GPU engine, where the rows in flight are the blocks'), the most
 * frequent first and at most HOT_MAX. A rarer feature costs its writers
 * little more than any other. And only features that every replica sees in
 * HOT_MIN_ROWS rows or more per epoch: averaged replicas learn like one
 * thread that saw 1 / T of the rows, which a very frequent feature of large
 * data does not notice but a9a at 16 threads did (2k rows per replica: its
 * 16 most frequent features replicated cost 2.6% of the first epoch's
 * training loss, 4 of them 0.6%; measured in bench/RESULTS.md).
 *
 * The sweep must not look anything up per non-zero, so the engine's own
 * copy of the rows (packed, or for small data a plain copy) lists each
 * row's hot features first, as slot numbers, and hot_n says how many.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "data/dataset.h"
#include "engine.h"
#include "model/model.h"
#include "sweep_replica.h"

#define HOT_TAU 0.5
#define HOT_MAX 1024
#define HOT_MIN_ROWS 16384

static int log2_bucket(uint32_t c)
{
	return 31 - __builtin_clz(c);
}

/* Turns the counts in hot_slot into slot + 1 (hot) or 0 and writes the hot
 * ids, most frequent buckets first; returns how many. */
static uint32_t pick(uint32_t *count, uint64_t dim, uint32_t thr,
		     uint64_t *ids)
{
	uint64_t hist[32] = {0};
	for (uint64_t j = 0; j < dim; j++)
		if (count[j] >= thr)
			hist[log2_bucket(count[j])]++;
	/* Whole buckets from the top while they fit, then the first ids of
	 * the boundary bucket. */
	uint64_t acc = 0;
	int edge = -1;
	for (int b = 31; b >= 0 && edge < 0; b--) {
		if (acc + hist[b] > HOT_MAX)
			edge = b;
		else
			acc += hist[b];
	}
	uint64_t edge_room = edge >= 0 ? HOT_MAX - acc : 0;
	uint32_t n = 0;
	for (uint64_t j = 0; j < dim; j++) {
		uint32_t c = count[j];
		count[j] = 0;
		if (c < thr)
			continue;
		int b = log2_bucket(c);
		if (b < edge || (b == edge && edge_room == 0))
			continue;
		if (b == edge)
			edge_room--;
		ids[n] = j;
		count[j] = ++n; /* slot + 1 */
	}
	return n;
}

int boar_engine_pick_hot(struct boar_engine *e, int remap)
{
	const struct boar_dataset *d = e->d;
	uint64_t dim = e->m->dim;
	uint32_t K = boar_model_width(e->m);
	uint64_t ids[HOT_MAX];
	uint32_t n_hot = 0;
	if (remap && e->threads > 1 && !e->m->n_classes && !e->o.deterministic &&
	    dim > 0 && (e->hot_slot = calloc(dim, sizeof *e->hot_slot))) {
		uint32_t *count = e->hot_slot;
#pragma omp parallel for num_threads(e->threads) schedule(static)
		for (uint64_t k = 0; k < d->nnz; k++)
			__atomic_fetch_add(&count[d->idx[k]], 1, __ATOMIC_RELAXED);
		double thr_d = HOT_TAU * (double)d->n_rows / e->threads;
		if (thr_d < (double)HOT_MIN_ROWS * e->threads)
			thr_d = (double)HOT_MIN_ROWS * e->threads;
		uint32_t thr = thr_d < 2 ? 2 : (thr_d > 4e9 ? 4000000000u
							 : (uint32_t)thr_d + 1);
		n_hot = pick(count, dim, thr, ids);
		if (!n_hot) {
			free(e->hot_slot);
			e->hot_slot = NULL;
		}
	}
	e->n_hot = n_hot;
	e->rep_n = n_hot + K;
	/* Whole cache lines per thread: no two threads share one. */
	e->rep_stride = (e->rep_n + 3) & ~3u;
	e->rep_at = malloc(e->rep_n * sizeof *e->rep_at);
	e->rep_slots = aligned_alloc(BOAR_CACHE_LINE,
				     (size_t)e->threads * e->rep_stride *
					     sizeof *e->rep_slots);
	e->rep_syncs = aligned_alloc(BOAR_CACHE_LINE, BOAR_CACHE_LINE);
	if (!e->rep_at || !e->rep_slots || !e->rep_syncs)
		return BOAR_ENOMEM;
	*e->rep_syncs = 0;
	/* Each thread zeroes its own slots (first touch): AdaGrad sums
	 * start at 0 and carry over between sweeps. */
#pragma omp parallel num_threads(e->threads)
	{
		size_t t = (size_t)omp_get_thread_num();
		if (t < (size_t)e->threads)
			memset(e->rep_slots + t * e->rep_stride, 0,
			       e->rep_stride * sizeof *e->rep_slots);
	}
	uint64_t ST = e->wg ? 2 : 1; /* interleaved: w_j at 2j */
	for (uint32_t s = 0; s < n_hot; s++)
		e->rep_at[s] = ST * ids[s];
	for (uint32_t c = 0; c < K; c++)
		e->rep_at[n_hot + c] = ST * (dim * K + c);
	return 0;
}

/* Back to the biases alone (the rows could not be remapped). */
static void drop_hot(struct boar_engine *e)
{
	uint32_t K = boar_model_width(e->m);
	for (uint32_t c = 0; c < K; c++)
		e->rep_at[c] = e->rep_at[e->n_hot + c];
	e->n_hot = 0;
	e->rep_n = K;
	free(e->hot_slot);
	e->hot_slot = NULL;
}

/* A value as the sweeps read it (NORMALIZED: over its feature's scale). */
static inline float sweep_value(const struct boar_engine *e, uint32_t j,
				float v)
{
	return e->norm_scale ? v / e->norm_scale[j] : v;
}

uint16_t boar_engine_copy_row(const struct boar_engine *e, const uint32_t *idx,
			      const float *val, uint64_t len, uint32_t *didx,
			      float *dval)
{
	const uint32_t *slot = e->hot_slot;
	uint16_t h = 0;
	if (!slot) {
		memcpy(didx, idx, len * sizeof *didx);
		if (!e->norm_scale)
			memcpy(dval, val, len * sizeof *dval);
		for (uint64_t k = 0; e->norm_scale && k < len; k++)
			dval[k] = sweep_value(e, idx[k], val[k]);
		return 0;
	}
	for (uint64_t k = 0; k < len; k++)
		if (slot[idx[k]] && h < UINT16_MAX) {
			didx[h] = slot[idx[k]] - 1;
			dval[h++] = sweep_value(e, idx[k], val[k]);
		}
	/* The rest in order (hot ones past the cap stay as plain ids). */
	uint64_t at = h;
	uint16_t skipped = 0;
	for (uint64_t k = 0; k < len; k++) {
		if (slot[idx[k]] && skipped < h) {
			skipped++;
			continue;
		}
		didx[at] = idx[k];
		dval[at++] = sweep_value(e, idx[k], val[k]);
	}
	return h;
}

void boar_engine_remap_rows(struct boar_engine *e)
{
	const struct boar_dataset *d = e->d;
	if (!e->hot_slot)
		return;
	uint32_t *idx = NULL;
	float *val = NULL;
	uint16_t *hot_n = NULL;
	if (boar_engine_room_for(d->nnz * 8 + d->n_rows * 2)) {
		idx = malloc((d->nnz ? d->nnz : 1) * sizeof *idx);
		val = malloc((d->nnz ? d->nnz : 1) * sizeof *val);
		hot_n = malloc((d->n_rows ? d->n_rows : 1) * sizeof *hot_n);
	}
	if (!idx || !val || !hot_n) {
		free(idx), free(val), free(hot_n);
		drop_hot(e);
		return;
	}
#pragma omp parallel for num_threads(e->threads) schedule(static)
	for (uint64_t r = 0; r < d->n_rows; r++) {
		uint64_t lo = d->row_ptr[r];
		hot_n[r] = boar_engine_copy_row(e, d->idx + lo, d->val + lo,
						d->row_ptr[r + 1] - lo, idx + lo,
						val + lo);
	}
	e->remapped[0] = idx;
	e->remapped[1] = val;
	e->hot_n = hot_n;
	e->rows.idx = idx;
	e->rows.val = val;
	e->rows.hot_n = hot_n;
}

void boar_engine_replica(struct boar_engine *e, struct boar_replica *r)
{
	r->slot = e->rep_slots + (size_t)omp_get_thread_num() * e->rep_stride;
	r->at = e->rep_at;
	r->n = e->rep_n;
	r->n_hot = e->n_hot;
	boar_rep_open(r, e->wg ? e->wg : e->m->w, omp_get_num_threads(),
		      e->rep_syncs);
}
