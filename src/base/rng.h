/* rng.h - small, fast, seedable random numbers for shuffling and init.
 *
 * splitmix64 turns any (seed, stream) pair into a well-mixed state, so that
 * per-epoch and per-segment generators are independent and reproducible
 * whatever the thread count.
 */
#ifndef BOAR_RNG_H
#define BOAR_RNG_H

#include <stdint.h>

static inline uint64_t boar_splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* A generator for one independent stream of a seed (e.g. epoch, segment). */
typedef struct boar_rng {
	uint64_t s;
} boar_rng;

static inline boar_rng boar_rng_make(uint64_t seed, uint64_t a, uint64_t b)
{
	uint64_t s = seed;
	boar_rng r;
	s ^= boar_splitmix64(&s) + a * 0xD1B54A32D192ED03ULL;
	s ^= boar_splitmix64(&s) + b * 0xABC98388FB8FAC03ULL;
	r.s = boar_splitmix64(&s);
	return r;
}

static inline uint64_t boar_rng_next(boar_rng *r)
{
	return boar_splitmix64(&r->s);
}

/* The generator r after n more draws (splitmix64's state moves by a
 * constant per draw): random access into a stream. */
static inline boar_rng boar_rng_skip(boar_rng r, uint64_t n)
{
	r.s += n * 0x9E3779B97F4A7C15ULL;
	return r;
}

/* Uniform in [0, n) without modulo bias worth caring about (n < 2^32). */
static inline uint32_t boar_rng_below(boar_rng *r, uint32_t n)
{
	return (uint32_t)(((boar_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Uniform in [0, 1). */
static inline double boar_rng_unit(boar_rng *r)
{
	return (boar_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Fisher-Yates shuffle of a[0..n) (n < 2^32). */
static inline void boar_shuffle_u32(uint32_t *a, uint64_t n, boar_rng *r)
{
	for (uint64_t i = n; i > 1; i--) {
		uint64_t j = boar_rng_below(r, (uint32_t)i);
		uint32_t t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}

#endif
