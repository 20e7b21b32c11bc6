/* radix.h - a least-significant-byte-first radix sort of 64-bit words:
 * the parsers' hashed rows (by slot) and the AUC's scores (by value). */
#ifndef BOAR_BASE_RADIX_H
#define BOAR_BASE_RADIX_H

#include <stddef.h>
#include <stdint.h>

/* Sorts s[0..n) stably by bits [from_bit, 64) of each word (from_bit a
 * multiple of 8), t a second buffer of n words: a pass of counting and
 * one of placing per byte, skipping a byte that every word shares (the
 * high ones of a small hash space, the exponent of scores of one
 * magnitude). Returns the buffer that holds the result, s or t. */
uint64_t *boar_radix_sort_u64(uint64_t *s, uint64_t *t, size_t n,
			      int from_bit);

#endif
