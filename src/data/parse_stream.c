/* parse_stream.c - parsing a file block by block: the text reader hands
 * out blocks of whole lines (parse_chunks.h), the format's parser turns
 * each into a dataset on threads, and the blocks' datasets are appended
 * into one. So the text in memory at any time is one block, whatever the
 * file's size or its gzip ratio, and the dataset is grown under the memory
 * limit (mem_limit.h): what would not fit is refused before it is
 * allocated, naming the file and the size.
 *
 * A file of one block (a regular file up to a quarter of the memory
 * limit: boar_parse_file) is parsed with no copy. Later blocks are
 * appended with capacities that double, so the copies cost O(size) in
 * all.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem_limit.h"
#include "feature_names.h"
#include "format_detect.h"
#include "gzip_input.h"
#include "input_spec.h"
#include "parse_chunks.h"
#include "parse_common.h"

/* What a thread reads at a time of a file parsed in windows: well inside
 * a core's L2 cache, and many times what a pread costs to start. */
#define PARSE_WINDOW ((size_t)1 << 20)

/* Block size: enough pieces of 1 MiB for every thread (the parsers' own
 * piece size), at least 64 MiB, at most 1 GiB. */
static size_t block_for(int threads)
{
	size_t b = (size_t)threads * (4 << 20);
	if (b < ((size_t)64 << 20))
		b = (size_t)64 << 20;
	if (b > ((size_t)1 << 30))
		b = (size_t)1 << 30;
	return b;
}

/* The arrays' capacity while blocks are appended, and what the whole
 * file should need (from the first block and the file's size; 0 when the
 * size is unknown: pipes, gzip): reserving that once saves the copies
 * of growing by doubling. */
struct caps {
	uint64_t rows, nnz;
	uint64_t est_rows, est_nnz;
};

static uint64_t bytes_of(int task, uint64_t rows, uint64_t nnz, int weighted)
{
	if (task == BOAR_TASK_MF)
		return boar_mul_sat(rows, 12);
	uint64_t b = boar_add_sat(boar_mul_sat(rows + 1, 8),
				  boar_mul_sat(nnz, 8));
	return boar_add_sat(b, boar_mul_sat(rows, weighted ? 8 : 4));
}

/* realloc of one of d's arrays, keeping d->owned[] in step. */
static int resize(struct boar_dataset *d, void **arr, uint64_t bytes)
{
	size_t slot = 0, n = sizeof d->owned / sizeof d->owned[0];
	while (slot < n && (!*arr || d->owned[slot] != *arr))
		slot++;
	void *q = realloc(*arr, bytes ? (size_t)bytes : 1);
	if (!q)
		return -1;
	if (slot < n)
		d->owned[slot] = q;
	*arr = q;
	return 0;
}

#define WEIGHT_SLOT 5 /* dataset.h reserves owned[5] for the weights */

/* Grows a's arrays to hold rows and nnz entries. */
static int reserve(struct boar_dataset *a, uint64_t rows, uint64_t nnz,
		   int weighted)
{
	if (a->task == BOAR_TASK_MF)
		return resize(a, (void **)&a->user, rows * 4) ||
		       resize(a, (void **)&a->item, rows * 4) ||
		       resize(a, (void **)&a->label, rows * 4);
	if (resize(a, (void **)&a->row_ptr, (rows + 1) * 8) ||
	    resize(a, (void **)&a->idx, nnz * 4) ||
	    resize(a, (void **)&a->val, nnz * 4) ||
	    resize(a, (void **)&a->label, rows * 4))
		return -1;
	if (!weighted)
		return 0;
	if (!a->weight) { /* the rows so far weighed 1 */
		float *w = malloc(rows ? rows * 4 : 1);
		if (!w)
			return -1;
		for (uint64_t r = 0; r < a->n_rows; r++)
			w[r] = 1.0f;
		a->weight = w;
		a->owned[WEIGHT_SLOT] = w;
		return 0;
	}
	return resize(a, (void **)&a->weight, rows * 4);
}

