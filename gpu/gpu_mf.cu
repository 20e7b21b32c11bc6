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
 * Factors are stored as fp32, or (--mf-storage) as fp16 or bf16 with fp32
 * arithmetic: half the bytes per row, which is what bounds the sweep at
 * rank 128 (the P row is read and written from DRAM for every rating).
 * An SGD step is often smaller than half a 16-bit ulp of the value it
 * moves, so rounding to nearest would drop most of them; the new values are
 * rounded stochastically instead (up with probability equal to the
 * fraction of the ulp), which keeps every step in expectation. With
 * atomic updates (the default) the rounded new value is turned back into a
 * delta from the value read, which two 16-bit values that close represent
 * exactly, and that delta is added atomically (four neighbours in one
 * 8-byte vector reduction where a lane holds them, sm_90): alone on the row
 * the result is the rounded value itself, and a concurrent update is added
 * to, not overwritten (ranks that are multiples of 32 add four values per
 * reduction there too, gathered from neighbouring lanes by shuffles).
 *
 * The step's math (the error and loss, the gradient components, AdaGrad's
 * per-row sums) is src/math/mf_step.h's, shared with the CPU sweep. A
 * row's step also moves its bias.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "gpu_internal.h"
#include "gpu_perm.h"
#include "math/mf_step.h"

#define MF_WARPS_PER_BLOCK 8
/* Blocks an SM must fit (registers capped to match): an experiment knob,
 * -DGPU_MF_MIN_BLOCKS=N (1: the compiler's choice). */
#ifndef GPU_MF_MIN_BLOCKS
#define GPU_MF_MIN_BLOCKS 1
#endif
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

/* A 16-bit stored value as a float, by storage (F16 or BF16). */
template <int ST>
static __device__ __forceinline__ float unpack16(uint16_t b)
{
	if (ST == BOAR_STORAGE_BF16)
		return __uint_as_float((uint32_t)b << 16);
	return __half2float(__ushort_as_half(b));
}

/* A well-mixed 32-bit hash (murmur3's finalizer). */
static __device__ __forceinline__ uint32_t mix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	return h ^ (h >> 16);
}

/* x rounded to 16 bits stochastically: to the neighbour of larger
 * magnitude with probability (distance from the smaller) / ulp, using the
 * 16 random bits r. bf16 is the top half of the float: adding r below the
 * cut and truncating does exactly that. fp16 in its normal range keeps 10
 * of the float's 23 fraction bits: adding 13 random bits below them and
 * truncating toward zero is the same rule in two instructions (a carry
 * into the exponent is the step to the next binade, as for bf16). Below
 * that range (|x| < 2^-14) the fp16 ulp is fixed: truncate toward zero,
 * then step one ulp up in magnitude when r falls under the remainder. */
template <int ST>
static __device__ __forceinline__ uint16_t pack16(float x, uint32_t r)
{
	if (ST == BOAR_STORAGE_BF16)
		return (uint16_t)((__float_as_uint(x) + (r & 0xffffu)) >> 16);
	if (fabsf(x) >= 6.103515625e-05f) /* 2^-14, fp16's smallest normal */
		return __half_as_ushort(__float2half_rz(
			__uint_as_float(__float_as_uint(x) + (r & 0x1fffu))));
	__half h = __float2half_rz(x);
	uint16_t b = __half_as_ushort(h);
	float lo = fabsf(__half2float(h));
	float hi = fabsf(__half2float(__ushort_as_half((uint16_t)(b + 1))));
	float u = (float)(r & 0xffffu) * (1.0f / 65536.0f);
	return fabsf(x) - lo > u * (hi - lo) ? (uint16_t)(b + 1) : b;
}

/* Atomic adds of 16-bit deltas: one value, or a pair at an even index. */
template <int ST>
static __device__ __forceinline__ void add16(uint16_t *at, float d)
{
	if (ST == BOAR_STORAGE_BF16)
		atomicAdd((__nv_bfloat16 *)at, __float2bfloat16_rn(d));
	else
		atomicAdd((__half *)at, __float2half_rn(d));
}

