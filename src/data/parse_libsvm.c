/* parse_libsvm.c - the LIBSVM / SVMlight text parser.
 *
 * "label idx:val idx:val ... [# comment]" with 1-based, strictly ascending
 * indices; "qid:N" tokens are skipped; blank lines and comment lines are
 * skipped; a row with only a label is an empty row. Ids become 0-based (and
 * are hashed into 2^hash_bits slots when asked, after which a row is sorted
 * and colliding slots merged by adding their values, so rows stay ascending).
 *
 * The passes, pieces and windows are parse_rows.h's driver: this file
 * gives it the counting (each line's newline and ':' bytes: bounds on the
 * rows and non-zeros, as every feature has exactly one ':') and the
 * parsing of whole lines.
 */
#include <math.h>
#include <string.h>

#include "base/error.h"
#include "parse_common.h"
#include "parse_rows.h"
#include "feature_slot.h"

/* Sorts out why an idx:val token did not start with "digits:" and either
 * skips it (qid:N) returning its end, or records the error and returns NULL. */
static const char *odd_token(struct row_piece *c, uint64_t line,
			     const char *s, const char *eol)
{
	const char *te = pc_token_end(s, eol);
	const char *colon = memchr(s, ':', (size_t)(te - s));
	char q[64];
	pc_quote(q, sizeof q, s, te);
	if (te - s >= 4 && !memcmp(s, "qid:", 4))
		return te;
	if (!colon)
		row_piece_fail(c, BOAR_EPARSE, line,
			       "missing ':' in %s: features are written idx:val", q);
	else if (colon == s)
		row_piece_fail(c, BOAR_EPARSE, line, "missing index before ':' in %s", q);
	else if (*s == '-')
		row_piece_fail(c, BOAR_EPARSE, line,
			       "negative index in %s: indices are positive integers", q);
	else
		row_piece_fail(c, BOAR_EPARSE, line,
			       "bad index in %s: expected a positive integer before ':'",
			       q);
	return NULL;
}

/* Parses the whole lines [p, end) of piece c, after those it has parsed
 * already (its counts go on), into its region of o. */
static void parse_piece(struct row_piece *c, const struct row_out *o,
			const char *p, const char *end, const void *ctx)
{
	int hash_bits = *(const int *)ctx;
	uint64_t line = c->lines, dim = c->dim;
	size_t rows = c->rows, nnz = c->nnz;
	uint32_t *idx = o->idx + c->nbase;
	float *val = o->val + c->nbase;
	char q[64];

	while (p < end) {
		const char *eol, *b = pc_take_line(&p, end, &eol);
		const char *s = pc_skip_space(b, eol);
		line++;
		if (s == eol || *s == '#')
			continue; /* blank or comment line */

		float y = 0;
		const char *t = pc_parse_float(s, eol, &y);
		if (t == s || (t < eol && !pc_is_space((unsigned char)*t))) {
			pc_quote(q, sizeof q, s, pc_token_end(s, eol));
			row_piece_fail(c, BOAR_EPARSE, line,
				       "label %s is not a number", q);
			break;
		}
		if (!isfinite(y)) {
			row_piece_fail(c, BOAR_EPARSE, line, "label is NaN or infinite");
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
				row_piece_fail(c, BOAR_EPARSE, line,
					       "index %s is too large: indices must be < 2^32",
					       q);
				goto stop;
			}
			if (id == 0) {
				row_piece_fail(c, BOAR_EPARSE, line,
					       "index 0: indices are 1-based");
				goto stop;
			}
			if (id <= prev) {
				if (id == prev)
					row_piece_fail(c, BOAR_EPARSE, line,
						       "duplicate index %llu",
						       (unsigned long long)id);
				else
					row_piece_fail(c, BOAR_EPARSE, line,
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
				row_piece_fail(c, BOAR_EPARSE, line,
					       "value %s of index %llu is not a number", q,
					       (unsigned long long)id);
				goto stop;
			}
			if (!isfinite(v)) {
				row_piece_fail(c, BOAR_EPARSE, line,
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
		if (row_end(c, o, line, hash_bits, row_start, &nnz, rows, y, 1.0f))
			break;
		rows++;
	}
	goto stop;
changed:
	row_piece_changed(c);
stop:
	c->lines = line;
	c->rows = rows;
	c->nnz = nnz;
	c->dim = hash_bits ? (1ULL << hash_bits) : dim;
}

/* The counting pass's bounds for whole lines [p, end): a row per line,
 * a feature per ':'. */
static void count_lines_colons(struct row_piece *c, const char *p,
			       const char *end, const void *ctx)
{
	uint64_t nl, colons;
	count_lines(p, end, &nl, &colons);
	row_count_lines(c, p, end, nl);
	c->nnz_ub += colons;
}

static struct row_format libsvm_format(const int *hash_bits)
{
	return (struct row_format){
		.task = BOAR_TASK_LINEAR,
		.hash_bits = *hash_bits,
		.ctx = hash_bits,
		.count = count_lines_colons,
		.parse = parse_piece,
	};
}

int boar_parse_libsvm(const struct parse_input *in, struct boar_dataset **out,
		      boar_error *err)
{
	struct row_format f = libsvm_format(&in->hash_bits);
	return row_parse_text(in, 0, 0, &f, out, err);
}

int boar_parse_libsvm_file(const struct parse_file *pf,
			   struct boar_dataset **out, uint64_t *lines,
			   boar_error *err)
{
	struct row_format f = libsvm_format(&pf->hash_bits);
	return row_parse_file(pf, 0, &f, out, lines, err);
}
