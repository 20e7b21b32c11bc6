/* parse_csv.c - the CSV/TSV parser: a label column, numeric columns and
 * hashed categorical columns (the Criteo layout: Id,Label,I1..I13,C1..C26).
 *
 * Setup, on the first non-blank line: the separator (forced, or ',' or tab,
 * whichever line 1 has more of), the number of columns, whether line 1 is
 * a header (forced, or when its label field is not a number; naming a
 * column requires one), and the kind of every column from the options
 * (boar.h): label, ignored, categorical, numeric, or auto.
 *
 * Fields: separated by the separator, spaces and CR around them trimmed;
 * a field may be quoted ("a,b", with "" for a quote inside; the doubled
 * quotes are hashed as written). Quoted fields do not span lines. (A
 * UTF-8 byte order mark is dropped by the reader, parse_chunks.h.) Every
 * data line has as many fields as line 1; blank lines are skipped.
 *
 * Missing values: in a numeric column (given or found) an empty field, or
 * NA, N/A, NaN, null or ? (any case), is missing: no feature, and it does
 * not make an auto column categorical, so one missing cell cannot change
 * how a whole column is read.
 *
 * Features: a numeric column j with a non-empty, non-zero value v is the
 * feature (slot of column j, v); a categorical column with a non-empty
 * value s is (murmur3(s, seed of column j), 1). A column's seed is the
 * murmur3 hash of its 0-based index (with csv_log, numeric values are
 * sign(v) log(1 + |v|) first), so the slots depend on the column's
 * position, not on its header name (a headerless test file with the same
 * layout hashes alike). Slots are the low hash_bits bits (18 when 0).
 * Rows are sorted by slot and collisions summed (parse_rows.h).
 *
 * The file comes in blocks (parse_stream.c). The first block sets the
 * layout (separator, columns, header, kinds) that every later one is read
 * with; an auto column is categorical when the first block holds a value
 * in it that is neither a finite number nor missing, numeric otherwise,
 * and a later block that disagrees is an error naming the line (list the
 * column as categorical), never a column that changes kind halfway.
 *
 * A regular file is read in windows (parse_rows.h) as one block: the
 * layout comes from its first lines, and its auto columns are settled
 * over the whole file.
 *
 * The two passes of parse_rows.h's driver: the first checks every line
 * (field count, quotes, the label, numbers in numeric columns), marks
 * auto columns that hold a value that is not a number, and counts each
 * piece's rows and non-zeros exactly; the second fills the arrays. Every
 * error is found by the first pass, in file order. The header line is
 * left out of the pieces, so every non-blank line of them is a row.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "murmur3.h"
#include "parse_chunks.h"
#include "parse_common.h"
#include "parse_rows.h"
#include "feature_names.h"

/* COL_AUTO_NUM: an auto column the first block found numeric */
enum col_kind { COL_AUTO, COL_NUM, COL_CAT, COL_IGNORE, COL_LABEL,
		COL_AUTO_NUM };

struct csv_setup {
	char sep;
	uint32_t ncols;
	uint32_t label;         /* its column */
	const char *hdr;        /* the header line's start (first block), or NULL */
	unsigned char *kind;    /* enum col_kind per column */
	uint32_t *seed;         /* per column */
	int log;                /* numeric values through sign(v) log1p(|v|) */
	int labels_optional;    /* an empty label reads as 0 (prediction) */
	char **colname;         /* header names, for a names sink only */
};

void boar_csv_setup_free(struct csv_setup *cs)
{
	if (!cs)
		return;
	free(cs->kind);
	free(cs->seed);
	for (uint32_t j = 0; cs->colname && j < cs->ncols; j++)
		free(cs->colname[j]);
	free(cs->colname);
	free(cs);
}

static inline int is_trim(unsigned char c, char sep)
{
	return (c == ' ' || c == '\r' || c == '\t' || c == '\v' ||
		c == '\f') && c != (unsigned char)sep;
}

/* The field at s: [*fb, *fe) without quotes and trimmed. Returns the start
 * of the next field (just past the separator), eol after the last one, or
 * NULL for a broken quote (why in *bad). *more says a separator followed. */
