/* predict_stream.h - `boar predict` on standard input, a line at a time:
 * each row is scored and its line written (and flushed) as soon as it is
 * read, so that predict can sit behind a pipe, as VW's daemon users have
 * it. A CSV header, when the first line is one, is kept and read again
 * before every row. Blank lines give no output; VW tags follow the score.
 */
#ifndef BOAR_CLI_PREDICT_STREAM_H
#define BOAR_CLI_PREDICT_STREAM_H

#include <stdint.h>
#include <stdio.h>

#include "boar.h"

/* Scores the rows of `in` (read as *lo says) with m into `out`: one score,
 * or `width` class scores, a line. @return 0 or a BOAR_E* code with *err
 * naming the line of `in`. */
int predict_stream(const boar_model *m, const boar_load_options *lo,
		   uint64_t width, FILE *in, FILE *out, boar_error *err);

/* Writes one row's `width` scores and its tag (tag_len 0: none) as a line:
 * "%.9g" round-trips a float score exactly. */
void predict_put_row(FILE *out, const double *s, uint64_t width,
		     const char *tag, size_t tag_len);

#endif
