/* engine_norm.c - the CPU engine's side of optimizer NORMALIZED
 * (math/step.h): each feature's scale (the mean |value| of its non-zeros
 * in the training rows), the values the sweeps read divided
 * by it, and the weights moved between the model's space (w_j) and the
 * sweeps' (w_j s_j) around every sweep.
 *
 * Training on x_j / s_j with weights w_j s_j makes the same predictions
 * as the model's w_j on x_j, and AdaGrad there is NAG in the model's
 * space. The scales are powers of 2, so both conversions are exact: the
 * weights come back from a round trip bit for bit, and the model between
 * sweeps (evaluated, kept as the best epoch, pulled and pushed by a
 * cluster worker) is the plain one.
 */
#include <omp.h>
#include <stdlib.h>

#include "data/dataset.h"
#include "engine.h"
#include "math/step.h"
#include "model/model.h"

/* Marks the training rows (e->order's first e->n) in a bitmap, or NULL
 * when every row trains: the scans below then read rows in storage order,
 * the order that streams, whatever the epoch order is. */
static uint64_t *training_rows(const struct boar_engine *e, int *err)
{
	uint64_t rows = e->d->n_rows;
	*err = 0;
	if (e->n == rows)
		return NULL;
	uint64_t *bits = calloc(rows / 64 + 1, sizeof *bits);
	if (!bits) {
		*err = BOAR_ENOMEM;
		return NULL;
	}
	for (uint64_t i = 0; i < e->n; i++)
		bits[e->order[i] / 64] |= 1ull << (e->order[i] % 64);
	return bits;
}

#define TRAINS(bits, r) (!(bits) || ((bits)[(r) / 64] >> ((r) % 64) & 1))

/* Rows per block of the sum of squares: fixed, so the blocks' partial
 * sums, added in block order, are the same at any thread count. */
#define NORM_BLOCK_ROWS 4096

int boar_engine_norm_setup(struct boar_engine *e)
{
	const struct boar_dataset *d = e->d;
	uint64_t dim = e->m->dim, rows = d->n_rows;
	int err;
	uint64_t *bits = training_rows(e, &err);
	if (err)
		return err;
	uint64_t blocks = rows / NORM_BLOCK_ROWS + 1;
	float *s = calloc(dim + 1, sizeof *s);
	uint32_t *count = calloc(dim + 1, sizeof *count);
	double *part = calloc(blocks, sizeof *part);
	if (!s || !count || !part) {
		free(s), free(count), free(part), free(bits);
		return BOAR_ENOMEM;
	}
	/* The training rows only (a holdout's values stay unseen), in storage
	 * order. Thread t owns the features in [lo, hi) and reads every row:
	 * each feature's sum is added up in the same order as on one thread,
	 * so the scales are the same at any count, and the scan (which reads
	 * the ids once per thread, streaming) runs on all threads. */
	int threads = e->threads > 0 ? e->threads : 1;
#pragma omp parallel num_threads(threads)
	{
		int t = omp_get_thread_num(), nt = omp_get_num_threads();
		uint64_t lo = dim * (uint64_t)t / (uint64_t)nt;
		uint64_t hi = dim * (uint64_t)(t + 1) / (uint64_t)nt;
		for (uint64_t r = 0; r < rows; r++) {
			if (!TRAINS(bits, r))
				continue;
			for (uint64_t k = d->row_ptr[r]; k < d->row_ptr[r + 1]; k++) {
				uint64_t j = d->idx[k];
				if (j >= lo && j < hi && d->val[k] != 0.0f) {
					s[j] += fabsf(d->val[k]);
					count[j]++;
				}
			}
		}
	}
	for (uint64_t j = 0; j < dim; j++)
		s[j] = boar_norm_scale(count[j] ? s[j] / count[j] : 0.0f);
	s[dim] = 1.0f;
	free(count);
#pragma omp parallel for num_threads(e->threads) schedule(dynamic, 16)
	for (uint64_t b = 0; b < blocks; b++) {
		uint64_t end = (b + 1) * NORM_BLOCK_ROWS < rows ? (b + 1) * NORM_BLOCK_ROWS : rows;
		double sum_sq = 0;
		for (uint64_t r = b * NORM_BLOCK_ROWS; r < end; r++) {
			if (!TRAINS(bits, r))
				continue;
			for (uint64_t k = d->row_ptr[r]; k < d->row_ptr[r + 1]; k++) {
				if (d->idx[k] >= dim)
					continue;
				double z = d->val[k] / s[d->idx[k]];
				sum_sq += z * z;
			}
		}
		part[b] = sum_sq;
	}
	double sum_sq = 0;
	for (uint64_t b = 0; b < blocks; b++)
		sum_sq += part[b];
	free(part), free(bits);
	e->norm_scale = s;
	e->norm_factor = boar_norm_step_factor((double)e->n, sum_sq);
	return 0;
}

int boar_engine_norm_values(struct boar_engine *e)
{
	const struct boar_dataset *d = e->d;
	if (!e->norm_scale || e->rows.val != d->val)
		return 0; /* no normalization, or already the engine's copy */
	float *val = malloc((d->nnz ? d->nnz : 1) * sizeof *val);
	if (!val)
		return BOAR_ENOMEM;
	const float *s = e->norm_scale;
	uint64_t dim = e->m->dim;
#pragma omp parallel for num_threads(e->threads) schedule(static)
	for (uint64_t k = 0; k < d->nnz; k++)
		val[k] = d->idx[k] < dim ? d->val[k] / s[d->idx[k]] : d->val[k];
	e->remapped[1] = val; /* the rows were not remapped: the slot is free */
	e->rows.val = val;
	return 0;
}

void boar_engine_norm_weights(struct boar_engine *e, int to_sweep)
{
	float *w = e->m->w;
	const float *s = e->norm_scale;
	uint64_t K = boar_model_width(e->m), n = (e->m->dim + 1) * K;
#pragma omp parallel for num_threads(e->threads) schedule(static)
	for (uint64_t p = 0; p < n; p++)
		w[p] = to_sweep ? w[p] * s[p / K] : w[p] / s[p / K];
}
