/* gpu_mf.cu - the Hogwild! sweep of matrix factorization, one warp a rating.
 *
 * As in the linear sweep, a persistent grid of warps takes 32 positions of
 * the epoch's permutation at a time, each lane loading one rating's
 * (user, item, value), and then processes the 32 ratings in turn. For a
 * rating, lane l holds factors l, l+32, l+64, ... of P[u] and Q[i] in
 * registers (KPL = factors per lane, a compile-time constant so the arrays
 * stay in registers: rank up to 32*KPL), the dot product is a butterfly
 * shuffle, and each lane writes back its own factors: one coalesced row
 * read and one row write per factor matrix per rating, the least traffic
 * the update allows. The next rating's rows are loaded while the current
 * one is computed and written (a two-deep software pipeline). Two warps
 * that share a user or an item race as in Hogwild!: atomicAdd of the
 * deltas (the engine's choice for both policies, see gpu_engine.cu), or
 * plain stores like LIBMF and cuMF_SGD when BOAR_GPU_RACY=1.
 *
 * The step's math (the error and loss, the gradient components, AdaGrad's
 * per-row sums) is src/math/mf_step.h's, shared with the CPU sweep. A
 * row's step also moves its bias.
 */
#include <stdint.h>

#include "gpu_internal.h"
#include "gpu_perm.h"
#include "math/mf_step.h"

#define MF_WARPS_PER_BLOCK 8
#define MF_BLOCK (32 * MF_WARPS_PER_BLOCK)
#define FULL_MASK 0xffffffffu

/* Which factor a lane's register t holds. Scalar layout: l, l+32, ...
 * (any rank, masked past it). VEC layout, when rank = 32 * KPL with KPL a
 * multiple of 4: four consecutive factors per lane per 128, so rows move
 * as 16-byte loads, stores and (sm_90) float4 atomicAdds. */
template <bool VEC>
static __device__ __forceinline__ uint32_t fidx(int lane, int t)
{
	return VEC ? 128 * (t >> 2) + 4 * lane + (t & 3) : lane + 32 * t;
}

/* Lane `lane`'s factors of P[u] and Q[i] (0 past the rank). */
template <int KPL, bool VEC>
static __device__ __forceinline__ void load_rows(float *pv, float *qv,
						 const float *P, const float *Q,
						 uint32_t u, uint32_t i,
						 uint32_t rank, int lane)
{
	const float *Pu = P + (uint64_t)u * rank, *Qi = Q + (uint64_t)i * rank;
	if (VEC) {
#pragma unroll
		for (int g = 0; g < KPL / 4; g++) {
			uint32_t k = fidx<true>(lane, 4 * g);
			float4 p4 = __ldcg((const float4 *)(Pu + k));
			float4 q4 = __ldcg((const float4 *)(Qi + k));
			pv[4 * g] = p4.x, pv[4 * g + 1] = p4.y;
			pv[4 * g + 2] = p4.z, pv[4 * g + 3] = p4.w;
			qv[4 * g] = q4.x, qv[4 * g + 1] = q4.y;
			qv[4 * g + 2] = q4.z, qv[4 * g + 3] = q4.w;
		}
	} else {
#pragma unroll
		for (int t = 0; t < KPL; t++) {
			uint32_t k = lane + 32 * t;
			pv[t] = k < rank ? __ldcg(Pu + k) : 0.0f;
			qv[t] = k < rank ? __ldcg(Qi + k) : 0.0f;
		}
	}
}

/* Writes one rating's row updates back: p -= step_u (e q + l2 p),
 * q -= step_i (e p + l2 q) (boar_mf_grad), both from the old values held
 * in pv/qv. */
