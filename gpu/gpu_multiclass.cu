/* gpu_multiclass.cu - the Hogwild! sweep of a K-class linear model (softmax,
 * or one-vs-rest logistic or hinge), one warp a row.
 *
 * The walk is gpu_linear.cu's: a persistent grid of warps takes 32
 * positions of the epoch's Feistel permutation at a time, each lane loads
 * one row's extent, label and weight, and the warp sweeps the 32 rows one
 * after another. What differs is the row: K margins, and K coordinates per
 * non-zero (the model is feature-major, w[j K + c], so a feature's K
 * weights are contiguous, as on the CPU). The warp is cut into groups of W
 * lanes, W the power of two at or above K (at most 32): lane c of a group
 * takes class c, and the 32 / W groups take different non-zeros, so a
 * small K still keeps every lane busy (K = 10: two non-zeros at a time,
 * 16-lane groups) and the K weights of a feature are one coalesced load.
 * Beyond 32 classes the lanes walk the classes 32 at a time. A row takes
 * three passes:
 *  1. margins: each lane sums w[j K + c] x_j over its group's non-zeros,
 *     the groups' sums meet by butterfly shuffles, and the K margins (plus
 *     the biases) go to the warp's K floats of shared memory;
 *  2. the row's loss and derivatives, with the classes spread over the
 *     lanes: softmax's normalizer (the largest margin and the sum of
 *     boar_softmax_term) by warp reductions, then each class's share of
 *     the loss and its derivative by boar_multiclass_class, the shares
 *     summed into boar_multiclass_total - src/math/loss.h's functions,
 *     the ones the CPU sweep calls in a loop (boar_multiclass_loss); the
 *     derivatives, scaled by the row's weight, replace the margins;
 *  3. the update: w[j K + c] steps by d_c x_j (boar_coord_step, as in the
 *     binary sweep), the biases by d_c; a class whose derivative is 0
 *     (hinge, beyond the margin) steps only when regularization shrinks.
 *
 * Hot coordinates and the biases, which every row touches, have a replica
 * per block in shared memory as in the binary sweep (gpu_sweep.h), K
 * coordinates a slot: without it thousands of warps step each bias from
 * one stale value. K coordinates a hot feature cost K times the shared
 * memory, so fewer features are replicated as K grows
 * (gpu_multiclass_hot_max: a budget of MC_HOT_FLOATS); the biases always
 * are. After each batch of 32 rows a warp publishes the K biases and 32
 * hot entries in rotation.
 *
 * Updates are atomicAdds (racy stores are an experiment of the binary
 * sweep only, BOAR_GPU_RACY: a multiclass row writes K times the
 * coordinates, and a lost update of a frequent one costs more). The loss
 * is a runtime value: it is read once a row, and the coordinate steps do
 * not depend on it.
 */
#include <math.h>
#include <stdint.h>

#include "gpu_internal.h"
#include "gpu_perm.h"
#include "gpu_sweep.h"

extern "C" {
#include "boar.h"
#include "model/model.h"
}
#include "math/loss.h"
#include "math/step.h"

/* Shared-memory floats for the replica of hot features (4 per coordinate:
 * base, pending, and AdaGrad's two): 32 KiB, as much as a binary sweep's
 * replica of GPU_HOT_MAX features takes with its table. */
#define MC_HOT_FLOATS 8192

uint32_t gpu_multiclass_hot_max(uint32_t K)
{
	uint32_t slots = MC_HOT_FLOATS / (4 * (K ? K : 1));
	uint32_t n = slots > 1 ? slots - 1 : 0; /* one slot is the biases' */
	return n < GPU_HOT_MAX ? n : GPU_HOT_MAX;
}

/* The kernel's own shared floats: K per warp (margins, then derivatives)
 * and the K class labels. */
static __host__ __device__ size_t mc_extra(uint32_t K)
{
	return (size_t)(LIN_WARPS_PER_BLOCK + 1) * K;
}

