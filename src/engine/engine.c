/* engine.c - training state of the CPU engine: row order, regularization
 * scales, AdaGrad sums; dispatch of a sweep to the model's kind.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "base/huge_pages.h"
#include "data/dataset.h"
#include "engine.h"
#include "base/error.h"
#include "base/lower_bound.h"
#include "base/window_add.h"
#include "math/loss.h"
#include "math/row_weight.h"
#include "math/step.h"
#include "model/model.h"
#include "base/rng.h"
#include "atomics/atomics.h"

/* Rows are reshuffled in this many segments, each on its own generator, so
 * the reshuffle runs in parallel and gives the same order at any thread
 * count. */
#define ORDER_SEGMENTS 64

/* Per-feature regularization scale n / count_j (Hogwild!'s split of the
 * regularizer over the rows that touch a feature): in expectation over a
 * uniformly drawn row, the per-row penalties add up to the full one. */
static int compute_reg_scale(struct boar_engine *e)
{
	const struct boar_dataset *d = e->d;
	uint64_t dim = d->dim;
	uint32_t *count = calloc(dim ? dim : 1, sizeof *count);
	e->reg_scale = malloc((dim + 1) * sizeof *e->reg_scale);
	if (!count || !e->reg_scale) {
		free(count);
		return BOAR_ENOMEM;
	}
	/* Relaxed atomic increments: each row counts once per feature. */
#pragma omp parallel for num_threads(e->threads) schedule(static)
	for (uint64_t k = 0; k < d->nnz; k++)
		__atomic_fetch_add(&count[d->idx[k]], 1, __ATOMIC_RELAXED);
	double n = (double)d->n_rows;
#pragma omp parallel for num_threads(e->threads) schedule(static)
	for (uint64_t j = 0; j < dim; j++)
		e->reg_scale[j] = count[j] ? (float)(n / count[j]) : 0.0f;
	e->reg_scale[dim] = 0.0f; /* the bias is never regularized */
	free(count);
	return 0;
}

/* A weight between the model's space and the sweeps' (wg's): times
 * NORMALIZED's scale s_j on the way in, divided on the way out (s NULL:
 * the same). */
static inline float to_sweep(float v, const float *s, uint64_t j)
{
	return s ? v * s[j] : v;
}

static inline float to_model(float v, const float *s, uint64_t j)
{
	return s ? v / s[j] : v;
}

/* AdaGrad for a binary model whose weights only the engine changes during
 * the run (boar_train's, a cluster worker's by key): each weight beside its
 * sum of squared gradients,
 * one cache line per coordinate instead of two. The model gets the weights
 * back when the driver syncs (boar_engine_export), not after every sweep:
 * for a 2^26 model that copy reads 512 MiB and writes 256 MiB. Without
 * room, the sums stay a separate array. */
static void interleave(struct boar_engine *e)
{
	uint64_t n = e->m->dim + 1;
	if (!boar_engine_room_for(n * 8) ||
	    !(e->wg = aligned_alloc(BOAR_CACHE_LINE, (n * 8 + 63) & ~63ull)))
		return;
	boar_advise_huge(e->wg, n * 8);
	const float *w = e->m->w, *s = e->norm_scale;
#pragma omp parallel for num_threads(e->threads) schedule(static)
	for (uint64_t j = 0; j < n; j++) {
		e->wg[2 * j] = to_sweep(w[j], s, j);
		e->wg[2 * j + 1] = 0.0f;
	}
}

void boar_engine_export(struct boar_engine *e)
{
	if (!e->wg || !e->wg_ahead)
		return;
	e->wg_ahead = 0;
	if (e->wg_ids) {
		boar_engine_export_compact(e);
		return;
	}
	uint64_t n = e->m->dim + 1;
	float *w = e->m->w;
	const float *wg = e->wg, *s = e->norm_scale;
#pragma omp parallel for num_threads(e->threads) schedule(static)
	for (uint64_t j = 0; j < n; j++)
		w[j] = to_model(wg[2 * j], s, j);
}

/* Where weight `key` lives for weights by key: wg[2 key], in the sweeps'
 * space (scale s), where the sums are interleaved (never a compacted wg:
 * only an engine with its own copy of the rows compacts, and weights by
 * key come with neither), else w[key] as the model has it. */
struct by_key {
	float *w;
	uint64_t stride;
	const float *s;
};

