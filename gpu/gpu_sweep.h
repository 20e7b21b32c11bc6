/* gpu_sweep.h - what the two linear sweeps share (device code, C++ only):
 * gpu_linear.cu (one margin a row) and gpu_multiclass.cu (K margins a
 * row). Both walk rows one warp a row over the same weights layout, step
 * coordinates with src/math/step.h, and keep a per-block replica of the
 * hot coordinates in shared memory (gpu_linear.cu's top comment tells
 * why): a coordinate's step, the (w, G) layout, and the replica's table,
 * setup, publication and final flush are here once.
 *
 * The replica holds `width` coordinates per slot: slot s < n_hot is hot
 * feature hot_ids[s], slot n_hot the bias; entry s * width + c is class
 * c's coordinate of that slot (width 1 for a binary model), coordinate
 * (id * width + c) of the weights.
 */
#ifndef BOAR_GPU_SWEEP_H
#define BOAR_GPU_SWEEP_H

#include <stdint.h>

#include "gpu_internal.h"
#include "gpu_perm.h"
#include "math/step.h"

#define LIN_WARPS_PER_BLOCK 8
#define LIN_BLOCK (32 * LIN_WARPS_PER_BLOCK)
/* Blocks per SM the register budget must allow (occupancy for latency
 * hiding); -DLIN_MIN_BLOCKS=N to try others. */
#ifndef LIN_MIN_BLOCKS
#define LIN_MIN_BLOCKS 1
#endif
#define FULL_MASK 0xffffffffu

/* The change to one coordinate: w is the value read for the margin, gv its
 * AdaGrad accumulator, rs its regularization scale. Writes the new
 * accumulator increment to *dG. Returns the delta to add to w. With REG,
 * L1 is applied too (its threshold is 0 when l1 is). */
template <bool ADA, bool REG>
static __device__ __forceinline__ float coord_delta(
	const struct coord_params &cp, float d, float x, float w, float gv,
	float rs, float *dG)
{
	float t;
	float delta = boar_coord_step(&cp, ADA, REG ? REG_L1 : REG_NONE, d * x,
				      w, gv, rs, dG, &t);
	if (!REG)
		return delta;
	return boar_soft_threshold(w + delta, t) - w;
}

/* Weights layout. SGD: w[f]. AdaGrad: (w, G) interleaved, w at 2f and its
 * accumulator at 2f + 1, so a coordinate is one 8-byte gather and one
 * float2 atomicAdd instead of two of each (the engine interleaves at upload
 * and separates at download). f is a coordinate: a feature of a binary
 * model, feature * K + class of a K-class one. */
template <bool ADA>
static __device__ __forceinline__ void load_wg(const float *w, uint64_t f,
					       float *wv, float *gv)
{
	if (ADA) {
		float2 v = __ldcg((const float2 *)(w + 2 * f));
		*wv = v.x;
		*gv = v.y;
	} else {
		*wv = __ldcg(w + f);
		*gv = 0.0f;
	}
}

template <bool ADA, bool ATOMIC>
static __device__ __forceinline__ void coord_write(float *w, uint64_t f,
						   float wr, float delta,
						   float gv, float dG)
{
	if (ATOMIC) {
		if (ADA)
			gpu_add2(w + 2 * f, delta, dG);
		else
			atomicAdd(w + f, delta);
	} else {
		if (ADA)
			__stcg((float2 *)(w + 2 * f), make_float2(wr + delta, gv + dG));
		else
			__stcg(w + f, wr + delta);
	}
}

#define HOT_EMPTY 0xffffffffu

/* The block's replica of the hot coordinates, in dynamic shared memory:
 * (n_hot + 1) * width entries of each array; keys/vals is the
 * feature id -> slot table. */
struct hot_view {
	float *base, *pend, *gbase, *gpend;
	uint32_t *keys;
	uint16_t *vals;
	uint32_t mask; /* table size - 1 */
	int n_hot;
	uint32_t width;
};

static __host__ __device__ uint32_t hot_table_size(uint32_t n_hot)
{
	uint32_t t = 1;
	while (t < 2 * n_hot)
		t <<= 1;
	return n_hot ? t : 0;
}

/* Dynamic shared memory of a sweep block: the replica's four arrays, then
 * `extra` floats of the kernel's own, then the table. */
