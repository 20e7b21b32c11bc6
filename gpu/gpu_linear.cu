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
#include "gpu_sweep.h"

extern "C" {
#include "boar.h"
}
#include "math/loss.h"
#include "math/step.h"

/* Non-zeros per lane kept in registers: rows up to 64 non-zeros are read
 * once; longer rows re-read the rest (from L1/L2) in the update pass. */
#define LIN_CACHE 2

template <int LOSS, bool ADA, bool REG, bool ATOMIC, bool HOT>
__global__ void __launch_bounds__(LIN_BLOCK, LIN_MIN_BLOCKS)
linear_sweep(const struct gpu_linear_args a)
{
	extern __shared__ float4 smem4[];
	const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
	const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
	const uint64_t n_warps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
	const uint64_t n = a.perm.n, p_end = a.p_end;
	const struct coord_params cp = {a.eta, a.l1, a.l2, a.opt};
	const float alpha = 1.0f / ((float)gridDim.x * (float)a.concurrent);
	double loss_acc = 0.0;

	/* The replica: bias at slot K, hot features at 0..K-1. */
	struct hot_view h;
	const int K = HOT ? (int)a.n_hot : 0;
	float *unused;
	hot_setup<ADA>(&h, (float *)smem4, K, 1, 0, &unused, a.hot_ids, a.w,
		       a.dim);
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
		if (HOT)
			hot_rotate<ADA>(h, &rot, lane, a.hot_ids, a.w, a.dim,
					alpha);
		__syncwarp();
	}

	__syncthreads();
	/* Final flush of every slot; nobody reads the replica any more. */
	hot_flush<ADA>(h, a.hot_ids, a.w, a.dim, alpha);
	block_loss_add(loss_acc, a.loss_sum);
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

uint64_t gpu_linear_rows_in_flight(const struct gpu_linear_variant *v,
				   uint64_t n, uint32_t rows_per_block,
				   int sm_count)
{
	if (v->classes)
		return gpu_multiclass_rows_in_flight(v, n, rows_per_block,
						     sm_count);
	linear_kernel k = pick(v, 0);
	if (!k)
		return 1;
	return sweep_rows_in_flight(k, hot_smem_bytes(0, 1, 0), n,
				    rows_per_block, sm_count);
}

cudaError_t gpu_linear_launch(const struct gpu_linear_variant *v,
			      const struct gpu_linear_args *a, int sm_count,
			      cudaStream_t stream)
{
	if (v->classes)
		return gpu_multiclass_launch(v, a, sm_count, stream);
	if (a->n_hot > GPU_HOT_MAX)
		return cudaErrorInvalidValue;
	linear_kernel k = pick(v, a->n_hot > 0);
	if (!k)
		return cudaErrorInvalidValue;
	return sweep_launch(k, hot_smem_bytes(a->n_hot, 1, 0), a, sm_count,
			    stream);
}
