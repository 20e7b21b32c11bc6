/* test_parse_ratings.c - the ratings parser: every separator, headers,
 * MovieLens, each bad-input rule with its line, format detection and
 * forcing, and the same result at any thread count. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boar.h"
#include "data/dataset.h"
#include "testutil.h"


static int load_as(const char *text, size_t len, int task, int format,
		   int threads, boar_dataset **d, boar_error *e)
{
	boar_load_options o;
	boar_load_options_default(&o);
	o.task = task;
	o.format = format;
	o.threads = threads;
	return boar_dataset_load(test_put_file("r.txt", text, len), &o, d, e);
}

static int load(const char *text, size_t len, int threads, boar_dataset **d,
		boar_error *e)
{
	return load_as(text, len, BOAR_TASK_AUTO, BOAR_FORMAT_AUTO, threads, d,
		       e);
}

static void bad_case(int lineno, const char *text, size_t len, int code,
		     uint64_t line, const char *want)
{
	boar_dataset *d = NULL;
	boar_error e;
	memset(&e, 0, sizeof e);
	int r = load_as(text, len, BOAR_TASK_MF, BOAR_FORMAT_AUTO, 2, &d, &e);
	if (r != code || e.line != line || !strstr(e.message, want) || d) {
		fprintf(stderr,
			"FAIL %s:%d: expected code %d line %llu \"%s\", got code %d line %llu \"%s\"\n",
			__FILE__, lineno, code, (unsigned long long)line, want,
			r, (unsigned long long)e.line, e.message);
		test_failures++;
	}
	boar_dataset_free(d);
}

#define BAD(text, code, line, want) \
	bad_case(__LINE__, text, sizeof(text) - 1, code, line, want)

static void test_separators(void)
{
	const char t[] = "1 2 3.5\n"
			 "4,5,1\n"
			 "6::7::2::978300760\n"
			 " 8\t9\t0.5 extra fields here\r\n"
			 "\n"
			 "# a comment\n"
			 "10 , 11 , -1.25,\n"
			 "0 0 0";
	boar_dataset *d;
	boar_error e;
	CHECK_EQ_INT(load(t, sizeof t - 1, 1, &d, &e), 0);
	if (test_failures) {
		fprintf(stderr, "%s\n", e.message);
		return;
	}
	CHECK_EQ_INT(boar_dataset_task(d), BOAR_TASK_MF);
	CHECK_EQ_INT(boar_dataset_rows(d), 6);
	CHECK_EQ_INT(boar_dataset_nnz(d), 6);
	CHECK_EQ_INT(boar_dataset_features(d), 11); /* users 0..10 */
	CHECK_EQ_INT(boar_dataset_items(d), 12);    /* items 0..11 */
	uint32_t u[] = { 1, 4, 6, 8, 10, 0 }, i[] = { 2, 5, 7, 9, 11, 0 };
	float r[] = { 3.5f, 1, 2, 0.5f, -1.25f, 0 };
	for (int k = 0; k < 6; k++) {
		CHECK_EQ_INT(d->user[k], u[k]);
		CHECK_EQ_INT(d->item[k], i[k]);
		CHECK_NEAR(d->label[k], r[k], 0);
	}
	CHECK_EQ_INT(d->label_kind, BOAR_LABELS_REAL);
	boar_dataset_free(d);

	/* a header line, and error lines counted with it */
	const char h[] = "user item rating\n1 2 3\n";
	CHECK_EQ_INT(load(h, sizeof h - 1, 1, &d, &e), 0);
	CHECK_EQ_INT(boar_dataset_rows(d), 1);
	boar_dataset_free(d);
	BAD("\n\nuserId,movieId,rating\n1,2,3\n1,2\n", BOAR_EPARSE, 5,
	    "missing rating field");
}

static void test_bad_input(void)
{
	BAD("1 2\n", BOAR_EPARSE, 1, "missing rating field: lines are 'user item rating'");
	BAD("1 2 3\n7\n", BOAR_EPARSE, 2, "missing item field");
	BAD("1,2,\n", BOAR_EPARSE, 1, "missing rating field");
	BAD("1 2 3\nx 2 3\n", BOAR_EPARSE, 2,
	    "user id 'x' is not a non-negative integer");
	BAD("1 2 3\n1 2.5 3\n", BOAR_EPARSE, 2,
	    "item id '2.5' is not a non-negative integer");
	BAD("1 2 3\n-1 2 3\n", BOAR_EPARSE, 2, "negative user id '-1'");
	BAD("1 -2 3\n", BOAR_EPARSE, 1, "negative item id");
	BAD("1 4294967296 3\n", BOAR_EPARSE, 1,
	    "item id '4294967296' is too large: ids must be < 2^32");
	BAD("1 2 nan\n", BOAR_EPARSE, 1, "rating is NaN or infinite");
	BAD("1 2 -Inf\n", BOAR_EPARSE, 1, "rating is NaN or infinite");
	BAD("1 2 3x\n", BOAR_EPARSE, 1, "rating '3x' is not a number");
	BAD("1:2:3\n", BOAR_EPARSE, 1, "bad separator");
	BAD("1 2 3\n1 2 3\0\n", BOAR_EPARSE, 2, "rating '3\\x00' is not a number");
	BAD("", BOAR_EPARSE, 0, "empty file");
	BAD("userId,movieId,rating\n", BOAR_EPARSE, 0, "no data rows");
	/* largest id there is: fine */
	boar_dataset *d;
	boar_error e;
	const char t[] = "4294967295 4294967295 1\n";
	CHECK_EQ_INT(load(t, sizeof t - 1, 1, &d, &e), 0);
	CHECK_EQ_INT(boar_dataset_features(d), 4294967296ULL);
	CHECK_EQ_INT(boar_dataset_items(d), 4294967296ULL);
	boar_dataset_free(d);
}