template <int ST>
static __device__ __forceinline__ void add16x2(uint16_t *at, float d0, float d1)
{
	if (ST == BOAR_STORAGE_BF16)
		atomicAdd((__nv_bfloat162 *)at, __floats2bfloat162_rn(d0, d1));
	else
		atomicAdd((__half2 *)at, __floats2half2_rn(d0, d1));
}

/* Atomic add of four 16-bit deltas at an index that is a multiple of 4:
 * on sm_90 one 8-byte vector reduction, so the L2 (which bounds this
 * sweep) handles each sector of the row once, as for fp32 rows, instead
 * of once per pair. */
template <int ST>
static __device__ __forceinline__ void add16x4(uint16_t *at, const float *d)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	uint32_t lo, hi;
	if (ST == BOAR_STORAGE_BF16) {
		__nv_bfloat162 a = __floats2bfloat162_rn(d[0], d[1]);
		__nv_bfloat162 b = __floats2bfloat162_rn(d[2], d[3]);
		lo = *(const uint32_t *)&a;
		hi = *(const uint32_t *)&b;
		asm volatile("red.global.add.noftz.v2.bf16x2 [%0], {%1, %2};"
			     :: "l"(at), "r"(lo), "r"(hi) : "memory");
	} else {
		__half2 a = __floats2half2_rn(d[0], d[1]);
		__half2 b = __floats2half2_rn(d[2], d[3]);
		lo = *(const uint32_t *)&a;
		hi = *(const uint32_t *)&b;
		asm volatile("red.global.add.noftz.v2.f16x2 [%0], {%1, %2};"
			     :: "l"(at), "r"(lo), "r"(hi) : "memory");
	}
#else
	add16x2<ST>(at, d[0], d[1]);
	add16x2<ST>(at + 2, d[2], d[3]);
#endif
}