static __host__ __device__ size_t hot_smem_bytes(uint32_t n_hot,
						 uint32_t width, size_t extra)
{
	uint32_t t = hot_table_size(n_hot);
	return (4 * (size_t)(n_hot + 1) * width + extra) * sizeof(float) +
	       t * sizeof(uint32_t) + t * sizeof(uint16_t);
}

/* The replica is read and written by all warps of the block at once, by
 * design (Hogwild! inside the block). Every access to it is an atomic, so
 * the race is a defined one and racecheck reports only races nobody
 * meant: a load is an atomicOr with 0, a store an atomicExch. */
static __device__ __forceinline__ float sh_ld(float *p)
{
	return __int_as_float(atomicOr((int *)p, 0));
}

static __device__ __forceinline__ void sh_st(float *p, float v)
{
	atomicExch(p, v);
}

/* The slot of feature f, or -1 when it is not hot. */
static __device__ __forceinline__ int hot_find(const struct hot_view &h,
					       uint32_t f)
{
	uint32_t p = gpu_perm_mix32(f) & h.mask;
	for (;;) {
		uint32_t k = h.keys[p];
		if (k == f)
			return h.vals[p];
		if (k == HOT_EMPTY)
			return -1;
		p = (p + 1) & h.mask;
	}
}

/* The weights coordinate of replica entry k. */
static __device__ __forceinline__ uint64_t hot_coord(const struct hot_view &h,
						     const uint32_t *hot_ids,
						     uint64_t dim, uint32_t k)
{
	uint32_t s = k / h.width, c = k % h.width;
	uint64_t id = (int)s < h.n_hot ? hot_ids[s] : dim;
	return id * h.width + c;
}

/* Lays the replica out over smem (extra floats of the kernel's own after
 * it, at *extra_at), loads it from the weights and fills the table. Ends
 * with __syncthreads. */
template <bool ADA>
static __device__ void hot_setup(struct hot_view *h, float *smem, int n_hot,
				 uint32_t width, size_t extra,
				 float **extra_at, const uint32_t *hot_ids,
				 const float *w, uint64_t dim)
{
	const uint32_t n = (uint32_t)(n_hot + 1) * width;
	h->base = smem;
	h->pend = smem + n;
	h->gbase = smem + 2 * n;
	h->gpend = smem + 3 * n;
	*extra_at = smem + 4 * n;
	h->keys = (uint32_t *)(smem + 4 * n + extra);
	uint32_t t = hot_table_size(n_hot);
	h->vals = (uint16_t *)(h->keys + t);
	h->mask = t ? t - 1 : 0;
	h->n_hot = n_hot;
	h->width = width;
	for (uint32_t i = threadIdx.x; i < t; i += blockDim.x)
		h->keys[i] = HOT_EMPTY;
	for (uint32_t k = threadIdx.x; k < n; k += blockDim.x) {
		load_wg<ADA>(w, hot_coord(*h, hot_ids, dim, k), h->base + k,
			     h->gbase + k);
		h->pend[k] = 0.0f;
		h->gpend[k] = 0.0f;
	}
	__syncthreads();
	for (int k = threadIdx.x; k < n_hot; k += blockDim.x) {
		uint32_t id = hot_ids[k], p = gpu_perm_mix32(id) & h->mask;
		while (atomicCAS(h->keys + p, HOT_EMPTY, id) != HOT_EMPTY)
			p = (p + 1) & h->mask;
		h->vals[p] = (uint16_t)k;
	}
	__syncthreads();
}

/* Publishes entry k's pending change (weights coordinate f) and reloads
 * its base. */
template <bool ADA>
static __device__ __forceinline__ void hot_sync(const struct hot_view &h,
						uint32_t k, uint64_t f, float *w,
						float alpha)
{
	float v = atomicExch(h.pend + k, 0.0f);
	float g = ADA ? atomicExch(h.gpend + k, 0.0f) : 0.0f;
	if (v != 0.0f || g != 0.0f)
		coord_write<ADA, true>(w, f, 0.0f, v * alpha, 0.0f, g);
	float wv, gv;
	load_wg<ADA>(w, f, &wv, &gv);
	sh_st(h.base + k, wv);
	if (ADA)
		sh_st(h.gbase + k, gv);
}

/* Publishes, after each batch of a warp's rows, 32 hot entries (of the
 * features, not the bias) in rotation: the block's warps start 32 apart
 * and advance by the block's 32 * LIN_WARPS_PER_BLOCK. */
