/* parse_driver.c - the count-then-parse driver of the text formats: a
 * block of text in memory cut into pieces, or a regular file cut into
 * byte ranges that each thread reads through a window of its own; the
 * arrays allocated once from the counted bounds, the pieces parsed into
 * their regions, the regions closed up into one dataset. The formats give
 * only their counting and parsing of whole lines (parse_rows.h).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/huge_pages.h"
#include "base/error.h"
#include "base/mem_limit.h"
#include "parse_chunks.h"
#include "parse_common.h"
#include "parse_rows.h"

#define WEIGHT_SLOT 5 /* dataset.h reserves owned[5] for the weights */

/* A few pieces per thread so that uneven lines still balance. */
#define PIECES_PER_THREAD 4

void row_count_lines(struct row_piece *c, const char *p, const char *end,
		     uint64_t newlines)
{
	uint64_t n = newlines + (end > p && end[-1] != '\n');
	c->lines += n;
	c->rows_ub += n;
}

void row_piece_changed(struct row_piece *c)
{
	row_piece_fail(c, BOAR_EIO, 0,
		       "the file changed while it was read (more rows or features than counted): nothing loaded");
}

/* What the dataset of rows and nnz entries takes (mem_limit.h). */
static uint64_t bytes_for(const struct row_format *f, uint64_t rows,
			  uint64_t nnz)
{
	if (f->task == BOAR_TASK_MF)
		return boar_mul_sat(rows, 12);
	uint64_t b = boar_add_sat(boar_mul_sat(rows + 1, 8),
				  boar_mul_sat(nnz, 8));
	return boar_add_sat(b, boar_mul_sat(rows, f->weights ? 8 : 4));
}

/* Gives each piece its region (from the counted bounds) and allocates
 * the arrays, owned by d; with `check`, refuses what max_memory (0: the
 * default limit) does not allow (text in blocks is checked as the blocks
 * are joined, parse_stream.c).
 * @return 0, or BOAR_ENOMEM with err set. */
static int out_alloc(struct row_piece *pc, size_t n,
		     const struct row_format *f, int check,
		     uint64_t max_memory, const char *path, struct row_out *o,
		     struct boar_dataset *d, boar_error *err)
{
	uint64_t rows = 0, nnz = 0;
	for (size_t k = 0; k < n; k++) {
		pc[k].rbase = rows;
		pc[k].nbase = nnz;
		rows += pc[k].rows_ub;
		nnz += pc[k].nnz_ub;
	}
	memset(o, 0, sizeof *o);
	o->rows_cap = rows;
	o->nnz_cap = nnz;
	if (check) {
		int ret = boar_memory_check(bytes_for(f, rows, nnz), max_memory,
					    path, "the data", err);
		if (ret)
			return ret;
	}
	size_t r1 = rows ? rows : 1, n1 = nnz ? nnz : 1;
	o->label = malloc(r1 * sizeof *o->label);
	if (f->task == BOAR_TASK_MF) {
		o->user = malloc(r1 * sizeof *o->user);
		o->item = malloc(r1 * sizeof *o->item);
		d->owned[0] = o->user;
		d->owned[1] = o->item;
		d->owned[2] = o->label;
		if (!o->user || !o->item || !o->label)
			return boar_fail_line(err, BOAR_ENOMEM, path, 0,
					      "out of memory");
		return 0;
	}
	o->row_ptr = malloc((rows + 1) * sizeof *o->row_ptr);
	o->idx = malloc(n1 * sizeof *o->idx);
	o->val = malloc(n1 * sizeof *o->val);
	if (f->weights)
		o->weight = malloc(r1 * sizeof *o->weight);
	d->owned[0] = o->row_ptr;
	d->owned[1] = o->idx;
	d->owned[2] = o->val;
	d->owned[3] = o->label;
	d->owned[WEIGHT_SLOT] = o->weight;
	if (!o->row_ptr || !o->label || !o->idx || !o->val ||
	    (f->weights && !o->weight))
		return boar_fail_line(err, BOAR_ENOMEM, path, 0, "out of memory");
	/* written once through by the parsing pass */
	boar_advise_huge(o->row_ptr, (rows + 1) * sizeof *o->row_ptr);
	boar_advise_huge(o->label, rows * sizeof *o->label);
	boar_advise_huge(o->idx, nnz * sizeof *o->idx);
	boar_advise_huge(o->val, nnz * sizeof *o->val);
	return 0;
}

