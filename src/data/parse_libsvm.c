/* parse_libsvm.c - the LIBSVM / SVMlight text parser.
 *
 * "label idx:val idx:val ... [# comment]" with 1-based, strictly ascending
 * indices; "qid:N" tokens are skipped; blank lines and comment lines are
 * skipped; a row with only a label is an empty row. Ids become 0-based (and
 * are hashed into 2^hash_bits slots when asked, after which a row is sorted
 * and colliding slots merged by adding their values, so rows stay ascending).
 *
 * Two passes over line-aligned pieces of the text, both on OpenMP threads.
 * The first counts each piece's newlines and ':' bytes: bounds on its rows
 * and non-zeros (every feature has exactly one ':'). The final arrays are
 * allocated once from those bounds and the second pass parses each piece
 * straight into its own region of them: no per-token or per-line
 * allocation, no growth, no copy of the data, and peak memory is the
 * dataset itself. Regions are then closed up where a piece used less than
 * its bound (comments, qid tokens, blank lines), which moves nothing for a
 * plain file. Each piece counts its lines and stops at its first error; the
 * error reported is that of the first piece with one, so it is the first in
 * the file, and its line number is the sum of the lines before it.
 *
 * The pieces are either of a block of text in memory (boar_parse_libsvm)
 * or byte ranges of a regular file (boar_parse_libsvm_file), which each
 * thread reads through a small window of its own in both passes, so the
 * file's text is never held whole. Read twice, a file could change in
 * between: a piece that meets more rows or ':' than were counted stops
 * with an error instead of writing past its region.
 */
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem_limit.h"
#include "parse_chunks.h"
#include "parse_common.h"
#include "parse_rows.h"
#include "feature_slot.h"

struct lsvm_piece {
	const char *beg, *end;    /* text in memory */
	uint64_t fbeg, fend;      /* or bytes of a file, read in windows */
	uint64_t rows_ub, nnz_ub; /* bounds from the counting pass */
	uint64_t rbase, nbase;    /* its region of the final arrays */
	uint64_t lines;           /* lines seen (all of them if no error) */
	uint64_t rows, nnz;       /* used */
	uint64_t dim;             /* largest slot + 1 */
	uint64_t *scratch;        /* hashing: packed (slot, value) of a row */
	size_t cap_scratch;
	int err_code;
	uint64_t err_line;        /* local, 1-based */
	char err_msg[320];
};

/* The arrays every piece writes into (its own region of each). */
struct lsvm_out {
	uint64_t *row_ptr; /* piece-local end offsets at [rbase + r + 1] */
	uint32_t *idx;
	float *val, *label;
};

/* Grows *p (of *cap elements of size sz) to hold at least need elements. */
static int grow(void **p, size_t *cap, size_t need, size_t sz)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * sz);
	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