static const char *next_field(const char *s, const char *eol, char sep,
			      const char **fb, const char **fe, int *more,
			      const char **bad)
{
	while (s < eol && is_trim((unsigned char)*s, sep))
		s++;
	if (s < eol && *s == '"') {
		const char *b = ++s;
		for (;;) {
			const char *qt = memchr(s, '"', (size_t)(eol - s));
			if (!qt) {
				*bad = "unterminated quote (quoted fields must end on their line)";
				return NULL;
			}
			if (qt + 1 < eol && qt[1] == '"') {
				s = qt + 2; /* "" inside quotes */
				continue;
			}
			*fb = b;
			*fe = qt;
			s = qt + 1;
			break;
		}
		while (s < eol && is_trim((unsigned char)*s, sep))
			s++;
		if (s < eol && *s != sep) {
			*bad = "text after a closing quote";
			return NULL;
		}
	} else {
		const char *e = memchr(s, sep, (size_t)(eol - s));
		if (!e)
			e = eol;
		*fb = s;
		const char *t = e;
		while (t > s && is_trim((unsigned char)t[-1], sep))
			t--;
		*fe = t;
		s = e;
	}
	*more = s < eol;
	return s < eol ? s + 1 : eol;
}

/* A missing value: empty, NA, N/A, NaN, null or ?, in any case. */
static int is_missing(const char *b, const char *e)
{
	static const char *const names[] = { "na", "n/a", "nan", "null", "?" };
	size_t n = (size_t)(e - b);
	if (!n)
		return 1;
	for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
		size_t m = strlen(names[k]);
		if (m == n && !strncasecmp(b, names[k], n))
			return 1;
	}
	return 0;
}

/* A finite number filling all of [b, e)? */
static inline int field_number(const char *b, const char *e, float *v)
{
	if (b == e)
		return 0;
	const char *t = pc_parse_float(b, e, v);
	return t == e && isfinite(*v);
}

/* Checks a numeric field (missing is fine); 0 or the error recorded. */
static int check_number(struct row_piece *c, const struct csv_setup *cs,
			uint64_t line, uint32_t j, const char *fb,
			const char *fe)
{
	float v;
	char q[64];
	if (is_missing(fb, fe) || field_number(fb, fe, &v))
		return 0;
	pc_quote(q, sizeof q, fb, fe);
	if (cs->kind[j] == COL_AUTO_NUM)
		row_piece_fail(c, BOAR_EPARSE, line,
			       "column %u holds %s, but it held only numbers in the first block of the file and is read as numeric: list it as categorical (csv_categorical %u)",
			       j, q, j);
	else
		row_piece_fail(c, BOAR_EPARSE, line,
			       "column %u is numeric but holds %s", j, q);
	return -1;
}

/* What the passes over the pieces share. */
struct csv_parse {
	struct csv_setup *cs;
	uint32_t mask;                 /* slots: the low hash bits */
	const struct name_sink *names; /* NULL, or every feature's name */
};

/* Pass 1 on whole lines [p, end) of a piece: check every line, flag auto
 * columns with a value that is not a number, count rows and (a bound on)
 * non-zeros. */
static void scan_lines(struct row_piece *c, const char *p, const char *end,
		       const void *ctx)
{
	const struct csv_setup *cs = ((const struct csv_parse *)ctx)->cs;
	unsigned char *flags = c->aux;
	uint64_t line = c->lines, rows = 0, nnz = 0;
	char q[64];
	while (p < end) {
		const char *eol, *s = pc_take_line(&p, end, &eol);
		line++;
		if (pc_skip_space(s, eol) == eol)
			continue; /* blank */
		uint32_t j = 0;
		int more = 1;
		while (more) {
			const char *fb, *fe, *bad = NULL;
			s = next_field(s, eol, cs->sep, &fb, &fe, &more, &bad);
			if (!s) {
				row_piece_fail(c, BOAR_EPARSE, line,
					       "field %u: %s", j + 1, bad);
				goto stop;
			}
			if (j >= cs->ncols) {
				j++;
				continue; /* counted, reported below */
			}
			float v;
			switch (cs->kind[j]) {
			case COL_LABEL:
				if (fb == fe && cs->labels_optional)
					break;
				if (fb == fe) {
					row_piece_fail(c, BOAR_EPARSE, line,
						       "empty label (column %u)", j);
					goto stop;
				}
				if (!field_number(fb, fe, &v)) {
					pc_quote(q, sizeof q, fb, fe);
					row_piece_fail(c, BOAR_EPARSE, line,
						       "label %s (column %u) is not a finite number",
						       q, j);
					goto stop;
				}
				break;
			case COL_NUM:
			case COL_AUTO_NUM:
				if (check_number(c, cs, line, j, fb, fe))
					goto stop;
				break;
			case COL_AUTO:
				if (!flags[j] && !is_missing(fb, fe) &&
				    !field_number(fb, fe, &v))
					flags[j] = 1;
				break;
			}
			/* a bound: every non-empty feature field */
			nnz += fb != fe && cs->kind[j] != COL_LABEL &&
			       cs->kind[j] != COL_IGNORE;
			j++;
		}
		if (j != cs->ncols) {
			row_piece_fail(c, BOAR_EPARSE, line,
				       "%u fields, but the first line has %u",
				       j, cs->ncols);
			goto stop;
		}
		rows++;
	}
stop:
	c->lines = line;
	c->rows_ub += rows;
	c->nnz_ub += nnz;
}

