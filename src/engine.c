/* engine.c - training state of the CPU engine: row order, regularization
 * scales, AdaGrad sums; dispatch of a sweep to the model's kind.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"
#include "engine.h"
#include "error.h"
#include "model.h"
#include "rng.h"

/* Rows are reshuffled in this many segments, each on its own generator, so
 * the reshuffle runs in parallel and gives the same order at any thread
 * count. */
#define ORDER_SEGMENTS 64

static void shuffle(uint32_t *a, uint64_t n, boar_rng *r)
{
	for (uint64_t i = n; i > 1; i--) {
		uint64_t j = boar_rng_below(r, (uint32_t)i);
		uint32_t t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}

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

int boar_engine_create(const struct boar_dataset *d, const boar_options *o,
		       struct boar_model *m, struct boar_engine **out,
		       boar_error *err)
{
	struct boar_engine *e = calloc(1, sizeof *e);
	if (!e)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	e->d = d;
	e->m = m;
	e->o = *o;
	e->threads = o->threads > 0 ? o->threads : omp_get_num_procs();
	if (d->n_rows > UINT32_MAX) {
		free(e);
		return boar_fail(err, BOAR_EINVAL,
				 "more than 2^32-1 rows; split the data");
	}
	e->order = malloc((d->n_rows ? d->n_rows : 1) * sizeof *e->order);
	e->spare = malloc((d->n_rows ? d->n_rows : 1) * sizeof *e->spare);
	if (!e->order || !e->spare)
		goto nomem;
	for (uint64_t i = 0; i < d->n_rows; i++)
		e->order[i] = (uint32_t)i;
	boar_rng r = boar_rng_make(o->seed, 0, 0);
	shuffle(e->order, d->n_rows, &r);

	if (d->task == BOAR_TASK_LINEAR) {
		if ((o->l1 > 0 || o->l2 > 0) && compute_reg_scale(e))
			goto nomem;
		if (o->optimizer == BOAR_OPT_ADAGRAD &&
		    !(e->accum = calloc(d->dim + 1, sizeof *e->accum)))
			goto nomem;
	} else if (o->optimizer == BOAR_OPT_ADAGRAD) {
		e->accum = calloc(m->dim + m->n_items + 1, sizeof *e->accum);
		if (!e->accum)
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
	free(e->accum);
	free(e->order);
	free(e->spare);
	free(e);
}

double boar_engine_eta(const struct boar_engine *e, int epoch)
{
	return e->o.eta * pow(e->o.eta_decay, epoch - 1);
}

/* Next epoch's order from the current one: segments are visited in a fresh
 * random order and each is shuffled within, all from (seed, epoch). */
static void reshuffle(struct boar_engine *e, int epoch)
{
	uint64_t n = e->d->n_rows;
	int nseg = n < ORDER_SEGMENTS * 64 ? 1 : ORDER_SEGMENTS;
	uint32_t seg_order[ORDER_SEGMENTS];
	uint64_t dest[ORDER_SEGMENTS + 1];

	for (int s = 0; s < nseg; s++)
		seg_order[s] = (uint32_t)s;
	boar_rng r = boar_rng_make(e->o.seed, (uint64_t)epoch, UINT32_MAX);
	shuffle(seg_order, (uint64_t)nseg, &r);
	dest[0] = 0;
	for (int k = 0; k < nseg; k++) {
		uint32_t s = seg_order[k];
		dest[k + 1] = dest[k] + (n * (s + 1) / nseg - n * s / nseg);
	}
#pragma omp parallel for num_threads(e->threads) schedule(dynamic, 1)
	for (int k = 0; k < nseg; k++) {
		uint32_t s = seg_order[k];
		uint64_t lo = n * s / nseg, len = n * (s + 1) / nseg - lo;
		uint32_t *to = e->spare + dest[k];
		memcpy(to, e->order + lo, len * sizeof *to);
		boar_rng sr = boar_rng_make(e->o.seed, (uint64_t)epoch, s);
		shuffle(to, len, &sr);
	}
	uint32_t *t = e->order;
	e->order = e->spare;
	e->spare = t;
}

const uint32_t *boar_engine_order(struct boar_engine *e, int epoch)
{
	while (e->order_epoch < epoch)
		reshuffle(e, ++e->order_epoch);
	return e->order;
}

int boar_engine_sweep(struct boar_engine *e, int epoch, uint64_t begin,
		      uint64_t end, double *loss_sum)
{
	const uint32_t *order = boar_engine_order(e, epoch);
	float eta = (float)boar_engine_eta(e, epoch);
	if (end > e->d->n_rows)
		end = e->d->n_rows;
	if (begin >= end)
		return 0;
	double s = e->d->task == BOAR_TASK_LINEAR
			   ? boar_sweep_linear(e, order, begin, end, eta)
			   : boar_sweep_mf(e, order, begin, end, eta);
	*loss_sum += s;
	return isfinite(s) ? 0 : BOAR_EDIVERGED;
}
