/* The first index of a sorted run of 64-bit keys at or above a bound: one
 * binary search for the cluster's key lists (the client's merges of its
 * own pushes, the AdaGrad sums' slots among a clock's keys). */
#ifndef BOAR_BASE_LOWER_BOUND_H
#define BOAR_BASE_LOWER_BOUND_H

#include <stdint.h>

/* Index of the first key >= bound in keys[lo..n) (ascending), or n. */
static inline uint64_t boar_lower_bound_u64(const uint64_t *keys, uint64_t lo,
					    uint64_t n, uint64_t bound)
{
	uint64_t hi = n;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (keys[mid] < bound)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
