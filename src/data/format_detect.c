/* format_detect.c - telling LIBSVM, VW, CSV and ratings text apart from
 * its first lines, and the formats' names and traits (boar.h's list).
 */
#include <stdio.h>
#include <string.h>

#include "dataset.h"
#include "format_detect.h"
#include "gzip_input.h"
#include "parse_common.h"

/* Is [s, eol) a line with a LIBSVM feature token (a ':' after the first
 * token that is not part of a '::' separator)? */
static int has_feature_token(const char *s, const char *eol)
{
	s = pc_token_end(s, eol);
	for (;;) {
		s = pc_skip_space(s, eol);
		if (s == eol || *s == '#')
			return 0;
		const char *te = pc_token_end(s, eol);
		for (const char *c = s; c < te; c++) {
			if (*c != ':')
				continue;
			if (c + 1 < te && c[1] == ':')
				break; /* "::": a ratings separator */
			return 1;
		}
		s = te;
	}
}

/* Counts the leading numeric fields of a ratings-style line. */
static int numeric_fields(const char *s, const char *eol)
{
	int n = 0;
	while (s < eol && *s != '#') {
		float v;
		const char *t = pc_parse_float(s, eol, &v);
		if (t == s)
			break;
		if (t < eol && !pc_is_space((unsigned char)*t) && *t != ',' &&
		    *t != ':')
			break;
		n++;
		s = pc_skip_space(t, eol);
		if (s < eol && *s == ',')
			s++;
		else if (s + 1 < eol && s[0] == ':' && s[1] == ':')
			s += 2;
		else if (s < eol && *s == ':')
			break;
		s = pc_skip_space(s, eol);
	}
	return n;
}

/* A VW line: a '|' after at most four tokens (label, importance, base,
 * tag) holding nothing that a LIBSVM comment, a CSV field or a feature
 * would have. */
static int looks_vw(const char *s, const char *eol)
{
	const char *bar = memchr(s, '|', (size_t)(eol - s));
	if (!bar)
		return 0;
	int tokens = 0;
	for (; s < bar; s++) {
		if (*s == ',' || *s == '#' || *s == ':')
			return 0;
		tokens += !pc_is_space((unsigned char)*s) &&
			  (s + 1 == bar || pc_is_space((unsigned char)s[1]));
	}
	return tokens <= 4;
}

/* A CSV line: five fields or more split by ',' (or by tabs, with no ':'
 * that would make them LIBSVM tokens) before any '#' (a LIBSVM comment
 * may hold commas). Ratings lines have 3 or 4. */
static int looks_csv(const char *s, const char *eol)
{
	int commas = 0, tabs = 0, colons = 0;
	for (; s < eol && *s != '#'; s++) {
		commas += *s == ',';
		tabs += *s == '\t';
		colons += *s == ':';
	}
	return commas >= 4 || (tabs >= 4 && !colons);
}

/* Does the line start with two ids ("user item", digits only, then a
 * separator)? Ratings need them; "1,0.5,3" is a CSV row, not a rating. */
static int leading_ids(const char *s, const char *eol)
{
	for (int k = 0; k < 2; k++) {
		const char *t = s;
		while (t < eol && pc_is_digit((unsigned char)*t))
			t++;
		if (t == s || t == eol ||
		    !(pc_is_space((unsigned char)*t) || *t == ',' || *t == ':'))
			return 0;
		s = pc_skip_space(t, eol);
		if (s < eol && *s == ',')
			s++;
		else if (s + 1 < eol && s[0] == ':' && s[1] == ':')
			s += 2;
		s = pc_skip_space(s, eol);
	}
	return 1;
}

/* Fields split by ',' or a tab (LIBSVM and VW rows have neither)? */
static int has_separator(const char *s, const char *eol)
{
	for (; s < eol && *s != '#'; s++)
		if (*s == ',' || *s == '\t')
			return 1;
	return 0;
}

int boar_detect_format(const char *buf, size_t len)
{
	/* the window starts at the first text: blank lines before it say
	 * nothing about the format */
	size_t lead = text_blank_prefix(buf, len);
	buf += lead;
	len -= lead;
	const char *p = buf, *end = buf + (len < DETECT_WINDOW ? len : DETECT_WINDOW);
	int looked = 0, separated = 0;
	while (p < end && looked < 32) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		const char *s = pc_skip_space(p, eol);
		p = eol + 1;
		if (s == eol || *s == '#')
			continue;
		looked++;
		if (looks_vw(s, eol))
			return BOAR_FORMAT_VW;
		if (looks_csv(s, eol))
			return BOAR_FORMAT_CSV;
		if (has_feature_token(s, eol))
			return BOAR_FORMAT_LIBSVM;
		if (numeric_fields(s, eol) >= 3 && leading_ids(s, eol))
			return BOAR_FORMAT_RATINGS;
		if (has_separator(s, eol)) {
			float v;
			const char *t = pc_parse_float(s, eol, &v);
			/* a number, then a separator: a CSV row of any width
			 * ("1,free entry", "1,0.5,3") */
			const char *u = pc_skip_space(t, eol);
			if (t > s && t < eol &&
			    (*t == '\t' || (u < eol && *u == ',')))
				return BOAR_FORMAT_CSV;
			separated++;
		}
		/* a label-only row or a header line: look further */
	}
	/* Only separated lines that start with text ("ham,Go until..."):
	 * CSV, whose parser names the first label that is not a number. */
	return separated && separated == looked ? BOAR_FORMAT_CSV
						: BOAR_FORMAT_LIBSVM;
}


static const char *const format_names[BOAR_FORMAT_CODES] = {
	[BOAR_FORMAT_AUTO] = "auto",
#define FORMAT_NAME(N, code, name, task, hashed, help) [code] = #name,
	BOAR_FORMAT_MAP(FORMAT_NAME)
#undef FORMAT_NAME
};

const char *boar_format_name(int format)
{
	return format >= 0 && format < BOAR_FORMAT_CODES ? format_names[format]
							  : NULL;
}

int boar_format_from_name(const char *name)
{
	for (int f = 0; name && f < BOAR_FORMAT_CODES; f++)
		if (!strcmp(format_names[f], name))
			return f;
	return BOAR_EINVAL;
}

/* Each format's task and whether its features are names hashed into
 * slots, from boar.h's list; AUTO reads as linear, unhashed. */
static const struct {
	int task, hashed;
} format_traits[BOAR_FORMAT_CODES] = {
	[BOAR_FORMAT_AUTO] = {BOAR_TASK_LINEAR, 0},
#define FORMAT_TRAITS(N, code, name, task, hashed, help) \
	[code] = {BOAR_TASK_##task, hashed},
	BOAR_FORMAT_MAP(FORMAT_TRAITS)
#undef FORMAT_TRAITS
};

int boar_format_task(int format)
{
	return format_traits[format].task;
}

int boar_format_hashed(int format)
{
	return format_traits[format].hashed;
}

int boar_detect_format_for(int task, const char *buf, size_t len)
{
	int f = boar_detect_format(buf, len);
	return task == BOAR_TASK_LINEAR && f == BOAR_FORMAT_RATINGS
		       ? BOAR_FORMAT_LIBSVM
		       : f;
}
