/* csv_layout.c - a CSV file's layout from its first line and the options:
 * separator, columns, header, each column's kind and hash seed (see
 * csv_layout.h); and the kinds a file settled on, as option lists.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "csv_layout.h"
#include "murmur3.h"

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
		s = csv_next_field(s, le, sep, &h->b[h->n], &h->e[h->n], &more,
				   &bad);
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
		h->named = !csv_field_number(h->b[cs->label], h->e[cs->label],
					     &v);
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

int csv_setup(const struct parse_input *in, struct csv_setup *cs,
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
	if (!ret) /* a part of a file (parse_chunks.h): the file's line */
		ret = split_first_line(lb, le, cs->sep,
				       line_in_file(in->origin, l1), &h,
				       in->path, err);
	cs->ncols = h.n;
	if (!ret)
		ret = mark_columns(in->opt, &h, lb, cs, in->path, err);
	if (!ret && in->names && h.named)
		ret = keep_column_names(cs, &h, in->path, err);
	free(h.b);
	free(h.e);
	return ret;
}

/* The columns of a kind as an option list (see csv_layout.h). */
char *csv_kind_list(const struct csv_setup *cs, const char *hdr,
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
			s = csv_next_field(s, eol, cs->sep, &fb, &fe, &more,
					   &bad);
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