static void fail(struct lsvm_piece *c, int code, uint64_t line,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void fail(struct lsvm_piece *c, int code, uint64_t line,
		 const char *fmt, ...)
{
	va_list ap;
	c->err_code = code;
	c->err_line = line;
	va_start(ap, fmt);
	vsnprintf(c->err_msg, sizeof c->err_msg, fmt, ap);
	va_end(ap);
}

/* Sorts out why an idx:val token did not start with "digits:" and either
 * skips it (qid:N) returning its end, or records the error and returns NULL. */
static const char *odd_token(struct lsvm_piece *c, uint64_t line,
			     const char *s, const char *eol)
{
	const char *te = pc_token_end(s, eol);
	const char *colon = memchr(s, ':', (size_t)(te - s));
	char q[64];
	pc_quote(q, sizeof q, s, te);
	if (te - s >= 4 && !memcmp(s, "qid:", 4))
		return te;
	if (!colon)
		fail(c, BOAR_EPARSE, line,
		     "missing ':' in %s: features are written idx:val", q);
	else if (colon == s)
		fail(c, BOAR_EPARSE, line, "missing index before ':' in %s", q);
	else if (*s == '-')
		fail(c, BOAR_EPARSE, line,
		     "negative index in %s: indices are positive integers", q);
	else
		fail(c, BOAR_EPARSE, line,
		     "bad index in %s: expected a positive integer before ':'",
		     q);
	return NULL;
}

/* Parses the whole lines [p, end) of piece c, after those it has parsed
 * already (its counts go on), into its region of o. */
static void parse_piece(struct lsvm_piece *c, const struct lsvm_out *o,
		       int hash_bits, const char *p, const char *end)
{
	uint64_t line = c->lines, dim = c->dim;
	size_t rows = c->rows, nnz = c->nnz;
	uint32_t *idx = o->idx + c->nbase;
	float *val = o->val + c->nbase, *label = o->label + c->rbase;
	uint64_t *rend = o->row_ptr + c->rbase + 1;
	char q[64];

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		line++;
		const char *s = pc_skip_space(p, eol);
		p = eol + 1;
		if (s == eol || *s == '#')
			continue; /* blank or comment line */

		float y = 0;
		const char *t = pc_parse_float(s, eol, &y);
		if (t == s || (t < eol && !pc_is_space((unsigned char)*t))) {
			pc_quote(q, sizeof q, s, pc_token_end(s, eol));
			fail(c, BOAR_EPARSE, line,
			     "label %s is not a number", q);
			break;
		}
		if (!isfinite(y)) {
			fail(c, BOAR_EPARSE, line, "label is NaN or infinite");
			break;
		}
		s = t;
		uint64_t prev = 0; /* 1-based; 0: no feature yet */
		size_t row_start = nnz;
		for (;;) {
			s = pc_skip_space(s, eol);
			if (s == eol || *s == '#')
				break;
			uint64_t id;
			int of;
			const char *colon = pc_parse_u64(s, eol, &id, &of);
			if (colon == s || colon == eol || *colon != ':') {
				s = odd_token(c, line, s, eol);
				if (!s)
					goto stop;
				continue;
			}
			if (of || id > UINT32_MAX) {
				pc_quote(q, sizeof q, s, colon);
				fail(c, BOAR_EPARSE, line,
				     "index %s is too large: indices must be < 2^32",
				     q);
				goto stop;
			}
			if (id == 0) {
				fail(c, BOAR_EPARSE, line,
				     "index 0: indices are 1-based");
				goto stop;
			}
			if (id <= prev) {
				if (id == prev)
					fail(c, BOAR_EPARSE, line,
					     "duplicate index %llu",
					     (unsigned long long)id);
				else
					fail(c, BOAR_EPARSE, line,
					     "index %llu after %llu: indices must be ascending",
					     (unsigned long long)id,
					     (unsigned long long)prev);
				goto stop;
			}
			float v = 0;
			const char *vs = colon + 1;
			t = pc_parse_float(vs, eol, &v);
			if (t == vs ||
			    (t < eol && !pc_is_space((unsigned char)*t))) {
				pc_quote(q, sizeof q, vs, pc_token_end(vs, eol));
				fail(c, BOAR_EPARSE, line,
				     "value %s of index %llu is not a number", q,
				     (unsigned long long)id);
				goto stop;
			}
			if (!isfinite(v)) {
				fail(c, BOAR_EPARSE, line,
				     "value of index %llu is NaN or infinite",
				     (unsigned long long)id);
				goto stop;
			}
			if (nnz == c->nnz_ub) /* more than counted */
				goto changed;
			idx[nnz] = boar_feature_slot(id - 1, hash_bits);
			val[nnz] = v;
			nnz++;
			if (id > dim)
				dim = id; /* 1-based id = 0-based id + 1 */
			prev = id;
			s = t;
		}
		if (hash_bits) {
			size_t n = nnz - row_start;
			if (grow((void **)&c->scratch, &c->cap_scratch, 2 * n, 8)) {
				fail(c, BOAR_ENOMEM, line,
				     "out of memory while parsing");
				break;
			}
			nnz = row_start + boar_sort_merge_row(idx + row_start,
							      val + row_start,
							      n, c->scratch);
			if (nnz - row_start < n && /* a slot summed */
			    boar_first_nonfinite(val + row_start,
						 nnz - row_start) <
			    nnz - row_start) {
				fail(c, BOAR_EPARSE, line,
				     BOAR_MSG_MERGED_INFINITE);
				break;
			}
		}
		if (rows == c->rows_ub)
			goto changed;
		label[rows] = y;
		rows++;
		rend[rows - 1] = nnz;
	}
	goto stop;
changed:
	/* The counting pass saw fewer rows or ':' than there are: the file
	 * changed between the two reads (text in memory cannot). */
	fail(c, BOAR_EIO, 0,
	     "the file changed while it was read (more rows or features than counted): nothing loaded");
stop:
	c->lines = line;
	c->rows = rows;
	c->nnz = nnz;
	c->dim = hash_bits ? (1ULL << hash_bits) : dim;
}

