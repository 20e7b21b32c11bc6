/* parse_rows.c - pieces, hashed-row sorting and closing up for the VW and
 * CSV parsers. See parse_rows.h. */
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "parse_rows.h"

#define WEIGHT_SLOT 5 /* dataset.h reserves owned[5] for the weights */

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

/* Sorts s[0..n) stably by the high 32 bits (the slot), t a second buffer
 * of n words: least significant byte first, skipping a byte that every
 * slot shares (the high ones of a small hash space). Returns the buffer
 * that holds the result. Where qsort took 40% of a VW parse with -q ::,
 * this is a few passes of counting. */
static uint64_t *radix_by_slot(uint64_t *s, uint64_t *t, size_t n)
{
	uint32_t any = 0, all = ~0u;
	for (size_t k = 0; k < n; k++) {
		any |= (uint32_t)(s[k] >> 32);
		all &= (uint32_t)(s[k] >> 32);
	}
	uint32_t vary = any ^ all;
	for (int sh = 32; sh < 64; sh += 8) {
		if (!(vary >> (sh - 32) & 0xff))
			continue;
		size_t at[256] = { 0 };
		for (size_t k = 0; k < n; k++)
			at[s[k] >> sh & 0xff]++;
		for (size_t d = 0, sum = 0; d < 256; d++) {
			size_t c = at[d];
			at[d] = sum;
			sum += c;
		}
		for (size_t k = 0; k < n; k++)
			t[at[s[k] >> sh & 0xff]++] = s[k];
		uint64_t *x = s;
		s = t;
		t = x;
	}
	return s;
}

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
	s = radix_by_slot(s, scratch + n, n);
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

int row_out_alloc(struct row_piece *pc, size_t n, int with_weight,
		  struct row_out *o, struct boar_dataset *d)
{
	uint64_t rows_ub = 0, nnz_ub = 0;
	for (size_t k = 0; k < n; k++) {
		pc[k].rbase = rows_ub;
		pc[k].nbase = nnz_ub;
		rows_ub += pc[k].rows_ub;
		nnz_ub += pc[k].nnz_ub;
	}
	memset(o, 0, sizeof *o);
	o->row_ptr = malloc((rows_ub + 1) * sizeof *o->row_ptr);
	o->label = malloc((rows_ub ? rows_ub : 1) * sizeof *o->label);
	o->idx = malloc((nnz_ub ? nnz_ub : 1) * sizeof *o->idx);
	o->val = malloc((nnz_ub ? nnz_ub : 1) * sizeof *o->val);
	if (with_weight)
		o->weight = malloc((rows_ub ? rows_ub : 1) * sizeof *o->weight);
	d->owned[0] = o->row_ptr;
	d->owned[1] = o->idx;
	d->owned[2] = o->val;
	d->owned[3] = o->label;
	d->owned[WEIGHT_SLOT] = o->weight;
	if (!o->row_ptr || !o->label || !o->idx || !o->val ||
	    (with_weight && !o->weight))
		return BOAR_ENOMEM;
	return 0;
}

/* realloc down to what was used; keeps the block if that fails. */
static void *shrink(void *p, size_t bytes)
{
	void *q = realloc(p, bytes ? bytes : 1);
	return q ? q : p;
}

void row_out_finish(struct row_piece *pc, size_t n, int threads,
		    int hash_bits, struct row_out *o, struct boar_dataset *d)
{
	uint64_t R = 0, N = 0, rows_ub = 0, nnz_ub = 0;
	int moves = 0, weighted = 0;
	for (size_t k = 0; k < n; k++) {
		moves |= R != pc[k].rbase || N != pc[k].nbase;
		weighted |= pc[k].weighted;
		R += pc[k].rows;
		N += pc[k].nnz;
		rows_ub += pc[k].rows_ub;
		nnz_ub += pc[k].nnz_ub;
	}
	if (!moves) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (n > 1)
		for (size_t k = 0; k < n; k++) {
			uint64_t *rp = o->row_ptr + pc[k].rbase + 1;
			for (uint64_t r = 0; r < pc[k].rows; r++)
				rp[r] += pc[k].nbase;
		}
	} else {
		/* in file order, each region to a lower (or the same)
		 * address: nothing is overwritten before it has moved */
		R = N = 0;
		for (size_t k = 0; k < n; k++) {
			const struct row_piece *c = &pc[k];
			memmove(o->label + R, o->label + c->rbase, c->rows * 4);
			if (o->weight)
				memmove(o->weight + R, o->weight + c->rbase,
					c->rows * 4);
			memmove(o->idx + N, o->idx + c->nbase, c->nnz * 4);
			memmove(o->val + N, o->val + c->nbase, c->nnz * 4);
			uint64_t *to = o->row_ptr + R + 1;
			const uint64_t *from = o->row_ptr + c->rbase + 1;
			for (uint64_t r = 0; r < c->rows; r++)
				to[r] = from[r] + N;
			R += c->rows;
			N += c->nnz;
		}
	}
	o->row_ptr[0] = 0;
	if (N < nnz_ub) {
		o->idx = shrink(o->idx, N * 4);
		o->val = shrink(o->val, N * 4);
	}
	if (R < rows_ub) {
		o->label = shrink(o->label, R * 4);
		o->row_ptr = shrink(o->row_ptr, (R + 1) * 8);
		if (o->weight && weighted)
			o->weight = shrink(o->weight, R * 4);
	}
	if (o->weight && !weighted) {
		free(o->weight); /* all 1: the same as none, and cheaper */
		o->weight = NULL;
	}
	d->n_rows = R;
	d->nnz = N;
	d->dim = 1ULL << hash_bits;
	d->hash_bits = hash_bits;
	d->slot_ids = 1; /* named features, hashed here: ids are slots */
	boar_dataset_adopt_rows(d, o->row_ptr, o->idx, o->val, o->label,
				o->weight);
}

int row_pieces_error(const struct row_piece *pc, size_t n, const char *path,
		     uint64_t line_base, boar_error *err)
{
	uint64_t before = line_base;
	for (size_t k = 0; k < n; k++) {
		if (pc[k].err_code)
			return boar_fail_line(err, pc[k].err_code, path,
					      before + pc[k].err_line, "%s",
					      pc[k].err_msg);
		before += pc[k].lines;
	}
	return 0;
}

uint64_t row_pieces_lines(const struct row_piece *pc, size_t n)
{
	uint64_t lines = 0;
	for (size_t k = 0; k < n; k++)
		lines += pc[k].lines;
	return lines;
}

void row_pieces_free(struct row_piece *pc, size_t n)
{
	if (!pc)
		return;
	for (size_t k = 0; k < n; k++) {
		free(pc[k].scratch);
		free(pc[k].flags);
	}
	free(pc);
}
