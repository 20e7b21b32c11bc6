/* parse_libsvm.c - the LIBSVM / SVMlight text parser.
 *
 * "label idx:val idx:val ... [# comment]" with 1-based, strictly ascending
 * indices; "qid:N" tokens are skipped; blank lines and comment lines are
 * skipped; a row with only a label is an empty row. Ids become 0-based (and
 * are hashed into 2^hash_bits slots when asked, after which a row is sorted
 * and colliding slots merged by adding their values, so rows stay ascending).
 *
 * The text is cut into line-aligned pieces, each parsed by one OpenMP thread
 * into its own growable arrays (grown once per line at most, never per
 * token), and the pieces are then copied into the final CSR arrays. Each
 * piece counts its lines and stops at its first error; the error reported is
 * the first piece's with an error, so it is the first one in the file and its
 * line number is the sum of the lines of the pieces before it.
 */
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "model.h"
#include "parse_chunks.h"
#include "parse_common.h"

struct lsvm_piece {
	const char *beg, *end;
	uint64_t lines;      /* lines seen (all of them if no error) */
	uint64_t rows, nnz;
	uint64_t *row_ptr;   /* rows + 1, local offsets, [0] = 0 */
	uint32_t *idx;
	float *val, *label;
	size_t cap_rows, cap_nnz;
	uint64_t *scratch;   /* hashing: packed (slot, value) pairs of a row */
	size_t cap_scratch;
	uint64_t dim;        /* largest slot + 1 */
	int err_code;
	uint64_t err_line;   /* local, 1-based */
	char err_msg[320];
};

/* Grows *p (of *cap elements of size sz) to hold at least need elements,
 * doubling so that the total copying stays linear. */
static int grow(void **p, size_t *cap, size_t need, size_t sz)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 1024;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * sz);
	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

