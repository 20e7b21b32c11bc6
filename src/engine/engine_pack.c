/* engine_pack.c - a linear engine's own shuffled copy of its rows.
 *
 * Visiting rows in a fresh random order every epoch means every row's ids,
 * values and offsets are a cache miss the hardware prefetcher cannot
 * foresee. A packed engine instead copies its rows once, in the initial
 * shuffled order, into contiguous arrays cut into blocks of BOAR_ROW_BLOCK
 * rows, and each epoch visits the blocks in a fresh random order: within a
 * block the rows stream from memory, and since the initial shuffle spread
 * every block's rows over the whole file, a random order of blocks serves
 * SGD as well as a random order of rows (bench/RESULTS.md compares the
 * test loss per epoch). The copy costs the dataset's size in memory and
 * one pass to make; boar_train asks for it only for more than one epoch,
 * and an engine without the memory for it trains from the dataset itself.
 * The copy also lists each row's hot features first, as replica slots
 * (engine_hot.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/huge_pages.h"
#include "data/dataset.h"
#include "engine.h"
#include "base/rng.h"

/* Whether `bytes` more fit comfortably: at most half of the memory the
 * system reports available, so the copy never pushes the machine into
 * swap (or the allocation into the OOM killer). */
int boar_engine_room_for(uint64_t bytes)
{
	long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || size <= 0)
		return 1; /* unknown: let malloc decide */
	return bytes < (uint64_t)pages * (uint64_t)size / 2;
}

int boar_engine_pack_rows(struct boar_engine *e)
{
	const struct boar_rows *src = &e->rows;
	uint64_t n = e->n, nnz = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t r = e->order[i];
		nnz += src->row_ptr[r + 1] - src->row_ptr[r];
	}
	uint64_t bytes = (n + 1) * 8 + nnz * 8 + n * 14;
	if (!boar_engine_room_for(bytes))
		return BOAR_ENOMEM;
	uint64_t *row_ptr = malloc((n + 1) * sizeof *row_ptr);
	uint32_t *idx = malloc((nnz ? nnz : 1) * sizeof *idx);
	float *val = malloc((nnz ? nnz : 1) * sizeof *val);
	float *label = malloc((n ? n : 1) * sizeof *label);
	float *weight = src->row_weight ? malloc(n * sizeof *weight) : NULL;
	uint32_t *cls = src->row_class ? malloc(n * sizeof *cls) : NULL;
	uint16_t *hot_n = e->hot_slot ? malloc((n ? n : 1) * sizeof *hot_n)
				      : NULL;
	if (!row_ptr || !idx || !val || !label ||
	    (src->row_weight && !weight) || (src->row_class && !cls) ||
	    (e->hot_slot && !hot_n)) {
		free(row_ptr), free(idx), free(val), free(label);
		free(weight), free(cls), free(hot_n);
		return BOAR_ENOMEM;
	}
	boar_advise_huge(idx, nnz * sizeof *idx);
	boar_advise_huge(val, nnz * sizeof *val);
	row_ptr[0] = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t r = e->order[i];
		row_ptr[i + 1] = row_ptr[i] + (src->row_ptr[r + 1] - src->row_ptr[r]);
	}
	/* Rows are independent once their offsets are known: copy in
	 * parallel (the reads are the random ones; the writes stream). */
#pragma omp parallel for num_threads(e->threads) schedule(static)
	for (uint64_t i = 0; i < n; i++) {
		uint32_t r = e->order[i];
		uint64_t from = src->row_ptr[r], len = row_ptr[i + 1] - row_ptr[i];
		uint16_t h = boar_engine_copy_row(e, src->idx + from,
						  src->val + from, len,
						  idx + row_ptr[i],
						  val + row_ptr[i]);
		if (hot_n)
			hot_n[i] = h;
		label[i] = src->label[r];
		if (weight)
			weight[i] = src->row_weight[r];
		if (cls)
			cls[i] = src->row_class[r];
	}
	/* The per-row arrays indexed by the dataset's rows are replaced. */
	free(e->row_weight);
	free(e->row_class);
	e->row_weight = weight;
	e->row_class = cls;
	e->packed[0] = row_ptr;
	e->packed[1] = idx;
	e->packed[2] = val;
	e->packed[3] = label;
	e->hot_n = hot_n;
	e->rows = (struct boar_rows){
		.row_ptr = row_ptr, .idx = idx, .val = val, .label = label,
		.row_weight = weight, .row_class = cls, .hot_n = hot_n,
	};
	e->n_blocks = (n + BOAR_ROW_BLOCK - 1) / BOAR_ROW_BLOCK;
	free(e->block_order);
	e->block_order = malloc(e->n_blocks * sizeof *e->block_order);
	if (!e->block_order)
		return BOAR_ENOMEM; /* rows are packed; order_blocks copes */
	for (uint64_t b = 0; b < e->n_blocks; b++)
		e->block_order[b] = (uint32_t)b;
	return 0;
}

void boar_engine_order_blocks(struct boar_engine *e, int epoch)
{
	uint64_t n = e->n, nb = e->n_blocks;
	e->order_epoch = epoch;
	if (!e->block_order) { /* no memory for the block order: in order */
		for (uint64_t i = 0; i < n; i++)
			e->order[i] = (uint32_t)i;
		return;
	}
	boar_rng r = boar_rng_make(e->o.seed, (uint64_t)epoch, 2);
	boar_shuffle_u32(e->block_order, nb, &r);
	/* Only the last block (id nb-1) may be short: positions after it
	 * move up by what it lacks. */
	uint64_t last_len = n - (nb - 1) * BOAR_ROW_BLOCK, last_pos = 0;
	for (uint64_t b = 0; b < nb; b++)
		if (e->block_order[b] == nb - 1)
			last_pos = b;
#pragma omp parallel for num_threads(e->threads) schedule(static)
	for (uint64_t b = 0; b < nb; b++) {
		uint64_t blk = e->block_order[b];
		uint64_t at = b * BOAR_ROW_BLOCK -
			      (b > last_pos ? BOAR_ROW_BLOCK - last_len : 0);
		uint64_t len = blk == nb - 1 ? last_len : BOAR_ROW_BLOCK;
		for (uint64_t k = 0; k < len; k++)
			e->order[at + k] = (uint32_t)(blk * BOAR_ROW_BLOCK + k);
	}
}
