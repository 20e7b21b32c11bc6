/* gpu_engine.h - the CUDA engine as seen from the C core.
 *
 * boar_train() drives epochs, evaluation and progress itself; for
 * --device gpu it hands each epoch's sweep to these functions. The weights
 * (or factor matrices) live in device memory from open to close; download
 * copies them into the host model (for evaluation, saving, or the end).
 *
 * Built from the .cu files in gpu/ when CUDA is available; otherwise
 * gpu/gpu_stub.c makes
 * every call return BOAR_ENOGPU. All functions return 0 or a BOAR_E* code
 * and fill *err where one is given; none prints or exits.
 */
#ifndef BOAR_GPU_ENGINE_H
#define BOAR_GPU_ENGINE_H

#include <stdint.h>

#include "boar.h"

#ifdef __cplusplus
extern "C" {
#endif

struct boar_dataset;
struct boar_model;
typedef struct boar_gpu_ctx boar_gpu_ctx;

/* Picks device o->gpu_id, uploads the model's initial values and (if it
 * fits) the whole training set, or prepares pinned chunks to stream on
 * o->streams streams. BOAR_ENODEVICE if there is no such device. With
 * o->n_gpus > 1 (matrix factorization only: BOAR_EINVAL for a linear
 * model) the context drives devices gpu_id .. gpu_id + n_gpus - 1
 * (gpu/gpu_multi.h); every call below but the slices and weights by key
 * (linear only) works on it the same way. */
int boar_gpu_open(const struct boar_dataset *train, const boar_options *o,
		  const struct boar_model *init, boar_gpu_ctx **out,
		  boar_error *err);

/* Starts the CUDA runtime and the device's context ahead of
 * boar_gpu_open (which then finds them ready). Safe on any thread. */
void boar_gpu_warm(int device);

/* One Hogwild! pass over the training set in a fresh order drawn from
 * (o->seed, epoch). Adds the progressive training loss summed over rows to
 * *loss_sum. `eta` is this epoch's step size. */
int boar_gpu_epoch(boar_gpu_ctx *c, int epoch, double eta, double *loss_sum,
		   boar_error *err);

/* ---- Slices of an epoch and chosen weights (cluster workers)
 *
 * A cluster worker (net/worker.c) sweeps its share of every epoch in clocks
 * and, around each clock, loads the values it pulled from the servers for
 * the keys that clock's rows touch and reads them back after the sweep. So
 * the engine offers its own epoch order as a host array (the worker needs
 * the rows of a slice to know their keys), sweeps any slice of positions of
 * it, and scatters or gathers weights by key. The order is the one
 * boar_gpu_epoch visits: drawn from (seed, epoch) alone, so every process
 * with the same data and seed sees the same order. Resident data is one
 * permutation of all rows; streamed data is its chunks in a shuffled order,
 * each permuted. A slice of streamed data runs over the chunks it overlaps;
 * a chunk copied for one slice stays in its stream slot for the next, so
 * consecutive slices copy each chunk about once per epoch.
 *
 * Linear models only (BOAR_EINVAL for matrix factorization). Keys are
 * positions in the host model's w: 0..dim-1 the features, dim the bias;
 * for K classes (dim + 1) K of them, feature-major (j K + c).
 * With AdaGrad only the weights move; the accumulators stay on the device,
 * the worker's own. Not thread-safe: one host thread drives a context. */

/* *order = the rows of `epoch` in the order its sweeps visit them, n_rows
 * entries; valid until the next boar_gpu_order or boar_gpu_close. Costs
 * O(n_rows) on the host for a new epoch. BOAR_EINVAL above 2^32 rows. */
int boar_gpu_order(boar_gpu_ctx *c, int epoch, const uint32_t **order,
		   boar_error *err);

/* Sweeps positions [begin, end) of `epoch`'s order (end <= n_rows) with
 * step size eta and adds their progressive loss to *loss_sum. Sweeping
 * [0, k) and then [k, n_rows) visits the rows of one boar_gpu_epoch. */
int boar_gpu_sweep(boar_gpu_ctx *c, int epoch, uint64_t begin, uint64_t end,
		   double eta, double *loss_sum, boar_error *err);

/* Device weights for n keys (positions in w, distinct for set) from vals,
 * or into vals. n may be the whole model. Synchronous: on return the
 * device (set) or vals (get) holds the values. */
int boar_gpu_set_weights(boar_gpu_ctx *c, const uint32_t *keys,
			 const float *vals, uint64_t n, boar_error *err);
int boar_gpu_get_weights(boar_gpu_ctx *c, const uint32_t *keys, float *vals,
			 uint64_t n, boar_error *err);

/* Copies the device weights into m (same shape as at open). */
int boar_gpu_download(boar_gpu_ctx *c, struct boar_model *m, boar_error *err);

void boar_gpu_close(boar_gpu_ctx *c);

#ifdef __cplusplus
}
#endif
#endif
