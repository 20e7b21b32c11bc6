/* gpu_linear.cu - the Hogwild! sweep of a sparse linear model, one warp a row.
 *
 * A persistent grid of warps walks a chunk's rows in the order of the
 * epoch's Feistel permutation (gpu_perm.h). A warp takes 32 positions at a
 * time: each lane evaluates the permutation for one of them and loads that
 * row's extent and label, so the 32 independent metadata loads are in
 * flight together; the warp then sweeps the 32 rows one after another,
 * broadcasting each row's extent with shuffles. For a row, lanes stride its
 * non-zeros (the first CACHE strides are kept in registers between the
 * margin and the update pass), the margin is summed with a butterfly
 * shuffle, every lane derives the same d, and each lane scatters its
 * coordinates' updates. On Hopper a fire-and-forget atomicAdd (RED) costs
 * about what a plain store does and loses nothing, so it is the default
 * update; `racy` stores w_read + delta instead (the original Hogwild! code).
 *
 * The bias is touched by every row: one contended address caps near 0.6 G
 * updates/s on an H100/H200, below what the rest of the sweep runs at. Each
 * warp therefore keeps its bias change for the 32 rows of a batch in a
 * register (adding it to the margins it computes, so the warp sees its own
 * updates) and flushes it with one atomicAdd per batch: 32x less traffic on
 * that address. The progressive loss is summed per warp in a double and
 * added to the global sum once per block.
 */
#include <stdint.h>

#include "gpu_internal.h"
#include "gpu_perm.h"

extern "C" {
#include "boar.h"
}

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

/* Loss and derivative d = dloss/dmargin for one row. */
template <int LOSS>
static __device__ __forceinline__ void row_loss(float m, float y, float *loss,
						float *d)
{
	if (LOSS == BOAR_LOSS_SQUARED) {
		float r = m - y;
		*loss = 0.5f * r * r;
		*d = r;
		return;
	}
	float s = y > 0.0f ? 1.0f : -1.0f;
	float z = s * m;
	if (LOSS == BOAR_LOSS_LOGISTIC) {
		/* log(1 + exp(-z)) without overflow for either sign of z. */
		*loss = z > 0.0f ? log1pf(expf(-z)) : log1pf(expf(z)) - z;
		*d = -s / (1.0f + expf(z));
	} else {
		*loss = fmaxf(0.0f, 1.0f - z);
		*d = z < 1.0f ? -s : 0.0f;
	}
}

/* The change to one coordinate: w is the value read for the margin, gv its
 * AdaGrad accumulator, rs its regularization scale. Writes the new
 * accumulator increment to *dG. Returns the delta to add to w. */
template <bool ADA, bool REG>
static __device__ __forceinline__ float coord_delta(float d, float x, float w,
						    float gv, float rs,
						    float eta, float l1,
						    float l2, float *dG)
{
	float g = d * x;
	float step = eta;
	if (ADA) {
		float gfull = REG ? g + l2 * rs * w : g;
		*dG = gfull * gfull;
		step = eta / (sqrtf(gv + *dG) + 1e-6f);
	}
	if (!REG)
		return -step * g;
	/* L2 as a shrink of w capped at 1, so L2 alone never flips a sign. */
	float shrink = fminf(1.0f, step * l2 * rs);
	float nw = w - shrink * w - step * g;
	if (l1 > 0.0f) {
		float t = fabsf(nw) - step * l1 * rs;
		nw = t > 0.0f ? copysignf(t, nw) : 0.0f;
	}
	return nw - w;
}

template <bool ADA, bool ATOMIC>
static __device__ __forceinline__ void coord_write(float *w, float *G,
						   uint32_t f, float wr,
						   float delta, float gv,
						   float dG)
{
	if (ATOMIC) {
		atomicAdd(w + f, delta);
		if (ADA)
			atomicAdd(G + f, dG);
	} else {
		__stcg(w + f, wr + delta);
		if (ADA)
			__stcg(G + f, gv + dG);
	}
}

