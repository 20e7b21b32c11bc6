/* data_args.c - --format and the --csv-* options (see data_args.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/vw_interactions.h"
#include "data_args.h"

/* Names indexed by code (boar.h's list); the last entry stays NULL. */
static const char *const format_names[BOAR_FORMAT_CODES + 1] = {
	[BOAR_FORMAT_AUTO] = "auto",
#define FORMAT_NAME(N, code, name, task, hashed, help) [code] = #name,
	BOAR_FORMAT_MAP(FORMAT_NAME)
#undef FORMAT_NAME
};

/* A column list: non-empty, no empty items. The names and ranges are
 * checked against the file's header by the library. */
static int col_list(struct cli_parser *p, const char **out)
{
	const char *v = p->value;
	size_t n = strlen(v);
	if (!n || v[0] == ',' || v[n - 1] == ',' || strstr(v, ",,"))
		return cli_fail(p, "%s: '%s' is not a list of columns (e.g. "
			        "Id or 0,2-5 or C1-C26)", p->opt, v);
	*out = v;
	return 0;
}

/* A size: a number of bytes, or with K, M, G, T (powers of 1024). */
static int size_arg(struct cli_parser *p, uint64_t *out)
{
	char *end;
	double v = strtod(p->value, &end);
	double mult = 1;
	switch (*end) {
	case 'K': case 'k': mult = 1024.0; end++; break;
	case 'M': case 'm': mult = 1048576.0; end++; break;
	case 'G': case 'g': mult = 1073741824.0; end++; break;
	case 'T': case 't': mult = 1099511627776.0; end++; break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (end == p->value || *end || !(v * mult >= 1) ||
	    v * mult > 1.8e19)
		return cli_fail(p, "%s: '%s' is not a size (e.g. 512M, 16G)",
				p->opt, p->value);
	*out = (uint64_t)(v * mult);
	return 0;
}

/* Repeated -q, --cubic, --interactions, --ngram and --skips add items to
 * one comma-separated list each. The lists live here (a process parses
 * one command line) and start over whenever an options struct without
 * one gets its first item. */
static char gen_lists[3][4096];

static int list_add(struct cli_parser *p, const char **field, char *buf,
		    size_t cap)
{
	size_t have = *field == buf ? strlen(buf) : 0;
	size_t n = strlen(p->value);
	if (have + n + 2 > cap)
		return cli_fail(p, "%s: too many items given", p->opt);
	if (have)
		buf[have++] = ',';
	memcpy(buf + have, p->value, n + 1);
	*field = buf;
	return 0;
}

/* The library's check of a generation option, as a usage error: the
 * item alone, or with the n-grams so far (skips need them). */
static int gen_check(struct cli_parser *p, const boar_load_options *lo,
		     int id)
{
	boar_load_options t;
	boar_load_options_default(&t);
	if (id == CLI_DATA_VW_NGRAM || id == CLI_DATA_VW_SKIPS) {
		t.vw_ngrams = id == CLI_DATA_VW_NGRAM ? lo->vw_ngrams
						     : (lo->vw_ngrams ? lo->vw_ngrams : "8");
		t.vw_skips = lo->vw_skips;
	} else {
		t.vw_interactions = p->value;
	}
	struct vw_gen *g;
	char why[200];
	int rc = vw_gen_compile(&t, &g, why, sizeof why);
	vw_gen_free(g);
	if (rc == BOAR_EINVAL)
		return cli_fail(p, "%s %s: %s", p->opt, p->value, why);
	return rc ? cli_fail(p, "out of memory") : 0;
}

/* -q AB, --cubic ABC, --interactions AB..., --ngram, --skips. */
static int gen_apply(boar_load_options *lo, struct cli_parser *p, int id)
{
	size_t n = strlen(p->value);
	if ((id == CLI_DATA_VW_QUADRATIC && n != 2) ||
	    (id == CLI_DATA_VW_CUBIC && n != 3))
		return cli_fail(p, "%s '%s': give %s namespace letters (first "
				"letters; ':' is any namespace), e.g. %s %s",
				p->opt, p->value,
				id == CLI_DATA_VW_CUBIC ? "three" : "two", p->opt,
				id == CLI_DATA_VW_CUBIC ? "abc" : "ab");
	if (id != CLI_DATA_VW_NGRAM && id != CLI_DATA_VW_SKIPS &&
	    gen_check(p, lo, id))
		return -1;
	int k = id == CLI_DATA_VW_NGRAM ? 1 : id == CLI_DATA_VW_SKIPS ? 2 : 0;
	const char **field = k == 1 ? &lo->vw_ngrams
			     : k == 2 ? &lo->vw_skips
				      : &lo->vw_interactions;
	if (list_add(p, field, gen_lists[k], sizeof gen_lists[k]))
		return -1;
	return k ? gen_check(p, lo, id) : 0;
}

int cli_data_apply(boar_load_options *lo, struct cli_parser *p, int id)
{
	switch (id) {
	case CLI_DATA_FORMAT:
		return cli_choice(p, format_names, &lo->format);
	case CLI_DATA_CSV_LABEL:
		if (strchr(p->value, ',') || !p->value[0])
			return cli_fail(p, "%s: one column expected, got '%s'",
					p->opt, p->value);
		lo->csv_label = p->value;
		return 0;
	case CLI_DATA_CSV_IGNORE:
		return col_list(p, &lo->csv_ignore);
	case CLI_DATA_CSV_CATEGORICAL:
		return col_list(p, &lo->csv_categorical);
	case CLI_DATA_CSV_NUMERIC:
		return col_list(p, &lo->csv_numeric);
	case CLI_DATA_CSV_SEPARATOR:
		if (!strcmp(p->value, "tab") || !strcmp(p->value, "\\t")) {
			lo->csv_separator = '\t';
			return 0;
		}
		if (strlen(p->value) != 1 || (unsigned char)p->value[0] > 127 ||
		    p->value[0] == '"' || p->value[0] == '\n')
			return cli_fail(p, "%s: '%s' is not one ASCII character "
					"(other than '\"') or 'tab'",
					p->opt, p->value);
		lo->csv_separator = p->value[0];
		return 0;
	case CLI_DATA_CSV_HEADER:
		lo->csv_header = 1;
		return 0;
	case CLI_DATA_NO_CSV_HEADER:
		lo->csv_header = -1;
		return 0;
	case CLI_DATA_CSV_LOG:
		lo->csv_log = 1;
		return 0;
	case CLI_DATA_MAX_MEMORY:
		return size_arg(p, &lo->max_memory);
	case CLI_DATA_VW_IGNORE:
	case CLI_DATA_VW_KEEP:
		if (!p->value[0])
			return cli_fail(p, "%s: give namespaces by their first "
					"letter, e.g. %s ab", p->opt, p->opt);
		*(id == CLI_DATA_VW_IGNORE ? &lo->vw_ignore : &lo->vw_keep) =
			p->value;
		return 0;
	case CLI_DATA_VW_QUADRATIC:
	case CLI_DATA_VW_CUBIC:
	case CLI_DATA_VW_INTERACTIONS:
	case CLI_DATA_VW_NGRAM:
	case CLI_DATA_VW_SKIPS:
		return gen_apply(lo, p, id);
	}
	return cli_fail(p, "internal: data option %d not handled", id);
}

void cli_data_default(int id, char *buf, size_t n)
{
	boar_load_options d;
	boar_load_options_default(&d);
	buf[0] = '\0';
	switch (id) {
	case CLI_DATA_FORMAT:
		snprintf(buf, n, "%s", format_names[d.format]);
		break;
	case CLI_DATA_CSV_LABEL:
		snprintf(buf, n, "0");
		break;
	case CLI_DATA_CSV_IGNORE:
	case CLI_DATA_CSV_CATEGORICAL:
	case CLI_DATA_CSV_NUMERIC:
		snprintf(buf, n, "none");
		break;
	case CLI_DATA_CSV_SEPARATOR:
		snprintf(buf, n, "auto: ',' or tab, whichever line 1 has more of");
		break;
	case CLI_DATA_CSV_HEADER:
		snprintf(buf, n, "auto: a header when its label field is not a number");
		break;
	case CLI_DATA_CSV_LOG:
		snprintf(buf, n, "off");
		break;
	case CLI_DATA_MAX_MEMORY:
		snprintf(buf, n, "3/4 of physical memory");
		break;
	case CLI_DATA_VW_IGNORE:
	case CLI_DATA_VW_KEEP:
	case CLI_DATA_VW_QUADRATIC:
	case CLI_DATA_VW_CUBIC:
	case CLI_DATA_VW_INTERACTIONS:
	case CLI_DATA_VW_NGRAM:
		snprintf(buf, n, "none");
		break;
	case CLI_DATA_VW_SKIPS:
		snprintf(buf, n, "0");
		break;
	}
}

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Is every item of the list `part` ("C1,C3") an item of `whole`? The
 * model keeps every categorical (numeric) column it settled on, a
 * superset of what the user listed in training. */
static int covers(const char *whole, const char *part)
{
	if (!part)
		return 1;
	if (!whole)
		return 0;
	for (const char *p = part; *p;) {
		size_t n = strcspn(p, ",");
		int found = 0;
		for (const char *w = whole; *w && !found;) {
			size_t m = strcspn(w, ",");
			found = m == n && !memcmp(w, p, n);
			w += m + (w[m] == ',');
		}
		if (!found)
			return 0;
		p += n + (p[n] == ',');
	}
	return 1;
}

/* "--csv-label Label" or "no --csv-ignore" for a message. */
static void describe(char *buf, size_t n, const char *opt, const char *v)
{
	if (v)
		snprintf(buf, n, "--%s %s", opt, v);
	else
		snprintf(buf, n, "no --%s", opt);
}

int cli_data_for_model(const boar_model *m, const char *model_path,
		       boar_load_options *lo, unsigned given, char *why,
		       size_t why_len)
{
	boar_load_options want;
	if (!boar_model_load_options(m, &want)) {
		/* An older model: only its task and hashing are known. */
		lo->task = want.task;
		lo->hash_bits = want.hash_bits;
		return 0;
	}
	if ((given & CLI_DATA_BIT(CLI_DATA_FORMAT)) &&
	    lo->format != BOAR_FORMAT_AUTO && lo->format != want.format) {
		snprintf(why, why_len, "--format %s, but %s was trained on %s "
			 "data; leave --format out (the model remembers how "
			 "its data was read)", format_names[lo->format],
			 model_path, format_names[want.format]);
		return -1;
	}
	unsigned csv = 0;
	for (int id = CLI_DATA_CSV_LABEL; id <= CLI_DATA_CSV_LOG; id++)
		csv |= CLI_DATA_BIT(id);
	unsigned inter = CLI_DATA_BIT(CLI_DATA_VW_QUADRATIC) |
			 CLI_DATA_BIT(CLI_DATA_VW_CUBIC) |
			 CLI_DATA_BIT(CLI_DATA_VW_INTERACTIONS);
	if (given & inter) /* one list, however its items were given */
		given |= CLI_DATA_BIT(CLI_DATA_VW_INTERACTIONS);
	unsigned vw = CLI_DATA_BIT(CLI_DATA_VW_IGNORE) |
		      CLI_DATA_BIT(CLI_DATA_VW_KEEP) | inter |
		      CLI_DATA_BIT(CLI_DATA_VW_NGRAM) |
		      CLI_DATA_BIT(CLI_DATA_VW_SKIPS);
	if ((given & vw) && want.format != BOAR_FORMAT_VW) {
		snprintf(why, why_len, "VW options (--ignore, --keep, "
			 "--quadratic, --ngram ...) given, but %s was "
			 "trained on %s data", model_path,
			 format_names[want.format]);
		return -1;
	}
	if ((given & csv) && want.format != BOAR_FORMAT_CSV) {
		snprintf(why, why_len, "--csv-* options given, but %s was "
			 "trained on %s data", model_path,
			 format_names[want.format]);
		return -1;
	}
	const struct {
		int id;
		const char *opt, *have, *model;
	} cols[] = {
		{ CLI_DATA_CSV_LABEL, "csv-label", lo->csv_label, want.csv_label },
		{ CLI_DATA_CSV_IGNORE, "csv-ignore", lo->csv_ignore, want.csv_ignore },
		{ CLI_DATA_CSV_CATEGORICAL, "csv-categorical", lo->csv_categorical,
		  want.csv_categorical },
		{ CLI_DATA_CSV_NUMERIC, "csv-numeric", lo->csv_numeric,
		  want.csv_numeric },
		{ CLI_DATA_CSV_LOG, "csv-log", lo->csv_log ? "" : NULL,
		  want.csv_log ? "" : NULL },
		{ CLI_DATA_VW_IGNORE, "ignore", lo->vw_ignore, want.vw_ignore },
		{ CLI_DATA_VW_KEEP, "keep", lo->vw_keep, want.vw_keep },
		{ CLI_DATA_VW_INTERACTIONS, "interactions", lo->vw_interactions,
		  want.vw_interactions },
		{ CLI_DATA_VW_NGRAM, "ngram", lo->vw_ngrams, want.vw_ngrams },
		{ CLI_DATA_VW_SKIPS, "skips", lo->vw_skips, want.vw_skips },
	};
	for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++) {
		int lists = cols[k].id == CLI_DATA_CSV_CATEGORICAL ||
			    cols[k].id == CLI_DATA_CSV_NUMERIC;
		if (!(given & CLI_DATA_BIT(cols[k].id)) ||
		    (lists ? covers(cols[k].model, cols[k].have)
			   : same_str(cols[k].have, cols[k].model)))
			continue;
		char a[128], b[128];
		describe(a, sizeof a, cols[k].opt, cols[k].have);
		describe(b, sizeof b, cols[k].opt, cols[k].model);
		snprintf(why, why_len, "%s, but %s was trained with %s; leave "
			 "the option out (the model remembers how its data was "
			 "read)", a, model_path, b);
		return -1;
	}
	/* One file may be a TSV or headerless where the training file was
	 * not: those two are the user's to say. */
	if (given & CLI_DATA_BIT(CLI_DATA_CSV_SEPARATOR))
		want.csv_separator = lo->csv_separator;
	if (given & (CLI_DATA_BIT(CLI_DATA_CSV_HEADER) |
		     CLI_DATA_BIT(CLI_DATA_NO_CSV_HEADER)))
		want.csv_header = lo->csv_header;
	want.threads = lo->threads;
	want.labels_optional = lo->labels_optional;
	want.max_memory = lo->max_memory;
	want.use_cache = lo->use_cache;
	want.cache_path = lo->cache_path;
	*lo = want;
	return 0;
}
