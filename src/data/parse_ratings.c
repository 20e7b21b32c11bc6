/* parse_ratings.c - the rating-triplet text parser.
 *
 * One rating per line: "user item rating [anything more]", fields separated
 * by whitespace, ',' or '::' (MovieLens 1M), so "1 2 3.5", "1,2,3.5,964982"
 * and "1::2::3.5::964982" all read the same. Ids are non-negative integers
 * below 2^32, kept as given (0-based in memory as in the file). The first
 * non-blank line is a header, and skipped, when its first field is not a
 * number (MovieLens "userId,movieId,rating,timestamp"). Blank lines and
 * lines starting with '#' are skipped.
 *
 * Like the LIBSVM parser: line-aligned pieces on OpenMP threads; a first
 * pass counts each piece's newlines (a bound on its ratings), the arrays
 * are allocated once, each piece parses into its own region, and the
 * regions are closed up (a no-op unless there were blank or comment
 * lines). The first error in file order wins.
 */
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "parse_chunks.h"
#include "parse_common.h"

struct rt_piece {
	const char *beg, *end;
	uint64_t base;               /* its region of the arrays */
	uint64_t lines, rows;
	uint32_t *user, *item;       /* where its region starts */
	float *rating;
	uint64_t max_user, max_item; /* largest id + 1 */
	int err_code;
	uint64_t err_line;
	char err_msg[320];
};

static void fail(struct rt_piece *c, int code, uint64_t line, const char *fmt,
		 ...) __attribute__((format(printf, 4, 5)));

static void fail(struct rt_piece *c, int code, uint64_t line, const char *fmt,
		 ...)
{
	va_list ap;
	c->err_code = code;
	c->err_line = line;
	va_start(ap, fmt);
	vsnprintf(c->err_msg, sizeof c->err_msg, fmt, ap);
	va_end(ap);
}

static inline int is_sep(unsigned char c)
{
	return pc_is_space(c) || c == ',' || c == ':';
}

/* End of a field for quoting: the next separator. */
static const char *field_end(const char *s, const char *eol)
{
	while (s < eol && !is_sep((unsigned char)*s))
		s++;
	return s;
}

/* Steps over one separator (spaces, ',' or '::', with spaces around).
 * Returns NULL for a lone ':'. */
static const char *skip_sep(const char *s, const char *eol)
{
	s = pc_skip_space(s, eol);
	if (s < eol && *s == ',') {
		s++;
	} else if (s < eol && *s == ':') {
		if (s + 1 == eol || s[1] != ':')
			return NULL;
		s += 2;
	}
	return pc_skip_space(s, eol);
}

/* Parses an id field; returns the pointer after it or NULL (error set). */
static const char *parse_id(struct rt_piece *c, uint64_t line, const char *s,
			    const char *eol, const char *what, uint32_t *out)
{
	char q[64];
	uint64_t v;
	int of;
	const char *t = pc_parse_u64(s, eol, &v, &of);
	if (t == s || (t < eol && !is_sep((unsigned char)*t))) {
		pc_quote(q, sizeof q, s, field_end(s, eol));
		if (*s == '-' && s + 1 < eol && pc_is_digit((unsigned char)s[1]))
			fail(c, BOAR_EPARSE, line,
			     "negative %s id %s: ids are non-negative integers",
			     what, q);
		else
			fail(c, BOAR_EPARSE, line,
			     "%s id %s is not a non-negative integer", what, q);
		return NULL;
	}
	if (of || v > UINT32_MAX) {
		pc_quote(q, sizeof q, s, t);
		fail(c, BOAR_EPARSE, line,
		     "%s id %s is too large: ids must be < 2^32", what, q);
		return NULL;
	}
	*out = (uint32_t)v;
	return t;
}

/* After a field: the next one, or NULL with "missing FIELD" recorded. */
static const char *next_field(struct rt_piece *c, uint64_t line,
			      const char *t, const char *eol, const char *next)
{
	const char *s = skip_sep(t, eol);
	if (!s) {
		char q[64];
		pc_quote(q, sizeof q, t, pc_token_end(t, eol));
		fail(c, BOAR_EPARSE, line,
		     "bad separator %s: fields are separated by spaces, ',' or '::'",
		     q);
		return NULL;
	}
	if (s == eol || *s == '#') {
		fail(c, BOAR_EPARSE, line,
		     "missing %s field: lines are 'user item rating'", next);
		return NULL;
	}
	return s;
}

static void parse_piece(struct rt_piece *c)
{
	const char *p = c->beg, *end = c->end;
	uint64_t line = 0, rows = 0, mu = 0, mi = 0;
	char q[64];

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		line++;
		const char *s = pc_skip_space(p, eol);
		p = eol + 1;
		if (s == eol || *s == '#')
			continue;
		uint32_t u, i;
		float r = 0;
		const char *t = parse_id(c, line, s, eol, "user", &u);
		if (!t || !(s = next_field(c, line, t, eol, "item")))
			break;
		t = parse_id(c, line, s, eol, "item", &i);
		if (!t || !(s = next_field(c, line, t, eol, "rating")))
			break;
		t = pc_parse_float(s, eol, &r);
		if (t == s || (t < eol && !is_sep((unsigned char)*t))) {
			pc_quote(q, sizeof q, s, field_end(s, eol));
			fail(c, BOAR_EPARSE, line, "rating %s is not a number",
			     q);
			break;
		}
		if (!isfinite(r)) {
			fail(c, BOAR_EPARSE, line, "rating is NaN or infinite");
			break;
		}
		c->user[rows] = u;
		c->item[rows] = i;
		c->rating[rows] = r;
		rows++;
		if (u >= mu)
			mu = (uint64_t)u + 1;
		if (i >= mi)
			mi = (uint64_t)i + 1;
	}
	c->lines = line;
	c->rows = rows;
	c->max_user = mu;
	c->max_item = mi;
}

