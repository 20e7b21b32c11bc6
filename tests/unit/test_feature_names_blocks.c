/* test_feature_names_blocks.c - the names scan reads a file the way the
 * loader does (parse_stream.c's one block loop): blank lines before a
 * CSV header, more than a block of them, are looked past, so the header
 * still names the columns (the scan had a loop of its own that took the
 * first block, blank, as the file's start and then read the header as
 * data); names come in file order across many blocks, with the same
 * slots the loader gives; LIBSVM is refused after a blank preamble too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boar.h"
#include "data/dataset.h"
#include "data/feature_names.h"
#include "data/parse_common.h"
#include "testutil.h"

#define MAX_NAMES 64

struct seen {
	int n;
	uint32_t slot[MAX_NAMES];
	char name[MAX_NAMES][32];
};

static int collect(void *ctx, uint32_t slot, const char *name, size_t len)
{
	struct seen *s = ctx;
	if (s->n < MAX_NAMES && len < sizeof s->name[0]) {
		s->slot[s->n] = slot;
		memcpy(s->name[s->n], name, len);
		s->name[s->n][len] = 0;
	}
	s->n++;
	return 0;
}

/* Whether the scan reported name with one of the slots of row r of d. */
static int named_in_row(const struct seen *s, const char *name,
			const struct boar_dataset *d, uint64_t r)
{
	for (int k = 0; k < s->n && k < MAX_NAMES; k++) {
		if (strcmp(s->name[k], name))
			continue;
		for (uint64_t j = d->row_ptr[r]; j < d->row_ptr[r + 1]; j++)
			if (d->idx[j] == s->slot[k])
				return 1;
	}
	return 0;
}

int main(void)
{
	test_dir_make("names_blocks");
	/* 200 blank lines (3 blocks of 64 bytes), then a header and rows */
	size_t blank = 200;
	const char *body = "y,color,size\n1,red,3\n0,blue,4\n1,red,5\n";
	char *text = malloc(blank + strlen(body) + 1);
	memset(text, '\n', blank);
	strcpy(text + blank, body);
	char csv[512];
	snprintf(csv, sizeof csv, "%s",
		 test_put_file("late_header.csv", text, strlen(text)));
	boar_load_options o;
	boar_load_options_default(&o);
	o.format = BOAR_FORMAT_CSV;
	struct seen s = { 0 };
	struct name_sink sink = { collect, &s };
	boar_error err;
	int rc = boar_parse_file_names(csv, &o, 64, &sink, &err);
	CHECK(rc == 0, "%d %s", rc, err.message);
	/* three rows of "color=..." and "size" */
	CHECK_EQ_INT(s.n, 6);
	CHECK(s.n >= 6 && !strcmp(s.name[0], "color=red") &&
		      !strcmp(s.name[1], "size") &&
		      !strcmp(s.name[2], "color=blue") &&
		      !strcmp(s.name[5], "size"),
	      "names %s %s %s ... %s", s.name[0], s.name[1], s.name[2],
	      s.name[5]);
	/* the slots are the loader's, also when detected (format AUTO) */
	boar_dataset *d = NULL;
	CHECK_EQ_INT(boar_dataset_load(csv, &o, &d, &err), 0);
	if (d) {
		CHECK_EQ_INT(d->n_rows, 3);
		CHECK(named_in_row(&s, "color=red", d, 0) &&
			      named_in_row(&s, "size", d, 0) &&
			      named_in_row(&s, "color=blue", d, 1),
		      "a name's slot is not in its row");
		boar_dataset_free(d);
	}
	memset(&s, 0, sizeof s);
	o.format = BOAR_FORMAT_AUTO;
	CHECK_EQ_INT(boar_parse_file_names(csv, &o, 64, &sink, &err), 0);
	CHECK(s.n == 6 && !strcmp(s.name[1], "size"), "detected: %d names",
	      s.n);

	/* and through the public call, whose blocks are 16 MiB: 17 MiB of
	 * blank lines first */
	size_t big = (size_t)17 << 20;
	char *huge = malloc(big + strlen(body) + 1);
	memset(huge, '\n', big);
	strcpy(huge + big, body);
	char bigcsv[512];
	snprintf(bigcsv, sizeof bigcsv, "%s",
		 test_put_file("late_header_big.csv", huge, strlen(huge)));
	free(huge);
	memset(&s, 0, sizeof s);
	rc = boar_feature_names(bigcsv, &o, collect, &s, &err);
	CHECK(rc == 0 && s.n == 6 && !strcmp(s.name[0], "color=red") &&
		      !strcmp(s.name[1], "size"),
	      "public call: %d %s, %d names, first %s", rc, err.message, s.n,
	      s.name[0]);

	/* LIBSVM has ids, not names, blank lines first or not */
	strcpy(text + blank, "1 1:2 3:4\n");
	char svm[512];
	snprintf(svm, sizeof svm, "%s",
		 test_put_file("late.svm", text, strlen(text)));
	CHECK_EQ_INT(boar_parse_file_names(svm, &o, 64, &sink, &err),
		     BOAR_EINVAL);
	CHECK(strstr(err.message, "feature ids, not names") != NULL, "%s",
	      err.message);
	free(text);
	test_dir_remove();
	return TEST_RESULT();
}