/* Column j's feature by name to the sink: "column" for a numeric one,
 * "column=value" for a categorical one (the header's name, else j).
 * @return 0 or -1 (the sink stopped). */
static int emit_name(const struct name_sink *names,
		     const struct csv_setup *cs, uint32_t j, uint32_t slot,
		     const char *fb, const char *fe)
{
	char buf[512];
	int n = cs->colname ? snprintf(buf, sizeof buf, "%s", cs->colname[j])
			    : snprintf(buf, sizeof buf, "%u", j);
	if (fb && n < (int)sizeof buf)
		n += snprintf(buf + n, sizeof buf - (size_t)n, "=%.*s",
			      (int)(fe - fb), fb);
	if (n >= (int)sizeof buf)
		n = (int)sizeof buf - 1; /* a name cut at 511 bytes */
	return names->emit(names->ctx, slot, buf, (size_t)n) ? -1 : 0;
}

/* Pass 2 on whole lines [p, end) of a piece that scanned clean: fill its
 * region (and, with a sink, name each feature). */
static void fill_lines(struct row_piece *c, const struct row_out *o,
		       const char *p, const char *end, const void *ctx)
{
	const struct csv_parse *cp = ctx;
	const struct csv_setup *cs = cp->cs;
	const struct name_sink *names = cp->names;
	uint32_t mask = cp->mask;
	uint64_t line = c->lines;
	size_t rows = c->rows, nnz = c->nnz;
	uint32_t *idx = o->idx + c->nbase;
	float *val = o->val + c->nbase;
	while (p < end) {
		const char *eol, *s = pc_take_line(&p, end, &eol);
		line++;
		if (pc_skip_space(s, eol) == eol)
			continue; /* blank */
		size_t row_start_nnz = nnz;
		float y = 0;
		int more = 1;
		for (uint32_t j = 0; more; j++) {
			const char *fb = NULL, *fe = NULL, *bad;
			s = next_field(s, eol, cs->sep, &fb, &fe, &more, &bad);
			if (!s || j >= cs->ncols) /* the scan passed it */
				goto changed;
			if (fb == fe)
				continue;
			float v = 1.0f;
			switch (cs->kind[j]) {
			case COL_LABEL:
				field_number(fb, fe, &y);
				break;
			case COL_NUM:
			case COL_AUTO_NUM:
				if (is_missing(fb, fe))
					break;
				field_number(fb, fe, &v);
				if (cs->log)
					v = v >= 0 ? log1pf(v) : -log1pf(-v);
				if (v != 0.0f) {
					if (nnz == c->nnz_ub)
						goto changed;
					idx[nnz] = cs->seed[j] & mask;
					val[nnz++] = v;
					if (names && emit_name(names, cs, j,
							       idx[nnz - 1], NULL,
							       NULL))
						goto sink_full;
				}
				break;
			case COL_CAT:
				if (nnz == c->nnz_ub)
					goto changed;
				idx[nnz] = boar_murmur3_32(fb, (size_t)(fe - fb),
							   cs->seed[j]) &
					   mask;
				val[nnz++] = 1.0f;
				if (names && emit_name(names, cs, j, idx[nnz - 1],
						       fb, fe))
					goto sink_full;
				break;
			}
		}
		if (row_end(c, o, line, 1, row_start_nnz, &nnz, rows, y, 1.0f))
			break;
		rows++;
	}
	goto done;
changed: /* the file is not what the scan read */
	row_piece_changed(c);
	goto done;
sink_full:
	row_piece_fail(c, BOAR_ENOMEM, line, "out of memory keeping feature names");
done:
	c->lines = line;
	c->rows = rows;
	c->nnz = nnz;
}