static void test_detection(void)
{
	boar_dataset *d;
	boar_error e;
	/* LIBSVM wins when a later token has ':' */
	const char l[] = "1\n1 2:3\n";
	CHECK_EQ_INT(load(l, sizeof l - 1, 1, &d, &e), 0);
	CHECK_EQ_INT(boar_dataset_task(d), BOAR_TASK_LINEAR);
	boar_dataset_free(d);
	/* three numbers: ratings; '::' is a separator, not a feature */
	const char r[] = "1::2::3\n";
	CHECK_EQ_INT(load(r, sizeof r - 1, 1, &d, &e), 0);
	CHECK_EQ_INT(boar_dataset_task(d), BOAR_TASK_MF);
	boar_dataset_free(d);
	/* forcing: the same numbers read as LIBSVM fail with its words */
	const char x[] = "1 2 3\n";
	CHECK_EQ_INT(load_as(x, sizeof x - 1, BOAR_TASK_LINEAR,
			     BOAR_FORMAT_AUTO, 1, &d, &e),
		     BOAR_EPARSE);
	CHECK(strstr(e.message, "missing ':'"), "got \"%s\"", e.message);
	CHECK_EQ_INT(load_as(x, sizeof x - 1, BOAR_TASK_AUTO,
			     BOAR_FORMAT_LIBSVM, 1, &d, &e),
		     BOAR_EPARSE);
	CHECK_EQ_INT(load_as(x, sizeof x - 1, BOAR_TASK_AUTO,
			     BOAR_FORMAT_RATINGS, 1, &d, &e),
		     0);
	boar_dataset_free(d);
	/* and a LIBSVM file forced to ratings */
	CHECK_EQ_INT(load_as(l, sizeof l - 1, BOAR_TASK_MF, BOAR_FORMAT_AUTO,
			     1, &d, &e),
		     BOAR_EPARSE);
	/* task and format that contradict each other */
	CHECK_EQ_INT(load_as(x, sizeof x - 1, BOAR_TASK_MF,
			     BOAR_FORMAT_LIBSVM, 1, &d, &e),
		     BOAR_EINVAL);
	CHECK(strstr(e.message, "disagree"), "got \"%s\"", e.message);
}

static void test_threads(void)
{
	size_t rows = 400000, n = 0;
	char *t = malloc(rows * 40);
	n += (size_t)sprintf(t, "user,item,rating,ts\n");
	for (size_t k = 0; k < rows; k++)
		n += (size_t)sprintf(t + n, "%zu,%zu,%zu.%zu,1234\n",
				     (k * 7919) % 6000, (k * 104729) % 30011,
				     k % 5, k % 10);
	boar_dataset *a, *b;
	boar_error e;
	CHECK_EQ_INT(load(t, n, 1, &a, &e), 0);
	CHECK_EQ_INT(load(t, n, 3, &b, &e), 0);
	if (test_failures)
		return;
	CHECK_EQ_INT(a->n_rows, rows);
	CHECK_EQ_INT(b->n_rows, rows);
	CHECK_EQ_INT(a->dim, 6000);
	CHECK_EQ_INT(a->n_items, 30011);
	CHECK_EQ_INT(b->dim, 6000);
	CHECK(!memcmp(a->user, b->user, rows * 4), "users differ");
	CHECK(!memcmp(a->item, b->item, rows * 4), "items differ");
	CHECK(!memcmp(a->label, b->label, rows * 4), "ratings differ");
	boar_dataset_free(a);
	boar_dataset_free(b);
	/* an error at line 1 + 345678 (the header is line 1) */
	char *p = t;
	for (int k = 0; k < 345678; k++)
		p = strchr(p, '\n') + 1;
	p[0] = '-';
	for (int th = 1; th <= 4; th += 3) {
		CHECK_EQ_INT(load(t, n, th, &a, &e), BOAR_EPARSE);
		CHECK_EQ_INT(e.line, 345679);
		CHECK(strstr(e.message, "negative user id"), "got \"%s\"",
		      e.message);
	}
	free(t);
}

static void test_movielens(void)
{
	const char *p = "../shared/datasets/movielens-small/ratings.csv";
	if (access(p, R_OK)) {
		fprintf(stderr, "note: %s not found, skipped\n", p);
		return;
	}
	boar_dataset *d;
	boar_error e;
	CHECK_EQ_INT(boar_dataset_load(p, NULL, &d, &e), 0);
	if (test_failures) {
		fprintf(stderr, "%s\n", e.message);
		return;
	}
	CHECK_EQ_INT(boar_dataset_task(d), BOAR_TASK_MF);
	CHECK_EQ_INT(boar_dataset_rows(d), 100836);
	CHECK_EQ_INT(boar_dataset_features(d), 611);  /* userId 1..610 */
	CHECK_EQ_INT(boar_dataset_items(d), 193610); /* movieId up to 193609 */
	/* first line after the header: 1,1,4.0,964982703 */
	CHECK_EQ_INT(d->user[0], 1);
	CHECK_EQ_INT(d->item[0], 1);
	CHECK_NEAR(d->label[0], 4.0, 0);
	float lo = 10, hi = -10;
	for (uint64_t k = 0; k < d->n_rows; k++) {
		lo = d->label[k] < lo ? d->label[k] : lo;
		hi = d->label[k] > hi ? d->label[k] : hi;
	}
	CHECK_NEAR(lo, 0.5, 0);
	CHECK_NEAR(hi, 5.0, 0);
	boar_dataset_free(d);
}

int main(void)
{
	test_dir_make("ratings");
	test_separators();
	test_bad_input();
	test_detection();
	test_threads();
	test_movielens();
	test_dir_remove();
	return TEST_RESULT();
}
