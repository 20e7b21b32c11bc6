/* json.c - one flat JSON object per line (see json.h). */
#include <inttypes.h>
#include <math.h>

#include "json.h"

void json_begin(struct json_obj *j, FILE *out)
{
	j->out = out;
	j->n = 0;
	fputc('{', out);
}

void json_put_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		switch (*c) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		default:
			if (*c < 0x20)
				fprintf(out, "\\u%04x", *c);
			else
				fputc(*c, out);
		}
	}
	fputc('"', out);
}

static void key(struct json_obj *j, const char *k)
{
	if (j->n++)
		fputs(", ", j->out);
	json_put_string(j->out, k);
	fputs(": ", j->out);
}

void json_int(struct json_obj *j, const char *k, int64_t v)
{
	key(j, k);
	fprintf(j->out, "%" PRId64, v);
}

void json_uint(struct json_obj *j, const char *k, uint64_t v)
{
	key(j, k);
	fprintf(j->out, "%" PRIu64, v);
}

void json_num(struct json_obj *j, const char *k, double v)
{
	key(j, k);
	/* %.10g never prints a bare "." or a leading "+": valid JSON for any
	 * finite value, and 10 digits is more than any metric here means. */
	if (isfinite(v))
		fprintf(j->out, "%.10g", v);
	else
		fputs("null", j->out);
}

void json_null(struct json_obj *j, const char *k)
{
	key(j, k);
	fputs("null", j->out);
}

void json_bool(struct json_obj *j, const char *k, int v)
{
	key(j, k);
	fputs(v ? "true" : "false", j->out);
}

void json_str(struct json_obj *j, const char *k, const char *s)
{
	key(j, k);
	json_put_string(j->out, s);
}

void json_end(struct json_obj *j)
{
	fputs("}\n", j->out);
	fflush(j->out);
}