template <bool ADA>
static __device__ __forceinline__ void hot_rotate(const struct hot_view &h,
						  uint32_t *rot, int lane,
						  const uint32_t *hot_ids,
						  float *w, uint64_t dim,
						  float alpha)
{
	uint32_t n = (uint32_t)h.n_hot * h.width;
	if (!n)
		return;
	uint32_t k = (*rot + lane) % n;
	hot_sync<ADA>(h, k, hot_coord(h, hot_ids, dim, k), w, alpha);
	*rot += 32 * LIN_WARPS_PER_BLOCK;
}

/* At the block's end (after __syncthreads: nobody reads the replica any
 * more), every entry's pending change to the weights. */
template <bool ADA>
static __device__ void hot_flush(const struct hot_view &h,
				 const uint32_t *hot_ids, float *w,
				 uint64_t dim, float alpha)
{
	const uint32_t n = (uint32_t)(h.n_hot + 1) * h.width;
	for (uint32_t k = threadIdx.x; k < n; k += blockDim.x) {
		float v = h.pend[k], g = ADA ? h.gpend[k] : 0.0f;
		if (v != 0.0f || g != 0.0f)
			coord_write<ADA, true>(w, hot_coord(h, hot_ids, dim, k),
					       0.0f, v * alpha, 0.0f, g);
	}
}

/* The block's progressive loss (each warp's lane 0 holds its warp's) added
 * to the sweep's once. */
static __device__ void block_loss_add(double warp_loss, double *loss_sum)
{
	__shared__ double block_loss[LIN_WARPS_PER_BLOCK];
	const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
	if (lane == 0)
		block_loss[wib] = warp_loss;
	__syncthreads();
	if (threadIdx.x == 0) {
		double t = 0.0;
		for (int i = 0; i < LIN_WARPS_PER_BLOCK; i++)
			t += block_loss[i];
		atomicAdd(loss_sum, t);
	}
}

/* Blocks for a sweep of n rows by kernel k with smem bytes of dynamic
 * shared memory: as many as fit at once (a persistent grid), but no fewer
 * than GPU_ROWS_PER_BLOCK rows (or rows_per_block) each. */
template <typename Kernel>
static uint64_t sweep_blocks(Kernel k, size_t smem, uint64_t n,
			     uint32_t rows_per_block, int sm_count,
			     cudaError_t *err)
{
	int per_sm = 0;
	*err = cudaSuccess;
	if (smem > 48 * 1024)
		*err = cudaFuncSetAttribute(
			k, cudaFuncAttributeMaxDynamicSharedMemorySize,
			(int)smem);
	if (*err == cudaSuccess)
		*err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
			&per_sm, k, LIN_BLOCK, smem);
	if (per_sm < 1)
		per_sm = 1;
	uint64_t blocks = (uint64_t)per_sm * sm_count;
	uint64_t rpb = rows_per_block ? rows_per_block : GPU_ROWS_PER_BLOCK;
	uint64_t need = (n + rpb - 1) / rpb;
	if (need < blocks)
		blocks = need;
	return blocks < 1 ? 1 : blocks;
}

/* Rows such a sweep keeps in flight (one per warp); errors are left for
 * the launch to report. */
template <typename Kernel>
static uint64_t sweep_rows_in_flight(Kernel k, size_t smem, uint64_t n,
				     uint32_t rows_per_block, int sm_count)
{
	cudaError_t e;
	uint64_t b = sweep_blocks(k, smem, n, rows_per_block, sm_count, &e);
	(void)cudaGetLastError();
	return b * LIN_WARPS_PER_BLOCK;
}

/* Launches kernel k over positions [p_begin, p_end) of a's chunk. */
template <typename Kernel>
static cudaError_t sweep_launch(Kernel k, size_t smem,
				const struct gpu_linear_args *a, int sm_count,
				cudaStream_t stream)
{
	if (a->p_end > a->perm.n || a->p_begin > a->p_end)
		return cudaErrorInvalidValue;
	if (a->p_begin == a->p_end)
		return cudaSuccess;
	cudaError_t e;
	uint64_t blocks = sweep_blocks(k, smem, a->p_end - a->p_begin,
				       a->rows_per_block, sm_count, &e);
	if (e != cudaSuccess)
		return e;
	k<<<(unsigned)blocks, LIN_BLOCK, smem, stream>>>(*a);
	return cudaGetLastError();
}

#endif
