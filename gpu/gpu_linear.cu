/* gpu_linear.cu - the Hogwild! sweep of a sparse linear model, one warp a row.
 *
 * A persistent grid of warps walks a chunk's rows in the order of the
 * epoch's Feistel permutation (gpu_perm.h), all of its positions or a slice
 * [p_begin, p_end) of them (a cluster worker's clock). A warp takes 32 positions at a
 * time: each lane evaluates the permutation for one of them and loads that
 * row's extent and label, so the 32 independent metadata loads are in
 * flight together; the warp then sweeps the 32 rows one after another,
 * broadcasting each row's extent with shuffles. For a row, lanes stride its
 * non-zeros (the first LIN_CACHE strides stay in registers between the
 * margin and the update pass), the margin is summed with a butterfly
 * shuffle, every lane derives the same d, and each lane scatters its
 * coordinates' updates. On Hopper a fire-and-forget atomicAdd (RED) costs
 * about what a plain store does and loses nothing; `racy` stores
 * w_read + delta instead (the original Hogwild! code).
 *
 * Hot coordinates. Thousands of warps are in flight, so a coordinate that a
 * fraction p of the rows touch sees about p * warps updates computed from
 * the same stale value: in effect one step of eta * p * warps, which
 * diverges for the bias (p = 1) and for very frequent features, and one
 * contended address caps near 0.6 G updates/s besides. So the bias and the
 * GPU_HOT_MAX most frequent features (picked at open from the feature
 * counts, only those frequent enough to matter) get a replica per block in
 * shared memory: the block's 8 warps read base + pending and add their
 * deltas to `pending` with shared-memory atomics (staleness of at most 8
 * rows, like a few CPU threads). After each 32-row batch a warp syncs the
 * bias and a rotating slice of the hot slots: it moves the slot's pending
 * change to the global value scaled by 1 / blocks (the blocks of every
 * sweep that may run at once, on all streams: the replicas are averaged, so
 * the global value takes one stable step per round instead of one step per
 * block) and reloads the base. AdaGrad sums of squared
 * gradients are added unscaled: they count every row, as on the CPU. One
 * global atomic per slot per sync instead of one per row also removes the
 * hot-address cap. Lookups go through a small open-addressing table in
 * shared memory, and only when hot features exist (a template flag): data
 * with no frequent feature pays nothing for it.
 *
 * The progressive loss is summed per warp in a double and added to the
 * global sum once per block.
 *
 * The math of a row (loss, derivative) and of a coordinate's step is
 * src/math/'s, the same functions the CPU sweeps call; the loss is a
 * template constant, so each kernel holds only its own loss's code.
 */
#include <stdint.h>

#include "gpu_internal.h"
#include "gpu_perm.h"

extern "C" {
#include "boar.h"
}
#include "math/loss.h"
#include "math/step.h"

#define LIN_WARPS_PER_BLOCK 8
#define LIN_BLOCK (32 * LIN_WARPS_PER_BLOCK)
/* Blocks per SM the register budget must allow (occupancy for latency
 * hiding); -DLIN_MIN_BLOCKS=N to try others. */
#ifndef LIN_MIN_BLOCKS
#define LIN_MIN_BLOCKS 1
#endif
/* Non-zeros per lane kept in registers: rows up to 64 non-zeros are read
 * once; longer rows re-read the rest (from L1/L2) in the update pass. */
#define LIN_CACHE 2
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
 * and separates at download). */
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
 * K hot slots and the bias at slot K; keys/vals is the id -> slot table. */
struct hot_view {
	float *base, *pend, *gbase, *gpend;
	uint32_t *keys;
	uint16_t *vals;
	uint32_t mask; /* table size - 1 */
	int K;
};

static __host__ __device__ uint32_t hot_table_size(uint32_t K)
{
	uint32_t t = 1;
	while (t < 2 * K)
		t <<= 1;
	return K ? t : 0;
}

