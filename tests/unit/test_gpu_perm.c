/* test_gpu_perm.c - the GPU engine's row order is a permutation.
 *
 * gpu/gpu_perm.h is plain C as well as CUDA, so this runs everywhere (no
 * device needed). For many sizes, including 1, powers of two and their
 * neighbours, and odd sizes where the cycle-walk does most work, every
 * position must map to a distinct row below n; different epochs must give
 * different orders; and the order must not be the identity.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu_perm.h"

static void keys(uint64_t seed, uint64_t epoch, uint32_t k[4])
{
	uint64_t s = seed ^ (epoch * 0xd1b54a32d192ed03ULL);
	for (int i = 0; i < 4; i++)
		k[i] = (uint32_t)gpu_perm_splitmix64(&s);
}

static int check(uint64_t n)
{
	uint32_t half = gpu_perm_half_bits(n), k[4], k2[4];
	unsigned char *seen = calloc(n, 1);
	uint64_t fixed = 0, same = 0;
	keys(42, 1, k);
	keys(42, 2, k2);
	if ((1ULL << (2 * half)) < n || (half > 1 && (1ULL << (2 * (half - 1))) >= n)) {
		printf("FAIL n=%llu: half %u is not the smallest with 4^half >= n\n",
		       (unsigned long long)n, half);
		return 1;
	}
	for (uint64_t p = 0; p < n; p++) {
		uint64_t r = gpu_perm_apply(p, n, half, k[0], k[1], k[2], k[3]);
		uint64_t r2 = gpu_perm_apply(p, n, half, k2[0], k2[1], k2[2], k2[3]);
		if (r >= n || seen[r]) {
			printf("FAIL n=%llu: position %llu maps to %llu (%s)\n",
			       (unsigned long long)n, (unsigned long long)p,
			       (unsigned long long)r, r >= n ? "out of range" : "seen twice");
			free(seen);
			return 1;
		}
		seen[r] = 1;
		fixed += r == p;
		same += r == r2;
	}
	free(seen);
	if (n >= 100 && (fixed > n / 10 || same > n / 10)) {
		printf("FAIL n=%llu: %llu fixed points, %llu equal across epochs: expected few\n",
		       (unsigned long long)n, (unsigned long long)fixed,
		       (unsigned long long)same);
		return 1;
	}
	return 0;
}

int main(void)
{
	static const uint64_t sizes[] = { 1, 2, 3, 4, 5, 7, 15, 16, 17, 31, 33, 100,
					  255, 256, 257, 1000, 4095, 4096, 4097,
					  65535, 65537, 100003, 1048577, 3000017 };
	int bad = 0;
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
		bad |= check(sizes[i]);
	if (!bad)
		printf("ok: %zu sizes are permutations\n", sizeof sizes / sizeof *sizes);
	return bad;
}