template <int LOSS, bool ADA, bool REG, bool ATOMIC>
__global__ void __launch_bounds__(LIN_BLOCK, LIN_MIN_BLOCKS)
linear_sweep(const struct gpu_linear_args a)
{
	__shared__ double block_loss[LIN_WARPS_PER_BLOCK];
	const int lane = threadIdx.x & 31;
	const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
	const uint64_t n_warps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
	const uint64_t n = a.perm.n;
	float *const bias = a.w + a.dim;
	float *const Gbias = ADA ? a.G + a.dim : nullptr;
	const float eta = a.eta, l1 = a.l1, l2 = a.l2;
	double loss_acc = 0.0;

	for (uint64_t base = warp * 32; base < n; base += n_warps * 32) {
		uint64_t p = base + lane;
		uint64_t my_s = 0, my_e = 0;
		float my_y = 0.0f;
		if (p < n) {
			uint64_t row = gpu_perm_apply(p, n, a.perm.half,
						      a.perm.k[0], a.perm.k[1],
						      a.perm.k[2], a.perm.k[3]);
			my_s = __ldg(a.row_ptr + row) - a.nz_base;
			my_e = __ldg(a.row_ptr + row + 1) - a.nz_base;
			my_y = __ldg(a.label + row);
		}
		const int batch = n - base < 32 ? (int)(n - base) : 32;
		/* The bias as of this batch plus this warp's own pending change. */
		const float b_read = __ldcg(bias);
		const float gb_read = ADA ? __ldcg(Gbias) : 0.0f;
		float b_pend = 0.0f, gb_pend = 0.0f;

		for (int r = 0; r < batch; r++) {
			const uint64_t s = __shfl_sync(FULL_MASK, my_s, r);
			const uint64_t e = __shfl_sync(FULL_MASK, my_e, r);
			const float y = __shfl_sync(FULL_MASK, my_y, r);
			uint32_t f[LIN_CACHE];
			float x[LIN_CACHE], wv[LIN_CACHE], gv[LIN_CACHE],
				rs[LIN_CACHE];
			float m = 0.0f;
#pragma unroll
			for (int c = 0; c < LIN_CACHE; c++) {
				uint64_t j = s + lane + 32 * c;
				f[c] = 0;
				x[c] = wv[c] = gv[c] = rs[c] = 0.0f;
				if (j < e) {
					f[c] = __ldg(a.idx + j);
					x[c] = __ldg(a.val + j);
					wv[c] = __ldcg(a.w + f[c]);
					if (ADA)
						gv[c] = __ldcg(a.G + f[c]);
					if (REG)
						rs[c] = __ldg(a.reg_scale + f[c]);
					m += wv[c] * x[c];
				}
			}
			for (uint64_t j = s + lane + 32 * LIN_CACHE; j < e; j += 32)
				m += __ldcg(a.w + __ldg(a.idx + j)) * __ldg(a.val + j);
#pragma unroll
			for (int o = 16; o; o >>= 1)
				m += __shfl_xor_sync(FULL_MASK, m, o);
			m += b_read + b_pend;

			float loss, d;
			row_loss<LOSS>(m, y, &loss, &d);
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
						d, x[c], wv[c], gv[c], rs[c], eta,
						l1, l2, &dG);
					coord_write<ADA, ATOMIC>(a.w, a.G, f[c],
								 wv[c], delta,
								 gv[c], dG);
				}
			}
			for (uint64_t j = s + lane + 32 * LIN_CACHE; j < e; j += 32) {
				uint32_t fj = __ldg(a.idx + j);
				float xj = __ldg(a.val + j);
				float wj = (REG || !ATOMIC) ? __ldcg(a.w + fj) : 0.0f;
				float gj = ADA ? __ldcg(a.G + fj) : 0.0f;
				float rj = REG ? __ldg(a.reg_scale + fj) : 0.0f;
				float dG = 0.0f;
				float delta = coord_delta<ADA, REG>(
					d, xj, wj, gj, rj, eta, l1, l2, &dG);
				coord_write<ADA, ATOMIC>(a.w, a.G, fj, wj, delta,
							 gj, dG);
			}
			/* The bias is never regularized. */
			if (ADA) {
				gb_pend += d * d;
				b_pend -= eta / (sqrtf(gb_read + gb_pend) + 1e-6f) * d;
			} else {
				b_pend -= eta * d;
			}
		}
		/* Always atomic: a racy store here would drop every other warp's
		 * bias updates since b_read. */
		if (lane == 0) {
			if (b_pend != 0.0f)
				atomicAdd(bias, b_pend);
			if (ADA && gb_pend != 0.0f)
				atomicAdd(Gbias, gb_pend);
		}
	}

	if (lane == 0)
		block_loss[threadIdx.x >> 5] = loss_acc;
	__syncthreads();
	if (threadIdx.x == 0) {
		double t = 0.0;
		for (int i = 0; i < LIN_WARPS_PER_BLOCK; i++)
			t += block_loss[i];
		atomicAdd(a.loss_sum, t);
	}
}

