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
 * Passes, pieces and windows: parse_rows.h's driver; the counting pass
 * counts each piece's newlines (a bound on its ratings).
 */
#include <math.h>
#include <string.h>

#include "base/error.h"
#include "parse_chunks.h"
#include "parse_common.h"
#include "parse_rows.h"

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
static const char *parse_id(struct row_piece *c, uint64_t line, const char *s,
			    const char *eol, const char *what, uint32_t *out)
{
	char q[64];
	uint64_t v;
	int of;
	const char *t = pc_parse_u64(s, eol, &v, &of);
	if (t == s || (t < eol && !is_sep((unsigned char)*t))) {
		pc_quote(q, sizeof q, s, field_end(s, eol));
		if (*s == '-' && s + 1 < eol && pc_is_digit((unsigned char)s[1]))
			row_piece_fail(c, BOAR_EPARSE, line,
			     "negative %s id %s: ids are non-negative integers",
			     what, q);
		else
			row_piece_fail(c, BOAR_EPARSE, line,
			     "%s id %s is not a non-negative integer", what, q);
		return NULL;
	}
	if (of || v > UINT32_MAX) {
		pc_quote(q, sizeof q, s, t);
		row_piece_fail(c, BOAR_EPARSE, line,
		     "%s id %s is too large: ids must be < 2^32", what, q);
		return NULL;
	}
	*out = (uint32_t)v;
	return t;
}

/* After a field: the next one, or NULL with "missing FIELD" recorded. */
static const char *next_field(struct row_piece *c, uint64_t line,
			      const char *t, const char *eol, const char *next)
{
	const char *s = skip_sep(t, eol);
	if (!s) {
		char q[64];
		pc_quote(q, sizeof q, t, pc_token_end(t, eol));
		row_piece_fail(c, BOAR_EPARSE, line,
		     "bad separator %s: fields are separated by spaces, ',' or '::'",
		     q);
		return NULL;
	}
	if (s == eol || *s == '#') {
		row_piece_fail(c, BOAR_EPARSE, line,
		     "missing %s field: lines are 'user item rating'", next);
		return NULL;
	}
	return s;
}

/* Parses the whole lines [p, end) of piece c into its region of o (its
 * counts go on). */
static void parse_piece(struct row_piece *c, const struct row_out *o,
			const char *p, const char *end, const void *ctx)
{
	uint64_t line = c->lines, rows = c->rows, mu = c->dim, mi = c->dim2;
	uint32_t *user = o->user + c->rbase, *item = o->item + c->rbase;
	float *rating = o->label + c->rbase;
	char q[64];

	while (p < end) {
		const char *eol, *b = pc_take_line(&p, end, &eol);
		const char *s = pc_skip_space(b, eol);
		line++;
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
			row_piece_fail(c, BOAR_EPARSE, line, "rating %s is not a number",
			     q);
			break;
		}
		if (!isfinite(r)) {
			row_piece_fail(c, BOAR_EPARSE, line, "rating is NaN or infinite");
			break;
		}
		if (rows == c->rows_ub) { /* its line was counted */
			row_piece_changed(c);
			break;
		}
		user[rows] = u;
		item[rows] = i;
		rating[rows] = r;
		rows++;
		if (u >= mu)
			mu = (uint64_t)u + 1;
		if (i >= mi)
			mi = (uint64_t)i + 1;
	}
	c->lines = line;
	c->rows = rows;
	c->dim = mu;
	c->dim2 = mi;
}

/* Length of a header line at the start of buf (0 if none): the first
 * line that is not blank or a comment, when its first field does not
 * start like a number; *lines, the lines up to it. *seen: such a line is
 * in buf. */
static size_t header_len(const char *buf, size_t len, uint64_t *lines,
			 int *seen)
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
		*seen = 1;
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

/* The counting pass: a rating per line at most. */
static void count_ratings(struct row_piece *c, const char *p, const char *end,
			  const void *ctx)
{
	uint64_t nl, colons;
	count_lines(p, end, &nl, &colons);
	row_count_lines(c, p, end, nl);
}

static const struct row_format ratings_format = {
	.task = BOAR_TASK_MF,
	.count = count_ratings,
	.parse = parse_piece,
};

int boar_parse_ratings(const struct parse_input *in,
		       struct boar_dataset **out, boar_error *err)
{
	uint64_t head_lines = 0; /* a header is only at the file's start */
	int seen = 0;
	size_t skip = in->first_block ? header_len(in->buf, in->len,
						   &head_lines, &seen)
				      : 0;
	return row_parse_text(in, skip, head_lines, &ratings_format, out, err);
}

int boar_parse_ratings_file(const struct parse_file *pf,
			    struct boar_dataset **out, uint64_t *lines,
			    boar_error *err)
{
	uint64_t head_lines = 0;
	int seen = 0;
	size_t skip = header_len(pf->head, pf->head_len, &head_lines, &seen);
	if (!seen)
		return 1; /* only comments in the head: the block reader */
	struct parse_file rest = *pf;
	rest.beg += skip;
	return row_parse_file(&rest, head_lines, &ratings_format, out, lines,
			      err);
}
