/* gpu_features.cu - per-feature preparation of the linear model on the device.
 *
 * Run at open (and at download): feature counts over the data, turned into
 * the frequency-split regularization scale n_rows / count_j; the choice of
 * the hot features that the sweep replicates per block (gpu_linear.cu);
 * and the AdaGrad layout, weights interleaved with their accumulators.
 * Each is a plain grid-stride kernel plus a host launcher that reports the
 * launch error; contention (many rows counting one frequent feature) costs
 * only here, once.
 */
#include <stdint.h>

#include "gpu_internal.h"

/* Hot-feature selection: a histogram of log2(count) over the features that
 * reach the threshold, then the ids of whole buckets from the top down
 * while they fit, and of the boundary bucket until max_hot are picked. */
static __global__ void hot_hist_kernel(const uint32_t *__restrict__ count,
				uint64_t dim, uint32_t thr, uint32_t *hist)
{
	__shared__ uint32_t sh[32];
	if (threadIdx.x < 32)
		sh[threadIdx.x] = 0;
	__syncthreads();
	uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
	for (uint64_t j = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	     j < dim; j += stride) {
		uint32_t c = count[j];
		if (c && c >= thr)
			atomicAdd(sh + (31 - __clz(c)), 1u);
	}
	__syncthreads();
	if (threadIdx.x < 32 && sh[threadIdx.x])
		atomicAdd(hist + threadIdx.x, sh[threadIdx.x]);
}

static __global__ void hot_pick_kernel(const uint32_t *__restrict__ count,
				uint64_t dim, uint32_t thr, int bstar,
				int boundary, uint32_t max_hot, uint32_t *out,
				uint32_t *n_out)
{
	uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
	for (uint64_t j = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	     j < dim; j += stride) {
		uint32_t c = count[j];
		if (!c || c < thr)
			continue;
		int b = 31 - __clz(c);
		if (boundary ? b != bstar : b <= bstar)
			continue;
		uint32_t i = atomicAdd(n_out, 1u);
		if (i < max_hot)
			out[i] = (uint32_t)j;
	}
}

cudaError_t gpu_pick_hot(const uint32_t *count, uint64_t dim, uint32_t thr,
			 uint32_t max_hot, uint32_t *hot, uint32_t *n_hot,
			 int sm_count, cudaStream_t stream)
{
	uint32_t *buf = NULL, hist[32], n = 0;
	cudaError_t e;
	uint64_t blocks = (dim + 255) / 256;
	if (blocks > (uint64_t)sm_count * 8)
		blocks = (uint64_t)sm_count * 8;
	if (blocks < 1)
		blocks = 1;
	*n_hot = 0;
	if (max_hot > GPU_HOT_MAX)
		max_hot = GPU_HOT_MAX;
	if ((e = cudaMalloc(&buf, 33 * sizeof(uint32_t))) != cudaSuccess)
		return e;
	if ((e = cudaMemsetAsync(buf, 0, 33 * sizeof(uint32_t), stream)))
		goto out;
	hot_hist_kernel<<<(unsigned)blocks, 256, 0, stream>>>(count, dim, thr, buf);
	if ((e = cudaGetLastError()))
		goto out;
	if ((e = cudaMemcpyAsync(hist, buf, sizeof hist, cudaMemcpyDeviceToHost,
				 stream)))
		goto out;
	if ((e = cudaStreamSynchronize(stream)))
		goto out;
	{
		/* bstar: the highest bucket that no longer fits whole. */
		int bstar = -1;
		uint32_t acc = 0;
		for (int b = 31; b >= 0; b--) {
			if (acc + hist[b] > max_hot) {
				bstar = b;
				break;
			}
			acc += hist[b];
		}
		hot_pick_kernel<<<(unsigned)blocks, 256, 0, stream>>>(
			count, dim, thr, bstar, 0, max_hot, hot, buf + 32);
		if ((e = cudaGetLastError()))
			goto out;
		if (bstar >= 0) {
			hot_pick_kernel<<<(unsigned)blocks, 256, 0, stream>>>(
				count, dim, thr, bstar, 1, max_hot, hot,
				buf + 32);
			if ((e = cudaGetLastError()))
				goto out;
		}
		if ((e = cudaMemcpyAsync(&n, buf + 32, sizeof n,
					 cudaMemcpyDeviceToHost, stream)))
			goto out;
		if ((e = cudaStreamSynchronize(stream)))
			goto out;
		*n_hot = n < max_hot ? n : max_hot;
	}
out:
	cudaFree(buf);
	return e;
}

static __global__ void interleave_kernel(float *wg, const float *w, uint64_t n)
{
	uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
	     i += stride)
		((float2 *)wg)[i] = make_float2(w[i], 0.0f);
}

static __global__ void deinterleave_kernel(float *w, const float *wg, uint64_t n)
{
	uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
	     i += stride)
		w[i] = wg[2 * i];
}

static unsigned small_grid(uint64_t n, int sm_count)
{
	uint64_t blocks = (n + 255) / 256;
	if (blocks > (uint64_t)sm_count * 8)
		blocks = (uint64_t)sm_count * 8;
	return blocks ? (unsigned)blocks : 1;
}

cudaError_t gpu_interleave(float *wg, const float *w, uint64_t n, int sm_count,
			   cudaStream_t stream)
{
	interleave_kernel<<<small_grid(n, sm_count), 256, 0, stream>>>(wg, w, n);
	return cudaGetLastError();
}

cudaError_t gpu_deinterleave(float *w, const float *wg, uint64_t n,
			     int sm_count, cudaStream_t stream)
{
	deinterleave_kernel<<<small_grid(n, sm_count), 256, 0, stream>>>(w, wg, n);
	return cudaGetLastError();
}

/* Feature counts for the frequency-split regularizer. Contention on very
 * frequent features only costs here, once, at open. */
static __global__ void count_kernel(const uint32_t *__restrict__ idx, uint64_t nnz,
			     uint32_t *count)
{
	uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
	for (uint64_t j = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	     j < nnz; j += stride)
		atomicAdd(count + __ldg(idx + j), 1u);
}

static __global__ void scale_kernel(void *buf, uint64_t dim, float n_rows)
{
	uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
	for (uint64_t j = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	     j < dim; j += stride) {
		uint32_t c = ((const uint32_t *)buf)[j];
		((float *)buf)[j] = c ? n_rows / (float)c : 0.0f;
	}
}

cudaError_t gpu_count_features(const uint32_t *idx, uint64_t nnz,
			       uint32_t *count, int sm_count,
			       cudaStream_t stream)
{
	if (!nnz)
		return cudaSuccess;
	uint64_t blocks = (nnz + 255) / 256;
	if (blocks > (uint64_t)sm_count * 8)
		blocks = (uint64_t)sm_count * 8;
	count_kernel<<<(unsigned)blocks, 256, 0, stream>>>(idx, nnz, count);
	return cudaGetLastError();
}

cudaError_t gpu_counts_to_scale(void *buf, uint64_t dim, uint64_t n_rows,
				int sm_count, cudaStream_t stream)
{
	if (!dim)
		return cudaSuccess;
	uint64_t blocks = (dim + 255) / 256;
	if (blocks > (uint64_t)sm_count * 8)
		blocks = (uint64_t)sm_count * 8;
	scale_kernel<<<(unsigned)blocks, 256, 0, stream>>>(buf, dim,
							  (float)n_rows);
	return cudaGetLastError();
}