static struct by_key by_key(const struct boar_engine *e)
{
	return e->wg ? (struct by_key){ e->wg, 2, e->norm_scale }
		     : (struct by_key){ e->m->w, 1, NULL };
}

void boar_engine_load_keys(struct boar_engine *e, const uint64_t *keys,
			   const float *vals, uint64_t n)
{
	struct by_key b = by_key(e);
#pragma omp parallel for num_threads(e->threads) schedule(static) \
	if (n >= 65536)
	for (uint64_t i = 0; i < n; i++)
		b.w[b.stride * keys[i]] = to_sweep(vals[i], b.s, keys[i]);
	e->wg_ahead = e->wg != NULL; /* the model lacks them until a sync */
}

void boar_engine_store_deltas(const struct boar_engine *e,
			      const uint64_t *keys, const float *before,
			      float *deltas, uint64_t n)
{
	struct by_key b = by_key(e);
#pragma omp parallel for num_threads(e->threads) schedule(static) \
	if (n >= 65536)
	for (uint64_t i = 0; i < n; i++)
		deltas[i] = to_model(b.w[b.stride * keys[i]], b.s, keys[i]) -
			    before[i];
}

/* One range of boar_engine_store_load: a[ja..je) and b[ib..ie), a
 * window of 64 keys at a time (base/window_add.h: a clock's keys and the
 * next clock's share the power-law head and interleave at about every
 * key elsewhere). In a window, a's deltas are stored first (each read
 * before b's values overwrite it), with a mask of a's keys; then b's
 * mask, the deltas of the keys both have added to b's values, and b's
 * values loaded. The loops branch on the data once per window and list,
 * where the list leaves the window. */
static void store_load_range(const struct by_key *bk, const uint64_t *a,
			     const float *before, float *deltas, uint64_t j,
			     uint64_t je, const uint64_t *b, float *vals,
			     uint64_t i, uint64_t ie)
{
	float *w = bk->w;
	const float *s = bk->s;
	uint64_t S = bk->stride;
	while (i < ie || j < je) {
		uint64_t wa = j < je ? a[j] >> 6 : UINT64_MAX;
		uint64_t wb = i < ie ? b[i] >> 6 : UINT64_MAX;
		uint64_t win = wa < wb ? wa : wb, ma = 0, mb = 0;
		uint64_t j0 = j, i0 = i;
		for (; j < je && a[j] >> 6 == win; j++) {
			deltas[j] = to_model(w[S * a[j]], s, a[j]) - before[j];
			ma |= 1ull << (a[j] & 63);
		}
		for (; i < ie && b[i] >> 6 == win; i++)
			mb |= 1ull << (b[i] & 63);
		boar_window_add(vals + i0, mb, deltas + j0, ma);
		for (uint64_t k = i0; k < i; k++)
			w[S * b[k]] = to_sweep(vals[k], s, b[k]);
	}
}

void boar_engine_store_load(struct boar_engine *e, const uint64_t *a,
			    const float *before, float *deltas, uint64_t na,
			    const uint64_t *b, float *vals, uint64_t nb)
{
	struct by_key bk = by_key(e);
	int parts = nb >= 65536 ? e->threads : 1; /* cut at b's keys */
#pragma omp parallel for num_threads(parts) schedule(static) if (parts > 1)
	for (int t = 0; t < parts; t++) {
		/* part t: the keys from b's t-th cut to the next (the first
		 * from 0, the last to the end), in both lists */
		uint64_t lo = t ? b[nb * t / parts] : 0;
		uint64_t ib = t ? nb * t / parts : 0;
		uint64_t ie = t + 1 < parts ? nb * (t + 1) / parts : nb;
		uint64_t ja = t ? boar_lower_bound_u64(a, 0, na, lo) : 0;
		uint64_t je = t + 1 < parts
				      ? boar_lower_bound_u64(a, ja, na, b[ie])
				      : na;
		store_load_range(&bk, a, before, deltas, ja, je, b, vals, ib,
				 ie);
	}
	e->wg_ahead = e->wg != NULL;
}

/* Grid cell of a rating: its user range times G plus its item range. */
static inline uint32_t mf_cell(const struct boar_model *m, uint32_t G,
			       const struct boar_triplet *t)
{
	uint32_t a = (uint32_t)((uint64_t)t->user * G / (m->dim ? m->dim : 1));
	uint32_t b = (uint32_t)((uint64_t)t->item * G /
				(m->n_items ? m->n_items : 1));
	return (a < G ? a : G - 1) * G + (b < G ? b : G - 1);
}