/* Length of a header line at the start of buf (0 if none): the first
 * non-blank line, when its first field does not start like a number. */
static size_t header_len(const char *buf, size_t len, uint64_t *lines)
{
	const char *p = buf, *end = buf + len;
	uint64_t n = 0;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		n++;
		if (pc_blank_or_comment(p, eol)) {
			p = eol + 1;
			continue;
		}
		const char *s = pc_skip_space(p, eol);
		int numeric = pc_is_digit((unsigned char)*s) ||
			      ((*s == '-' || *s == '+') && s + 1 < eol &&
			       pc_is_digit((unsigned char)s[1]));
		if (numeric)
			return 0;
		*lines = n;
		return eol < end ? (size_t)(eol - buf) + 1 : len;
	}
	return 0;
}

int boar_parse_ratings(const struct parse_input *in,
		       struct boar_dataset **out, boar_error *err)
{
	uint64_t head_lines = 0; /* a header is only at the file's start */
	size_t skip = in->first_block ? header_len(in->buf, in->len, &head_lines)
				      : 0;
	const char *buf = in->buf + skip;
	size_t len = in->len - skip;
	size_t max_pieces = (size_t)in->threads * 4;
	uint64_t starts[max_pieces + 1];
	size_t n = split_lines(buf, len, max_pieces, 1 << 20, starts);
	uint64_t bound[n ? n : 1];
	struct rt_piece *pc = calloc(n ? n : 1, sizeof *pc);
	struct boar_dataset *d = boar_dataset_alloc(BOAR_TASK_MF);
	int ret = 0;
	if (!pc || !d)
		goto nomem;
#pragma omp parallel for schedule(dynamic, 1) num_threads(in->threads) if (n > 1)
	for (size_t k = 0; k < n; k++) {
		uint64_t nl, colons;
		count_lines(buf + starts[k], buf + starts[k + 1], &nl, &colons);
		bound[k] = nl + (buf[starts[k + 1] - 1] != '\n');
	}
	uint64_t total = 0;
	for (size_t k = 0; k < n; k++) {
		pc[k].beg = buf + starts[k];
		pc[k].end = buf + starts[k + 1];
		pc[k].base = total;
		total += bound[k];
	}
	size_t m = total ? total : 1;
	d->user = malloc(m * sizeof *d->user);
	d->item = malloc(m * sizeof *d->item);
	d->label = malloc(m * sizeof *d->label);
	d->owned[0] = d->user;
	d->owned[1] = d->item;
	d->owned[2] = d->label;
	if (!d->user || !d->item || !d->label)
		goto nomem;
	for (size_t k = 0; k < n; k++) {
		pc[k].user = d->user + pc[k].base;
		pc[k].item = d->item + pc[k].base;
		pc[k].rating = d->label + pc[k].base;
	}
#pragma omp parallel for schedule(dynamic, 1) num_threads(in->threads) if (n > 1)
	for (size_t k = 0; k < n; k++)
		parse_piece(&pc[k]);

	uint64_t before = in->line_base + head_lines, rows = 0, mu = 0, mi = 0;
	for (size_t k = 0; k < n; k++) {
		if (pc[k].err_code) {
			ret = boar_fail_line(err, pc[k].err_code, in->path,
					     before + pc[k].err_line, "%s",
					     pc[k].err_msg);
			goto out;
		}
		before += pc[k].lines;
		/* close up: regions move down in file order, so a move never
		 * overwrites a region that has yet to move */
		if (rows != pc[k].base) {
			memmove(d->user + rows, pc[k].user, pc[k].rows * 4);
			memmove(d->item + rows, pc[k].item, pc[k].rows * 4);
			memmove(d->label + rows, pc[k].rating, pc[k].rows * 4);
		}
		rows += pc[k].rows;
		if (pc[k].max_user > mu)
			mu = pc[k].max_user;
		if (pc[k].max_item > mi)
			mi = pc[k].max_item;
	}
	if (in->lines)
		*in->lines = before - in->line_base;
	d->n_rows = rows;
	d->nnz = rows;
	d->dim = mu;
	d->n_items = mi;
	if (rows < total && rows) { /* give back what blank lines reserved */
		void *a = realloc(d->user, rows * 4), *b = realloc(d->item, rows * 4),
		     *c = realloc(d->label, rows * 4);
		d->user = a ? a : d->user;
		d->item = b ? b : d->item;
		d->label = c ? c : d->label;
		d->owned[0] = d->user;
		d->owned[1] = d->item;
		d->owned[2] = d->label;
	}
	goto out;
nomem:
	ret = boar_fail_line(err, BOAR_ENOMEM, in->path, 0, "out of memory");
out:
	free(pc);
	if (ret < 0) {
		boar_dataset_free(d);
		return ret;
	}
	*out = d;
	return 0;
}