/* ------------------------------------------------------------ setup */

struct header {
	const char **b, **e; /* field j of line 1 is [b[j], e[j]) */
	uint32_t n;
	int named;           /* line 1 is a header */
};

/* Column of one list item: a header name, else a 0-based index. */
static int find_col(const struct header *h, const char *s, size_t len,
		    uint32_t *out)
{
	if (h->named)
		for (uint32_t j = 0; j < h->n; j++)
			if ((size_t)(h->e[j] - h->b[j]) == len &&
			    !memcmp(h->b[j], s, len)) {
				*out = j;
				return 0;
			}
	if (!len || len > 9)
		return -1;
	uint32_t v = 0;
	for (size_t k = 0; k < len; k++) {
		if (!pc_is_digit((unsigned char)s[k]))
			return -1;
		v = v * 10 + (uint32_t)(s[k] - '0');
	}
	if (v >= h->n)
		return -1;
	*out = v;
	return 0;
}

/* Marks the columns of a list ("Id,C1-C26,3") as kind. */
static int mark_list(const char *list, const char *what, int kind,
		     const struct header *h, unsigned char *kinds,
		     const char *path, boar_error *err)
{
	const char *s = list;
	while (*s) {
		const char *e = strchr(s, ',');
		if (!e)
			e = s + strlen(s);
		uint32_t a, b;
		int ok = !find_col(h, s, (size_t)(e - s), &a);
		if (ok) {
			b = a;
		} else {
			/* a range: try each '-' as the split point */
			for (const char *m = s; m < e && !ok; m++)
				ok = *m == '-' &&
				     !find_col(h, s, (size_t)(m - s), &a) &&
				     !find_col(h, m + 1, (size_t)(e - m - 1), &b);
			if (ok && b < a)
				return boar_fail_line(err, BOAR_EINVAL, path, 0,
						      "%s: range '%.*s' runs backwards",
						      what, (int)(e - s), s);
		}
		if (!ok)
			return boar_fail_line(err, BOAR_EINVAL, path, 0,
					      "%s: no column '%.*s' (columns are 0-based indices below %u%s)",
					      what, (int)(e - s), s, h->n,
					      h->named ? " or header names" : "; names need a header line");
		for (uint32_t j = a; j <= b; j++) {
			if (kinds[j] != COL_AUTO && kinds[j] != kind)
				return boar_fail_line(err, BOAR_EINVAL, path, 0,
						      "%s: column %u is already %s",
						      what, j,
						      kinds[j] == COL_LABEL ? "the label"
						      : kinds[j] == COL_IGNORE ? "ignored"
						      : kinds[j] == COL_CAT ? "categorical"
									     : "numeric");
			kinds[j] = (unsigned char)kind;
		}
		s = *e ? e + 1 : e;
	}
	return 0;
}

static int is_name_list(const char *list)
{
	if (!list)
		return 0;
	for (const char *s = list; *s; s++)
		if (!pc_is_digit((unsigned char)*s) && *s != ',' && *s != '-')
			return 1;
	return 0;
}

/* The first line that is not blank, [*lb, *le), and its number *l1. */
static int first_line(const struct parse_input *in, const char **lb,
		      const char **le, uint64_t *l1, boar_error *err)
{
	const char *end = in->buf + in->len, *p = in->buf;
	*lb = NULL;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		if (pc_skip_space(p, eol) < eol) {
			*lb = p;
			*le = eol;
			break;
		}
		p = eol + 1;
	}
	if (!*lb)
		return boar_fail_line(err, BOAR_EPARSE, in->path, 0,
				      "no data rows (only blank lines)");
	*l1 = 1;
	for (const char *t = in->buf; t < *lb; t++)
		*l1 += *t == '\n';
	return 0;
}

/* The separator: the option's, or the one of tab and ',' that line 1
 * [lb, le) has more of. */
