/* input_spec.c - the note of how a model's data was read (input_spec.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"
#include "base/error.h"
#include "input_spec.h"


/* The string fields, in encoding order, by offset into the struct. */
static const struct {
	const char *key;
	size_t off;
} str_fields[] = {
	{ "csv_label", offsetof(struct boar_input_spec, csv_label) },
	{ "csv_ignore", offsetof(struct boar_input_spec, csv_ignore) },
	{ "csv_categorical", offsetof(struct boar_input_spec, csv_categorical) },
	{ "csv_numeric", offsetof(struct boar_input_spec, csv_numeric) },
	{ "csv_cat_settled", offsetof(struct boar_input_spec, csv_cat_settled) },
	{ "csv_num_settled", offsetof(struct boar_input_spec, csv_num_settled) },
	{ "vw_ignore", offsetof(struct boar_input_spec, vw_ignore) },
	{ "vw_keep", offsetof(struct boar_input_spec, vw_keep) },
	{ "vw_interactions", offsetof(struct boar_input_spec, vw_interactions) },
	{ "vw_ngrams", offsetof(struct boar_input_spec, vw_ngrams) },
	{ "vw_skips", offsetof(struct boar_input_spec, vw_skips) },
};
#define VW_FIRST 6 /* the VW fields: str_fields[VW_FIRST..N_STR) */
#define N_STR (sizeof str_fields / sizeof str_fields[0])

static const struct {
	const char *key;
	size_t off;
	int lo, hi;
} int_fields[] = {
	{ "csv_separator", offsetof(struct boar_input_spec, csv_separator), 0, 127 },
	{ "csv_header", offsetof(struct boar_input_spec, csv_header), -1, 1 },
	{ "csv_log", offsetof(struct boar_input_spec, csv_log), 0, 1 },
	{ "csv_label_at", offsetof(struct boar_input_spec, csv_label_at), 0,
	  1 << 30 },
};
#define N_INT (sizeof int_fields / sizeof int_fields[0])

static char **str_at(struct boar_input_spec *s, size_t k)
{
	return (char **)((char *)s + str_fields[k].off);
}

static int *int_at(struct boar_input_spec *s, size_t k)
{
	return (int *)((char *)s + int_fields[k].off);
}

void boar_input_spec_free(struct boar_input_spec *s)
{
	if (!s)
		return;
	for (size_t k = 0; k < N_STR; k++)
		free(*str_at(s, k));
	free(s);
}

/* Copies the strings src[k] (NULL stays NULL) into s. */
static int set_strings(struct boar_input_spec *s, const char *const src[N_STR])
{
	for (size_t k = 0; k < N_STR; k++)
		if (src[k] && !(*str_at(s, k) = strdup(src[k])))
			return -1;
	return 0;
}

struct boar_input_spec *boar_input_spec_new(int format,
					    const boar_load_options *o)
{
	struct boar_input_spec *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->format = format;
	if (format == BOAR_FORMAT_VW) {
		const char *vw[N_STR] = { [VW_FIRST] = o->vw_ignore,
					  o->vw_keep, o->vw_interactions,
					  o->vw_ngrams, o->vw_skips };
		if (set_strings(s, vw)) {
			boar_input_spec_free(s);
			return NULL;
		}
	}
	if (format != BOAR_FORMAT_CSV)
		return s; /* the CSV options mean nothing to other formats */
	const char *src[N_STR] = { o->csv_label, o->csv_ignore,
				   o->csv_categorical, o->csv_numeric };
	s->csv_separator = o->csv_separator;
	s->csv_header = o->csv_header;
	s->csv_log = o->csv_log;
	s->csv_label_at = o->csv_label_at;
	if (set_strings(s, src)) {
		boar_input_spec_free(s);
		return NULL;
	}
	return s;
}

struct boar_input_spec *boar_input_spec_copy(const struct boar_input_spec *s)
{
	struct boar_input_spec *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	*c = *s;
	const char *src[N_STR];
	for (size_t k = 0; k < N_STR; k++) {
		src[k] = *str_at(c, k);
		*str_at(c, k) = NULL;
	}
	if (set_strings(c, src)) {
		boar_input_spec_free(c);
		return NULL;
	}
	return c;
}

void boar_input_spec_fill(const struct boar_input_spec *s,
			  boar_load_options *o)
{
	o->format = s->format;
	o->csv_label = s->csv_label;
	o->csv_ignore = s->csv_ignore;
	o->csv_categorical = s->csv_cat_settled || s->csv_num_settled
				     ? s->csv_cat_settled
				     : s->csv_categorical;
	o->csv_numeric = s->csv_cat_settled || s->csv_num_settled
				 ? s->csv_num_settled
				 : s->csv_numeric;
	o->csv_separator = s->csv_separator;
	o->csv_header = s->csv_header;
	o->csv_log = s->csv_log;
	o->csv_label_at = s->csv_label_at;
	o->vw_ignore = s->vw_ignore;
	o->vw_keep = s->vw_keep;
	o->vw_interactions = s->vw_interactions;
	o->vw_ngrams = s->vw_ngrams;
	o->vw_skips = s->vw_skips;
}