/* Appends part's rows to a (part is freed). */
static int append(struct boar_dataset **acc, struct caps *cap,
		  struct boar_dataset *part, double scale, uint64_t max_memory,
		  const char *path, boar_error *err)
{
	struct boar_dataset *a = *acc;
	int weighted = part->weight || (a && a->weight);
	if (!a) {
		*acc = part;
		cap->rows = part->n_rows;
		cap->nnz = part->nnz;
		/* a few percent over the first block's share of the file */
		cap->est_rows = (uint64_t)(part->n_rows * scale * 1.03);
		cap->est_nnz = (uint64_t)(part->nnz * scale * 1.03);
		return boar_memory_check(bytes_of(part->task, part->n_rows,
						  part->nnz, weighted),
					 max_memory, path, "the data", err);
	}
	uint64_t rows = a->n_rows + part->n_rows, nnz = a->nnz + part->nnz;
	int ret = boar_memory_check(bytes_of(a->task, rows, nnz, weighted),
				    max_memory, path, "the data", err);
	if (ret) {
		boar_dataset_free(part);
		return ret;
	}
	if (rows > cap->rows || nnz > cap->nnz || (weighted && !a->weight)) {
		/* the estimate, or doubling, as far as the limit allows */
		struct caps c = { rows > cap->rows ? rows : cap->rows,
				  nnz > cap->nnz ? nnz : cap->nnz, 0, 0 };
		if (rows > cap->rows && rows < 2 * cap->rows)
			c.rows = 2 * cap->rows;
		if (nnz > cap->nnz && nnz < 2 * cap->nnz)
			c.nnz = 2 * cap->nnz;
		if (c.rows < cap->est_rows)
			c.rows = cap->est_rows;
		if (c.nnz < cap->est_nnz)
			c.nnz = cap->est_nnz;
		if (boar_memory_check(bytes_of(a->task, c.rows, c.nnz, weighted),
				      max_memory, NULL, "", NULL))
			c = (struct caps){ rows, nnz, 0, 0 };
		if (reserve(a, c.rows, c.nnz, weighted)) {
			boar_dataset_free(part);
			return boar_fail_line(err, BOAR_ENOMEM, path, 0,
					      "out of memory");
		}
		*cap = c;
	}
	uint64_t R = a->n_rows, N = a->nnz, pr = part->n_rows;
	memcpy(a->label + R, part->label, pr * 4);
	if (a->task == BOAR_TASK_MF) {
		memcpy(a->user + R, part->user, pr * 4);
		memcpy(a->item + R, part->item, pr * 4);
		if (part->n_items > a->n_items)
			a->n_items = part->n_items;
	} else {
		memcpy(a->idx + N, part->idx, part->nnz * 4);
		memcpy(a->val + N, part->val, part->nnz * 4);
		for (uint64_t r = 0; r < pr; r++)
			a->row_ptr[R + r + 1] = N + part->row_ptr[r + 1];
		if (a->weight)
			for (uint64_t r = 0; r < pr; r++)
				a->weight[R + r] =
					part->weight ? part->weight[r] : 1.0f;
	}
	if (part->dim > a->dim)
		a->dim = part->dim;
	a->n_rows = rows;
	a->nnz = a->task == BOAR_TASK_MF ? rows : nnz;
	boar_dataset_free(part);
	return 0;
}

/* Gives back the capacity the last doubling left unused. */
static void trim(struct boar_dataset *a, const struct caps *cap)
{
	if (cap->rows > a->n_rows || cap->nnz > a->nnz)
		reserve(a, a->n_rows, a->nnz, a->weight != NULL); /* a smaller
			realloc that fails keeps the block */
}

int boar_parse_format(int format, const struct parse_input *in,
		      struct boar_dataset **out, boar_error *err)
{
	/* boar_parse_<name>() of every format of boar.h's list */
	switch (format) {
#define FORMAT_PARSE(N, code, name, task, hashed, help) \
	case BOAR_FORMAT_##N:                            \
		return boar_parse_##name(in, out, err);
		BOAR_FORMAT_MAP(FORMAT_PARSE)
#undef FORMAT_PARSE
	}
	return boar_fail(err, BOAR_EINVAL, "unknown format %d", format);
}