static int pick_separator(const boar_load_options *o, const char *lb,
			  const char *le, const char *path, char *sep,
			  boar_error *err)
{
	int sepc = o ? o->csv_separator : 0;
	if (sepc == '\n' || sepc == '"' || sepc < 0 || sepc > 127)
		return boar_fail_line(err, BOAR_EINVAL, path, 0,
				      "the CSV separator must be an ASCII character other than newline and '\"'");
	if (!sepc) {
		size_t commas = 0, tabs = 0;
		for (const char *s = lb; s < le; s++) {
			commas += *s == ',';
			tabs += *s == '\t';
		}
		sepc = tabs > commas ? '\t' : ',';
	}
	*sep = (char)sepc;
	return 0;
}

/* Line l1, [lb, le), split at sep into h's fields (h->b and h->e hold
 * room for every separator plus one). */
static int split_first_line(const char *lb, const char *le, char sep,
			    uint64_t l1, struct header *h, const char *path,
			    boar_error *err)
{
	const char *s = lb;
	int more = 1;
	h->n = 0;
	while (more) {
		const char *bad = NULL;
		s = next_field(s, le, sep, &h->b[h->n], &h->e[h->n], &more, &bad);
		if (!s)
			return boar_fail_line(err, BOAR_EPARSE, path, l1,
					      "field %u: %s", h->n + 1, bad);
		h->n++;
	}
	if (h->n < 2)
		return boar_fail_line(err, BOAR_EPARSE, path, l1,
				      "one field: no separator '%s' (set the separator)",
				      sep == '\t' ? "\\t" : (char[2]){ sep, 0 });
	return 0;
}

/* From the options and line 1's fields h (the line starting at lb): whether
 * it is a header, the label column, each column's kind and its hash seed. */
static int mark_columns(const boar_load_options *o, struct header *h,
			const char *lb, struct csv_setup *cs, const char *path,
			boar_error *err)
{
	int hdr = o ? o->csv_header : 0, ret;
	const char *lab = o ? o->csv_label : NULL;
	int names = is_name_list(lab) || is_name_list(o ? o->csv_ignore : NULL) ||
		    is_name_list(o ? o->csv_categorical : NULL) ||
		    is_name_list(o ? o->csv_numeric : NULL);
	if (hdr < 0 && names)
		return boar_fail_line(err, BOAR_EINVAL, path, 0,
				      "columns are named but the file has no header line: give 0-based indices");
	h->named = hdr > 0 || names;
	cs->label = 0;
	cs->labels_optional = o && o->labels_optional;
	/* Prediction on a file without the (named) label column: the other
	 * columns are seeded by their position in the training file. */
	uint32_t gone = UINT32_MAX;
	if (lab && cs->labels_optional && o->csv_label_at && is_name_list(lab) &&
	    find_col(h, lab, strlen(lab), &cs->label)) {
		gone = (uint32_t)(o->csv_label_at - 1);
		cs->label = UINT32_MAX;
	} else if (lab) {
		if (find_col(h, lab, strlen(lab), &cs->label))
			return boar_fail_line(err, BOAR_EINVAL, path, 0,
					      "label column '%s' not found (a 0-based index below %u%s)",
					      lab, h->n,
					      h->named ? " or a header name" : "");
	}
	if (!hdr && !names) {
		float v;
		h->named = !field_number(h->b[cs->label], h->e[cs->label], &v);
	}
	cs->hdr = h->named ? lb : NULL;
	cs->log = o ? o->csv_log : 0;
	if (cs->label != UINT32_MAX)
		cs->kind[cs->label] = COL_LABEL;
	if (o && o->csv_ignore &&
	    (ret = mark_list(o->csv_ignore, "ignored columns", COL_IGNORE, h,
			     cs->kind, path, err)))
		return ret;
	if (o && o->csv_categorical &&
	    (ret = mark_list(o->csv_categorical, "categorical columns",
			     COL_CAT, h, cs->kind, path, err)))
		return ret;
	if (o && o->csv_numeric &&
	    (ret = mark_list(o->csv_numeric, "numeric columns", COL_NUM, h,
			     cs->kind, path, err)))
		return ret;
	for (uint32_t j = 0; j < h->n; j++) {
		uint32_t t = j >= gone ? j + 1 : j; /* its training position */
		uint8_t le4[4] = { (uint8_t)t, (uint8_t)(t >> 8),
				   (uint8_t)(t >> 16), (uint8_t)(t >> 24) };
		cs->seed[j] = boar_murmur3_32(le4, 4, 0);
	}
	return 0;
}

