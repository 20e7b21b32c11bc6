/* args.c - option scanning and strict number parsing for the boar CLI.
 *
 * See args.h for the contract. The scanner matches long options exactly
 * (no abbreviations: a script that says --eta must not silently become
 * --eta-decay when options are added later).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

void cli_init(struct cli_parser *p, int argc, char **argv)
{
	memset(p, 0, sizeof *p);
	p->argc = argc;
	p->argv = argv;
	p->i = 1;
}

int cli_fail(struct cli_parser *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->why, sizeof p->why, fmt, ap);
	va_end(ap);
	return -1;
}

static const struct cli_opt *find_long(const struct cli_opt *opts,
				       const char *name, size_t len)
{
	for (; opts->id; opts++)
		if (strlen(opts->name) == len && !memcmp(opts->name, name, len))
			return opts;
	return NULL;
}

/* Edit distance (insert, delete, replace, swap of neighbours) between
 * a[0..n) and b, capped: enough to catch "--epoch" or "--eta_decay". */
static int distance(const char *a, size_t n, const char *b)
{
	size_t m = strlen(b);
	if (n > 40 || m > 40)
		return 99;
	int d[41][41];
	for (size_t i = 0; i <= n; i++)
		for (size_t j = 0; j <= m; j++) {
			if (!i || !j) {
				d[i][j] = (int)(i + j);
				continue;
			}
			int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < c)
				c = d[i - 2][j - 2] + 1;
			d[i][j] = c;
		}
	return d[n][m];
}

/* Vowpal Wabbit's names for boar's options, which no edit distance
 * would find. */
static const char *const vw_names[][2] = {
	{ "passes", "epochs" },		{ "learning_rate", "eta" },
	{ "decay_learning_rate", "eta-decay" }, { "bit_precision", "hash-bits" },
	{ "loss_function", "loss" },	{ "initial_regressor", "init-model" },
	{ "final_regressor", "model-out" }, { "save_resume", "save-resume" },
	{ "testonly", "test" },		{ "predictions", "output" },
};

/* "unknown option --epoch (did you mean --epochs?)": the closest long
 * name within two edits, one that the typed name starts, or the option
 * a VW name stands for. */
static void unknown_long(struct cli_parser *p, const struct cli_opt *opts,
			 const char *name, size_t len)
{
	const struct cli_opt *best = NULL;
	int bd = 3;
	for (size_t k = 0; k < sizeof vw_names / sizeof vw_names[0]; k++)
		if (strlen(vw_names[k][0]) == len &&
		    !memcmp(vw_names[k][0], name, len) &&
		    (best = find_long(opts, vw_names[k][1],
				      strlen(vw_names[k][1]))))
			bd = -1;
	for (const struct cli_opt *o = opts; o->id; o++) {
		int dd = distance(name, len, o->name);
		if (dd < bd || (len >= 3 && !strncmp(o->name, name, len) &&
				bd > 1)) {
			bd = dd < bd ? dd : 1;
			best = o;
		}
	}
	if (best)
		cli_fail(p, "unknown option %s (did you mean --%s?)", p->opt,
			 best->name);
	else
		cli_fail(p, "unknown option %s", p->opt);
}

static const struct cli_opt *find_short(const struct cli_opt *opts, char c)
{
	for (; opts->id; opts++)
		if (opts->short_name && opts->short_name == c)
			return opts;
	return NULL;
}

/* Takes the option's argument from "=value"/attached text or the next argv
 * entry. */
static int take_arg(struct cli_parser *p, const struct cli_opt *o,
		    const char *attached)
{
	if (!o->arg) {
		if (attached) {
			cli_fail(p, "%s takes no value", p->opt);
			return CLI_ERROR;
		}
		p->value = NULL;
		return o->id;
	}
	if (attached) {
		p->value = attached;
		return o->id;
	}
	if (p->i >= p->argc) {
		cli_fail(p, "%s needs a value (%s)", p->opt, o->arg);
		return CLI_ERROR;
	}
	p->value = p->argv[p->i++];
	return o->id;
}

int cli_next(struct cli_parser *p, const struct cli_opt *opts)
{
	p->value = NULL;
	p->why[0] = '\0';
	if (p->i >= p->argc)
		return CLI_END;
	const char *a = p->argv[p->i++];

	/* "-" alone is a file name by convention (stdin), not an option. */
	if (p->only_positional || a[0] != '-' || a[1] == '\0') {
		p->value = a;
		return CLI_POSITIONAL;
	}
	if (a[1] == '-') {
		if (a[2] == '\0') {
			p->only_positional = 1;
			return cli_next(p, opts);
		}
		const char *name = a + 2;
		const char *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		snprintf(p->opt, sizeof p->opt, "--%.*s", (int)len, name);
		const struct cli_opt *o = find_long(opts, name, len);
		if (!o) {
			unknown_long(p, opts, name, len);
			return CLI_ERROR;
		}
		return take_arg(p, o, eq ? eq + 1 : NULL);
	}
	snprintf(p->opt, sizeof p->opt, "-%c", a[1]);
	const struct cli_opt *o = find_short(opts, a[1]);
	if (!o) {
		cli_fail(p, "unknown option %s%s", p->opt,
			 a[1] == 'q' && find_long(opts, "quadratic", 9)
				 ? " (Vowpal Wabbit's -q AB is --quadratic AB)"
				 : "");
		return CLI_ERROR;
	}
	return take_arg(p, o, a[2] ? a + 2 : NULL);
}

/* The value must start with a digit, sign or dot: strtod and strtoll skip
 * leading blanks and would accept " 5". */
static int plausible_start(const char *s)
{
	return s && (isdigit((unsigned char)s[0]) || s[0] == '-' ||
		     s[0] == '+' || s[0] == '.');
}

