/* parse_rows.c - a piece's errors and the sorting of hashed rows, for
 * every text parser (the driver that runs them is parse_driver.c). See
 * parse_rows.h. */
#include <stdarg.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/radix.h"
#include "parse_rows.h"

void row_piece_fail(struct row_piece *c, int code, uint64_t line,
		    const char *fmt, ...)
{
	va_list ap;
	c->err_code = code;
	c->err_line = line;
	va_start(ap, fmt);
	vsnprintf(c->err_msg, sizeof c->err_msg, fmt, ap);
	va_end(ap);
}

/* Rows of up to RANK_MAX entries are sorted by rank: an entry's place is
 * the number of entries with a smaller slot, plus the equal ones before it
 * (so equal slots keep their order). That is n^2 comparisons, but without
 * a branch: the compiler runs them 8 at a time, where an insertion sort
 * of random hashes mispredicts about once per entry and was a third of
 * the VW parse. Longer rows (VW interactions make rows of hundreds) are
 * radix-sorted. */
#define RANK_MAX 64

static size_t merge_sorted(const uint32_t *ss, const float *sv, size_t n,
			   uint32_t *ix, float *vx)
{
	size_t o = 0;
	for (size_t k = 0; k < n; k++) {
		if (o && ix[o - 1] == ss[k]) {
			vx[o - 1] += sv[k];
		} else {
			ix[o] = ss[k];
			vx[o] = sv[k];
			o++;
		}
	}
	return o;
}

size_t boar_sort_merge_row(uint32_t *ix, float *vx, size_t n,
			   uint64_t *scratch)
{
	if (n < 2)
		return n;
	if (n <= RANK_MAX) {
		uint32_t ss[RANK_MAX];
		float sv[RANK_MAX];
		for (size_t i = 0; i < n; i++) {
			uint32_t si = ix[i], r = 0;
			for (size_t j = 0; j < i; j++)
				r += ix[j] <= si;
			for (size_t j = i + 1; j < n; j++)
				r += ix[j] < si;
			ss[r] = si;
			sv[r] = vx[i];
		}
		return merge_sorted(ss, sv, n, ix, vx);
	}
	/* (slot, index) in one word: sorting words sorts by slot and keeps
	 * equal slots in order, so a slot's sum is added up in file order
	 * either way */
	uint64_t *s = scratch;
	for (size_t k = 0; k < n; k++)
		s[k] = (uint64_t)ix[k] << 32 | k;
	/* by the high 32 bits (the slot): where qsort took 40% of a VW
	 * parse with -q ::, this is a few passes of counting */
	s = boar_radix_sort_u64(s, scratch + n, n, 32);
	/* then (slot, value bits), read while vx is still whole */
	for (size_t k = 0; k < n; k++) {
		uint32_t bits;
		memcpy(&bits, &vx[(uint32_t)s[k]], 4);
		s[k] = (s[k] & 0xffffffff00000000ULL) | bits;
	}
	size_t o = 0;
	for (size_t k = 0; k < n; k++) {
		uint32_t slot = (uint32_t)(s[k] >> 32), bits = (uint32_t)s[k];
		float v;
		memcpy(&v, &bits, 4);
		if (o && ix[o - 1] == slot) {
			vx[o - 1] += v;
		} else {
			ix[o] = slot;
			vx[o] = v;
			o++;
		}
	}
	return o;
}

size_t row_sort_merge(struct row_piece *c, uint64_t line, uint32_t *ix,
		      float *vx, size_t n)
{
	if (n > RANK_MAX && 2 * n > c->cap_scratch) {
		size_t cap = c->cap_scratch ? c->cap_scratch : 128;
		while (cap < 2 * n)
			cap *= 2;
		uint64_t *s = realloc(c->scratch, cap * sizeof *s);
		if (!s) {
			row_piece_fail(c, BOAR_ENOMEM, line,
				       "out of memory while parsing");
			return (size_t)-1;
		}
		c->scratch = s;
		c->cap_scratch = cap;
	}
	size_t m = boar_sort_merge_row(ix, vx, n, c->scratch);
	/* Values come in finite: only a sum of merged slots can overflow. */
	if (m < n && boar_first_nonfinite(vx, m) < m) {
		row_piece_fail(c, BOAR_EPARSE, line, BOAR_MSG_MERGED_INFINITE);
		return (size_t)-1;
	}
	return m;
}

size_t boar_first_nonfinite(const float *vx, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (!isfinite(vx[k]))
			return k;
	return n;
}
