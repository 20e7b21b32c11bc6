/* csv_layout.h - a CSV file's layout, and the fields of its lines
 * (library-internal; parse_csv.c reads the rows with it).
 *
 * Setup, on the first non-blank line: the separator (forced, or ',' or tab,
 * whichever line 1 has more of), the number of columns, whether line 1 is
 * a header (forced, or when its label field is not a number; naming a
 * column requires one), and the kind of every column from the options
 * (boar.h): label, ignored, categorical, numeric, or auto. A block of
 * a file after its first is read with the first's layout.
 *
 * Fields: separated by the separator, spaces and CR around them trimmed;
 * a field may be quoted ("a,b", with "" for a quote inside; the doubled
 * quotes are hashed as written). Quoted fields do not span lines. (A
 * UTF-8 byte order mark is dropped by the reader, parse_chunks.h.) Every
 * data line has as many fields as line 1; blank lines are skipped.
 */
#ifndef BOAR_CSV_LAYOUT_H
#define BOAR_CSV_LAYOUT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "parse_common.h"

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

/* Fields: inline, as the rows' passes split every field with them. */

static inline int csv_is_trim(unsigned char c, char sep)
{
	return (c == ' ' || c == '\r' || c == '\t' || c == '\v' ||
		c == '\f') && c != (unsigned char)sep;
}

/* The field at s: [*fb, *fe) without quotes and trimmed. Returns the start
 * of the next field (just past the separator), eol after the last one, or
 * NULL for a broken quote (why in *bad). *more says a separator followed. */
static inline const char *csv_next_field(const char *s, const char *eol,
					 char sep, const char **fb,
					 const char **fe, int *more,
					 const char **bad)
{
	while (s < eol && csv_is_trim((unsigned char)*s, sep))
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
		while (s < eol && csv_is_trim((unsigned char)*s, sep))
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
		while (t > s && csv_is_trim((unsigned char)t[-1], sep))
			t--;
		*fe = t;
		s = e;
	}
	*more = s < eol;
	return s < eol ? s + 1 : eol;
}

/* A finite number filling all of [b, e)? */
static inline int csv_field_number(const char *b, const char *e, float *v)
{
	if (b == e)
		return 0;
	const char *t = pc_parse_float(b, e, v);
	return t == e && isfinite(*v);
}

/* The layout of the file whose first block (or head) `in` holds, into cs
 * (zeroed; boar_csv_setup_free frees what it holds, set up or not).
 * @return 0, or an error (*err, naming the file and line 1's number). */
int csv_setup(const struct parse_input *in, struct csv_setup *cs,
	      boar_error *err);

/* The columns of a kind (one of two) as a list the options take: header
 * names (which a file without the label column still matches), or 0-based
 * indices without a header or when a name holds a ','. NULL when none (or
 * out of memory: then the model simply does not pin its columns). */
char *csv_kind_list(const struct csv_setup *cs, const char *hdr,
		    const char *eol, int k1, int k2);

#endif
