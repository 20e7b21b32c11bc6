/* feature_slot.h - where a feature id lands in a hashed weight vector. */
#ifndef BOAR_FEATURE_SLOT_H
#define BOAR_FEATURE_SLOT_H

#include <stdint.h>

/* The weight slot of feature id `id` in a model/dataset hashed with
 * hash_bits (0: the id itself). Used by parsers and predict alike so both
 * agree. */
static inline uint32_t boar_feature_slot(uint64_t id, int hash_bits)
{
	if (!hash_bits)
		return (uint32_t)id;
	/* murmur3's 64-bit finalizer: cheap, and every input bit reaches every
	 * output bit, so nearby ids do not collide in the low bits. */
	uint64_t h = id;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return (uint32_t)(h & ((1ULL << hash_bits) - 1));
}

#endif