/* The header's names, for a names sink (feature_names.h). */
static int keep_column_names(struct csv_setup *cs, const struct header *h,
			     const char *path, boar_error *err)
{
	if (!(cs->colname = calloc(h->n, sizeof *cs->colname)))
		return boar_fail_line(err, BOAR_ENOMEM, path, 0, "out of memory");
	for (uint32_t j = 0; j < h->n; j++)
		if (!(cs->colname[j] = strndup(h->b[j],
					       (size_t)(h->e[j] - h->b[j]))))
			return boar_fail_line(err, BOAR_ENOMEM, path, 0,
					      "out of memory");
	return 0;
}

static int setup(const struct parse_input *in, struct csv_setup *cs,
		 boar_error *err)
{
	const char *lb = NULL, *le = NULL;
	uint64_t l1 = 0; /* the first line's number, for its errors */
	int ret = first_line(in, &lb, &le, &l1, err);
	if (ret || (ret = pick_separator(in->opt, lb, le, in->path, &cs->sep,
					 err)))
		return ret;
	uint32_t n = 0;
	for (const char *s = lb; s < le; s++)
		n += *s == cs->sep;
	n++; /* fields at most; quoted separators make it fewer */
	struct header h = { 0 };
	h.b = malloc(n * sizeof *h.b);
	h.e = malloc(n * sizeof *h.e);
	cs->kind = calloc(n, 1);
	cs->seed = malloc(n * sizeof *cs->seed);
	if (!h.b || !h.e || !cs->kind || !cs->seed)
		ret = boar_fail_line(err, BOAR_ENOMEM, in->path, 0,
				     "out of memory");
	if (!ret)
		ret = split_first_line(lb, le, cs->sep, l1, &h, in->path, err);
	cs->ncols = h.n;
	if (!ret)
		ret = mark_columns(in->opt, &h, lb, cs, in->path, err);
	if (!ret && in->names && h.named)
		ret = keep_column_names(cs, &h, in->path, err);
	free(h.b);
	free(h.e);
	return ret;
}

/* After the counting pass of the first block: auto columns become
 * numeric or categorical for good, from what its pieces flagged. */
static int settle_kinds(struct row_piece *pc, size_t n, const void *ctx,
			const char *path, uint64_t line_base, boar_error *err)
{
	struct csv_setup *cs = ((const struct csv_parse *)ctx)->cs;
	for (uint32_t j = 0; j < cs->ncols; j++) {
		if (cs->kind[j] != COL_AUTO)
			continue;
		cs->kind[j] = COL_AUTO_NUM;
		for (size_t k = 0; k < n; k++)
			if (((unsigned char *)pc[k].aux)[j])
				cs->kind[j] = COL_CAT;
	}
	return 0;
}

/* Each piece's column flags for the counting pass. */
static int flags_init(struct row_piece *c, const void *ctx)
{
	c->aux = calloc(((const struct csv_parse *)ctx)->cs->ncols, 1);
	return c->aux ? 0 : -1;
}

/* The columns of a kind (one of two) as a list the options take: header
 * names (which a file without the label column still matches), or 0-based
 * indices without a header or when a name holds a ','. NULL when none (or
 * out of memory: then the model simply does not pin its columns). */
static char *kind_list(const struct csv_setup *cs, const char *hdr,
		       const char *eol, int k1, int k2)
{
	size_t cap = 16 + (size_t)(eol - hdr) + 11 * (size_t)cs->ncols, n = 0;
	char *out = malloc(cap);
	int names = hdr != NULL;
	for (const char *t = hdr; names && t < eol; t++)
		names = *t != '"'; /* a quoted name may hold the separator */
	const char *s = hdr;
	for (uint32_t j = 0; out && j < cs->ncols; j++) {
		const char *fb = NULL, *fe = NULL, *bad = NULL;
		int more = 0;
		if (names && s)
			s = next_field(s, eol, cs->sep, &fb, &fe, &more, &bad);
		if (cs->kind[j] != k1 && cs->kind[j] != k2)
			continue;
		if (names && fb && fe > fb && !memchr(fb, ',', (size_t)(fe - fb)))
			n += (size_t)snprintf(out + n, cap - n, "%s%.*s",
					      n ? "," : "", (int)(fe - fb), fb);
		else
			n += (size_t)snprintf(out + n, cap - n, "%s%u",
					      n ? "," : "", j);
	}
	if (out && !n) {
		free(out);
		out = NULL;
	}
	return out;
}

