/* parse_rows.h - what the hashing text parsers (VW, CSV) share: a piece of
 * the text with its bounds, its region of the output arrays and its first
 * error; sorting a hashed row by slot; closing up the pieces' regions into
 * one CSR dataset (library-internal).
 *
 * The scheme is parse_libsvm.c's: a counting pass gives each piece bounds
 * on its rows and non-zeros, the arrays are allocated once from them, and
 * every piece parses straight into its own region; no per-token or
 * per-line allocation. Rows of hashed features are sorted by slot and
 * colliding slots summed, so every row is a valid CSR row.
 */
#ifndef BOAR_PARSE_ROWS_H
#define BOAR_PARSE_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"

struct row_piece {
	const char *beg, *end;
	uint64_t rows_ub, nnz_ub; /* bounds from the counting pass */
	uint64_t rbase, nbase;    /* its region of the final arrays */
	uint64_t lines;           /* lines seen (all of them if no error) */
	uint64_t rows, nnz;       /* used */
	int weighted;             /* a row had a weight other than 1 */
	uint64_t *scratch;        /* packed (slot, value) of a row */
	size_t cap_scratch;
	unsigned char *flags;     /* CSV: per-column flags of the scan pass */
	int err_code;
	uint64_t err_line;        /* local, 1-based */
	char err_msg[320];
};

/* The arrays every piece writes into (its own region of each). */
struct row_out {
	uint64_t *row_ptr; /* piece-local end offsets at [rbase + r + 1] */
	uint32_t *idx;
	float *val, *label;
	float *weight;     /* NULL when the format has no weights */
};

void row_piece_fail(struct row_piece *c, int code, uint64_t line,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Sorts the n entries of a hashed row by slot (stably) and sums the values
 * of equal slots; returns the new length. scratch must hold 2n words when
 * n is over 64 (shorter rows are ranked on the stack). Shared by every
 * parser that hashes ids: LIBSVM with hash_bits, VW, CSV. */
size_t boar_sort_merge_row(uint32_t *ix, float *vx, size_t n,
			   uint64_t *scratch);

/* Index of the first non-finite value of vx[0..n), or n when all are
 * finite: finite values in the file can still add up (features sharing a
 * hashed slot) or scale (a VW namespace weight) to infinity. */
size_t boar_first_nonfinite(const float *vx, size_t n);

/* The message for a non-finite merged value, one wording for every
 * parser. */
#define BOAR_MSG_MERGED_INFINITE \
	"features sharing a hashed slot add up to an infinite value; " \
	"scale the values down"

/* row_sort_merge: the same for a piece, growing its scratch first. Returns
 * the new length, or (size_t)-1 when the scratch space cannot grow or a
 * merged value is not finite (the error is recorded in c). */
size_t row_sort_merge(struct row_piece *c, uint64_t line, uint32_t *ix,
		      float *vx, size_t n);

/* Allocates o's arrays for the pieces' bounds (filling rbase/nbase) and
 * hands them to d->owned[] so that freeing d frees them.
 * @return 0 or BOAR_ENOMEM. */
int row_out_alloc(struct row_piece *pc, size_t n, int with_weight,
		  struct row_out *o, struct boar_dataset *d);

/* After all pieces parsed without error: closes up the regions, sets the
 * dataset's arrays, n_rows, nnz, dim = 2^hash_bits and hash_bits; drops the
 * weights when every row weighed 1. */
void row_out_finish(struct row_piece *pc, size_t n, int threads,
		    int hash_bits, struct row_out *o, struct boar_dataset *d);

/* The first piece error (in file order) as a boar_error naming path and
 * the line in the file (line_base lines come before the block); 0 when
 * there is none. */
int row_pieces_error(const struct row_piece *pc, size_t n, const char *path,
		     uint64_t line_base, boar_error *err);

/* The lines the pieces saw (all of them, when there was no error). */
uint64_t row_pieces_lines(const struct row_piece *pc, size_t n);

void row_pieces_free(struct row_piece *pc, size_t n);

#endif