/* MF: the ratings packed once, uniformly shuffled, as (user, item, rating)
 * triplets, then laid out by grid cell: users and items are each cut into
 * G ranges (G = threads), and cell (a, b) holds the ratings of user range a
 * and item range b, cut into blocks of BOAR_MF_BLOCK. An epoch runs G
 * strata; in stratum s thread t sweeps cell (t, t + s mod G), so no two
 * threads ever touch the same factor row at once (the schedule of DSGD and
 * LIBMF): with small factor matrices, Hogwild!'s free-for-all made every
 * update a cache-line transfer between the cores and two threads ran no
 * faster than one. Within a cell the blocks come in a fresh random order
 * each epoch; reading the dataset's three arrays in a random order per
 * rating missed the cache three times per rating, a block is one stream.
 * Small data (or one thread) is a single cell. */
static int pack_triplets(struct boar_engine *e, const uint32_t *rows)
{
	const struct boar_model *m = e->m;
	uint64_t n = e->n;
	uint32_t G = (uint32_t)e->threads;
	if (G < 1 || n < (uint64_t)G * G * BOAR_MF_BLOCK * 16 || G > 64)
		G = 1;
	e->grid = G;
	struct boar_triplet *mixed = malloc((n ? n : 1) * sizeof *mixed);
	e->trips = malloc((n ? n : 1) * sizeof *e->trips);
	e->cell_block = calloc((size_t)G * G + 1, sizeof *e->cell_block);
	uint64_t *cell_at = calloc((size_t)G * G + 1, sizeof *cell_at);
	int rc = BOAR_ENOMEM;
	if (!mixed || !e->trips || !e->cell_block || !cell_at ||
	    boar_shuffle_ratings(e->d, rows, n, e->o.seed, e->threads, mixed))
		goto out;
	/* counting sort by cell: stable, so each cell stays shuffled */
	for (uint64_t i = 0; i < n; i++)
		cell_at[mf_cell(m, G, &mixed[i]) + 1]++;
	for (uint32_t c = 0; c < G * G; c++)
		cell_at[c + 1] += cell_at[c];
	uint64_t blocks = 0;
	for (uint32_t c = 0; c < G * G; c++) {
		e->cell_block[c] = blocks;
		blocks += (cell_at[c + 1] - cell_at[c] + BOAR_MF_BLOCK - 1) /
			  BOAR_MF_BLOCK;
	}
	e->cell_block[G * G] = blocks;
	e->n_blocks = blocks;
	e->block_start = malloc((blocks + 1) * sizeof *e->block_start);
	e->block_order = malloc((blocks ? blocks : 1) * sizeof *e->block_order);
	if (!e->block_start || !e->block_order)
		goto out;
	for (uint32_t c = 0; c < G * G; c++)
		for (uint64_t b = e->cell_block[c], at = cell_at[c];
		     b < e->cell_block[c + 1]; b++, at += BOAR_MF_BLOCK)
			e->block_start[b] = at;
	e->block_start[blocks] = n;
	for (uint64_t b = 0; b < blocks; b++)
		e->block_order[b] = (uint32_t)b;
	for (uint64_t i = 0; i < n; i++)
		e->trips[cell_at[mf_cell(m, G, &mixed[i])]++] = mixed[i];
	rc = 0;
out:
	free(mixed);
	free(cell_at);
	return rc;
}

/* Folds instance and class weights into one scale per row, so the sweep
 * pays one load and multiply per row, and nothing when neither is given. */
static int compute_row_weights(struct boar_engine *e)
{
	const struct boar_dataset *d = e->d;
	if (!boar_rows_weighted(&e->o, d->weight))
		return 0;
	if (!(e->row_weight = malloc(d->n_rows * sizeof *e->row_weight)))
		return BOAR_ENOMEM;
	for (uint64_t r = 0; r < d->n_rows; r++)
		e->row_weight[r] = boar_row_weight(&e->o, d->weight, d->label, r);
	return 0;
}

/* Class index of every row: its label's position in the model's sorted
 * class list. */