template <int KPL, bool VEC, bool ATOMIC>
static __device__ __forceinline__ void write_rows(float *Pu, float *Qi,
						  const float *pv,
						  const float *qv, float e,
						  float su, float si, float l2,
						  uint32_t rank, int lane)
{
	if (VEC) {
#pragma unroll
		for (int g = 0; g < KPL / 4; g++) {
			float np[4], nq[4];
#pragma unroll
			for (int j = 0; j < 4; j++) {
				float p = pv[4 * g + j], q = qv[4 * g + j];
				np[j] = -su * boar_mf_grad(e, q, p, l2); /* deltas first */
				nq[j] = -si * boar_mf_grad(e, p, q, l2);
				if (!ATOMIC) {
					np[j] += p;
					nq[j] += q;
				}
			}
			float *P4 = Pu + fidx<true>(lane, 4 * g);
			float *Q4 = Qi + fidx<true>(lane, 4 * g);
			float4 vp = make_float4(np[0], np[1], np[2], np[3]);
			float4 vq = make_float4(nq[0], nq[1], nq[2], nq[3]);
			if (ATOMIC) {
				gpu_add4(P4, vp);
				gpu_add4(Q4, vq);
			} else {
				__stcg((float4 *)P4, vp);
				__stcg((float4 *)Q4, vq);
			}
		}
	} else {
#pragma unroll
		for (int t = 0; t < KPL; t++) {
			uint32_t k = lane + 32 * t;
			if (k >= rank)
				continue;
			float dp = -su * boar_mf_grad(e, qv[t], pv[t], l2);
			float dq = -si * boar_mf_grad(e, pv[t], qv[t], l2);
			if (ATOMIC) {
				atomicAdd(Pu + k, dp);
				atomicAdd(Qi + k, dq);
			} else {
				__stcg(Pu + k, pv[t] + dp);
				__stcg(Qi + k, qv[t] + dq);
			}
		}
	}
}

