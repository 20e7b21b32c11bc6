/* mem_limit.h - the memory limit on datasets and models (library-internal).
 *
 * A file of a few bytes can name feature 2^32-1 or user 4294967290, and a
 * model sized by the largest id then needs tens or hundreds of GiB: calloc
 * hands out the address space and the process dies later, touching it (or
 * writes a 16 GiB model file without a word). So every allocation whose
 * size the input decides is checked first against a limit: the caller's
 * max_memory (boar_load_options, boar_options; the CLI's --max-memory), or
 * by default three quarters of the machine's physical memory. What does
 * not fit is refused before anything is allocated, with the size it would
 * need and how to raise the limit.
 */
#ifndef BOAR_MEM_LIMIT_H
#define BOAR_MEM_LIMIT_H

#include <stddef.h>
#include <stdint.h>

#include "boar.h"

/* The limit in bytes: requested when not 0, else 3/4 of physical memory
 * (or no limit when the system does not say). */
uint64_t boar_memory_limit(uint64_t requested);

/* Writes bytes as "1.5 GiB" (or "512 B") into buf. */
void boar_format_bytes(uint64_t bytes, char *buf, size_t n);

/* 0 when need bytes fit the limit; else BOAR_ENOMEM with err saying
 * "PATH: WHAT needs N, over the memory limit of L (...)"; path may be
 * NULL. */
int boar_memory_check(uint64_t need, uint64_t requested, const char *path,
		      const char *what, boar_error *err);

/* a * b, saturating at UINT64_MAX (sizes from untrusted counts). */
static inline uint64_t boar_mul_sat(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline uint64_t boar_add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

#endif