static int compute_row_classes(struct boar_engine *e)
{
	const struct boar_dataset *d = e->d;
	const struct boar_model *m = e->m;
	if (!(e->row_class = malloc(d->n_rows * sizeof *e->row_class)))
		return BOAR_ENOMEM;
	for (uint64_t r = 0; r < d->n_rows; r++)
		e->row_class[r] = boar_class_index(m->classes, m->n_classes,
						   d->label[r]);
	return 0;
}

int boar_engine_create(const struct boar_dataset *d, const boar_options *o,
		       struct boar_model *m, struct boar_engine **out,
		       boar_error *err)
{
	return boar_engine_create_subset(d, o, m, NULL, d->n_rows, 0, out, err);
}

uint64_t boar_engine_rows(const struct boar_engine *e)
{
	return e->n;
}

int boar_engine_create_subset(const struct boar_dataset *d,
			      const boar_options *o, struct boar_model *m,
			      const uint32_t *rows, uint64_t n, int layout,
			      struct boar_engine **out, boar_error *err)
{
	int pack = (layout & BOAR_LAYOUT_PACK) != 0;
	struct boar_engine *e = calloc(1, sizeof *e);
	if (!e)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	e->d = d;
	e->m = m;
	e->o = *o;
	e->n = n;
	e->threads = o->threads > 0 ? o->threads : omp_get_num_procs();
	if (d->n_rows > UINT32_MAX) {
		free(e);
		return boar_fail(err, BOAR_EINVAL,
				 "more than 2^32-1 rows; split the data");
	}
	if (d->task == BOAR_TASK_LINEAR) {
		e->order = malloc((n ? n : 1) * sizeof *e->order);
		e->spare = malloc((n ? n : 1) * sizeof *e->spare);
		if (!e->order || !e->spare)
			goto nomem;
		for (uint64_t i = 0; i < n; i++)
			e->order[i] = rows ? rows[i] : (uint32_t)i;
		boar_rng r = boar_rng_make(o->seed, 0, 0);
		boar_shuffle_u32(e->order, n, &r);
		uint64_t width = boar_model_width(m);
		if ((o->l1 > 0 || o->l2 > 0) && compute_reg_scale(e))
			goto nomem;
		if (o->optimizer == BOAR_OPT_NORMALIZED &&
		    boar_engine_norm_setup(e))
			goto nomem;
		if (boar_opt_accumulates(o->optimizer) &&
		    (layout & BOAR_LAYOUT_INTERLEAVE) && !m->n_classes &&
		    !o->deterministic)
			interleave(e);
		if (boar_opt_accumulates(o->optimizer) && !e->wg &&
		    !(e->accum = calloc((m->dim + 1) * width, sizeof *e->accum)))
			goto nomem;
		if (compute_row_weights(e))
			goto nomem;
		if (m->n_classes && compute_row_classes(e))
			goto nomem;
		if (o->deterministic &&
		    !(e->det_buf = malloc(BOAR_DET_BATCH * width *
					  sizeof *e->det_buf)))
			goto nomem;
		e->rows = (struct boar_rows){
			.row_ptr = d->row_ptr, .idx = d->idx, .val = d->val,
			.label = d->label, .row_weight = e->row_weight,
			.row_class = e->row_class,
		};
		if (boar_engine_pick_hot(e, pack))
			goto nomem;
		/* Packing pays only when the rows do not fit in cache (and
		 * small data is better shuffled row by row); without room
		 * for the copy, train from the dataset itself. Rows with
		 * hot features are copied either way (engine_hot.c). */
		if (pack && n >= 1024 * BOAR_ROW_BLOCK)
			boar_engine_pack_rows(e);
		if (!e->packed[0])
			boar_engine_remap_rows(e);
		if (boar_engine_norm_values(e))
			goto nomem;
		free(e->hot_slot);
		e->hot_slot = NULL;
	} else {
		if (pack_triplets(e, rows))
			goto nomem;
		if (boar_opt_accumulates(o->optimizer) &&
		    !(e->accum = calloc(m->dim + m->n_items + 1,
					sizeof *e->accum)))
			goto nomem;
	}
	*out = e;
	return 0;
nomem:
	boar_engine_free(e);
	return boar_fail(err, BOAR_ENOMEM, "out of memory for training state");
}