/* realloc down to what was used; keeps the block if that fails. */
static void *shrink(void *p, size_t bytes)
{
	void *q = realloc(p, bytes ? bytes : 1);
	return q ? q : p;
}

/* Ratings: closes up the regions (in file order, each to a lower or the
 * same address, so nothing is overwritten before it has moved) and hands
 * the triplets to d. */
static void finish_triplets(struct row_piece *pc, size_t n,
			    struct row_out *o, struct boar_dataset *d)
{
	uint64_t R = 0, mu = 0, mi = 0;
	for (size_t k = 0; k < n; k++) {
		const struct row_piece *c = &pc[k];
		if (R != c->rbase) {
			memmove(o->user + R, o->user + c->rbase, c->rows * 4);
			memmove(o->item + R, o->item + c->rbase, c->rows * 4);
			memmove(o->label + R, o->label + c->rbase, c->rows * 4);
		}
		R += c->rows;
		mu = c->dim > mu ? c->dim : mu;
		mi = c->dim2 > mi ? c->dim2 : mi;
	}
	if (R < o->rows_cap && R) { /* give back what blank lines reserved */
		o->user = shrink(o->user, R * 4);
		o->item = shrink(o->item, R * 4);
		o->label = shrink(o->label, R * 4);
	}
	d->n_rows = d->nnz = R;
	d->dim = mu;
	d->n_items = mi;
	d->user = d->owned[0] = o->user;
	d->item = d->owned[1] = o->item;
	d->label = d->owned[2] = o->label;
}

/* After all pieces parsed without error: closes up their regions into
 * d's arrays (pieces that filled their bounds exactly, the usual case,
 * move nothing and are fixed up in parallel), with what the bounds
 * over-reserved given back and the weights dropped when every row
 * weighed 1. */
