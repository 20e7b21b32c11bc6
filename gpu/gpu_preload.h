/* gpu_preload.h - the training rows' non-zeros copied to the card while the
 * file is parsed (gpu_preload.cu), and how the engine takes that copy
 * (C++, inside the plugin only).
 */
#ifndef BOAR_GPU_PRELOAD_H
#define BOAR_GPU_PRELOAD_H

#include <stdint.h>

extern "C" {
#include "data/dataset.h"
#include "engine/engine_ops.h"
}

/* The plugin's boar_gpu_preload_ops (gpu_ops.c exports them). */
extern "C" const struct boar_gpu_preload_ops gpu_preload_ops;

/* Device bytes of idx and val that gpu_preload_take would hand over for d
 * on device (0: none; pre is boar_options.gpu_preload, NULL or not). */
uint64_t gpu_preload_bytes(const void *pre, const struct boar_dataset *d,
			   int device);

/* When pre holds d's non-zeros on device: *idx and *val become the
 * caller's (cudaFree them) and 1 is returned; else 0 and nothing moves. */
int gpu_preload_take(const void *pre, const struct boar_dataset *d,
		     int device, uint32_t **idx, float **val);

#endif