template <int KPL, bool VEC, bool ADA, bool BIAS, bool ATOMIC>
__global__ void __launch_bounds__(MF_BLOCK)
mf_sweep(const struct gpu_mf_args a)
{
	/* Loading the next rating's rows during this one's update measured
	 * slower on an H100 (the extra registers cost occupancy; see
	 * bench/RESULTS-gpu.md): off unless built with -DGPU_MF_PIPE. */
#ifdef GPU_MF_PIPE
	constexpr bool PIPE = KPL <= 8;
#else
	constexpr bool PIPE = false;
#endif
	__shared__ double block_loss[MF_WARPS_PER_BLOCK];
	const int lane = threadIdx.x & 31;
	const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
	const uint64_t n_warps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
	const uint64_t n = a.perm.n;
	const uint32_t rank = a.rank;
	const struct coord_params cp = {a.eta, 0.0f, a.l2, a.opt};
	const float l2 = a.l2;
	double loss_acc = 0.0;

	for (uint64_t base = warp * 32; base < n; base += n_warps * 32) {
		uint64_t p = base + lane;
		uint32_t my_u = 0, my_i = 0;
		float my_r = 0.0f;
		if (p < n) {
			uint64_t k = gpu_perm_apply(p, n, a.perm.half,
						    a.perm.k[0], a.perm.k[1],
						    a.perm.k[2], a.perm.k[3]);
			my_u = __ldg(a.user + k);
			my_i = __ldg(a.item + k);
			my_r = __ldg(a.rating + k);
		}
		const int batch = n - base < 32 ? (int)(n - base) : 32;

		/* Software pipeline: the next rating's rows are loaded while
		 * this one is computed and written back, so one DRAM round
		 * trip per rating is hidden behind the other's work. */
		uint32_t u = __shfl_sync(FULL_MASK, my_u, 0);
		uint32_t i = __shfl_sync(FULL_MASK, my_i, 0);
		float rt = __shfl_sync(FULL_MASK, my_r, 0);
		float pv[KPL], qv[KPL];
		load_rows<KPL, VEC>(pv, qv, a.P, a.Q, u, i, rank, lane);

		for (int r = 0; r < batch; r++) {
			const bool more = r + 1 < batch; /* warp-uniform */
			uint32_t un = 0, in = 0;
			float rn = 0.0f, pn[KPL], qn[KPL];
			if (PIPE && more) {
				un = __shfl_sync(FULL_MASK, my_u, r + 1);
				in = __shfl_sync(FULL_MASK, my_i, r + 1);
				rn = __shfl_sync(FULL_MASK, my_r, r + 1);
				load_rows<KPL, VEC>(pn, qn, a.P, a.Q, un, in, rank,
						    lane);
			}
			float *const Pu = a.P + (uint64_t)u * rank;
			float *const Qi = a.Q + (uint64_t)i * rank;
			float dot = 0.0f;
			/* Lane 0 (the one that writes them) reads the row scalars
			 * and shares them, so every lane of the warp uses the
			 * same values, its own last update included. Issued
			 * before the reduction so their latency overlaps. */
			float bu = 0.0f, bi = 0.0f, gu = 0.0f, gi = 0.0f;
			if (lane == 0) {
				if (BIAS) {
					bu = __ldcg(a.bu + u);
					bi = __ldcg(a.bi + i);
				}
				if (ADA) {
					gu = __ldcg(a.Gu + u);
					gi = __ldcg(a.Gi + i);
				}
			}
#pragma unroll
			for (int t = 0; t < KPL; t++)
				dot += pv[t] * qv[t];
#pragma unroll
			for (int o = 16; o; o >>= 1)
				dot += __shfl_xor_sync(FULL_MASK, dot, o);
			if (BIAS) {
				bu = __shfl_sync(FULL_MASK, bu, 0);
				bi = __shfl_sync(FULL_MASK, bi, 0);
			}
			if (ADA) {
				gu = __shfl_sync(FULL_MASK, gu, 0);
				gi = __shfl_sync(FULL_MASK, gi, 0);
			}
			float e;
			const float loss = boar_mf_loss(a.mu, bu, bi, dot, rt, &e);
			if (lane == 0)
				loss_acc += loss;

			float su = 0.0f, si = 0.0f, dgu, dgi;
			if (ADA) {
#pragma unroll
				for (int t = 0; t < KPL; t++) {
					float gp = boar_mf_grad(e, qv[t], pv[t], l2);
					float gq = boar_mf_grad(e, pv[t], qv[t], l2);
					su += gp * gp;
					si += gq * gq;
				}
#pragma unroll
				for (int o = 16; o; o >>= 1) {
					su += __shfl_xor_sync(FULL_MASK, su, o);
					si += __shfl_xor_sync(FULL_MASK, si, o);
				}
			}
			const float step_u = boar_mf_rate(&cp, ADA, su, rank, gu, &dgu);
			const float step_i = boar_mf_rate(&cp, ADA, si, rank, gi, &dgi);
			/* Both rows step from the old values. */
			write_rows<KPL, VEC, ATOMIC>(Pu, Qi, pv, qv, e, step_u,
						     step_i, l2, rank, lane);
			if (lane == 0) {
				if (BIAS) {
					float dbu = -step_u * boar_mf_grad(e, 1.0f, bu, l2);
					float dbi = -step_i * boar_mf_grad(e, 1.0f, bi, l2);
					if (ATOMIC) {
						atomicAdd(a.bu + u, dbu);
						atomicAdd(a.bi + i, dbi);
					} else {
						__stcg(a.bu + u, bu + dbu);
						__stcg(a.bi + i, bi + dbi);
					}
				}
				if (ADA) {
					if (ATOMIC) {
						atomicAdd(a.Gu + u, dgu);
						atomicAdd(a.Gi + i, dgi);
					} else {
						__stcg(a.Gu + u, gu + dgu);
						__stcg(a.Gi + i, gi + dgi);
					}
				}
			}
			if (more) {
				if (!PIPE) {
					un = __shfl_sync(FULL_MASK, my_u, r + 1);
					in = __shfl_sync(FULL_MASK, my_i, r + 1);
					rn = __shfl_sync(FULL_MASK, my_r, r + 1);
				}
				/* Without the pipeline, or when the next rating
				 * shares a row with this one, load after our own
				 * write (each lane reads back its own elements). */
				if (!PIPE || un == u || in == i)
					load_rows<KPL, VEC>(pn, qn, a.P, a.Q, un, in,
							    rank, lane);
#pragma unroll
				for (int t = 0; t < KPL; t++) {
					pv[t] = pn[t];
					qv[t] = qn[t];
				}
				u = un;
				i = in;
				rt = rn;
			}
		}
	}

	if (lane == 0)
		block_loss[threadIdx.x >> 5] = loss_acc;
	__syncthreads();
	if (threadIdx.x == 0) {
		double t = 0.0;
		for (int w = 0; w < MF_WARPS_PER_BLOCK; w++)
			t += block_loss[w];
		atomicAdd(a.loss_sum, t);
	}
}