/* Whether every line of [text, text + len) is blank or a '#' comment
 * (ratings files may open with comments before their header). */
static int only_comments(const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		if (!pc_blank_or_comment(p, eol))
			return 0;
		p = eol + 1;
	}
	return 1;
}

/* One reading of a file block by block, for a dataset (the blocks'
 * datasets appended) or for the names of its features (each block's
 * dataset dropped once its names went to the sink). */
struct block_loop {
	const char *path;
	const boar_load_options *o;
	int threads;
	size_t block;
	const struct name_sink *names; /* NULL: keep the rows */
	int format;                    /* in: forced or 0; out: used */
	struct src_id id;
	int regular;
	struct boar_dataset *acc;      /* the rows so far */
	struct caps cap;
};

/* What a block's dataset becomes: appended, or dropped after its names
 * were taken. scale: how many blocks like the first the file holds. */
static int take_block(struct block_loop *L, struct boar_dataset *part,
		      double scale, boar_error *err)
{
	if (L->names) {
		boar_dataset_free(part);
		return 0;
	}
	return append(&L->acc, &L->cap, part, scale, L->o->max_memory,
		      L->path, err);
}

static int run_blocks(struct block_loop *L, boar_error *err)
{
	const char *path = L->path;
	const boar_load_options *o = L->o;
	struct text_source src;
	int ret = text_source_open(path, L->threads, &src, err);
	if (ret)
		return ret;
	struct csv_setup *csv = NULL;
	uint64_t line = 0;
	int parsed = 0; /* blocks with data */
	for (int k = 0;; k++) {
		const char *text;
		size_t len;
		ret = text_source_next(&src, L->block, line, &text, &len, err);
		if (ret)
			break;
		if (!len) {
			if (k == 0)
				ret = boar_fail_line(err, BOAR_EPARSE, path, 0,
						     "empty file: no data rows");
			break;
		}
		if (!L->format && !text_all_blank(text, len))
			L->format = boar_detect_format_for(o->task, text, len);
		if (!parsed && (text_all_blank(text, len) ||
				(L->format == BOAR_FORMAT_RATINGS &&
				 only_comments(text, len)))) {
			/* blank (or, in ratings, comment) lines before the
			 * first data: detection and the header belong to
			 * the first block with data in it */
			uint64_t nl, colons;
			count_lines(text, text + len, &nl, &colons);
			line += nl;
			continue;
		}
		if (L->names && !boar_format_hashed(L->format)) {
			ret = boar_fail(err, BOAR_EINVAL,
					"%s: %s data has feature ids, not names",
					path, boar_format_name(L->format));
			break;
		}
		uint64_t lines = 0;
		struct parse_input in = {
			.path = path,
			.buf = text,
			.len = len,
			.line_base = line,
			.first_block = !parsed,
			.threads = L->threads,
			.hash_bits = o->hash_bits,
			.opt = o,
			.csv = &csv,
			.lines = &lines,
			.names = L->names,
		};
		struct boar_dataset *part = NULL;
		ret = boar_parse_format(L->format, &in, &part, err);
		double scale = !parsed && src.regular && !src.gz
				       ? (double)src.id.size / (double)len
				       : 1;
		if (!ret)
			ret = take_block(L, part, scale, err);
		if (ret)
			break;
		parsed++;
		line += lines;
		if (o->progress)
			o->progress(src.pos, src.regular ? src.id.size : 0,
				    o->progress_ctx);
	}
	L->id = src.id;
	L->regular = src.regular;
	text_source_close(&src);
	boar_csv_setup_free(csv);
	return ret;
}