void boar_engine_free(struct boar_engine *e)
{
	if (!e)
		return;
	free(e->reg_scale);
	free(e->norm_scale);
	free(e->accum);
	free(e->wg);
	free(e->wg_ids);
	free(e->wg_idle_ids);
	free(e->wg_idle_sums);
	free(e->row_weight);
	free(e->row_class);
	for (int k = 0; k < 4; k++)
		free(e->packed[k]);
	free(e->det_buf);
	free(e->order);
	free(e->spare);
	free(e->trips);
	free(e->block_start);
	free(e->cell_block);
	free(e->block_order);
	free(e->rep_at);
	free(e->rep_slots);
	free(e->rep_syncs);
	free(e->hot_slot);
	free(e->hot_n);
	free(e->remapped[0]);
	free(e->remapped[1]);
	free(e);
}

/* Next epoch's order from the current one: segments are visited in a fresh
 * random order and each is shuffled within, all from (seed, epoch). */
void boar_order_next(const uint32_t *from, uint32_t *to, uint64_t n,
		     uint64_t seed, int epoch, int threads)
{
	int nseg = n < ORDER_SEGMENTS * 64 ? 1 : ORDER_SEGMENTS;
	uint32_t seg_order[ORDER_SEGMENTS];
	uint64_t dest[ORDER_SEGMENTS + 1];

	for (int s = 0; s < nseg; s++)
		seg_order[s] = (uint32_t)s;
	boar_rng r = boar_rng_make(seed, (uint64_t)epoch, UINT32_MAX);
	boar_shuffle_u32(seg_order, (uint64_t)nseg, &r);
	dest[0] = 0;
	for (int k = 0; k < nseg; k++) {
		uint32_t s = seg_order[k];
		dest[k + 1] = dest[k] + (n * (s + 1) / nseg - n * s / nseg);
	}
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
	for (int k = 0; k < nseg; k++) {
		uint32_t s = seg_order[k];
		uint64_t lo = n * s / nseg, len = n * (s + 1) / nseg - lo;
		uint32_t *t = to + dest[k];
		memcpy(t, from + lo, len * sizeof *t);
		boar_rng sr = boar_rng_make(seed, (uint64_t)epoch, s);
		boar_shuffle_u32(t, len, &sr);
	}
}

static void reshuffle(struct boar_engine *e, int epoch)
{
	boar_order_next(e->order, e->spare, e->n, e->o.seed, epoch,
			e->threads);
	uint32_t *t = e->order;
	e->order = e->spare;
	e->spare = t;
}

const uint32_t *boar_engine_order(struct boar_engine *e, int epoch)
{
	if (e->trips) {
		if (e->order_epoch != epoch) {
			for (uint32_t c = 0; c < e->grid * e->grid; c++) {
				boar_rng r = boar_rng_make(e->o.seed,
							   (uint64_t)epoch,
							   (uint64_t)c + 16);
				boar_shuffle_u32(e->block_order + e->cell_block[c],
						 e->cell_block[c + 1] -
							 e->cell_block[c],
						 &r);
			}
			e->order_epoch = epoch;
		}
		return NULL;
	}
	if (e->packed[0]) {
		if (e->order_epoch != epoch)
			boar_engine_order_blocks(e, epoch);
		return e->order;
	}
	while (e->order_epoch < epoch)
		reshuffle(e, ++e->order_epoch);
	return e->order;
}

int boar_engine_sweep(struct boar_engine *e, int epoch, uint64_t begin,
		      uint64_t end, double eta_d, double *loss_sum)
{
	const uint32_t *order = boar_engine_order(e, epoch);
	float eta = (float)eta_d;
	if (end > e->n)
		end = e->n;
	if (begin >= end)
		return 0;
	double s;
	int norm = e->norm_scale && !e->wg; /* wg holds the sweeps' space */
	if (e->norm_scale)
		eta = (float)(eta_d * e->norm_factor);
	if (norm)
		boar_engine_norm_weights(e, 1);
	if (e->d->task == BOAR_TASK_MF)
		s = boar_sweep_mf(e, begin, end, eta);
	else if (e->o.deterministic)
		s = boar_sweep_deterministic(e, order, begin, end, eta);
	else if (e->m->n_classes)
		s = boar_sweep_multiclass(e, order, begin, end, eta);
	else
		s = boar_sweep_linear(e, order, begin, end, eta);
	e->wg_ahead = e->wg != NULL;
	if (norm)
		boar_engine_norm_weights(e, 0);
	*loss_sum += s;
	return isfinite(s) ? 0 : BOAR_EDIVERGED;
}
