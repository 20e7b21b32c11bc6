/* test_parse_text_threads.c - what a worker's --read-part parses: a block
 * of text on several threads (dataset_parse_text_threads) and a byte range
 * of a file in windows (boar_parse_file_range) make the dataset one
 * thread makes of the same text, and name a bad line by the same number:
 * a range's, the file's own. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boar.h"
#include "data/dataset.h"
#include "data/parse_common.h"
#include "testutil.h"

/* rows of LIBSVM text, about 4 MiB: several 1 MiB pieces */
static char *make_text(size_t rows, size_t *len)
{
	size_t cap = rows * 120 + 1, n = 0;
	char *t = malloc(cap);
	uint32_t s = 12345;
	for (size_t i = 0; t && i < rows; i++) {
		n += (size_t)snprintf(t + n, cap - n, "%d", i % 3 ? 1 : -1);
		uint32_t id = 0;
		for (int k = 0; k < 8; k++) {
			s = s * 1103515245u + 12345u;
			id += 1 + (s >> 16) % 5000;
			n += (size_t)snprintf(t + n, cap - n, " %u:%.4f", id,
					      (double)((s >> 8) % 1000) / 999);
		}
		t[n++] = '\n';
	}
	*len = n;
	return t;
}

static int same(const boar_dataset *a, const boar_dataset *b)
{
	return a->n_rows == b->n_rows && a->nnz == b->nnz &&
	       a->dim == b->dim &&
	       !memcmp(a->row_ptr, b->row_ptr,
		       (a->n_rows + 1) * sizeof *a->row_ptr) &&
	       !memcmp(a->idx, b->idx, a->nnz * sizeof *a->idx) &&
	       !memcmp(a->val, b->val, a->nnz * sizeof *a->val) &&
	       !memcmp(a->label, b->label, a->n_rows * sizeof *a->label);
}

int main(void)
{
	size_t len;
	size_t rows = 40000;
	char *t = make_text(rows, &len);
	CHECK(t && len > (3u << 20), "text of %zu bytes", len);
	boar_load_options o;
	boar_load_options_default(&o);
	boar_error e;
	boar_dataset *one = NULL, *many = NULL;
	CHECK(dataset_parse_text_threads(t, len, "t", NULL, &o, 1, &one, &e) == 0,
	      "1 thread: %s", e.message);
	CHECK(dataset_parse_text_threads(t, len, "t", NULL, &o, 4, &many, &e) == 0,
	      "4 threads: %s", e.message);
	CHECK(one && many && one->n_rows == rows && same(one, many),
	      "4 threads parse the dataset 1 thread does");
	boar_dataset_free(many);

	/* bytes [lo, hi) of the file: line starts in its middle */
	const char *f = test_put_file("range.svm", t, len);
	size_t lo = (size_t)(strchr(t + len / 5, '\n') + 1 - t);
	size_t hi = (size_t)(strchr(t + len - len / 5, '\n') + 1 - t);
	boar_dataset *part = NULL, *text = NULL;
	CHECK(boar_parse_file_range(f, lo, hi, &o, 4, &part, &e) == 0,
	      "range: %s", e.message);
	CHECK(dataset_parse_text_threads(t + lo, hi - lo, "r", NULL, &o, 1,
					 &text, &e) == 0,
	      "range as text: %s", e.message);
	CHECK(part && text && part->n_rows > rows / 2 && same(part, text),
	      "the range in windows is the range's text parsed");
	boar_dataset_free(part);
	boar_dataset_free(text);
	boar_dataset_free(one);

	/* a bad line late in the text (a later thread's piece) */
	char *bad = strstr(t + len - 2000, "\n") + 1;
	bad[0] = 'x';
	uint64_t line = 1;
	for (const char *p = t; p < bad; p++)
		line += *p == '\n';
	for (int th = 1; th <= 4; th += 3) {
		boar_dataset *d = NULL;
		CHECK(dataset_parse_text_threads(t, len, "t", NULL, &o, th, &d,
						 &e) != 0 && !d,
		      "%d threads took a bad line", th);
		CHECK_EQ_INT(e.line, line);
	}
	/* in a range (a worker's part, deep in the file): the file's own
	 * line, in the very message a parse of the whole file gives, from
	 * the windows and from the block reader alike */
	f = test_put_file("bad.svm", t, len);
	boar_dataset *d = NULL;
	boar_error whole;
	CHECK(dataset_parse_text_threads(t, len, f, NULL, &o, 4, &d, &whole) !=
		      0 && !d,
	      "the whole file took a bad line");
	CHECK_EQ_INT(whole.line, line);
	CHECK(boar_parse_file_range(f, lo, len, &o, 4, &d, &e) != 0 && !d,
	      "a range took a bad line");
	CHECK_EQ_INT(e.line, line);
	CHECK(!strcmp(e.message, whole.message),
	      "the range says '%s', the whole file '%s'", e.message,
	      whole.message);
	FILE *fp = fopen(f, "rb");
	struct line_origin origin = { .fd = fp ? fileno(fp) : -1, .at = lo };
	CHECK(dataset_parse_text_threads(t + lo, len - lo, f, &origin, &o, 4,
					 &d, &e) != 0 && !d,
	      "the range as text took a bad line");
	CHECK_EQ_INT(e.line, line);
	CHECK(!strcmp(e.message, whole.message),
	      "the range as text says '%s', the whole file '%s'", e.message,
	      whole.message);
	/* a whole text keeps its own numbers and name */
	CHECK(dataset_parse_text_threads(t, len, "t", NULL, &o, 1, &d, &e) != 0,
	      "a bad line taken");
	char want[64];
	snprintf(want, sizeof want, "t:%llu: ", (unsigned long long)line);
	CHECK(!strncmp(e.message, want, strlen(want)), "'%s' is not '%s...'",
	      e.message, want);
	if (fp)
		fclose(fp);
	free(t);
	return TEST_RESULT();
}
