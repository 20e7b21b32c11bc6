/* murmur3.c - MurmurHash3 x86_32 (see murmur3.h). */
#include "murmur3.h"

static inline uint32_t rotl32(uint32_t x, int r)
{
	return (x << r) | (x >> (32 - r));
}

/* The per-block scramble, also applied to the zero-padded tail. */
static inline uint32_t scramble(uint32_t k)
{
	k *= 0xcc9e2d51u;
	k = rotl32(k, 15);
	return k * 0x1b873593u;
}

uint32_t boar_murmur3_32(const void *key, size_t len, uint32_t seed)
{
	const unsigned char *p = key;
	uint32_t h = seed;
	size_t nblocks = len / 4;
	for (size_t b = 0; b < nblocks; b++, p += 4) {
		uint32_t k = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
			     (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
		h ^= scramble(k);
		h = rotl32(h, 13);
		h = h * 5 + 0xe6546b64u;
	}
	uint32_t t = 0;
	switch (len & 3) {
	case 3:
		t ^= (uint32_t)p[2] << 16;
		/* fall through */
	case 2:
		t ^= (uint32_t)p[1] << 8;
		/* fall through */
	case 1:
		t ^= p[0];
		h ^= scramble(t);
	}
	/* the length is folded in (mod 2^32, as the reference does), then
	 * every bit is spread over the word */
	h ^= (uint32_t)len;
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}
