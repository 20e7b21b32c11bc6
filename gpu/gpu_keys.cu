/* gpu_keys.cu - moving chosen weights between the host and the device model.
 *
 * A cluster worker trains a replica of the keys its next rows touch: before
 * a clock it writes the values it pulled from the servers into the device
 * model, after the clock it reads them back to compute the deltas it
 * pushes. Those keys are scattered over the whole model, so a copy per key
 * is out of the question; the key list and the values travel as two dense
 * arrays and a grid-stride kernel scatters (or gathers) them on the card.
 * With AdaGrad the model is (w, G) pairs (gpu_linear.cu, load_wg): only w
 * moves, at stride 2; the accumulators stay the worker's own, as the CPU
 * engine's do.
 */
#include <stdint.h>

#include "gpu_internal.h"

static __global__ void scatter_kernel(float *__restrict__ w, uint32_t stride,
				      const uint32_t *__restrict__ key,
				      const float *__restrict__ val, uint64_t n)
{
	uint64_t step = (uint64_t)gridDim.x * blockDim.x;
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
	     i += step)
		w[(uint64_t)stride * key[i]] = val[i];
}

static __global__ void gather_kernel(const float *__restrict__ w,
				     uint32_t stride,
				     const uint32_t *__restrict__ key,
				     float *__restrict__ val, uint64_t n)
{
	uint64_t step = (uint64_t)gridDim.x * blockDim.x;
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
	     i += step)
		val[i] = w[(uint64_t)stride * key[i]];
}

/* Enough blocks to cover n (one element a thread) up to 8 per SM; a
 * clock's key list is usually a few thousand keys, one or two blocks. */
static unsigned key_grid(uint64_t n, int sm_count)
{
	uint64_t blocks = (n + 255) / 256;
	if (blocks > (uint64_t)sm_count * 8)
		blocks = (uint64_t)sm_count * 8;
	return blocks ? (unsigned)blocks : 1;
}

cudaError_t gpu_scatter_weights(float *w, uint32_t stride, const uint32_t *key,
				const float *val, uint64_t n, int sm_count,
				cudaStream_t stream)
{
	if (!n)
		return cudaSuccess;
	scatter_kernel<<<key_grid(n, sm_count), 256, 0, stream>>>(w, stride, key,
								 val, n);
	return cudaGetLastError();
}

cudaError_t gpu_gather_weights(const float *w, uint32_t stride,
			       const uint32_t *key, float *val, uint64_t n,
			       int sm_count, cudaStream_t stream)
{
	if (!n)
		return cudaSuccess;
	gather_kernel<<<key_grid(n, sm_count), 256, 0, stream>>>(w, stride, key,
								val, n);
	return cudaGetLastError();
}