static __device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
	for (int o = 16; o; o >>= 1) {
		float u = __shfl_xor_sync(FULL_MASK, v, o);
		v = u > v ? u : v;
	}
	return v;
}

template <typename T>
static __device__ __forceinline__ T warp_sum(T v)
{
#pragma unroll
	for (int o = 16; o; o >>= 1)
		v += __shfl_xor_sync(FULL_MASK, v, o);
	return v;
}

/* Weight of coordinate `coord` (feature f, class c) for a margin: from the
 * replica when f is hot (slot k), else from the weights. */
template <bool ADA>
static __device__ __forceinline__ float mc_weight(const struct hot_view &h,
						  int k, uint32_t c,
						  const float *w, uint64_t coord)
{
	if (k >= 0) {
		uint32_t at = (uint32_t)k * h.width + c;
		return sh_ld(h.base + at) + sh_ld(h.pend + at);
	}
	return __ldcg(w + (ADA ? 2 * coord : coord));
}

/* Pass 1: the row's K margins, biases included, into m[0..K). */
template <int W, bool ADA, bool HOT>
static __device__ __forceinline__ void mc_margins(
	const struct gpu_linear_args &a, const struct hot_view &h, float *m,
	uint64_t s, uint64_t e, int lane)
{
	constexpr int NG = 32 / W;
	const uint32_t K = a.n_classes;
	const int group = lane / W;
	const uint32_t bias = (uint32_t)h.n_hot * K;
	for (uint32_t c0 = 0; c0 < K; c0 += W) {
		const uint32_t c = c0 + (uint32_t)(lane % W);
		float acc = 0.0f;
		if (c < K)
			for (uint64_t j = s + group; j < e; j += NG) {
				uint32_t f = __ldg(a.idx + j);
				int k = HOT ? hot_find(h, f) : -1;
				acc += mc_weight<ADA>(h, k, c, a.w,
						      (uint64_t)f * K + c) *
				       __ldg(a.val + j);
			}
#pragma unroll
		for (int o = 16; o >= W; o >>= 1)
			acc += __shfl_xor_sync(FULL_MASK, acc, o);
		if (group == 0 && c < K)
			m[c] = acc + sh_ld(h.base + bias + c) +
			       sh_ld(h.pend + bias + c);
	}
}

/* Pass 2: the row's loss (returned, on every lane) and, in place of the
 * margins m, its derivatives scaled by the row's weight rw. */
static __device__ __forceinline__ double mc_loss(
	const struct gpu_linear_args &a, float *m, uint32_t y, float rw,
	int lane)
{
	const uint32_t K = a.n_classes;
	const int softmax = boar_loss_kind(a.loss) == BOAR_LOSS_KIND_MULTINOMIAL;
	struct boar_softmax_norm nm = {0.0f, 1.0f};
	if (softmax) {
		float mx = m[0];
		for (uint32_t c = lane; c < K; c += 32)
			mx = m[c] > mx ? m[c] : mx;
		nm.mx = warp_max(mx);
		float sum = 0.0f;
		for (uint32_t c = lane; c < K; c += 32)
			sum += boar_softmax_term(m[c], nm.mx);
		nm.sum = warp_sum(sum);
	}
	double share = 0.0;
	for (uint32_t c = lane; c < K; c += 32) {
		float mc = m[c], d;
		float e = softmax ? boar_softmax_term(mc, nm.mx) : 0.0f;
		share += boar_multiclass_class(a.loss, a.loss_param, mc, c == y,
					       e, nm, &d);
		m[c] = d * rw;
	}
	return rw * boar_multiclass_total(a.loss, warp_sum(share));
}

/* Pass 3: the K coordinates of every non-zero step by d_c x_j, and the
 * biases by d_c. */
