/* gpu_stub.c - the GPU engine's C API in a build without CUDA.
 *
 * libboar itself never links the GPU engine: it opens the plugin
 * libboar-gpu.so at device GPU and answers BOAR_ENOGPU when there is none
 * (src/engine/engine_gpu.c). The unit tests of the engine call its C API
 * directly; in a build without nvcc (or CUDA=0) they link this stub, whose
 * every call answers BOAR_ENOGPU, and skip.
 */
#include <stddef.h>

#include "base/error.h"
#include "gpu/gpu_engine.h"

#define NOGPU_MSG \
	"this build has no GPU support; rebuild with nvcc available / CUDA=1"

int boar_gpu_open(const struct boar_dataset *train, const boar_options *o,
		  const struct boar_model *init, boar_gpu_ctx **out,
		  boar_error *err)
{
	return boar_fail(err, BOAR_ENOGPU, NOGPU_MSG);
}

int boar_gpu_epoch(boar_gpu_ctx *c, int epoch, double eta, double *loss_sum,
		   boar_error *err)
{
	return boar_fail(err, BOAR_ENOGPU, NOGPU_MSG);
}

int boar_gpu_order(boar_gpu_ctx *c, int epoch, const uint32_t **order,
		   boar_error *err)
{
	return boar_fail(err, BOAR_ENOGPU, NOGPU_MSG);
}

int boar_gpu_sweep(boar_gpu_ctx *c, int epoch, uint64_t begin, uint64_t end,
		   double eta, double *loss_sum, boar_error *err)
{
	return boar_fail(err, BOAR_ENOGPU, NOGPU_MSG);
}

int boar_gpu_set_weights(boar_gpu_ctx *c, const uint32_t *keys,
			 const float *vals, uint64_t n, boar_error *err)
{
	return boar_fail(err, BOAR_ENOGPU, NOGPU_MSG);
}

int boar_gpu_get_weights(boar_gpu_ctx *c, const uint32_t *keys, float *vals,
			 uint64_t n, boar_error *err)
{
	return boar_fail(err, BOAR_ENOGPU, NOGPU_MSG);
}

int boar_gpu_download(boar_gpu_ctx *c, struct boar_model *m, boar_error *err)
{
	return boar_fail(err, BOAR_ENOGPU, NOGPU_MSG);
}

void boar_gpu_warm(int device)
{
	(void)device;
}

void boar_gpu_close(boar_gpu_ctx *c)
{
}
