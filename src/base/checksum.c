/* checksum.c - the fast block checksum of checksum.h. */
#include <stdlib.h>
#include <string.h>

#include "checksum.h"

#define K1 0x9E3779B97F4A7C15ULL /* 2^64 / golden ratio, odd */
#define K2 0xD6E8FEB86659FD93ULL /* odd */
#define BLOCK (8u << 20)

static inline uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/* One lane step: bijective in a (for fixed w) and in w (for fixed a). */
static inline uint64_t step(uint64_t a, uint64_t w)
{
	return rotl(a + w * K2, 31) * K1;
}

static inline uint64_t avalanche(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t boar_hash64(const void *buf, size_t len, uint64_t seed)
{
	const unsigned char *p = buf;
	uint64_t a = seed + K1, b = seed ^ K2, c = seed - K1, d = ~seed;
	size_t n = len;
	while (n >= 32) {
		uint64_t w[4];
		memcpy(w, p, 32);
		a = step(a, w[0]);
		b = step(b, w[1]);
		c = step(c, w[2]);
		d = step(d, w[3]);
		p += 32;
		n -= 32;
	}
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		a = step(a, w);
		p += 8;
		n -= 8;
	}
	if (n) {
		uint64_t w = 0;
		memcpy(&w, p, n);
		b = step(b, w ^ ((uint64_t)n << 56));
	}
	uint64_t h = (uint64_t)len * K1;
	h = avalanche(h ^ a);
	h = avalanche(h ^ rotl(b, 17));
	h = avalanche(h ^ rotl(c, 29));
	h = avalanche(h ^ rotl(d, 43));
	return h;
}

uint64_t boar_checksum(const void *buf, size_t len, int threads)
{
	const unsigned char *p = buf;
	size_t nb = (len + BLOCK - 1) / BLOCK;
	if (nb <= 1)
		return boar_hash64(buf, len, 0);
	uint64_t *part = malloc(nb * sizeof *part);
	if (!part) { /* same value, one block hash at a time */
		uint64_t h = (uint64_t)len;
		for (size_t k = 0; k < nb; k++) {
			size_t n = k + 1 < nb ? BLOCK : len - k * BLOCK;
			uint64_t x = boar_hash64(p + k * BLOCK, n, k);
			h = boar_hash64(&x, 8, h);
		}
		return h;
	}
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads > 0 ? threads : 1)
	for (size_t k = 0; k < nb; k++) {
		size_t n = k + 1 < nb ? BLOCK : len - k * BLOCK;
		part[k] = boar_hash64(p + k * BLOCK, n, k);
	}
	uint64_t h = (uint64_t)len;
	for (size_t k = 0; k < nb; k++)
		h = boar_hash64(&part[k], 8, h);
	free(part);
	return h;
}