template <int W, bool ADA, bool REG, bool HOT>
static __device__ __forceinline__ void mc_update(
	const struct gpu_linear_args &a, const struct hot_view &h,
	const float *d, uint64_t s, uint64_t e, int lane)
{
	constexpr int NG = 32 / W;
	const uint32_t K = a.n_classes;
	const int group = lane / W;
	const struct coord_params cp = {a.eta, a.l1, a.l2, a.opt};
	for (uint32_t c0 = 0; c0 < K; c0 += W) {
		const uint32_t c = c0 + (uint32_t)(lane % W);
		if (c >= K)
			continue;
		const float dc = d[c];
		if (!REG && dc == 0.0f)
			continue;
		for (uint64_t j = s + group; j < e; j += NG) {
			uint32_t f = __ldg(a.idx + j);
			float x = __ldg(a.val + j);
			int k = HOT ? hot_find(h, f) : -1;
			uint64_t coord = (uint64_t)f * K + c;
			uint32_t at = (uint32_t)k * K + c;
			float wv = 0.0f, gv = 0.0f, dG = 0.0f;
			if (k >= 0) {
				wv = sh_ld(h.base + at) + sh_ld(h.pend + at);
				if (ADA)
					gv = sh_ld(h.gbase + at) +
					     sh_ld(h.gpend + at);
			} else if (ADA || REG) {
				load_wg<ADA>(a.w, coord, &wv, &gv);
			}
			float rs = REG ? __ldg(a.reg_scale + f) : 0.0f;
			float delta = coord_delta<ADA, REG>(cp, dc, x, wv, gv,
							    rs, &dG);
			if (k >= 0) {
				atomicAdd(h.pend + at, delta);
				if (ADA)
					atomicAdd(h.gpend + at, dG);
			} else {
				coord_write<ADA, true>(a.w, coord, wv, delta,
						       gv, dG);
			}
		}
	}
	/* The biases: never regularized. */
	const uint32_t bias = (uint32_t)h.n_hot * K;
	for (uint32_t c = lane; c < K; c += 32) {
		float gb = ADA ? sh_ld(h.gbase + bias + c) +
					 sh_ld(h.gpend + bias + c)
			       : 0.0f;
		float dgb = 0.0f;
		float db = coord_delta<ADA, false>(cp, d[c], 1.0f, 0.0f, gb,
						   0.0f, &dgb);
		if (ADA)
			atomicAdd(h.gpend + bias + c, dgb);
		atomicAdd(h.pend + bias + c, db);
	}
}

template <int W, bool ADA, bool REG, bool HOT>
__global__ void __launch_bounds__(LIN_BLOCK, LIN_MIN_BLOCKS)
multiclass_sweep(const struct gpu_linear_args a)
{
	extern __shared__ float4 smem4[];
	const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
	const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
	const uint64_t n_warps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
	const uint64_t n = a.perm.n, p_end = a.p_end;
	const uint32_t K = a.n_classes;
	const float alpha = 1.0f / ((float)gridDim.x * (float)a.concurrent);
	double loss_acc = 0.0;

	struct hot_view h;
	float *own;
	hot_setup<ADA>(&h, (float *)smem4, HOT ? (int)a.n_hot : 0, K,
		       mc_extra(K), &own, a.hot_ids, a.w, a.dim);
	float *m = own + (size_t)wib * K; /* this warp's row */
	float *classes = own + (size_t)LIN_WARPS_PER_BLOCK * K;
	for (uint32_t c = threadIdx.x; c < K; c += blockDim.x)
		classes[c] = a.classes[c];
	__syncthreads();
	uint32_t rot = wib * 32;

	for (uint64_t base = a.p_begin + warp * 32; base < p_end;
	     base += n_warps * 32) {
		uint64_t p = base + lane;
		uint64_t my_s = 0, my_e = 0;
		uint32_t my_y = 0;
		float my_rw = 1.0f;
		if (p < p_end) {
			uint64_t row = gpu_perm_apply(p, n, a.perm.half,
						      a.perm.k[0], a.perm.k[1],
						      a.perm.k[2], a.perm.k[3]);
			my_s = __ldg(a.row_ptr + row) - a.nz_base;
			my_e = __ldg(a.row_ptr + row + 1) - a.nz_base;
			my_y = boar_class_index(classes, K,
						__ldg(a.label + row));
			if (a.row_weight)
				my_rw = __ldg(a.row_weight + row);
		}
		const int batch = p_end - base < 32 ? (int)(p_end - base) : 32;

		for (int r = 0; r < batch; r++) {
			const uint64_t s = __shfl_sync(FULL_MASK, my_s, r);
			const uint64_t e = __shfl_sync(FULL_MASK, my_e, r);
			const uint32_t y = __shfl_sync(FULL_MASK, my_y, r);
			const float rw = __shfl_sync(FULL_MASK, my_rw, r);
			mc_margins<W, ADA, HOT>(a, h, m, s, e, lane);
			__syncwarp();
			double loss = mc_loss(a, m, y, rw, lane);
			if (lane == 0)
				loss_acc += loss;
			__syncwarp();
			mc_update<W, ADA, REG, HOT>(a, h, m, s, e, lane);
			__syncwarp(); /* the next row overwrites m */
		}
		/* Publish: the K biases, and 32 hot entries in rotation. */
		for (uint32_t c = lane; c < K; c += 32)
			hot_sync<ADA>(h, (uint32_t)h.n_hot * K + c,
				      a.dim * K + c, a.w, alpha);
		if (HOT)
			hot_rotate<ADA>(h, &rot, lane, a.hot_ids, a.w, a.dim,
					alpha);
		__syncwarp();
	}

	__syncthreads();
	hot_flush<ADA>(h, a.hot_ids, a.w, a.dim, alpha);
	block_loss_add(loss_acc, a.loss_sum);
}

