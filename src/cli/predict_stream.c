/* predict_stream.c - predict a line at a time (predict_stream.h). */
#include <stdlib.h>
#include <string.h>

#include "predict_stream.h"
#include "vw_tags.h"

#define STREAM_NAME "standard input"

/* The parser numbers lines within the text it was given (the header, if
 * kept, is line 1): say the line of the stream instead. */
static void renumber(boar_error *err, uint64_t line)
{
	const char *p = STREAM_NAME ":";
	size_t n = strlen(p);
	if (strncmp(err->message, p, n))
		return;
	const char *rest = err->message + n;
	while (*rest >= '0' && *rest <= '9')
		rest++;
	if (*rest != ':')
		return;
	char tail[sizeof err->message - 64];
	snprintf(tail, sizeof tail, "%s", rest);
	snprintf(err->message, sizeof err->message, STREAM_NAME ":%llu%s",
		 (unsigned long long)line, tail);
	err->line = line;
}

void predict_put_row(FILE *out, const double *s, uint64_t width,
		    const char *tag, size_t tag_len)
{
	for (uint64_t c = 0; c < width; c++)
		fprintf(out, "%.9g%s", s[c], c + 1 < width ? " " : "");
	if (tag_len)
		fprintf(out, " %.*s", (int)tag_len, tag);
	fputc('\n', out);
}

int predict_stream(const boar_model *m, const boar_load_options *lo,
		   uint64_t width, FILE *in, FILE *out, boar_error *err)
{
	char *line = NULL, *text = NULL, *header = NULL;
	size_t cap = 0, text_cap = 0, header_len = 0;
	double *s = malloc(width * sizeof *s);
	uint64_t lineno = 0;
	int rc = s ? 0 : BOAR_ENOMEM, seen_row = 0;
	ssize_t n;
	while (!rc && (n = getline(&line, &cap, in)) > 0) {
		lineno++;
		size_t len = header_len + (size_t)n;
		if (len + 1 > text_cap) {
			char *b = realloc(text, len + 1);
			if (!b) {
				rc = BOAR_ENOMEM;
				break;
			}
			text = b;
			text_cap = len + 1;
		}
		if (header_len)
			memcpy(text, header, header_len);
		memcpy(text + header_len, line, (size_t)n);
		boar_dataset *d = NULL;
		rc = boar_dataset_parse_text(text, len, STREAM_NAME, lo, &d, err);
		if (rc) {
			renumber(err, lineno);
			break;
		}
		if (!boar_dataset_rows(d)) {
			/* A CSV's first line that holds no row is its header. */
			if (lo->format == BOAR_FORMAT_CSV && !seen_row &&
			    !header && line[strspn(line, " \t\r\n")]) {
				header = strdup(line);
				header_len = header ? (size_t)n : 0;
				if (!header)
					rc = BOAR_ENOMEM;
			}
			boar_dataset_free(d);
			continue;
		}
		seen_row = 1;
		rc = width > 1 ? boar_predict_scores(m, d, s, 1, err)
			       : boar_predict(m, d, s, 1, err);
		boar_dataset_free(d);
		if (rc)
			break;
		const char *tag = NULL;
		size_t tag_len = 0;
		if (lo->format == BOAR_FORMAT_VW)
			vw_tag(line, (size_t)n, &tag, &tag_len);
		predict_put_row(out, s, width, tag, tag_len);
		if (fflush(out)) {
			rc = BOAR_EIO;
			break;
		}
	}
	free(line);
	free(text);
	free(header);
	free(s);
	return rc;
}