/* The header (if any) of a block that starts the file, text [buf, end):
 * the bytes and lines the pieces leave out (the lines before it are
 * blank), and its end for kind_list. */
static void header_span(const struct csv_setup *cs, const char *buf,
			const char *end, size_t *skip, uint64_t *skip_lines,
			const char **hdr_eol)
{
	*skip = 0;
	*skip_lines = 0;
	*hdr_eol = NULL;
	if (!cs->hdr)
		return;
	const char *eol = memchr(cs->hdr, '\n', (size_t)(end - cs->hdr));
	*hdr_eol = eol ? eol : end;
	*skip = eol ? (size_t)(eol + 1 - buf) : (size_t)(end - buf);
	count_lines(buf, buf + *skip, skip_lines, &(uint64_t){ 0 });
	*skip_lines += !eol;
}

/* The parse of rows with layout cs, hashed into 2^hash_bits slots (18
 * when 0). */
static struct row_format csv_format(struct csv_parse *cp, struct csv_setup *cs,
				    int hash_bits,
				    const struct name_sink *names)
{
	int bits = hash_bits ? hash_bits : BOAR_VW_DEFAULT_HASH_BITS;
	*cp = (struct csv_parse){ cs, (uint32_t)((1ULL << bits) - 1), names };
	return (struct row_format){
		.task = BOAR_TASK_LINEAR,
		.hash_bits = bits,
		.slot_ids = 1,
		.serial = names != NULL,
		.ctx = cp,
		.count = scan_lines,
		.parse = fill_lines,
		.aux_init = flags_init,
		.counted = settle_kinds,
	};
}

/* The rows, with layout cs, of the block `in`, or (pf not NULL) of the
 * file whose head `in` holds. */
static int csv_rows(struct csv_setup *cs, const struct parse_input *in,
		    const struct parse_file *pf, struct boar_dataset **out,
		    uint64_t *lines, boar_error *err)
{
	size_t skip;
	uint64_t skip_lines;
	const char *hdr_eol;
	header_span(cs, in->buf, in->buf + in->len, &skip, &skip_lines,
		    &hdr_eol);
	struct csv_parse cp;
	struct row_format f = csv_format(&cp, cs, in->hash_bits, in->names);
	struct parse_file rest = pf ? *pf : (struct parse_file){ 0 };
	rest.beg += skip;
	int ret = pf ? row_parse_file(&rest, skip_lines, &f, out, lines, err)
		     : row_parse_text(in, skip, skip_lines, &f, out, err);
	if (!ret) /* what the dataset keeps of the layout */
		(*out)->csv_label_col = cs->label == UINT32_MAX ? 0 : cs->label + 1;
	if (!ret && in->first_block) { /* the kinds the file settled on */
		(*out)->csv_kinds[0] = kind_list(cs, cs->hdr, hdr_eol, COL_CAT,
						 COL_CAT);
		(*out)->csv_kinds[1] = kind_list(cs, cs->hdr, hdr_eol, COL_NUM,
						 COL_AUTO_NUM);
	}
	cs->hdr = NULL; /* later blocks reuse the buffer: no header there */
	return ret;
}

int boar_parse_csv(const struct parse_input *in, struct boar_dataset **out,
		   boar_error *err)
{
	struct csv_setup *cs = *in->csv;
	if (!cs) {
		if (!(cs = calloc(1, sizeof *cs)))
			return boar_fail_line(err, BOAR_ENOMEM, in->path, 0,
					      "out of memory");
		*in->csv = cs; /* the caller frees it */
		int ret = setup(in, cs, err);
		if (ret)
			return ret;
	}
	return csv_rows(cs, in, NULL, out, NULL, err);
}

int boar_parse_csv_file(const struct parse_file *pf,
			struct boar_dataset **out, uint64_t *lines,
			boar_error *err)
{
	struct csv_setup *cs = calloc(1, sizeof *cs);
	if (!cs)
		return boar_fail_line(err, BOAR_ENOMEM, pf->path, 0,
				      "out of memory");
	struct parse_input head = {
		.path = pf->path, .buf = pf->head, .len = pf->head_len,
		.first_block = 1, .threads = 1, .hash_bits = pf->hash_bits,
		.opt = pf->opt,
	};
	int ret = setup(&head, cs, err);
	if (!ret)
		ret = csv_rows(cs, &head, pf, out, lines, err);
	boar_csv_setup_free(cs);
	return ret;
}