/* Lane `lane`'s factors of P[u] and Q[i] (0 past the rank). */
template <int KPL, bool VEC, int ST>
static __device__ __forceinline__ void load_rows(float *pv, float *qv,
						 const void *P, const void *Q,
						 uint32_t u, uint32_t i,
						 uint32_t rank, int lane)
{
	if (ST != BOAR_STORAGE_F32) {
		const uint16_t *Pu = (const uint16_t *)P + (uint64_t)u * rank;
		const uint16_t *Qi = (const uint16_t *)Q + (uint64_t)i * rank;
		if (VEC) { /* four 16-bit values: one 8-byte load */
#pragma unroll
			for (int g = 0; g < KPL / 4; g++) {
				uint32_t k = fidx<true>(lane, 4 * g);
				uint2 p4 = __ldcg((const uint2 *)(Pu + k));
				uint2 q4 = __ldcg((const uint2 *)(Qi + k));
				pv[4 * g] = unpack16<ST>(p4.x & 0xffff);
				pv[4 * g + 1] = unpack16<ST>(p4.x >> 16);
				pv[4 * g + 2] = unpack16<ST>(p4.y & 0xffff);
				pv[4 * g + 3] = unpack16<ST>(p4.y >> 16);
				qv[4 * g] = unpack16<ST>(q4.x & 0xffff);
				qv[4 * g + 1] = unpack16<ST>(q4.x >> 16);
				qv[4 * g + 2] = unpack16<ST>(q4.y & 0xffff);
				qv[4 * g + 3] = unpack16<ST>(q4.y >> 16);
			}
		} else {
#pragma unroll
			for (int t = 0; t < KPL; t++) {
				uint32_t k = lane + 32 * t;
				pv[t] = k < rank ? unpack16<ST>(__ldcg(Pu + k)) : 0.0f;
				qv[t] = k < rank ? unpack16<ST>(__ldcg(Qi + k)) : 0.0f;
			}
		}
		return;
	}
	const float *Pu = (const float *)P + (uint64_t)u * rank;
	const float *Qi = (const float *)Q + (uint64_t)i * rank;
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

/* The 16-bit rows' write-back: new values p - step_u (e q + l2 p) and
 * q - step_i (e p + l2 q), rounded stochastically with bits drawn from
 * `seed` (distinct per rating and lane), then stored whole or (ATOMIC)
 * added as the delta from the values read. */
template <int KPL, bool VEC, bool ATOMIC, int ST>
static __device__ __forceinline__ void write_rows16(uint16_t *Pu, uint16_t *Qi,
						    const float *pv,
						    const float *qv, float e,
						    float su, float si, float l2,
						    uint32_t rank, int lane,
						    uint32_t seed)
{
	uint16_t np[KPL], nq[KPL];
#pragma unroll
	for (int t = 0; t < KPL; t++) {
		uint32_t r = mix32(seed + 0x9e3779b9u * (uint32_t)(t + 1));
		float p = pv[t], q = qv[t];
		np[t] = pack16<ST>(p - su * boar_mf_grad(e, q, p, l2), r);
		nq[t] = pack16<ST>(q - si * boar_mf_grad(e, p, q, l2), r >> 16);
	}
	if (VEC) {
#pragma unroll
		for (int g = 0; g < KPL / 4; g++) {
			uint32_t k = fidx<true>(lane, 4 * g);
			if (ATOMIC) {
				float dp[4], dq[4];
#pragma unroll
				for (int j = 0; j < 4; j++) {
					dp[j] = unpack16<ST>(np[4 * g + j]) - pv[4 * g + j];
					dq[j] = unpack16<ST>(nq[4 * g + j]) - qv[4 * g + j];
				}
				add16x4<ST>(Pu + k, dp);
				add16x4<ST>(Qi + k, dq);
				continue;
			}
			uint2 p4 = make_uint2(np[4 * g] | (uint32_t)np[4 * g + 1] << 16,
					      np[4 * g + 2] | (uint32_t)np[4 * g + 3] << 16);
			uint2 q4 = make_uint2(nq[4 * g] | (uint32_t)nq[4 * g + 1] << 16,
					      nq[4 * g + 2] | (uint32_t)nq[4 * g + 3] << 16);
			__stcg((uint2 *)(Pu + k), p4);
			__stcg((uint2 *)(Qi + k), q4);
		}
	} else {
#pragma unroll
		for (int t = 0; t < KPL; t++) {
			uint32_t k = lane + 32 * t;
			if (ATOMIC && rank % 32 == 0) {
				/* Whole 32-value slices (warp-uniform): each fourth
				 * lane gathers its three neighbours' deltas and adds
				 * the four with one vector reduction (add16x4). */
				if (32 * t >= rank)
					continue;
				float dp[4], dq[4];
				const float mp = unpack16<ST>(np[t]) - pv[t];
				const float mq = unpack16<ST>(nq[t]) - qv[t];
#pragma unroll
				for (int j = 0; j < 4; j++) {
					dp[j] = __shfl_down_sync(FULL_MASK, mp, j);
					dq[j] = __shfl_down_sync(FULL_MASK, mq, j);
				}
				if ((lane & 3) == 0) {
					add16x4<ST>(Pu + k, dp);
					add16x4<ST>(Qi + k, dq);
				}
				continue;
			}
			if (k >= rank)
				continue;
			if (ATOMIC) {
				add16<ST>(Pu + k, unpack16<ST>(np[t]) - pv[t]);
				add16<ST>(Qi + k, unpack16<ST>(nq[t]) - qv[t]);
			} else {
				__stcg(Pu + k, np[t]);
				__stcg(Qi + k, nq[t]);
			}
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

template <int KPL, bool VEC, bool ADA, bool BIAS, bool ATOMIC, int ST>
__global__ void __launch_bounds__(MF_BLOCK, GPU_MF_MIN_BLOCKS)
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
		load_rows<KPL, VEC, ST>(pv, qv, a.P, a.Q, u, i, rank, lane);

		for (int r = 0; r < batch; r++) {
			const bool more = r + 1 < batch; /* warp-uniform */
			uint32_t un = 0, in = 0;
			float rn = 0.0f, pn[KPL], qn[KPL];
			if (PIPE && more) {
				un = __shfl_sync(FULL_MASK, my_u, r + 1);
				in = __shfl_sync(FULL_MASK, my_i, r + 1);
				rn = __shfl_sync(FULL_MASK, my_r, r + 1);
				load_rows<KPL, VEC, ST>(pn, qn, a.P, a.Q, un, in, rank,
						    lane);
			}
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
			const float loss = boar_mf_loss(a.mf_loss, a.mu, bu, bi,
							dot, rt, &e);
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
			if (ST == BOAR_STORAGE_F32)
				write_rows<KPL, VEC, ATOMIC>(
					(float *)a.P + (uint64_t)u * rank,
					(float *)a.Q + (uint64_t)i * rank, pv,
					qv, e, step_u, step_i, l2, rank, lane);
			else
				write_rows16<KPL, VEC, ATOMIC, ST>(
					(uint16_t *)a.P + (uint64_t)u * rank,
					(uint16_t *)a.Q + (uint64_t)i * rank, pv,
					qv, e, step_u, step_i, l2, rank, lane,
					mix32(a.round_seed ^
					      (uint32_t)((base + r) * 32 + lane)));
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
					load_rows<KPL, VEC, ST>(pn, qn, a.P, a.Q, un, in,
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

template <int KPL, bool VEC, int ST>
static mf_kernel pick_policy(const struct gpu_mf_variant *v)
{
	if (v->adagrad) {
		if (v->biases)
			return v->atomic ? mf_sweep<KPL, VEC, true, true, true, ST>
					 : mf_sweep<KPL, VEC, true, true, false, ST>;
		return v->atomic ? mf_sweep<KPL, VEC, true, false, true, ST>
				 : mf_sweep<KPL, VEC, true, false, false, ST>;
	}
	if (v->biases)
		return v->atomic ? mf_sweep<KPL, VEC, false, true, true, ST>
				 : mf_sweep<KPL, VEC, false, true, false, ST>;
	return v->atomic ? mf_sweep<KPL, VEC, false, false, true, ST>
			 : mf_sweep<KPL, VEC, false, false, false, ST>;
}

template <int KPL, bool VEC>
static mf_kernel pick_kpl(const struct gpu_mf_variant *v)
{
	if (v->storage == BOAR_STORAGE_F16)
		return pick_policy<KPL, VEC, BOAR_STORAGE_F16>(v);
	if (v->storage == BOAR_STORAGE_BF16)
		return pick_policy<KPL, VEC, BOAR_STORAGE_BF16>(v);
	return pick_policy<KPL, VEC, BOAR_STORAGE_F32>(v);
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

/* Conversions between fp32 factors and the stored ones (round to nearest:
 * the model as given, not a training step). */
static __global__ void factors_in(uint16_t *s, const float *f, uint64_t n,
				  int storage)
{
	for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	     k < n; k += (uint64_t)gridDim.x * blockDim.x)
		s[k] = storage == BOAR_STORAGE_BF16
			       ? __bfloat16_as_ushort(__float2bfloat16_rn(f[k]))
			       : __half_as_ushort(__float2half_rn(f[k]));
}

static __global__ void factors_out(float *f, const uint16_t *s, uint64_t n,
				   int storage)
{
	for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	     k < n; k += (uint64_t)gridDim.x * blockDim.x)
		f[k] = storage == BOAR_STORAGE_BF16
			       ? unpack16<BOAR_STORAGE_BF16>(s[k])
			       : unpack16<BOAR_STORAGE_F16>(s[k]);
}

cudaError_t gpu_mf_factors_in(void *s, const float *f, uint64_t n,
			      int storage, int sm_count, cudaStream_t stream)
{
	if (storage == BOAR_STORAGE_F32)
		return cudaMemcpyAsync(s, f, n * sizeof(float),
				       cudaMemcpyDeviceToDevice, stream);
	if (n)
		factors_in<<<4 * sm_count, 256, 0, stream>>>((uint16_t *)s, f,
							      n, storage);
	return cudaGetLastError();
}

cudaError_t gpu_mf_factors_out(float *f, const void *s, uint64_t n,
			       int storage, int sm_count, cudaStream_t stream)
{
	if (storage == BOAR_STORAGE_F32)
		return cudaMemcpyAsync(f, s, n * sizeof(float),
				       cudaMemcpyDeviceToDevice, stream);
	if (n)
		factors_out<<<4 * sm_count, 256, 0, stream>>>(
			f, (const uint16_t *)s, n, storage);
	return cudaGetLastError();
}