typedef void (*linear_kernel)(const struct gpu_linear_args);

template <int LOSS, bool ADA, bool REG>
static linear_kernel pick_atomic(int atomic)
{
	return atomic ? linear_sweep<LOSS, ADA, REG, true>
		      : linear_sweep<LOSS, ADA, REG, false>;
}

template <int LOSS>
static linear_kernel pick_loss(const struct gpu_linear_variant *v)
{
	if (v->adagrad)
		return v->reg ? pick_atomic<LOSS, true, true>(v->atomic)
			      : pick_atomic<LOSS, true, false>(v->atomic);
	return v->reg ? pick_atomic<LOSS, false, true>(v->atomic)
		      : pick_atomic<LOSS, false, false>(v->atomic);
}

static linear_kernel pick(const struct gpu_linear_variant *v)
{
	switch (v->loss) {
	case BOAR_LOSS_HINGE:
		return pick_loss<BOAR_LOSS_HINGE>(v);
	case BOAR_LOSS_SQUARED:
		return pick_loss<BOAR_LOSS_SQUARED>(v);
	default:
		return pick_loss<BOAR_LOSS_LOGISTIC>(v);
	}
}

cudaError_t gpu_linear_launch(const struct gpu_linear_variant *v,
			      const struct gpu_linear_args *a, int sm_count,
			      cudaStream_t stream)
{
	linear_kernel k = pick(v);
	int per_sm = 0;
	cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
		&per_sm, k, LIN_BLOCK, 0);
	if (e != cudaSuccess)
		return e;
	if (per_sm < 1)
		per_sm = 1;
	/* A persistent grid: as many blocks as fit at once, fewer when the
	 * chunk has fewer 32-row batches than the grid has warps. */
	uint64_t batches = (a->perm.n + 31) / 32;
	uint64_t need = (batches + LIN_WARPS_PER_BLOCK - 1) / LIN_WARPS_PER_BLOCK;
	uint64_t blocks = (uint64_t)per_sm * sm_count;
	if (need < blocks)
		blocks = need;
	if (blocks < 1)
		blocks = 1;
	k<<<(unsigned)blocks, LIN_BLOCK, 0, stream>>>(*a);
	return cudaGetLastError();
}

/* Feature counts for the frequency-split regularizer. Contention on very
 * frequent features only costs here, once, at open. */
__global__ void count_kernel(const uint32_t *__restrict__ idx, uint64_t nnz,
			     uint32_t *count)
{
	uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
	for (uint64_t j = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	     j < nnz; j += stride)
		atomicAdd(count + __ldg(idx + j), 1u);
}

__global__ void scale_kernel(void *buf, uint64_t dim, float n_rows)
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
