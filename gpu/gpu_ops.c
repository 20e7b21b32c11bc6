/* gpu_ops.c - the CUDA engine behind the driver's engine interface
 * (src/engine/engine_ops.h): the plugin's entry point, and its warm-up
 * (BOAR_GPU_WARM_SYMBOL) that engine_gpu.c runs while the caller reads data,
 * and its copy of the rows to the card as they are parsed
 * (BOAR_GPU_PRELOAD_SYMBOL, gpu_preload.cu).
 *
 * Built into libboar-gpu.so with the .cu files; libboar opens it with
 * dlopen at device = GPU (src/engine/engine_gpu.c), so only the plugin links
 * cudart. A whole epoch runs as boar_gpu_epoch, a slice as boar_gpu_sweep
 * (the same visit, in parts); weights by key travel as the 32-bit keys the
 * device takes.
 */
#include <stdlib.h>

#include "data/dataset.h"
#include "engine/engine_ops.h"
#include "base/error.h"
#include "gpu/gpu_engine.h"

struct gpu_ops_ctx {
	boar_gpu_ctx *g;
	uint64_t n_rows;
	uint32_t *keys32; /* scratch for load_keys/store_deltas */
	uint64_t cap;
};

static int g_open(const struct boar_dataset *d, const boar_options *o,
		  struct boar_model *m, const uint32_t *rows, uint64_t n,
		  int layout, void **out, boar_error *err)
{
	if (rows)
		return boar_fail(err, BOAR_EINVAL,
				 "the GPU engine trains on every row");
	struct gpu_ops_ctx *c = calloc(1, sizeof *c);
	if (!c)
		return boar_fail(err, BOAR_ENOMEM, "GPU: out of memory");
	int rc = boar_gpu_open(d, o, m, &c->g, err);
	if (rc) {
		free(c);
		return rc;
	}
	c->n_rows = d->n_rows;
	*out = c;
	return 0;
}

static uint64_t g_rows(void *e)
{
	return ((struct gpu_ops_ctx *)e)->n_rows;
}

static int g_order(void *e, int epoch, const uint32_t **order,
		   boar_error *err)
{
	return boar_gpu_order(((struct gpu_ops_ctx *)e)->g, epoch, order, err);
}

static int g_sweep(void *e, int epoch, uint64_t begin, uint64_t end,
		   double eta, double *loss_sum, boar_error *err)
{
	struct gpu_ops_ctx *c = e;
	if (begin == 0 && end >= c->n_rows)
		return boar_gpu_epoch(c->g, epoch, eta, loss_sum, err);
	return boar_gpu_sweep(c->g, epoch, begin, end, eta, loss_sum, err);
}

/* keys as the device takes them: 32-bit. */
static int narrow_keys(struct gpu_ops_ctx *c, const uint64_t *keys,
		       uint64_t n, boar_error *err)
{
	if (n > c->cap) {
		uint32_t *k = realloc(c->keys32, n * sizeof *k);
		if (!k)
			return boar_fail(err, BOAR_ENOMEM, "GPU: out of memory");
		c->keys32 = k;
		c->cap = n;
	}
	for (uint64_t i = 0; i < n; i++) {
		if (keys[i] >= UINT32_MAX)
			return boar_fail(err, BOAR_EINVAL,
					 "the GPU engine takes keys below 2^32 "
					 "- 1 (key %llu)",
					 (unsigned long long)keys[i]);
		c->keys32[i] = (uint32_t)keys[i];
	}
	return 0;
}

static int g_load_keys(void *e, const uint64_t *keys, const float *vals,
		       uint64_t n, boar_error *err)
{
	struct gpu_ops_ctx *c = e;
	int rc = narrow_keys(c, keys, n, err);
	return rc ? rc : boar_gpu_set_weights(c->g, c->keys32, vals, n, err);
}

static int g_store_deltas(void *e, const uint64_t *keys, const float *before,
			  float *deltas, uint64_t n, boar_error *err)
{
	struct gpu_ops_ctx *c = e;
	int rc = narrow_keys(c, keys, n, err);
	if (!rc)
		rc = boar_gpu_get_weights(c->g, c->keys32, deltas, n, err);
	for (uint64_t i = 0; !rc && i < n; i++)
		deltas[i] -= before[i];
	return rc;
}

static int g_sync(void *e, struct boar_model *m, boar_error *err)
{
	return boar_gpu_download(((struct gpu_ops_ctx *)e)->g, m, err);
}

static void g_close(void *e)
{
	struct gpu_ops_ctx *c = e;
	if (!c)
		return;
	boar_gpu_close(c->g);
	free(c->keys32);
	free(c);
}

/* The kernels count no rows while they run: no progress inside an epoch. */
static uint64_t g_rows_done(void *e)
{
	return UINT64_MAX;
}

/* no holdout or deterministic mode yet */
static const struct boar_engine_ops gpu_ops = BOAR_ENGINE_OPS(
	g, "the GPU engine",
	BOAR_CAP(MF) | BOAR_CAP(MULTICLASS) | BOAR_CAP(WARM_START) |
		BOAR_CAP(EARLY_STOP) | BOAR_CAP(SLICES) |
		BOAR_CAP(MF_ABSOLUTE) | BOAR_CAP(WEIGHTS));

__attribute__((visibility("default"))) const struct boar_engine_ops *
boar_gpu_plugin_ops(int abi)
{
	return abi == BOAR_ENGINE_ABI ? &gpu_ops : NULL;
}

__attribute__((visibility("default"))) void boar_gpu_plugin_warm(int device)
{
	boar_gpu_warm(device);
}

/* gpu_preload.cu: the rows to the card while the file is parsed */
extern const struct boar_gpu_preload_ops gpu_preload_ops;

__attribute__((visibility("default"))) const struct boar_gpu_preload_ops *
boar_gpu_plugin_preload(void)
{
	return &gpu_preload_ops;
}