/* boar_parse_file with a chosen block size (the tests use tiny ones). */
int boar_parse_file_blocks(const char *path, const boar_load_options *o,
			   int threads, size_t block, int *format,
			   struct src_id *id, int *regular,
			   struct boar_dataset **out, boar_error *err)
{
	struct block_loop L = {
		.path = path, .o = o, .threads = threads, .block = block,
		.format = *format,
	};
	int ret = run_blocks(&L, err);
	if (!ret && (!L.acc || L.acc->n_rows == 0))
		ret = boar_fail_line(err, BOAR_EPARSE, path, 0,
				     "no data rows (only blank lines, comments or a header)");
	*format = L.format;
	*id = L.id;
	*regular = L.regular;
	if (ret) {
		boar_dataset_free(L.acc);
		return ret;
	}
	trim(L.acc, &L.cap);
	*out = L.acc;
	return 0;
}

int boar_parse_file_names(const char *path, const boar_load_options *o,
			  size_t block, const struct name_sink *names,
			  boar_error *err)
{
	struct block_loop L = {
		.path = path, .o = o, .threads = 1, .block = block,
		.format = o->format, .names = names,
	};
	return run_blocks(&L, err);
}

/* The head of bytes [lo, end) of a regular file opened as src (lo a
 * line start), for the windowed reader:
 * the format (forced, or detected from the head as the block reader
 * does), or 0 when the text is not for windows (gzip, empty, blank lines
 * before the data: the block reader looks past them for detection; a
 * first line longer than the detection window). *beg: where the text
 * starts (after a byte order mark); *head (malloc'd), *head_len: its
 * first whole lines. */
static int windows_head(const struct text_source *src, uint64_t lo,
			uint64_t end, int task, int format, uint64_t *beg,
			char **head, size_t *head_len)
{
	*head = NULL;
	if (!src->regular || end <= lo)
		return 0;
	size_t cap = DETECT_WINDOW + 3; /* what the block reader looks at */
	if (cap > end - lo)
		cap = (size_t)(end - lo);
	char *h = malloc(cap);
	ssize_t got = h ? boar_pread_all(src->fd, h, cap, lo, 1) : -1;
	int fit = 0;
	if (got >= 2 && !((unsigned char)h[0] == 0x1f &&
			  (unsigned char)h[1] == 0x8b)) {
		size_t bom = got >= 3 && !memcmp(h, "\xEF\xBB\xBF", 3) ? 3 : 0;
		*beg = lo + bom;
		char *t = h + bom;
		size_t n = (size_t)got - bom, whole = n;
		if (n > DETECT_WINDOW)
			n = DETECT_WINDOW;
		if (*beg + whole < end || whole > n) {
			const char *nl = memrchr(t, '\n', n);
			whole = nl ? (size_t)(nl + 1 - t) : 0;
		}
		if (whole && text_blank_prefix(t, n) == 0)
			fit = format ? format
				     : boar_detect_format_for(task, t, n);
		memmove(h, t, whole);
		*head_len = whole;
	}
	if (!fit)
		free(h);
	else
		*head = h;
	return fit;
}

/* boar_parse_<name>_file() of the format's line in boar.h's
 * BOAR_FORMAT_MAP. */
static int parse_format_file(int format, const struct parse_file *f,
			     struct boar_dataset **out, uint64_t *lines,
			     boar_error *err)
{
	switch (format) {
#define FORMAT_PARSE_FILE(N, code, name, task, hashed, help) \
	case BOAR_FORMAT_##N:                                 \
		return boar_parse_##name##_file(f, out, lines, err);
		BOAR_FORMAT_MAP(FORMAT_PARSE_FILE)
#undef FORMAT_PARSE_FILE
	}
	return 1;
}

