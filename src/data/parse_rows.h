/* parse_rows.h - the one count-then-parse driver of the text formats
 * (LIBSVM, VW, CSV, ratings) and what they share: a piece of the text
 * with its bounds, its region of the output arrays and its first error;
 * sorting a hashed row by slot; closing up the pieces' regions into one
 * dataset (library-internal).
 *
 * The text is cut into pieces at line starts. A counting pass gives each
 * piece bounds on its rows and non-zeros, the arrays are allocated once
 * from them, and a parsing pass has every piece parse straight into its
 * own region: no per-token or per-line allocation, no growth, no copy of
 * the data. Regions are then closed up where a piece used less than its
 * bound (comments, blank lines, merged slots). Both passes run on OpenMP
 * threads, a piece at a time. Each piece counts its lines and stops at
 * its first error; the error reported is that of the first piece with
 * one, so it is the first in the file, and its line number is the sum of
 * the lines before it.
 *
 * The pieces are either of a block of text in memory (row_parse_text:
 * gzip, pipes, stdin, the block reader of parse_stream.c) or byte ranges
 * of a regular file (row_parse_file), which each thread reads through a
 * small window of its own that it reuses in both passes, so the file's
 * text is never held whole. A format gives the driver only its counting
 * and its parsing of whole lines (struct row_format); both are called on
 * successive runs of whole lines of a piece and carry on its counts. Read
 * twice, a file could change in between: a parser that meets more rows or
 * non-zeros than were counted stops with row_piece_changed() instead of
 * writing past its region, and the file's size and times are checked
 * again at the end.
 *
 * Rows of hashed features are sorted by slot and colliding slots summed,
 * so every row is a valid CSR row.
 */
#ifndef BOAR_PARSE_ROWS_H
#define BOAR_PARSE_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"

struct parse_input; /* parse_common.h */
struct parse_file;

struct row_piece {
	const char *beg, *end;    /* text in memory */
	uint64_t fbeg, fend;      /* or bytes of a file, read in windows */
	uint64_t rows_ub, nnz_ub; /* bounds from the counting pass */
	uint64_t rbase, nbase;    /* its region of the final arrays */
	uint64_t lines;           /* lines seen (all of them if no error) */
	uint64_t rows, nnz;       /* used */
	uint64_t dim, dim2;       /* largest id + 1: LIBSVM features;
				     ratings users and items */
	int weighted;             /* a row had a weight other than 1 */
	uint64_t *scratch;        /* packed (slot, value) of a row */
	size_t cap_scratch;
	void *aux;                /* the format's own (CSV: column flags of
				     the counting pass; VW: a row) */
	int err_code;
	uint64_t err_line;        /* local, 1-based; 0 names no line */
	char err_msg[320];
};

/* The arrays every piece writes into (its own region of each). */
struct row_out {
	uint64_t *row_ptr; /* piece-local end offsets at [rbase + r + 1] */
	uint32_t *idx;
	float *val, *label;
	float *weight;     /* NULL when the format has no weights */
	uint32_t *user, *item; /* ratings: label is the rating */
	uint64_t rows_cap, nnz_cap; /* their sizes (the counted bounds) */
};

/* A text format, for the driver. count and parse get whole lines [p, end)
 * of piece c (every line ends in '\n' but perhaps the piece's last) and
 * carry on c's counts: count adds to lines, rows_ub and nnz_ub (and may
 * record an error), parse adds the rows to c's region of o and to lines,
 * rows, nnz. */
struct row_format {
	int task;      /* BOAR_TASK_LINEAR (CSR rows) or _MF (triplets) */
	int weights;   /* rows may carry instance weights */
	int hash_bits; /* linear: ids are slots of 2^hash_bits (0: dim is
			  the largest id + 1, c->dim) */
	int slot_ids;  /* the slots are the parser's own hashes (VW, CSV) */
	int serial;    /* parse on one thread (a names sink is not shared) */
	const void *ctx;
	void (*count)(struct row_piece *c, const char *p, const char *end,
		      const void *ctx);
	void (*parse)(struct row_piece *c, const struct row_out *o,
		      const char *p, const char *end, const void *ctx);
	/* Optional: the pieces' aux before the counting pass (0 or -1: out
	 * of memory) and after (NULL: free(aux)); and a look at all counted
	 * pieces before the arrays are allocated (CSV settles its columns'
	 * kinds, VW checks its generated features' memory): 0 or a BOAR_E*
	 * with err set. */
	int (*aux_init)(struct row_piece *c, const void *ctx);
	void (*aux_free)(struct row_piece *c);
	int (*counted)(struct row_piece *pc, size_t n, const void *ctx,
		       const char *path, uint64_t line_base, boar_error *err);
};

/* Parses the text of a block, in->buf [skip, len), whose first skip bytes
 * hold skip_lines lines that are no rows (a header), into *out.
 * *in->lines: all the block's lines.
 * @return 0 or a BOAR_E* code with err naming the file and line. */
int row_parse_text(const struct parse_input *in, size_t skip,
		   uint64_t skip_lines, const struct row_format *f,
		   struct boar_dataset **out, boar_error *err);

/* Parses bytes [pf->beg, pf->end) of a regular file in windows (the
 * skip_lines lines before pf->beg are no rows) into *out, the file's
 * size and times checked again at the end. *lines: all the lines.
 * @return 0 or a BOAR_E* code with err naming the file (and line). */
int row_parse_file(const struct parse_file *pf, uint64_t skip_lines,
		   const struct row_format *f, struct boar_dataset **out,
		   uint64_t *lines, boar_error *err);

/* Counting-pass help: n newlines in whole lines [p, end) are as many
 * lines, and a last line without one is one more; each may be a row. */
void row_count_lines(struct row_piece *c, const char *p, const char *end,
		     uint64_t newlines);

/* The parsing pass met more rows or non-zeros than were counted: the file
 * changed between the two reads (text in memory cannot). */
void row_piece_changed(struct row_piece *c);

/* Records c's error (its first: the piece stops there), at line `line`
 * of the piece (0: no line). */
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


/* Ends row `rows` of piece c, whose entries are [row_start, *nnz) of its
 * region of o: sorted by slot and merged when `hashed`, then its label,
 * weight (where o has weights) and end stored.
 * @return 0, or -1 with the error recorded in c (a merged value not
 *         finite, no memory, or more rows than counted: the file
 *         changed). */
static inline int row_end(struct row_piece *c, const struct row_out *o,
			  uint64_t line, int hashed, size_t row_start,
			  size_t *nnz, size_t rows, float label, float weight)
{
	if (hashed) {
		size_t m = row_sort_merge(c, line, o->idx + c->nbase + row_start,
					  o->val + c->nbase + row_start,
					  *nnz - row_start);
		if (m == (size_t)-1)
			return -1;
		*nnz = row_start + m;
	}
	if (rows == c->rows_ub) { /* its line was counted */
		row_piece_changed(c);
		return -1;
	}
	o->label[c->rbase + rows] = label;
	if (o->weight)
		o->weight[c->rbase + rows] = weight;
	o->row_ptr[c->rbase + rows + 1] = *nnz;
	return 0;
}

#endif