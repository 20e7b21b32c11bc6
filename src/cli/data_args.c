/* data_args.c - --format and the --csv-* options (see data_args.h). */
#include <stdio.h>
#include <string.h>

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
	}
}