/* Closes the gaps between the pieces' regions and turns their local row
 * offsets into global ones. Pieces that filled their bounds exactly (the
 * usual case) move nothing and are fixed up in parallel; otherwise the
 * moves run in file order, each to a lower address, so nothing is
 * overwritten before it has moved. */
static void close_up(struct lsvm_piece *pc, size_t n, int threads,
		     struct boar_dataset *d, const struct lsvm_out *o)
{
	uint64_t R = 0, N = 0, dim = 0;
	int moves = 0;
	for (size_t k = 0; k < n; k++) {
		moves |= R != pc[k].rbase || N != pc[k].nbase;
		R += pc[k].rows;
		N += pc[k].nnz;
		if (pc[k].dim > dim)
			dim = pc[k].dim;
	}
	if (!moves) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (n > 1)
		for (size_t k = 0; k < n; k++) {
			uint64_t *rp = o->row_ptr + pc[k].rbase + 1;
			for (uint64_t r = 0; r < pc[k].rows; r++)
				rp[r] += pc[k].nbase;
		}
	} else {
		R = N = 0;
		for (size_t k = 0; k < n; k++) {
			const struct lsvm_piece *c = &pc[k];
			memmove(o->label + R, o->label + c->rbase, c->rows * 4);
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
	d->n_rows = R;
	d->nnz = N;
	d->dim = dim;
}

/* realloc down to what was used; keeps the block if that fails. */
static void *shrink(void *p, size_t bytes)
{
	void *q = realloc(p, bytes ? bytes : 1);
	return q ? q : p;
}

/* Gives each piece its region (from the counted bounds) and allocates
 * the arrays, owned by d; with `check`, refuses what max_memory (0: the
 * default limit) does not allow (text in blocks is checked as the blocks
 * are joined, parse_stream.c).
 * @return 0, BOAR_ENOMEM with err set. */
static int alloc_out(struct lsvm_piece *pc, size_t n, int check,
		     uint64_t max_memory, const char *path, struct lsvm_out *o,
		     struct boar_dataset *d, boar_error *err)
{
	uint64_t rows_ub = 0, nnz_ub = 0;
	for (size_t k = 0; k < n; k++) {
		pc[k].rbase = rows_ub;
		pc[k].nbase = nnz_ub;
		rows_ub += pc[k].rows_ub;
		nnz_ub += pc[k].nnz_ub;
	}
	if (check) {
		uint64_t bytes = boar_add_sat(boar_mul_sat(rows_ub + 1, 8),
					      boar_mul_sat(nnz_ub, 8));
		int ret = boar_memory_check(boar_add_sat(bytes, rows_ub * 4),
					    max_memory, path, "the data", err);
		if (ret)
			return ret;
	}
	o->row_ptr = malloc((rows_ub + 1) * sizeof *o->row_ptr);
	o->label = malloc((rows_ub ? rows_ub : 1) * sizeof *o->label);
	o->idx = malloc((nnz_ub ? nnz_ub : 1) * sizeof *o->idx);
	o->val = malloc((nnz_ub ? nnz_ub : 1) * sizeof *o->val);
	d->owned[0] = o->row_ptr;
	d->owned[1] = o->idx;
	d->owned[2] = o->val;
	d->owned[3] = o->label;
	if (!o->row_ptr || !o->label || !o->idx || !o->val)
		return boar_fail_line(err, BOAR_ENOMEM, path, 0, "out of memory");
	/* written once through by the parsing pass */
	boar_advise_huge(o->row_ptr, (rows_ub + 1) * sizeof *o->row_ptr);
	boar_advise_huge(o->label, rows_ub * sizeof *o->label);
	boar_advise_huge(o->idx, nnz_ub * sizeof *o->idx);
	boar_advise_huge(o->val, nnz_ub * sizeof *o->val);
	return 0;
}

/* The first piece error in file order, as a boar_error naming the line
 * (line_base lines before the text; an error of line 0 names none);
 * else 0 and *lines, the lines of all pieces. */
static int first_error(const struct lsvm_piece *pc, size_t n,
		       const char *path, uint64_t line_base, uint64_t *lines,
		       boar_error *err)
{
	uint64_t before = line_base;
	for (size_t k = 0; k < n; k++) {
		if (pc[k].err_code)
			return boar_fail_line(err, pc[k].err_code, path,
					      pc[k].err_line
						      ? before + pc[k].err_line
						      : 0,
					      "%s", pc[k].err_msg);
		before += pc[k].lines;
	}
	*lines = before - line_base;
	return 0;
}

/* After the pieces parsed without error: the dataset from their regions,
 * with what the bounds over-reserved (comments, blank lines) given back. */
static void finish(struct lsvm_piece *pc, size_t n, int threads,
		   int hash_bits, struct lsvm_out *o, struct boar_dataset *d)
{
	uint64_t rows_ub = 0, nnz_ub = 0;
	for (size_t k = 0; k < n; k++) {
		rows_ub += pc[k].rows_ub;
		nnz_ub += pc[k].nnz_ub;
	}
	close_up(pc, n, threads, d, o);
	if (hash_bits)
		d->dim = 1ULL << hash_bits;
	d->hash_bits = hash_bits;
	if (d->nnz < nnz_ub) {
		o->idx = shrink(o->idx, d->nnz * 4);
		o->val = shrink(o->val, d->nnz * 4);
	}
	if (d->n_rows < rows_ub) {
		o->label = shrink(o->label, d->n_rows * 4);
		o->row_ptr = shrink(o->row_ptr, (d->n_rows + 1) * 8);
	}
	boar_dataset_adopt_rows(d, o->row_ptr, o->idx, o->val, o->label, NULL);
}

static void free_pieces(struct lsvm_piece *pc, size_t n)
{
	for (size_t k = 0; pc && k < n; k++)
		free(pc[k].scratch);
	free(pc);
}

/* The counting pass's bounds for text [beg, end) of whole lines: a piece
 * ends after a '\n' except perhaps the last, so the bound on its rows
 * is exact and a plain file's regions touch. */
static void count_text(struct lsvm_piece *c, const char *beg, const char *end)
{
	uint64_t nl, colons;
	count_lines(beg, end, &nl, &colons);
	c->lines += nl;
	c->rows_ub += nl;
	c->nnz_ub += colons;
	if (end > beg && end[-1] != '\n') {
		c->lines++;
		c->rows_ub++;
	}
}

int boar_parse_libsvm(const struct parse_input *in, struct boar_dataset **out,
		      boar_error *err)
{
	/* A few pieces per thread so that uneven lines still balance. */
	size_t max_pieces = (size_t)in->threads * 4;
	uint64_t starts[max_pieces + 1];
	size_t n = split_lines(in->buf, in->len, max_pieces, 1 << 20, starts);
	struct lsvm_piece *pc = calloc(n ? n : 1, sizeof *pc);
	struct boar_dataset *d = boar_dataset_alloc(BOAR_TASK_LINEAR);
	struct lsvm_out o = { 0 };
	int ret;
	uint64_t lines = 0;
	if (!pc || !d) {
		ret = boar_fail_line(err, BOAR_ENOMEM, in->path, 0,
				     "out of memory");
		goto out;
	}
	for (size_t k = 0; k < n; k++) {
		pc[k].beg = in->buf + starts[k];
		pc[k].end = in->buf + starts[k + 1];
	}
#pragma omp parallel for schedule(dynamic, 1) num_threads(in->threads) if (n > 1)
	for (size_t k = 0; k < n; k++)
		count_text(&pc[k], pc[k].beg, pc[k].end);
	if ((ret = alloc_out(pc, n, 0, 0, in->path, &o, d, err)))
		goto out;
#pragma omp parallel for schedule(dynamic, 1) num_threads(in->threads) if (n > 1)
	for (size_t k = 0; k < n; k++) {
		pc[k].lines = 0;
		parse_piece(&pc[k], &o, in->hash_bits, pc[k].beg, pc[k].end);
	}
	ret = first_error(pc, n, in->path, in->line_base, &lines, err);
	if (!ret) {
		if (in->lines)
			*in->lines = lines;
		finish(pc, n, in->threads, in->hash_bits, &o, d);
	}
out:
	free_pieces(pc, n);
	if (ret < 0) {
		boar_dataset_free(d);
		return ret;
	}
	*out = d;
	return 0;
}

/* ------------------------------------------------ a file in windows */

/* Runs the pass on every piece, each thread through a window of its own
 * (pass 0 counts, pass 1 parses). The loading thread reports progress
 * after each of its windows of the parsing pass. */
static void window_pass(struct lsvm_piece *pc, size_t n,
			const struct parse_file *f, const struct lsvm_out *o,
			int pass)
{
	uint64_t done = 0; /* bytes parsed, all threads */
#pragma omp parallel num_threads(f->threads) if (n > 1)
	{
		struct text_window w;
		int ok = !text_window_open(&w, f->fd, f->window);
#pragma omp for schedule(dynamic, 1)
		for (size_t k = 0; k < n; k++) {
			struct lsvm_piece *c = &pc[k];
			c->lines = 0;
			if (!ok) {
				fail(c, BOAR_ENOMEM, 0, "out of memory");
				continue;
			}
			text_window_seek(&w, c->fbeg, c->fend);
			while (!c->err_code) {
				const char *t;
				size_t len;
				int r = text_window_next(&w, &t, &len,
							 c->err_msg,
							 sizeof c->err_msg);
				if (r) {
					c->err_code = r;
					c->err_line = r == BOAR_EPARSE
							      ? c->lines + 1
							      : 0;
					break;
				}
				if (!len)
					break;
				if (pass == 0) {
					count_text(c, t, t + len);
					continue;
				}
				parse_piece(c, o, f->hash_bits, t, t + len);
				uint64_t sum;
#pragma omp atomic capture
				sum = done += len;
				if (f->opt && f->opt->progress &&
				    omp_get_thread_num() == 0)
					f->opt->progress(sum, f->end,
							 f->opt->progress_ctx);
			}
		}
		text_window_close(&w);
	}
}

int boar_parse_libsvm_file(const struct parse_file *f,
			   struct boar_dataset **out, uint64_t *lines,
			   boar_error *err)
{
	size_t max_pieces = (size_t)f->threads * 4;
	uint64_t starts[max_pieces + 1];
	long n = file_split_lines(f->fd, f->beg, f->end, max_pieces,
				  f->min_piece, starts);
	if (n < 0)
		return boar_fail_line(err, BOAR_EIO, f->path, 0,
				      "read failed: %s", strerror((int)-n));
	struct lsvm_piece *pc = calloc(n ? (size_t)n : 1, sizeof *pc);
	struct boar_dataset *d = boar_dataset_alloc(BOAR_TASK_LINEAR);
	struct lsvm_out o = { 0 };
	int ret;
	if (!pc || !d) {
		ret = boar_fail_line(err, BOAR_ENOMEM, f->path, 0,
				     "out of memory");
		goto out;
	}
	for (long k = 0; k < n; k++) {
		pc[k].fbeg = starts[k];
		pc[k].fend = starts[k + 1];
	}
	window_pass(pc, (size_t)n, f, &o, 0);
	if ((ret = first_error(pc, (size_t)n, f->path, 0, lines, err)) ||
	    (ret = alloc_out(pc, (size_t)n, 1, f->max_memory, f->path, &o,
			     d, err)))
		goto out;
	window_pass(pc, (size_t)n, f, &o, 1);
	if ((ret = first_error(pc, (size_t)n, f->path, 0, lines, err)) ||
	    (ret = text_file_unchanged(f->fd, f->path, f->id, f->id->size,
				       err)))
		goto out;
	finish(pc, (size_t)n, f->threads, f->hash_bits, &o, d);
out:
	free_pieces(pc, (size_t)n);
	if (ret < 0) {
		boar_dataset_free(d);
		return ret;
	}
	*out = d;
	return 0;
}