int boar_input_spec_encode(const struct boar_input_spec *s, char **buf,
			   size_t *len)
{
	struct boar_input_spec *w = (struct boar_input_spec *)s;
	size_t cap = 64;
	for (size_t k = 0; k < N_STR; k++)
		if (*str_at(w, k))
			cap += strlen(str_fields[k].key) + strlen(*str_at(w, k)) + 2;
	cap += N_INT * 32;
	char *b = malloc(cap);
	if (!b)
		return BOAR_ENOMEM;
	size_t n = (size_t)snprintf(b, cap, "format %s\n",
				    boar_format_name(s->format));
	/* A value with a newline would end its line early; none that read a
	 * file can have one (a header name never spans lines), so it is
	 * dropped rather than written wrong. */
	for (size_t k = 0; k < N_STR; k++) {
		const char *v = *str_at(w, k);
		if (v && !strchr(v, '\n'))
			n += (size_t)snprintf(b + n, cap - n, "%s %s\n",
					      str_fields[k].key, v);
	}
	if (s->format == BOAR_FORMAT_CSV)
		for (size_t k = 0; k < N_INT; k++)
			n += (size_t)snprintf(b + n, cap - n, "%s %d\n",
					      int_fields[k].key, *int_at(w, k));
	*buf = b;
	*len = n;
	return 0;
}

static int parse_line(struct boar_input_spec *s, const char *key, size_t klen,
		      const char *v, char *why, size_t why_len)
{
#define IS(name) (klen == strlen(name) && !memcmp(key, name, klen))
	if (IS("format")) {
		int f = boar_format_from_name(v);
		if (f > 0) {
			s->format = f;
			return 0;
		}
		snprintf(why, why_len, "unknown input format '%.40s'", v);
		return BOAR_ECORRUPT;
	}
	for (size_t k = 0; k < N_STR; k++)
		if (IS(str_fields[k].key)) {
			free(*str_at(s, k));
			*str_at(s, k) = strdup(v);
			return *str_at(s, k) ? 0 : BOAR_ENOMEM;
		}
	for (size_t k = 0; k < N_INT; k++)
		if (IS(int_fields[k].key)) {
			char *end;
			long x = strtol(v, &end, 10);
			if (!*v || *end || x < int_fields[k].lo ||
			    x > int_fields[k].hi) {
				snprintf(why, why_len, "%s '%.20s' out of range",
					 int_fields[k].key, v);
				return BOAR_ECORRUPT;
			}
			*int_at(s, k) = (int)x;
			return 0;
		}
#undef IS
	/* A key this build does not know may change how data is read: using
	 * the model without it would score wrong, so say so. */
	snprintf(why, why_len, "input option '%.*s' unknown to this build "
		 "(a newer boar wrote the model)", (int)(klen > 40 ? 40 : klen),
		 key);
	return BOAR_EFORMAT;
}

int boar_input_spec_decode(const char *buf, size_t len,
			   struct boar_input_spec **out, char *why,
			   size_t why_len)
{
	struct boar_input_spec *s = calloc(1, sizeof *s);
	char *line = malloc(len + 1);
	int rc = 0;
	if (!s || !line) {
		rc = BOAR_ENOMEM;
		goto out;
	}
	const char *p = buf, *end = buf + len;
	while (p < end && !rc) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol) {
			snprintf(why, why_len, "input options: last line "
				 "unterminated");
			rc = BOAR_ECORRUPT;
			break;
		}
		const char *sp = memchr(p, ' ', (size_t)(eol - p));
		if (!sp || sp == p || memchr(p, '\0', (size_t)(eol - p))) {
			snprintf(why, why_len, "input options: a line is not "
				 "'key value'");
			rc = BOAR_ECORRUPT;
			break;
		}
		memcpy(line, sp + 1, (size_t)(eol - sp - 1));
		line[eol - sp - 1] = '\0';
		rc = parse_line(s, p, (size_t)(sp - p), line, why, why_len);
		p = eol + 1;
	}
	if (!rc && !s->format) {
		snprintf(why, why_len, "input options without a format");
		rc = BOAR_ECORRUPT;
	}
out:
	free(line);
	if (rc) {
		boar_input_spec_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int boar_dataset_note_input(boar_dataset **d, int format,
			    const boar_load_options *o, boar_error *err)
{
	boar_load_options at = *o;
	at.csv_label_at = (int)(*d)->csv_label_col; /* where it really was */
	struct boar_input_spec *s = boar_input_spec_new(format, &at);
	const char *settled[2] = { (*d)->csv_kinds[0], (*d)->csv_kinds[1] };
	if (s && format == BOAR_FORMAT_CSV) {
		if ((settled[0] && !(s->csv_cat_settled = strdup(settled[0]))) ||
		    (settled[1] && !(s->csv_num_settled = strdup(settled[1])))) {
			boar_input_spec_free(s);
			s = NULL;
		}
	}
	if (((*d)->input = s))
		return 0;
	boar_dataset_free(*d);
	*d = NULL;
	return boar_fail(err, BOAR_ENOMEM, "out of memory");
}