static __host__ __device__ size_t hot_smem_bytes(uint32_t K)
{
	uint32_t t = hot_table_size(K);
	return 4 * (size_t)(K + 1) * sizeof(float) + t * sizeof(uint32_t) +
	       t * sizeof(uint16_t);
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

/* Publishes slot k's pending change (coordinate f) and reloads its base. */
template <bool ADA>
static __device__ __forceinline__ void hot_sync(const struct hot_view &h,
						int k, uint64_t f, float *w,
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

template <int LOSS, bool ADA, bool REG, bool ATOMIC, bool HOT>
__global__ void __launch_bounds__(LIN_BLOCK, LIN_MIN_BLOCKS)
linear_sweep(const struct gpu_linear_args a)
{
	extern __shared__ float4 smem4[];
	__shared__ double block_loss[LIN_WARPS_PER_BLOCK];
	const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
	const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
	const uint64_t n_warps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
	const uint64_t n = a.perm.n, p_end = a.p_end;
	const struct coord_params cp = {a.eta, a.l1, a.l2, a.opt};
	const float alpha = 1.0f / ((float)gridDim.x * (float)a.concurrent);
	double loss_acc = 0.0;

	/* Set up the replica: bias at slot K, hot features at 0..K-1. */
	struct hot_view h;
	const int K = HOT ? (int)a.n_hot : 0;
	{
		float *f = (float *)smem4;
		h.base = f;
		h.pend = f + (K + 1);
		h.gbase = f + 2 * (K + 1);
		h.gpend = f + 3 * (K + 1);
		h.keys = (uint32_t *)(f + 4 * (K + 1));
		uint32_t t = hot_table_size(K);
		h.vals = (uint16_t *)(h.keys + t);
		h.mask = t ? t - 1 : 0;
		h.K = K;
		for (uint32_t i = threadIdx.x; i < t; i += blockDim.x)
			h.keys[i] = HOT_EMPTY;
		for (int k = threadIdx.x; k <= K; k += blockDim.x) {
			uint64_t id = k < K ? a.hot_ids[k] : a.dim;
			load_wg<ADA>(a.w, id, h.base + k, h.gbase + k);
			h.pend[k] = 0.0f;
			h.gpend[k] = 0.0f;
		}
		__syncthreads();
		for (int k = threadIdx.x; k < K; k += blockDim.x) {
			uint32_t id = a.hot_ids[k], p = gpu_perm_mix32(id) & h.mask;
			while (atomicCAS(h.keys + p, HOT_EMPTY, id) != HOT_EMPTY)
				p = (p + 1) & h.mask;
			h.vals[p] = (uint16_t)k;
		}
		__syncthreads();
	}
	uint32_t rot = wib * 32;

	for (uint64_t base = a.p_begin + warp * 32; base < p_end;
	     base += n_warps * 32) {
		uint64_t p = base + lane;
		uint64_t my_s = 0, my_e = 0;
		float my_y = 0.0f, my_rw = 1.0f;
		if (p < p_end) {
			uint64_t row = gpu_perm_apply(p, n, a.perm.half,
						      a.perm.k[0], a.perm.k[1],
						      a.perm.k[2], a.perm.k[3]);
			my_s = __ldg(a.row_ptr + row) - a.nz_base;
			my_e = __ldg(a.row_ptr + row + 1) - a.nz_base;
			my_y = __ldg(a.label + row);
			if (a.row_weight)
				my_rw = __ldg(a.row_weight + row);
		}
		const int batch = p_end - base < 32 ? (int)(p_end - base) : 32;

		for (int r = 0; r < batch; r++) {
			const uint64_t s = __shfl_sync(FULL_MASK, my_s, r);
			const uint64_t e = __shfl_sync(FULL_MASK, my_e, r);
			const float y = __shfl_sync(FULL_MASK, my_y, r);
			const float rw = __shfl_sync(FULL_MASK, my_rw, r);
			uint32_t f[LIN_CACHE];
			int sl[LIN_CACHE];
			float x[LIN_CACHE], wv[LIN_CACHE], gv[LIN_CACHE],
				rs[LIN_CACHE];
			float m = 0.0f;
#pragma unroll
			for (int c = 0; c < LIN_CACHE; c++) {
				uint64_t j = s + lane + 32 * c;
				f[c] = 0;
				sl[c] = -1;
				x[c] = wv[c] = gv[c] = rs[c] = 0.0f;
				if (j < e) {
					f[c] = __ldg(a.idx + j);
					x[c] = __ldg(a.val + j);
					if (HOT)
						sl[c] = hot_find(h, f[c]);
					if (sl[c] >= 0) {
						wv[c] = sh_ld(h.base + sl[c]) +
							sh_ld(h.pend + sl[c]);
						if (ADA)
							gv[c] = sh_ld(h.gbase + sl[c]) +
								sh_ld(h.gpend + sl[c]);
					} else {
						load_wg<ADA>(a.w, f[c], wv + c,
							     gv + c);
					}
					if (REG)
						rs[c] = __ldg(a.reg_scale + f[c]);
					m += wv[c] * x[c];
				}
			}
			for (uint64_t j = s + lane + 32 * LIN_CACHE; j < e; j += 32) {
				uint32_t fj = __ldg(a.idx + j);
				int k = HOT ? hot_find(h, fj) : -1;
				uint64_t at = ADA ? 2 * (uint64_t)fj : fj;
				float wj = k >= 0 ? sh_ld(h.base + k) + sh_ld(h.pend + k)
						  : __ldcg(a.w + at);
				m += wj * __ldg(a.val + j);
			}
#pragma unroll
			for (int o = 16; o; o >>= 1)
				m += __shfl_xor_sync(FULL_MASK, m, o);
			{
				/* One lane reads the replicated bias for all. */
				float b = 0.0f;
				if (lane == 0)
					b = sh_ld(h.base + K) + sh_ld(h.pend + K);
				m += __shfl_sync(FULL_MASK, b, 0);
			}

			/* the row's weight scales its loss and its
			 * derivative, as on the CPU (sweep_linear.c) */
			float d;
			float loss = rw * boar_loss_eval(LOSS, m,
							 boar_loss_target(LOSS, y),
							 a.loss_param, &d);
			d *= rw;
			if (lane == 0)
				loss_acc += loss;
			/* Hinge rows inside the margin have no gradient; with
			 * regularization their coordinates still shrink. */
			if (!REG && d == 0.0f)
				continue;
#pragma unroll
			for (int c = 0; c < LIN_CACHE; c++) {
				uint64_t j = s + lane + 32 * c;
				if (j < e) {
					float dG = 0.0f;
					float delta = coord_delta<ADA, REG>(
						cp, d, x[c], wv[c], gv[c], rs[c],
						&dG);
					if (sl[c] >= 0) {
						atomicAdd(h.pend + sl[c], delta);
						if (ADA)
							atomicAdd(h.gpend + sl[c], dG);
					} else {
						coord_write<ADA, ATOMIC>(
							a.w, f[c], wv[c],
							delta, gv[c], dG);
					}
				}
			}
			for (uint64_t j = s + lane + 32 * LIN_CACHE; j < e; j += 32) {
				uint32_t fj = __ldg(a.idx + j);
				float xj = __ldg(a.val + j);
				int k = HOT ? hot_find(h, fj) : -1;
				float wj, gj = 0.0f;
				if (k >= 0) {
					wj = sh_ld(h.base + k) + sh_ld(h.pend + k);
					if (ADA)
						gj = sh_ld(h.gbase + k) +
						     sh_ld(h.gpend + k);
				} else {
					if (ADA || REG || !ATOMIC)
						load_wg<ADA>(a.w, fj, &wj, &gj);
					else
						wj = 0.0f;
				}
				float rj = REG ? __ldg(a.reg_scale + fj) : 0.0f;
				float dG = 0.0f;
				float delta = coord_delta<ADA, REG>(
					cp, d, xj, wj, gj, rj, &dG);
				if (k >= 0) {
					atomicAdd(h.pend + k, delta);
					if (ADA)
						atomicAdd(h.gpend + k, dG);
				} else {
					coord_write<ADA, ATOMIC>(a.w, fj, wj,
								 delta, gj, dG);
				}
			}
			/* The bias: never regularized. */
			if (lane == 0) {
				float gb = ADA ? sh_ld(h.gbase + K) +
							 sh_ld(h.gpend + K)
					       : 0.0f;
				float dgb = 0.0f;
				float db = coord_delta<ADA, false>(
					cp, d, 1.0f, 0.0f, gb, 0.0f, &dgb);
				if (ADA)
					atomicAdd(h.gpend + K, dgb);
				atomicAdd(h.pend + K, db);
			}
		}
		/* Publish: the bias, and 32 hot slots in rotation. */
		if (lane == 0)
			hot_sync<ADA>(h, K, a.dim, a.w, alpha);
		if (HOT && K > 0) {
			int k = (int)((rot + lane) % (uint32_t)(K > 0 ? K : 1));
			hot_sync<ADA>(h, k, a.hot_ids[k], a.w, alpha);
			rot += 32 * LIN_WARPS_PER_BLOCK;
		}
		__syncwarp();
	}

	__syncthreads();
	/* Final flush of every slot; nobody reads the replica any more. */
	for (int k = threadIdx.x; k <= K; k += blockDim.x) {
		uint64_t id = k < K ? a.hot_ids[k] : a.dim;
		float v = h.pend[k], g = ADA ? h.gpend[k] : 0.0f;
		if (v != 0.0f || g != 0.0f)
			coord_write<ADA, true>(a.w, id, 0.0f, v * alpha, 0.0f, g);
	}
	if (lane == 0)
		block_loss[wib] = loss_acc;
	__syncthreads();
	if (threadIdx.x == 0) {
		double t = 0.0;
		for (int i = 0; i < LIN_WARPS_PER_BLOCK; i++)
			t += block_loss[i];
		atomicAdd(a.loss_sum, t);
	}
}

typedef void (*linear_kernel)(const struct gpu_linear_args);

template <int LOSS, bool ADA, bool REG, bool HOT>
static linear_kernel pick_atomic(int atomic)
{
	return atomic ? linear_sweep<LOSS, ADA, REG, true, HOT>
		      : linear_sweep<LOSS, ADA, REG, false, HOT>;
}

template <int LOSS, bool HOT>
static linear_kernel pick_opt(const struct gpu_linear_variant *v)
{
	if (v->adagrad)
		return v->reg ? pick_atomic<LOSS, true, true, HOT>(v->atomic)
			      : pick_atomic<LOSS, true, false, HOT>(v->atomic);
	return v->reg ? pick_atomic<LOSS, false, true, HOT>(v->atomic)
		      : pick_atomic<LOSS, false, false, HOT>(v->atomic);
}

/* Kernels for every loss of BOAR_LOSS_MAP but the multinomial ones (a
 * binary sweep has one margin a row); NULL for those. */
template <int LOSS, int KIND>
static linear_kernel pick_loss(const struct gpu_linear_variant *v, int hot)
{
	if constexpr (KIND == BOAR_LOSS_KIND_MULTINOMIAL)
		return NULL;
	else
		return hot ? pick_opt<LOSS, true>(v) : pick_opt<LOSS, false>(v);
}

static linear_kernel pick(const struct gpu_linear_variant *v, int hot)
{
	switch (v->loss) {
#define PICK_LOSS(N, code, name, kind, prob, param, dflt, help) \
	case BOAR_LOSS_##N:                                      \
		return pick_loss<BOAR_LOSS_##N, BOAR_LOSS_KIND_##kind>(v, hot);
		BOAR_LOSS_MAP(PICK_LOSS)
#undef PICK_LOSS
	}
	return NULL;
}

/* Blocks for a sweep of n rows: as many as fit at once (a persistent
 * grid), but no fewer than GPU_ROWS_PER_BLOCK rows each. */
static uint64_t grid_blocks(linear_kernel k, size_t smem, uint64_t n,
			    uint32_t rows_per_block, int sm_count,
			    cudaError_t *err)
{
	int per_sm = 0;
	*err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k,
							     LIN_BLOCK, smem);
	if (per_sm < 1)
		per_sm = 1;
	uint64_t blocks = (uint64_t)per_sm * sm_count;
	uint64_t rpb = rows_per_block ? rows_per_block : GPU_ROWS_PER_BLOCK;
	uint64_t need = (n + rpb - 1) / rpb;
	if (need < blocks)
		blocks = need;
	return blocks < 1 ? 1 : blocks;
}

uint64_t gpu_linear_rows_in_flight(const struct gpu_linear_variant *v,
				   uint64_t n, uint32_t rows_per_block,
				   int sm_count)
{
	cudaError_t e;
	linear_kernel k = pick(v, 0);
	if (!k)
		return 1;
	uint64_t b = grid_blocks(k, hot_smem_bytes(0), n,
				 rows_per_block, sm_count, &e);
	(void)cudaGetLastError();
	return b * LIN_WARPS_PER_BLOCK;
}

cudaError_t gpu_linear_launch(const struct gpu_linear_variant *v,
			      const struct gpu_linear_args *a, int sm_count,
			      cudaStream_t stream)
{
	int hot = a->n_hot > 0;
	if (a->n_hot > GPU_HOT_MAX)
		return cudaErrorInvalidValue;
	linear_kernel k = pick(v, hot);
	if (!k)
		return cudaErrorInvalidValue;
	size_t smem = hot_smem_bytes(a->n_hot);
	cudaError_t e = cudaSuccess;
	if (smem > 48 * 1024) {
		e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
					 (int)smem);
		if (e != cudaSuccess)
			return e;
	}
	if (a->p_end > a->perm.n || a->p_begin > a->p_end)
		return cudaErrorInvalidValue;
	if (a->p_begin == a->p_end)
		return cudaSuccess;
	uint64_t blocks = grid_blocks(k, smem, a->p_end - a->p_begin,
				      a->rows_per_block, sm_count, &e);
	if (e != cudaSuccess)
		return e;
	k<<<(unsigned)blocks, LIN_BLOCK, smem, stream>>>(*a);
	return cudaGetLastError();
}
