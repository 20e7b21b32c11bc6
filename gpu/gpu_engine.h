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

#include "boar.h"

#ifdef __cplusplus
extern "C" {
#endif

struct boar_dataset;
struct boar_model;
typedef struct boar_gpu_ctx boar_gpu_ctx;

/* Picks device o->gpu_id, uploads the model's initial values and (if it
 * fits) the whole training set, or prepares pinned chunks to stream on
 * o->streams streams. BOAR_ENODEVICE if there is no such device. */
int boar_gpu_open(const struct boar_dataset *train, const boar_options *o,
		  const struct boar_model *init, boar_gpu_ctx **out,
		  boar_error *err);

/* One Hogwild! pass over the training set in a fresh order drawn from
 * (o->seed, epoch). Adds the progressive training loss summed over rows to
 * *loss_sum. `eta` is this epoch's step size. */
int boar_gpu_epoch(boar_gpu_ctx *c, int epoch, double eta, double *loss_sum,
		   boar_error *err);

/* Copies the device weights into m (same shape as at open). */
int boar_gpu_download(boar_gpu_ctx *c, struct boar_model *m, boar_error *err);

void boar_gpu_close(boar_gpu_ctx *c);

#ifdef __cplusplus
}
#endif
#endif