static int parse_double(struct cli_parser *p, double *out)
{
	const char *s = p->value;
	char *end;
	/* strtod also reads hexadecimal floats ("0x1p-3"): nobody means one
	 * on a command line, and "0x10" as 16 would surprise. */
	if (!plausible_start(s) || strpbrk(s, "xX"))
		return cli_fail(p, "%s: '%s' is not a number", p->opt,
				s ? s : "");
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end != '\0')
		return cli_fail(p, "%s: '%s' is not a number", p->opt, s);
	if (errno == ERANGE || !isfinite(v))
		return cli_fail(p, "%s: '%s' is out of range", p->opt, s);
	*out = v;
	return 0;
}

int cli_double(struct cli_parser *p, double lo, double hi, double *out)
{
	double v = 0;
	if (parse_double(p, &v))
		return -1;
	if (v < lo || v > hi)
		return cli_fail(p, "%s must be in [%g, %g], got %s", p->opt,
				lo, hi, p->value);
	*out = v;
	return 0;
}

int cli_double_gt(struct cli_parser *p, double lo, double hi, double *out)
{
	double v = 0;
	if (parse_double(p, &v))
		return -1;
	if (!(v > lo) || v > hi)
		return cli_fail(p, "%s must be > %g and <= %g, got %s", p->opt,
				lo, hi, p->value);
	*out = v;
	return 0;
}

/* Integers: decimal only (a leading 0 is not octal), optional sign. */
static int parse_integer(struct cli_parser *p, int allow_negative,
			 long long *sv, unsigned long long *uv)
{
	const char *s = p->value;
	char *end;
	if (!s || !(isdigit((unsigned char)s[0]) ||
		    ((s[0] == '-' || s[0] == '+') &&
		     isdigit((unsigned char)s[1]))))
		return cli_fail(p, "%s: '%s' is not an integer", p->opt,
				s ? s : "");
	errno = 0;
	if (allow_negative)
		*sv = strtoll(s, &end, 10);
	else {
		if (s[0] == '-')
			return cli_fail(p, "%s must not be negative, got %s",
					p->opt, s);
		*uv = strtoull(s, &end, 10);
	}
	if (*end != '\0')
		return cli_fail(p, "%s: '%s' is not an integer", p->opt, s);
	if (errno == ERANGE)
		return cli_fail(p, "%s: '%s' is out of range", p->opt, s);
	return 0;
}

int cli_int(struct cli_parser *p, long long lo, long long hi, int *out)
{
	long long v = 0;
	if (parse_integer(p, 1, &v, NULL))
		return -1;
	if (v < lo || v > hi)
		return cli_fail(p, "%s must be in [%lld, %lld], got %s", p->opt,
				lo, hi, p->value);
	*out = (int)v;
	return 0;
}

int cli_u64(struct cli_parser *p, uint64_t lo, uint64_t hi, uint64_t *out)
{
	unsigned long long v = 0;
	if (parse_integer(p, 0, NULL, &v))
		return -1;
	if (v < lo || v > hi)
		return cli_fail(p, "%s must be in [%" PRIu64 ", %" PRIu64
				"], got %s", p->opt, lo, hi, p->value);
	*out = v;
	return 0;
}

int cli_u32(struct cli_parser *p, uint32_t lo, uint32_t hi, uint32_t *out)
{
	uint64_t v;
	if (cli_u64(p, lo, hi, &v))
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int cli_choice(struct cli_parser *p, const char *const *names, int *out)
{
	char list[200] = "";
	size_t n = 0;
	for (int k = 0; names[k]; k++) {
		if (!strcmp(p->value, names[k])) {
			*out = k;
			return 0;
		}
		n += snprintf(list + n, n < sizeof list ? sizeof list - n : 0,
			      "%s%s", k ? "|" : "", names[k]);
		if (n >= sizeof list)
			n = sizeof list - 1;
	}
	return cli_fail(p, "%s: unknown value '%s' (one of %s)", p->opt,
			p->value, list);
}

/* Writes text word-wrapped into columns [col, 79), the first line starting
 * at column `at`. */
static void wrap(FILE *out, const char *text, int at, int col)
{
	const int width = 79;
	int x = at;
	while (*text) {
		while (*text == ' ')
			text++;
		int len = (int)strcspn(text, " ");
		if (!len)
			break;
		if (x > col && x + 1 + len > width) {
			fprintf(out, "\n%*s", col, "");
			x = col;
		} else if (x > col) {
			fputc(' ', out);
			x++;
		}
		fwrite(text, 1, len, out);
		x += len;
		text += len;
	}
	fputc('\n', out);
}

void cli_print_options(FILE *out, const struct cli_opt *opts,
		       void (*default_of)(int id, char *buf, size_t n))
{
	const int col = 30;
	for (; opts->id; opts++) {
		char left[96], def[96] = "", text[512];
		if (opts->short_name)
			snprintf(left, sizeof left, "  -%c, --%s%s%s",
				 opts->short_name, opts->name,
				 opts->arg ? " " : "",
				 opts->arg ? opts->arg : "");
		else
			snprintf(left, sizeof left, "      --%s%s%s", opts->name,
				 opts->arg ? " " : "",
				 opts->arg ? opts->arg : "");
		if (default_of)
			default_of(opts->id, def, sizeof def);
		snprintf(text, sizeof text, "%s%s%s%s", opts->help,
			 def[0] ? " (default: " : "", def, def[0] ? ")" : "");
		int n = fprintf(out, "%s", left);
		if (n + 1 >= col) {
			fprintf(out, "\n%*s", col, "");
			n = col;
		} else {
			fprintf(out, "%*s", col - n, "");
			n = col;
		}
		wrap(out, text, n, col);
	}
}
