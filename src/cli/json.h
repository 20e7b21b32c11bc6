/* json.h - writing one flat JSON object per line.
 *
 * The CLI's machine-readable output (train --json, eval --json) is a stream
 * of flat objects, one per line, so that `jq`, pandas or a shell loop can
 * read it as it comes. Numbers are printed so that they are always valid
 * JSON: NaN and infinities, which JSON cannot express, become null.
 */
#ifndef BOAR_CLI_JSON_H
#define BOAR_CLI_JSON_H

#include <stdint.h>
#include <stdio.h>

struct json_obj {
	FILE *out;
	int n; /* members written so far */
};

void json_begin(struct json_obj *j, FILE *out);
void json_int(struct json_obj *j, const char *key, int64_t v);
void json_uint(struct json_obj *j, const char *key, uint64_t v);
/* null when v is NaN or infinite. */
void json_num(struct json_obj *j, const char *key, double v);
void json_null(struct json_obj *j, const char *key);
void json_bool(struct json_obj *j, const char *key, int v);
/* Escapes quotes, backslashes and control characters. */
void json_str(struct json_obj *j, const char *key, const char *s);
/* s as a quoted, escaped JSON string (for writers of nested values). */
void json_put_string(FILE *out, const char *s);
/* Writes "}\n" and flushes, so a reader sees each object when it is done. */
void json_end(struct json_obj *j);

#endif