typedef void (*mf_kernel)(const struct gpu_mf_args);

template <int KPL, bool VEC>
static mf_kernel pick_kpl(const struct gpu_mf_variant *v)
{
	if (v->adagrad) {
		if (v->biases)
			return v->atomic ? mf_sweep<KPL, VEC, true, true, true>
					 : mf_sweep<KPL, VEC, true, true, false>;
		return v->atomic ? mf_sweep<KPL, VEC, true, false, true>
				 : mf_sweep<KPL, VEC, true, false, false>;
	}
	if (v->biases)
		return v->atomic ? mf_sweep<KPL, VEC, false, true, true>
				 : mf_sweep<KPL, VEC, false, true, false>;
	return v->atomic ? mf_sweep<KPL, VEC, false, false, true>
			 : mf_sweep<KPL, VEC, false, false, false>;
}

/* The smallest register layout that holds the rank; 16-byte accesses when
 * the rank is a multiple of 128 (-DGPU_MF_NO_VEC to measure without). */
static mf_kernel pick(const struct gpu_mf_variant *v, uint32_t rank)
{
#ifdef GPU_MF_NO_VEC
	const bool vec = false;
#else
	const bool vec = rank % 128 == 0;
#endif
	if (rank <= 32)
		return pick_kpl<1, false>(v);
	if (rank <= 64)
		return pick_kpl<2, false>(v);
	if (rank <= 96)
		return pick_kpl<3, false>(v);
	if (rank <= 128)
		return vec ? pick_kpl<4, true>(v) : pick_kpl<4, false>(v);
	if (rank <= 192)
		return pick_kpl<6, false>(v);
	if (rank <= 256)
		return vec ? pick_kpl<8, true>(v) : pick_kpl<8, false>(v);
	if (rank <= 512)
		return vec ? pick_kpl<16, true>(v) : pick_kpl<16, false>(v);
	return vec ? pick_kpl<32, true>(v) : pick_kpl<32, false>(v);
}

cudaError_t gpu_mf_launch(const struct gpu_mf_variant *v,
			  const struct gpu_mf_args *a, int sm_count,
			  cudaStream_t stream)
{
	if (a->rank < 1 || a->rank > GPU_MF_MAX_RANK)
		return cudaErrorInvalidValue;
	mf_kernel k = pick(v, a->rank);
	int per_sm = 0;
	cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
		&per_sm, k, MF_BLOCK, 0);
	if (e != cudaSuccess)
		return e;
	if (per_sm < 1)
		per_sm = 1;
	/* No fewer than GPU_ROWS_PER_BLOCK ratings a block: on small data a
	 * full grid would have the popular items' rows (and biases) updated
	 * by hundreds of warps from one stale value. */
	uint64_t rpb = a->rows_per_block ? a->rows_per_block : GPU_ROWS_PER_BLOCK;
	uint64_t need = (a->perm.n + rpb - 1) / rpb;
	uint64_t blocks = (uint64_t)per_sm * sm_count;
	if (need < blocks)
		blocks = need;
	if (blocks < 1)
		blocks = 1;
	k<<<(unsigned)blocks, MF_BLOCK, 0, stream>>>(*a);
	return cudaGetLastError();
}
