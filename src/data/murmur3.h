/* murmur3.h - MurmurHash3 x86_32, the hash Vowpal Wabbit gives feature
 * names (library-internal).
 *
 * Written from Austin Appleby's public description of the algorithm
 * (4-byte little-endian blocks mixed with two multiply-rotate constants, a
 * tail of 1-3 bytes, the length, then the 32-bit finalizer). Byte order is
 * fixed (little-endian reads whatever the host), so a hash, and therefore a
 * hashed dataset or model, is the same on every machine.
 *
 * vw_hash_name() is VW's rule for a feature or namespace name on top of it:
 * a name of decimal digits only (the empty one too) is its own number
 * plus the seed (so "123" in namespace seed s lands on 123 + s), anything
 * else is murmur3(name, seed). The CSV reader uses the same function for categorical values.
 */
#ifndef BOAR_MURMUR3_H
#define BOAR_MURMUR3_H

#include <stddef.h>
#include <stdint.h>

uint32_t boar_murmur3_32(const void *key, size_t len, uint32_t seed);

static inline uint32_t boar_vw_hash_name(const char *s, size_t len,
					 uint32_t seed)
{
	uint32_t v = 0;
	for (size_t k = 0; k < len; k++) {
		unsigned d = (unsigned char)s[k] - '0';
		if (d > 9)
			return boar_murmur3_32(s, len, seed);
		v = v * 10 + d; /* wraps mod 2^32, as VW's size_t does in the low bits */
	}
	return v + seed;
}

#endif