static void piece_free(struct lsvm_piece *c)
{
	free(c->row_ptr);
	free(c->idx);
	free(c->val);
	free(c->label);
	free(c->scratch);
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

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Hashing scrambles the order of a row: sort it by slot and add up the
 * values of slots that collided. Returns the row's new length. */
static size_t sort_merge_row(struct lsvm_piece *c, size_t start, size_t n)
{
	uint32_t *ix = c->idx + start;
	float *vx = c->val + start;
	if (n < 2)
		return n;
	uint64_t *s = c->scratch;
	for (size_t k = 0; k < n; k++) {
		uint32_t bits;
		memcpy(&bits, &vx[k], 4);
		s[k] = (uint64_t)ix[k] << 32 | bits;
	}
	if (n <= 32) {
		for (size_t k = 1; k < n; k++) {
			uint64_t x = s[k];
			size_t j = k;
			/* compare by slot only: keeps equal slots in order */
			while (j > 0 && (s[j - 1] >> 32) > (x >> 32)) {
				s[j] = s[j - 1];
				j--;
			}
			s[j] = x;
		}
	} else {
		qsort(s, n, sizeof *s, cmp_u64);
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

static void parse_piece(struct lsvm_piece *c, int hash_bits)
{
	const char *p = c->beg, *end = c->end;
	uint64_t line = 0, dim = 0;
	size_t rows = 0, nnz = 0;
	char q[64];

	c->cap_rows = (size_t)(end - p) / 64 + 16;
	c->cap_nnz = (size_t)(end - p) / 8 + 16;
	c->row_ptr = malloc((c->cap_rows + 1) * sizeof *c->row_ptr);
	c->label = malloc(c->cap_rows * sizeof *c->label);
	c->idx = malloc(c->cap_nnz * sizeof *c->idx);
	c->val = malloc(c->cap_nnz * sizeof *c->val);
	if (!c->row_ptr || !c->label || !c->idx || !c->val)
		goto nomem;
	c->row_ptr[0] = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		line++;
		const char *s = pc_skip_space(p, eol);
		p = eol + 1;
		if (s == eol || *s == '#')
			continue; /* blank or comment line */

		/* Every feature takes at least 4 bytes ("1:1" and a space),
		 * so this bounds the row and the loop below need not check. */
		size_t most = (size_t)(eol - s) / 4 + 1;
		if (nnz + most > c->cap_nnz) {
			size_t ci = c->cap_nnz, cv = c->cap_nnz;
			if (grow((void **)&c->idx, &ci, nnz + most, 4) ||
			    grow((void **)&c->val, &cv, nnz + most, 4))
				goto nomem;
			c->cap_nnz = ci < cv ? ci : cv;
		}
		if (rows == c->cap_rows) {
			/* label holds cap_rows, row_ptr one more */
			size_t nc = c->cap_rows * 2;
			float *l = realloc(c->label, nc * sizeof *l);
			if (!l)
				goto nomem;
			c->label = l;
			uint64_t *r = realloc(c->row_ptr, (nc + 1) * sizeof *r);
			if (!r)
				goto nomem;
			c->row_ptr = r;
			c->cap_rows = nc;
		}

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
			uint32_t slot = boar_feature_slot(id - 1, hash_bits);
			c->idx[nnz] = slot;
			c->val[nnz] = v;
			nnz++;
			if (!hash_bits && id > dim)
				dim = id; /* 1-based id = 0-based id + 1 */
			prev = id;
			s = t;
		}
		if (hash_bits) {
			size_t n = nnz - row_start;
			if (grow((void **)&c->scratch, &c->cap_scratch, n, 8))
				goto nomem;
			nnz = row_start + sort_merge_row(c, row_start, n);
		}
		c->label[rows] = y;
		rows++;
		c->row_ptr[rows] = nnz;
	}
stop:
	c->lines = line;
	c->rows = rows;
	c->nnz = nnz;
	c->dim = hash_bits ? (1ULL << hash_bits) : dim;
	return;
nomem:
	c->lines = line;
	fail(c, BOAR_ENOMEM, line, "out of memory while parsing");
}

/* Copies the pieces into one CSR dataset (or adopts a lone piece's arrays). */
static int join(struct lsvm_piece *pc, size_t n, int threads,
		struct boar_dataset *d)
{
	uint64_t rows = 0, nnz = 0, dim = 0;
	for (size_t k = 0; k < n; k++) {
		rows += pc[k].rows;
		nnz += pc[k].nnz;
		if (pc[k].dim > dim)
			dim = pc[k].dim;
	}
	d->n_rows = rows;
	d->nnz = nnz;
	d->dim = dim;
	if (n == 1) {
		d->row_ptr = pc[0].row_ptr;
		d->idx = pc[0].idx;
		d->val = pc[0].val;
		d->label = pc[0].label;
		pc[0].row_ptr = NULL;
		pc[0].idx = NULL;
		pc[0].val = NULL;
		pc[0].label = NULL;
	} else {
		d->row_ptr = malloc((rows + 1) * sizeof *d->row_ptr);
		d->idx = malloc((nnz ? nnz : 1) * sizeof *d->idx);
		d->val = malloc((nnz ? nnz : 1) * sizeof *d->val);
		d->label = malloc((rows ? rows : 1) * sizeof *d->label);
		d->owned[0] = d->row_ptr;
		d->owned[1] = d->idx;
		d->owned[2] = d->val;
		d->owned[3] = d->label;
		if (!d->row_ptr || !d->idx || !d->val || !d->label)
			return BOAR_ENOMEM;
		uint64_t rbase[n], nbase[n];
		rows = nnz = 0;
		for (size_t k = 0; k < n; k++) {
			rbase[k] = rows;
			nbase[k] = nnz;
			rows += pc[k].rows;
			nnz += pc[k].nnz;
		}
		d->row_ptr[0] = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
		for (size_t k = 0; k < n; k++) {
			const struct lsvm_piece *c = &pc[k];
			memcpy(d->idx + nbase[k], c->idx, c->nnz * 4);
			memcpy(d->val + nbase[k], c->val, c->nnz * 4);
			memcpy(d->label + rbase[k], c->label, c->rows * 4);
			uint64_t *rp = d->row_ptr + rbase[k] + 1;
			for (uint64_t r = 0; r < c->rows; r++)
				rp[r] = nbase[k] + c->row_ptr[r + 1];
		}
	}
	d->owned[0] = d->row_ptr;
	d->owned[1] = d->idx;
	d->owned[2] = d->val;
	d->owned[3] = d->label;
	return 0;
}

int boar_parse_libsvm(const struct parse_input *in, struct boar_dataset **out,
		      boar_error *err)
{
	/* A few pieces per thread so that uneven lines still balance. */
	size_t max_pieces = (size_t)in->threads * 4;
	size_t starts[max_pieces + 1];
	size_t n = split_lines(in->buf, in->len, max_pieces, 1 << 20, starts);
	struct lsvm_piece *pc = calloc(n ? n : 1, sizeof *pc);
	struct boar_dataset *d = boar_dataset_alloc(BOAR_TASK_LINEAR);
	int ret = 0;
	if (!pc || !d) {
		ret = boar_fail_line(err, BOAR_ENOMEM, in->path, 0,
				     "out of memory");
		goto out;
	}
	for (size_t k = 0; k < n; k++) {
		pc[k].beg = in->buf + starts[k];
		pc[k].end = in->buf + starts[k + 1];
	}
#pragma omp parallel for schedule(dynamic, 1) num_threads(in->threads)
	for (size_t k = 0; k < n; k++)
		parse_piece(&pc[k], in->hash_bits);

	uint64_t before = 0;
	for (size_t k = 0; k < n; k++) {
		if (pc[k].err_code) {
			ret = boar_fail_line(err, pc[k].err_code, in->path,
					     before + pc[k].err_line, "%s",
					     pc[k].err_msg);
			goto out;
		}
		before += pc[k].lines;
	}
	d->hash_bits = in->hash_bits;
	ret = join(pc, n, in->threads, d);
	if (ret < 0) {
		boar_fail_line(err, ret, in->path, 0, "out of memory");
		goto out;
	}
	if (n == 0) { /* empty text: valid, empty arrays */
		d->row_ptr = calloc(1, sizeof *d->row_ptr);
		d->owned[0] = d->row_ptr;
		if (!d->row_ptr) {
			ret = boar_fail_line(err, BOAR_ENOMEM, in->path, 0,
					     "out of memory");
			goto out;
		}
		d->dim = in->hash_bits ? 1ULL << in->hash_bits : 0;
	}
out:
	for (size_t k = 0; k < n; k++)
		piece_free(&pc[k]);
	free(pc);
	if (ret < 0) {
		boar_dataset_free(d);
		return ret;
	}
	*out = d;
	return 0;
}
