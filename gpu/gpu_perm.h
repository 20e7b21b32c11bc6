/* gpu_perm.h - a fresh row order per epoch without storing or sorting one.
 *
 * An epoch must visit the rows of a chunk in an order drawn from
 * (seed, epoch, chunk). Materialising a shuffled index array costs memory
 * traffic and a sort or a serial Fisher-Yates; instead the order is a
 * pseudo-random bijection computed on the fly: a 4-round balanced Feistel
 * network over 2*half bits (2^(2*half) >= n), with cycle-walking to stay
 * inside [0, n): apply the network again until the value lands below n. The
 * walk terminates because the network permutes the larger domain, and takes
 * under 4 steps on average since the domain is less than 4n. Each warp lane
 * evaluates it for a different row, so its cost is spread over the row's
 * non-zeros.
 *
 * Plain C as well as CUDA, so a CPU unit test can check that it is a
 * bijection (tests/unit/test_gpu_perm.c).
 */
#ifndef BOAR_GPU_PERM_H
#define BOAR_GPU_PERM_H

#include <stdint.h>

#ifdef __CUDACC__
#define GPU_PERM_FN static __host__ __device__ __forceinline__
#else
#define GPU_PERM_FN static inline
#endif

/* lowbias32 (Wellons): a cheap integer mixer with good avalanche. */
GPU_PERM_FN uint32_t gpu_perm_mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/* splitmix64 step: turns (seed, epoch, chunk) into independent round keys. */
GPU_PERM_FN uint64_t gpu_perm_splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Maps position p < n to a row < n; a bijection of [0, n) for fixed keys.
 * half is in 1..32; k are the four round keys. */
GPU_PERM_FN uint64_t gpu_perm_apply(uint64_t p, uint64_t n, uint32_t half,
				    uint32_t k0, uint32_t k1, uint32_t k2,
				    uint32_t k3)
{
	const uint64_t mask = half >= 32 ? 0xffffffffULL : ((1ULL << half) - 1);
	uint64_t x = p;
	do {
		uint32_t L = (uint32_t)(x >> half);
		uint32_t R = (uint32_t)(x & mask);
		uint32_t t;
		t = L ^ (uint32_t)(gpu_perm_mix32(R ^ k0) & mask); L = R; R = t;
		t = L ^ (uint32_t)(gpu_perm_mix32(R ^ k1) & mask); L = R; R = t;
		t = L ^ (uint32_t)(gpu_perm_mix32(R ^ k2) & mask); L = R; R = t;
		t = L ^ (uint32_t)(gpu_perm_mix32(R ^ k3) & mask); L = R; R = t;
		x = ((uint64_t)L << half) | R;
	} while (x >= n);
	return x;
}

/* Smallest half with 2^(2*half) >= n (at least 1). */
GPU_PERM_FN uint32_t gpu_perm_half_bits(uint64_t n)
{
	uint32_t h = 1;
	while (h < 32 && (1ULL << (2 * h)) < n)
		h++;
	return h;
}

#endif
