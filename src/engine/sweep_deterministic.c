/* sweep_deterministic.c - a linear sweep whose result does not depend on
 * the thread count (--deterministic).
 *
 * Rows are taken in the epoch's order in fixed batches of BOAR_DET_BATCH rows.
 * Phase 1: threads split the batch and compute every row's loss derivative
 * against the weights as they stood at the start of the batch (nobody
 * writes during this phase). Phase 2: every thread walks the whole batch in
 * row order and applies the updates of the coordinates it owns (id modulo
 * the thread count); the biases belong to thread 0. Each coordinate thus
 * sees the same updates in the same order at any thread count, so the
 * model is bit-identical. The price: a barrier per phase and every thread
 * reading every row of the batch in phase 2 (bench/RESULTS.md has the
 * measured cost).
 */
#include <math.h>
#include <omp.h>

#include "coord_update.h"
#include "math/loss.h"
#include "data/dataset.h"
#include "engine.h"
#include "model/model.h"

/* Phase 1 for one row: derivatives (scaled by the row's weight) into d[K];
 * returns the weighted loss. */
static double row_derivatives(const struct boar_engine *e, uint32_t r,
			      float *d)
{
	const struct boar_rows *ds = &e->rows;
	const struct boar_model *mdl = e->m;
	uint32_t K = boar_model_width(mdl);
	const float *bias = &mdl->w[mdl->dim * K];
	float m[BOAR_MAX_CLASSES];
	for (uint32_t c = 0; c < K; c++)
		m[c] = bias[c];
	for (uint64_t k = ds->row_ptr[r]; k < ds->row_ptr[r + 1]; k++) {
		const float *wj = &mdl->w[(uint64_t)ds->idx[k] * K];
		for (uint32_t c = 0; c < K; c++)
			m[c] += wj[c] * ds->val[k];
	}
	double loss;
	if (mdl->n_classes) {
		loss = boar_multiclass_loss(mdl->loss, mdl->loss_param, m, K,
					    ds->row_class[r], d);
	} else {
		float y = boar_loss_target(mdl->loss, ds->label[r]);
		loss = boar_loss_eval(mdl->loss, m[0], y, mdl->loss_param,
				      &d[0]);
	}
	float rw = ds->row_weight ? ds->row_weight[r] : 1.0f;
	for (uint32_t c = 0; c < K; c++)
		d[c] *= rw;
	return rw * loss;
}

/* Phase 2 for one thread: the updates of its coordinates, in row order. */
static void apply_owned(const struct boar_engine *e, const uint32_t *order,
			uint64_t b0, uint64_t b1, const float *dbuf,
			const struct coord_params *cp, int t, int nt)
{
	const struct boar_rows *ds = &e->rows;
	struct boar_model *mdl = e->m;
	uint32_t K = boar_model_width(mdl);
	int ada = boar_opt_accumulates(e->o.optimizer);
	int reg = boar_reg_kind(e->o.l1, e->o.l2);
	for (uint64_t i = b0; i < b1; i++) {
		uint32_t r = order[i];
		const float *d = &dbuf[(i - b0) * K];
		for (uint64_t k = ds->row_ptr[r]; k < ds->row_ptr[r + 1]; k++) {
			uint32_t j = ds->idx[k];
			if ((int)(j % (uint32_t)nt) != t)
				continue;
			float s = reg != REG_NONE ? e->reg_scale[j] : 0.0f;
			for (uint32_t c = 0; c < K; c++) {
				uint64_t at = (uint64_t)j * K + c;
				boar_update_coord(cp, &mdl->w[at],
						  ada ? &e->accum[at] : NULL,
						  d[c] * ds->val[k], s,
						  BOAR_POLICY_RACY, ada, reg);
			}
		}
		if (t != 0)
			continue;
		const float B = (float)e->o.bias_scale;
		const struct coord_params bcp = boar_bias_params(*cp, B);
		for (uint32_t c = 0; c < K; c++) {
			uint64_t at = mdl->dim * K + c;
			boar_update_coord(&bcp, &mdl->w[at],
					  ada ? &e->accum[at] : NULL, d[c] * B,
					  0.0f, BOAR_POLICY_RACY, ada, REG_NONE);
		}
	}
}

double boar_sweep_deterministic(struct boar_engine *e, const uint32_t *order,
				uint64_t begin, uint64_t end, float eta)
{
	uint32_t K = boar_model_width(e->m);
	struct coord_params cp = {.eta = eta, .l1 = (float)e->o.l1,
				  .l2 = (float)e->o.l2, .opt = e->o.optimizer};
	float *dbuf = e->det_buf;
	double total = 0;
#pragma omp parallel num_threads(e->threads) reduction(+ : total)
	{
		int t = omp_get_thread_num(), nt = omp_get_num_threads();
		for (uint64_t b0 = begin; b0 < end; b0 += BOAR_DET_BATCH) {
			uint64_t b1 = b0 + BOAR_DET_BATCH < end ? b0 + BOAR_DET_BATCH : end;
#pragma omp for schedule(static)
			for (uint64_t i = b0; i < b1; i++)
				total += row_derivatives(e, order[i],
							 &dbuf[(i - b0) * K]);
			apply_owned(e, order, b0, b1, dbuf, &cp, t, nt);
#pragma omp barrier
		}
	}
	return total;
}