static void out_finish(struct row_piece *pc, size_t n, int threads,
		       const struct row_format *f, struct row_out *o,
		       struct boar_dataset *d)
{
	if (f->task == BOAR_TASK_MF) {
		finish_triplets(pc, n, o, d);
		return;
	}
	uint64_t R = 0, N = 0, dim = 0;
	int moves = 0, weighted = 0;
	for (size_t k = 0; k < n; k++) {
		moves |= R != pc[k].rbase || N != pc[k].nbase;
		weighted |= pc[k].weighted;
		R += pc[k].rows;
		N += pc[k].nnz;
		dim = pc[k].dim > dim ? pc[k].dim : dim;
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
	if (N < o->nnz_cap) {
		o->idx = shrink(o->idx, N * 4);
		o->val = shrink(o->val, N * 4);
	}
	if (R < o->rows_cap) {
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
	d->dim = f->hash_bits ? 1ULL << f->hash_bits : dim;
	d->hash_bits = f->hash_bits;
	d->slot_ids = f->slot_ids;
	boar_dataset_adopt_rows(d, o->row_ptr, o->idx, o->val, o->label,
				o->weight);
}

/* The first piece error in file order, as a boar_error naming the line
 * (line_base lines before the pieces, and origin's before those; an
 * error of line 0 names none, nor one whose origin cannot be counted);
 * else 0 and *lines (if not NULL), the lines of all pieces. */
static int first_error(const struct row_piece *pc, size_t n,
		       const char *path, uint64_t line_base,
		       struct line_origin *origin, uint64_t *lines,
		       boar_error *err)
{
	uint64_t before = line_base;
	for (size_t k = 0; k < n; k++) {
		if (pc[k].err_code) {
			uint64_t line = pc[k].err_line ? before + pc[k].err_line
						       : 0;
			return boar_fail_line(err, pc[k].err_code, path,
					      line_in_file(origin, line), "%s",
					      pc[k].err_msg);
		}
		before += pc[k].lines;
	}
	if (lines)
		*lines = before - line_base;
	return 0;
}

static void pieces_free(struct row_piece *pc, size_t n,
			const struct row_format *f)
{
	for (size_t k = 0; pc && k < n; k++) {
		free(pc[k].scratch);
		if (f->aux_free)
			f->aux_free(&pc[k]);
		else
			free(pc[k].aux);
	}
	free(pc);
}

static struct row_piece *pieces_new(size_t n, const struct row_format *f)
{
	struct row_piece *pc = calloc(n ? n : 1, sizeof *pc);
	for (size_t k = 0; pc && f->aux_init && k < n; k++)
		if (f->aux_init(&pc[k], f->ctx)) {
			pieces_free(pc, n, f);
			return NULL;
		}
	return pc;
}

/* Between the passes: the counting pass's first error, the format's look
 * at the bounds, the arrays. */
static int between_passes(struct row_piece *pc, size_t n,
			  const struct row_format *f, int check,
			  uint64_t max_memory, const char *path,
			  uint64_t line_base, struct line_origin *origin,
			  struct row_out *o, struct boar_dataset *d,
			  boar_error *err)
{
	int ret = first_error(pc, n, path, line_base, origin, NULL, err);
	if (!ret && f->counted)
		ret = f->counted(pc, n, f->ctx, path, line_base, err);
	if (!ret)
		ret = out_alloc(pc, n, f, check, max_memory, path, o, d, err);
	return ret;
}

/* ------------------------------------------------ a file in windows */

/* The caller's rows_ready hook (boar_load_options; the GPU engine's copy
 * to the card while parsing goes on): the rows and non-zeros that piece c
 * parsed since it had rows0 and nnz0, at their places in o. Rows of
 * features only: ratings have no place in a boar_rows_ready. */
static void report_rows_ready(const struct parse_file *pf,
			      const struct row_format *f,
			      const struct row_out *o,
			      const struct row_piece *c, uint64_t rows0,
			      uint64_t nnz0)
{
	if (!pf->opt || !pf->opt->rows_ready || f->task != BOAR_TASK_LINEAR ||
	    c->err_code || (c->rows == rows0 && c->nnz == nnz0))
		return;
	boar_rows_ready r = {
		.idx = o->idx, .val = o->val, .label = o->label,
		.nnz_cap = o->nnz_cap, .rows_cap = o->rows_cap,
		.nnz_begin = c->nbase + nnz0, .nnz_end = c->nbase + c->nnz,
		.row_begin = c->rbase + rows0, .row_end = c->rbase + c->rows,
	};
	pf->opt->rows_ready(&r, pf->opt->rows_ready_ctx);
}

/* Runs a pass on every piece, each thread through a window of its own
 * (pass 0 counts, pass 1 parses). The loading thread reports progress
 * after each of its windows of the parsing pass; every thread reports the
 * rows each of its windows finished to rows_ready. */
static void window_pass(struct row_piece *pc, size_t n,
			const struct parse_file *pf,
			const struct row_format *f, const struct row_out *o,
			int pass)
{
	uint64_t done = 0; /* bytes parsed, all threads */
	int threads = pass && f->serial ? 1 : pf->threads;
#pragma omp parallel num_threads(threads) if (n > 1)
	{
		struct text_window w;
		int ok = !text_window_open(&w, pf->fd, pf->window);
#pragma omp for schedule(dynamic, 1)
		for (size_t k = 0; k < n; k++) {
			struct row_piece *c = &pc[k];
			c->lines = 0;
			if (!ok) {
				row_piece_fail(c, BOAR_ENOMEM, 0, "out of memory");
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
					f->count(c, t, t + len, f->ctx);
					continue;
				}
				uint64_t rows0 = c->rows, nnz0 = c->nnz;
				f->parse(c, o, t, t + len, f->ctx);
				report_rows_ready(pf, f, o, c, rows0, nnz0);
				uint64_t sum;
#pragma omp atomic capture
				sum = done += len;
				if (pf->opt && pf->opt->progress &&
				    omp_get_thread_num() == 0)
					pf->opt->progress(sum, pf->end,
							  pf->opt->progress_ctx);
			}
		}
		text_window_close(&w);
	}
}

/* ------------------------------------------------------ both */

/* Where the pieces' text is: in memory (pf NULL), or a file's windows. */
struct source {
	const char *path;
	int threads;
	uint64_t line_base; /* lines before the pieces */
	const struct parse_file *pf;
	struct line_origin *origin; /* lines before line_base's */
};

/* A pass over every piece (0 counts, 1 parses). */
static void run_pass(struct row_piece *pc, size_t n, const struct source *src,
		     const struct row_format *f, const struct row_out *o,
		     int pass)
{
	if (src->pf) {
		window_pass(pc, n, src->pf, f, o, pass);
		return;
	}
	int threads = pass && f->serial ? 1 : src->threads;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (n > 1)
	for (size_t k = 0; k < n; k++) {
		pc[k].lines = 0;
		if (pass == 0)
			f->count(&pc[k], pc[k].beg, pc[k].end, f->ctx);
		else
			f->parse(&pc[k], o, pc[k].beg, pc[k].end, f->ctx);
	}
}

/* The two passes over pieces pc (from pieces_new; NULL: out of memory),
 * which it frees, into *out; *lines: the pieces' lines.
 * @return 0 or a BOAR_E* code with err naming the file (and line). */
static int parse_pieces(struct row_piece *pc, size_t n,
			const struct source *src, const struct row_format *f,
			struct boar_dataset **out, uint64_t *lines,
			boar_error *err)
{
	const struct parse_file *pf = src->pf;
	struct boar_dataset *d = boar_dataset_alloc(f->task);
	struct row_out o;
	int ret;
	if (!pc || !d) {
		ret = boar_fail_line(err, BOAR_ENOMEM, src->path, 0,
				     "out of memory");
		goto out;
	}
	run_pass(pc, n, src, f, &o, 0);
	/* a file's arrays are checked against the limit here, blocks' as
	 * they are joined (parse_stream.c) */
	ret = between_passes(pc, n, f, pf != NULL, pf ? pf->max_memory : 0,
			     src->path, src->line_base, src->origin, &o, d,
			     err);
	if (ret)
		goto out;
	run_pass(pc, n, src, f, &o, 1);
	if ((ret = first_error(pc, n, src->path, src->line_base,
			       src->origin, lines, err)) ||
	    (pf && (ret = text_file_unchanged(pf->fd, pf->path, pf->id,
					      pf->id->size, err))))
		goto out;
	out_finish(pc, n, src->threads, f, &o, d);
out:
	pieces_free(pc, n, f);
	if (ret < 0) {
		boar_dataset_free(d);
		return ret;
	}
	*out = d;
	return 0;
}

int row_parse_text(const struct parse_input *in, size_t skip,
		   uint64_t skip_lines, const struct row_format *f,
		   struct boar_dataset **out, boar_error *err)
{
	size_t max_pieces = (size_t)in->threads * PIECES_PER_THREAD;
	uint64_t starts[max_pieces + 1];
	const char *buf = in->buf + skip;
	size_t n = split_lines(buf, in->len - skip, max_pieces, 1 << 20, starts);
	struct row_piece *pc = pieces_new(n, f);
	for (size_t k = 0; pc && k < n; k++) {
		pc[k].beg = buf + starts[k];
		pc[k].end = buf + starts[k + 1];
	}
	struct source src = { in->path, in->threads,
			      in->line_base + skip_lines, NULL, in->origin };
	uint64_t lines = 0;
	int ret = parse_pieces(pc, n, &src, f, out, &lines, err);
	if (!ret && in->lines)
		*in->lines = skip_lines + lines;
	return ret;
}

int row_parse_file(const struct parse_file *pf, uint64_t skip_lines,
		   const struct row_format *f, struct boar_dataset **out,
		   uint64_t *lines, boar_error *err)
{
	size_t max_pieces = (size_t)pf->threads * PIECES_PER_THREAD;
	uint64_t starts[max_pieces + 1];
	long n = file_split_lines(pf->fd, pf->beg, pf->end, max_pieces,
				  pf->min_piece, starts);
	if (n < 0)
		return boar_fail_line(err, BOAR_EIO, pf->path, 0,
				      "read failed: %s", strerror((int)-n));
	struct row_piece *pc = pieces_new((size_t)n, f);
	for (long k = 0; pc && k < n; k++) {
		pc[k].fbeg = starts[k];
		pc[k].fend = starts[k + 1];
	}
	struct source src = { pf->path, pf->threads, skip_lines, pf,
			      pf->origin };
	int ret = parse_pieces(pc, (size_t)n, &src, f, out, lines, err);
	if (!ret)
		*lines += skip_lines;
	return ret;
}
