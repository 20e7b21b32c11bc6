/* engine_cpu.c - the CPU Hogwild! engine (engine.c) behind the driver's
 * engine interface (engine_ops.h).
 *
 * The CPU engine updates the caller's host model in place, so weights by
 * key are plain reads and writes of m->w (of its own interleaved AdaGrad
 * array where it keeps one), and sync has nothing to do but hand back
 * those interleaved weights (engine.c).
 */
#include "base/huge_pages.h"
#include "engine.h"
#include "engine_ops.h"
#include "sweep_replica.h"
#include "base/error.h"
#include "model/model.h"

static int cpu_open(const struct boar_dataset *d, const boar_options *o,
		    struct boar_model *m, const uint32_t *rows, uint64_t n,
		    int layout, void **out, boar_error *err)
{
	struct boar_engine *e;
	/* a fresh model's weights are untouched (calloc): the sweeps fault
	 * them in as 2 MiB pages (a warm start's are merged into them later
	 * by the kernel, if at all) */
	if (m->task == BOAR_TASK_LINEAR)
		boar_advise_huge(m->w, (m->dim + 1) * boar_model_width(m) *
					       sizeof *m->w);
	int rc = boar_engine_create_subset(d, o, m, rows, n, layout, &e, err);
	if (!rc)
		*out = e;
	return rc;
}

static uint64_t cpu_rows(void *e)
{
	return boar_engine_rows(e);
}

static int cpu_order(void *e, int epoch, const uint32_t **order,
		     boar_error *err)
{
	*order = boar_engine_order(e, epoch);
	return 0;
}

static int cpu_sweep(void *e, int epoch, uint64_t begin, uint64_t end,
		     double eta, double *loss_sum, boar_error *err)
{
	int rc = boar_engine_sweep(e, epoch, begin, end, eta, loss_sum);
	return rc ? boar_fail(err, rc, "training diverged in epoch %d "
				       "(non-finite loss); lower eta",
			      epoch)
		  : 0;
}

static int cpu_load_keys(void *e, const uint64_t *keys, const float *vals,
			 uint64_t n, boar_error *err)
{
	boar_engine_load_keys(e, keys, vals, n);
	return 0;
}

static int cpu_store_deltas(void *e, const uint64_t *keys, const float *before,
			    float *deltas, uint64_t n, boar_error *err)
{
	boar_engine_store_deltas(e, keys, before, deltas, n);
	return 0;
}

static int cpu_sync(void *e, struct boar_model *m, boar_error *err)
{
	boar_engine_export(e);
	return 0;
}

/* Hogwild! linear sweeps count rounds of BOAR_REP_SYNC_ROWS rows in
 * rep_syncs (sweep_replica.h); MF and deterministic sweeps count nothing
 * (UINT64_MAX: unknown). */
static uint64_t cpu_rows_done(void *p)
{
	const struct boar_engine *e = p;
	if (!e->rep_syncs || e->o.deterministic)
		return UINT64_MAX;
	return __atomic_load_n(e->rep_syncs, __ATOMIC_RELAXED) *
	       BOAR_REP_SYNC_ROWS;
}

static void cpu_close(void *e)
{
	boar_engine_free(e);
}

const struct boar_engine_ops boar_engine_cpu_ops =
	BOAR_ENGINE_OPS(cpu, "the CPU engine", BOAR_CAPS_ALL);