int boar_parse_file_windows(const char *path, const boar_load_options *o,
			    int threads, size_t window, size_t min_piece,
			    int *format, struct src_id *id, int *regular,
			    struct boar_dataset **out, boar_error *err)
{
	struct src_id sid;
	int reg = 0;
	/* a pipe or FIFO must be opened once only (its bytes go to whoever
	 * reads them first), so only a regular file is opened here */
	if (text_file_stat(path, &sid, &reg, NULL) || !reg)
		return 1;
	struct text_source src;
	int ret = text_source_open(path, threads, &src, err);
	if (ret)
		return ret;
	uint64_t beg = 0, lines = 0;
	char *head;
	size_t head_len = 0;
	int fmt = windows_head(&src, 0, src.id.size, o->task, *format, &beg,
			       &head, &head_len);
	struct parse_file f = {
		.path = path,
		.fd = src.fd,
		.id = &src.id,
		.beg = beg,
		.end = src.id.size,
		.head = head,
		.head_len = head_len,
		.window = window,
		.min_piece = min_piece,
		.threads = threads,
		.hash_bits = o->hash_bits,
		.max_memory = o->max_memory,
		.opt = o,
	};
	ret = fmt ? parse_format_file(fmt, &f, out, &lines, err) : 1;
	if (!ret && (*out)->n_rows == 0) {
		boar_dataset_free(*out);
		*out = NULL;
		ret = boar_fail_line(err, BOAR_EPARSE, path, 0,
				     "no data rows (only blank lines, comments or a header)");
	}
	if (ret != 1) {
		*format = fmt;
		*id = src.id;
		*regular = 1;
	}
	free(head);
	text_source_close(&src);
	return ret;
}

int boar_parse_file_range(const char *path, uint64_t lo,
			  uint64_t hi, const boar_load_options *o,
			  int threads, struct boar_dataset **out,
			  boar_error *err)
{
	struct text_source src;
	int ret = text_source_open(path, threads, &src, err);
	if (ret)
		return ret;
	uint64_t beg = lo, lines = 0;
	char *head;
	size_t head_len = 0;
	int fmt = hi <= src.id.size
			  ? windows_head(&src, lo, hi, o->task, o->format,
					 &beg, &head, &head_len)
			  : 0;
	struct line_origin origin = { .fd = src.fd, .at = lo };
	struct parse_file f = {
		.path = path,
		.fd = src.fd,
		.id = &src.id,
		.beg = beg,
		.end = hi,
		.head = head,
		.head_len = head_len,
		.window = PARSE_WINDOW,
		.min_piece = (size_t)1 << 20,
		.threads = threads,
		.hash_bits = o->hash_bits,
		.max_memory = o->max_memory,
		.opt = o,
		.origin = &origin,
	};
	ret = fmt ? parse_format_file(fmt, &f, out, &lines, err) : 1;
	if (fmt)
		free(head);
	text_source_close(&src);
	if (ret)
		return ret;
	boar_dataset_classify(*out);
	return boar_dataset_note_input(out, fmt, o, err);
}

int boar_parse_file(const char *path, const boar_load_options *o,
		    int threads, int *format, struct src_id *id, int *regular,
		    struct boar_dataset **out, boar_error *err)
{
	/* Plain text in a regular file: each thread reads its share through
	 * a window of its own, straight into the dataset (no block of text,
	 * and no fresh pages for it). */
	int ret = boar_parse_file_windows(path, o, threads, PARSE_WINDOW,
					  (size_t)1 << 20, format, id,
					  regular, out, err);
	if (ret <= 0)
		return ret;
	/* Other input comes in blocks (gzip, pipes, stdin, blank lines or a
	 * long first line before the data). A regular file whose text takes
	 * at most a quarter of the memory limit is read as one block: its rows
	 * are parsed straight into the dataset's arrays, where blocks would
	 * each be parsed and then copied onto the others (1.5x the time of
	 * parse + one pass on bench/RESULTS.md's 529 MB file). Pipes, gzip
	 * and larger files come in blocks. */
	size_t block = block_for(threads);
	struct src_id sid;
	int reg = 0;
	if (!text_file_stat(path, &sid, &reg, NULL) && reg &&
	    sid.size + 1 > block && sid.size < ((uint64_t)1 << 40) &&
	    !boar_memory_check(4 * (sid.size + 1), o->max_memory, NULL, "",
			       NULL))
		block = (size_t)sid.size + 1;
	return boar_parse_file_blocks(path, o, threads, block, format, id,
				      regular, out, err);
}