typedef void (*mc_kernel)(const struct gpu_linear_args);

template <int W, bool HOT>
static mc_kernel pick_opt(const struct gpu_linear_variant *v)
{
	if (v->adagrad)
		return v->reg ? multiclass_sweep<W, true, true, HOT>
			      : multiclass_sweep<W, true, false, HOT>;
	return v->reg ? multiclass_sweep<W, false, true, HOT>
		      : multiclass_sweep<W, false, false, HOT>;
}

template <int W>
static mc_kernel pick_hot(const struct gpu_linear_variant *v, int hot)
{
	return hot ? pick_opt<W, true>(v) : pick_opt<W, false>(v);
}

/* The group width W for K classes: the power of two at or above K, at
 * most 32. */
static mc_kernel pick(const struct gpu_linear_variant *v, int hot)
{
	uint32_t K = v->classes;
	if (K < 2 || K > BOAR_MAX_CLASSES)
		return NULL;
	if (K <= 2)
		return pick_hot<2>(v, hot);
	if (K <= 4)
		return pick_hot<4>(v, hot);
	if (K <= 8)
		return pick_hot<8>(v, hot);
	if (K <= 16)
		return pick_hot<16>(v, hot);
	return pick_hot<32>(v, hot);
}

uint64_t gpu_multiclass_rows_in_flight(const struct gpu_linear_variant *v,
				       uint64_t n, uint32_t rows_per_block,
				       int sm_count)
{
	mc_kernel k = pick(v, 0);
	if (!k)
		return 1;
	return sweep_rows_in_flight(k, hot_smem_bytes(0, v->classes,
						      mc_extra(v->classes)),
				    n, rows_per_block, sm_count);
}

cudaError_t gpu_multiclass_launch(const struct gpu_linear_variant *v,
				  const struct gpu_linear_args *a,
				  int sm_count, cudaStream_t stream)
{
	if (a->n_classes != v->classes || !a->classes ||
	    a->n_hot > gpu_multiclass_hot_max(v->classes))
		return cudaErrorInvalidValue;
	mc_kernel k = pick(v, a->n_hot > 0);
	if (!k)
		return cudaErrorInvalidValue;
	size_t smem = hot_smem_bytes(a->n_hot, v->classes,
				     mc_extra(v->classes));
	return sweep_launch(k, smem, a, sm_count, stream);
}
