/* test_parse_libsvm.c - the LIBSVM/SVMlight parser: good files of every
 * accepted shape, each bad-input rule with its line and wording, bytes that
 * are not text, number precision, the bundled a9a files, hashing, and the
 * same result and the same error line at any thread count. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boar.h"
#include "data/dataset.h"
#include "model/model.h"
#include "testutil.h"


static int load(const char *text, size_t len, int threads, int hash_bits,
		boar_dataset **d, boar_error *e)
{
	boar_load_options o;
	boar_load_options_default(&o);
	o.threads = threads;
	o.hash_bits = hash_bits;
	o.format = BOAR_FORMAT_LIBSVM;
	const char *p = test_put_file("in.svm", text, len);
	return boar_dataset_load(p, &o, d, e);
}

/* The file must fail with code at line, and the message must hold want. */
static void bad_case(int lineno, const char *text, size_t len, int code,
		     uint64_t line, const char *want)
{
	boar_dataset *d = NULL;
	boar_error e;
	memset(&e, 0, sizeof e);
	int r = load(text, len, 2, 0, &d, &e);
	if (r != code || e.line != line || !strstr(e.message, want) ||
	    d != NULL) {
		fprintf(stderr,
			"FAIL %s:%d: expected code %d line %llu \"%s\", got code %d line %llu \"%s\"\n",
			__FILE__, lineno, code, (unsigned long long)line, want,
			r, (unsigned long long)e.line, e.message);
		test_failures++;
	}
	/* the message starts with PATH:LINE */
	if (r == code && line) {
		char pre[600];
		snprintf(pre, sizeof pre, "%s/in.svm:%llu: ", test_dir,
			 (unsigned long long)line);
		CHECK(!strncmp(e.message, pre, strlen(pre)),
		      "message \"%s\" should start with \"%s\"", e.message, pre);
	}
	boar_dataset_free(d);
}

#define BAD(text, code, line, want) \
	bad_case(__LINE__, text, sizeof(text) - 1, code, line, want)

static void test_good_shapes(void)
{
	boar_dataset *d;
	boar_error e;
	const char t1[] = "+1 1:0.5 3:2\n-1 2:1\n";
	CHECK_EQ_INT(load(t1, sizeof t1 - 1, 1, 0, &d, &e), 0);
	CHECK_EQ_INT(boar_dataset_task(d), BOAR_TASK_LINEAR);
	CHECK_EQ_INT(boar_dataset_rows(d), 2);
	CHECK_EQ_INT(boar_dataset_nnz(d), 3);
	CHECK_EQ_INT(boar_dataset_features(d), 3);
	CHECK_EQ_INT(boar_dataset_items(d), 0);
	CHECK_EQ_INT(d->row_ptr[0], 0);
	CHECK_EQ_INT(d->row_ptr[1], 2);
	CHECK_EQ_INT(d->row_ptr[2], 3);
	CHECK_EQ_INT(d->idx[0], 0);
	CHECK_EQ_INT(d->idx[1], 2);
	CHECK_EQ_INT(d->idx[2], 1);
	CHECK_NEAR(d->val[0], 0.5, 0);
	CHECK_NEAR(d->val[1], 2, 0);
	CHECK_NEAR(d->label[0], 1, 0);
	CHECK_NEAR(d->label[1], -1, 0);
	CHECK_EQ_INT(d->label_kind, BOAR_LABELS_BINARY);
	CHECK_EQ_INT(d->all_ones, 0);
	CHECK_EQ_INT(d->hash_bits, 0);
	CHECK(d->map == NULL, "a parsed dataset is not mapped");
	boar_dataset_free(d);

	/* SVMlight: qid, comments, CRLF, trailing spaces, blank lines,
	 * 1/0 labels, a comment line, an empty row, no final newline */
	const char t2[] = "# header comment\r\n"
			  "1 qid:3 1:1 2:1 # c\r\n"
			  "\r\n"
			  "0 3:1   \r\n"
			  "  1\t\t4:1\n"
			  "0\n"
			  "1 7:1";
	CHECK_EQ_INT(load(t2, sizeof t2 - 1, 1, 0, &d, &e), 0);
	CHECK_EQ_INT(boar_dataset_rows(d), 5);
	CHECK_EQ_INT(boar_dataset_nnz(d), 5);
	CHECK_EQ_INT(boar_dataset_features(d), 7);
	CHECK_EQ_INT(d->row_ptr[4] - d->row_ptr[3], 0); /* empty row */
	CHECK_EQ_INT(d->idx[3], 3);
	CHECK_EQ_INT(d->idx[4], 6);
	CHECK_EQ_INT(d->label_kind, BOAR_LABELS_BINARY);
	CHECK_EQ_INT(d->all_ones, 1);
	boar_dataset_free(d);

	/* a trailing blank line, and multiclass / real labels */
	const char t3[] = "2.5 1:1\n20 2:1\n\n";
	CHECK_EQ_INT(load(t3, sizeof t3 - 1, 1, 0, &d, &e), 0);
	CHECK_EQ_INT(boar_dataset_rows(d), 2);
	CHECK_EQ_INT(d->label_kind, BOAR_LABELS_REAL);
	CHECK_NEAR(d->label[1], 20, 0);
	boar_dataset_free(d);

	/* the largest index there is */
	const char t4[] = "1 4294967295:1\n";
	CHECK_EQ_INT(load(t4, sizeof t4 - 1, 1, 0, &d, &e), 0);
	CHECK_EQ_INT(boar_dataset_features(d), 4294967295ULL);
	CHECK_EQ_INT(d->idx[0], 4294967294ULL);
	boar_dataset_free(d);
}

static void test_bad_input(void)
{
	BAD("abc 1:1\n", BOAR_EPARSE, 1, "label 'abc' is not a number");
	BAD("1 1:1\n\n1x 2:1\n", BOAR_EPARSE, 3, "label '1x' is not a number");
	BAD("1 1:x\n", BOAR_EPARSE, 1, "value 'x' of index 1 is not a number");
	BAD("1 1:0.5.5\n", BOAR_EPARSE, 1, "is not a number");
	BAD("1 3:\n", BOAR_EPARSE, 1, "value '' of index 3 is not a number");
	BAD("1 1:1:1\n", BOAR_EPARSE, 1, "is not a number");
	BAD("1 1:1 5\n", BOAR_EPARSE, 1, "missing ':' in '5'");
	BAD("1 :3\n", BOAR_EPARSE, 1, "missing index before ':'");
	BAD("1 -3:1\n", BOAR_EPARSE, 1, "negative index");
	BAD("1 a3:1\n", BOAR_EPARSE, 1, "bad index");
	BAD("1 0:1\n", BOAR_EPARSE, 1, "index 0: indices are 1-based");
	BAD("1 1:1\n1 3:1 2:1\n", BOAR_EPARSE, 2,
	    "index 2 after 3: indices must be ascending");
	BAD("1 2:1 2:1\n", BOAR_EPARSE, 1, "duplicate index 2");
	BAD("1 4294967296:1\n", BOAR_EPARSE, 1,
	    "'4294967296' is too large: indices must be < 2^32");
	BAD("1 99999999999999999999999:1\n", BOAR_EPARSE, 1, "too large");
	BAD("nan 1:1\n", BOAR_EPARSE, 1, "label is NaN or infinite");
	BAD("-inf 1:1\n", BOAR_EPARSE, 1, "label is NaN or infinite");
	BAD("1 1:inf\n", BOAR_EPARSE, 1, "value of index 1 is NaN or infinite");
	BAD("1 1:NaN\n", BOAR_EPARSE, 1, "value of index 1 is NaN or infinite");
	BAD("1 1:1e39\n", BOAR_EPARSE, 1, "NaN or infinite");
	BAD("1 1:1e99999999999\n", BOAR_EPARSE, 1, "NaN or infinite");
	BAD("", BOAR_EPARSE, 0, "empty file");
	BAD("# only a comment\n\n   \n", BOAR_EPARSE, 0, "no data rows");
	/* bytes that are not text: never a crash, always a clear error */
	BAD("1 1:1\0\n", BOAR_EPARSE, 1, "'1\\x00'");
	BAD("\0\0\0", BOAR_EPARSE, 1, "label '\\x00\\x00\\x00' is not a number");
	BAD("1 1:1\n\xff\xfe 2:1", BOAR_EPARSE, 2, "is not a number");
	BAD("1 1\xc3\xa9:1\n", BOAR_EPARSE, 1, "bad index");
}

static void test_files(void)
{
	boar_dataset *d;
	boar_error e;
	boar_load_options o;
	boar_load_options_default(&o);
	char p[600];
	snprintf(p, sizeof p, "%s/does-not-exist", test_dir);
	CHECK_EQ_INT(boar_dataset_load(p, &o, &d, &e), BOAR_EIO);
	CHECK(strstr(e.message, "does-not-exist") &&
		      strstr(e.message, "No such file"),
	      "got \"%s\"", e.message);
	CHECK_EQ_INT(boar_dataset_load(test_dir, &o, &d, &e), BOAR_EIO);
	CHECK(strstr(e.message, "is a directory"), "got \"%s\"", e.message);
	/* a NULL error pointer is fine */
	CHECK_EQ_INT(boar_dataset_load(p, NULL, &d, NULL), BOAR_EIO);
}

/* A long line, a line of junk without end, a huge token. */
static void test_long_lines(void)
{
	boar_dataset *d;
	boar_error e;
	size_t nf = 200000, cap = nf * 16 + 64, n = 0;
	char *t = malloc(cap);
	n += (size_t)sprintf(t, "1");
	for (size_t k = 1; k <= nf; k++)
		n += (size_t)sprintf(t + n, " %zu:0.25", k);
	n += (size_t)sprintf(t + n, "\n-1 5:1");
	CHECK_EQ_INT(load(t, n, 2, 0, &d, &e), 0);
	CHECK_EQ_INT(boar_dataset_rows(d), 2);
	CHECK_EQ_INT(boar_dataset_nnz(d), nf + 1);
	CHECK_EQ_INT(boar_dataset_features(d), nf);
	boar_dataset_free(d);

	memset(t, 'x', cap);
	CHECK_EQ_INT(load(t, cap, 2, 0, &d, &e), BOAR_EPARSE);
	CHECK(strstr(e.message, "is not a number"), "got \"%s\"", e.message);
	memset(t, '7', cap);
	t[0] = '1';
	t[1] = ' ';
	t[cap - 2] = ':';
	CHECK_EQ_INT(load(t, cap, 2, 0, &d, &e), BOAR_EPARSE);
	CHECK(strstr(e.message, "too large"), "got \"%s\"", e.message);
	t[1] = '7';
	CHECK_EQ_INT(load(t, cap, 2, 0, &d, &e), BOAR_EPARSE);
	CHECK(strstr(e.message, "label"), "got \"%s\"", e.message);
	free(t);
}

/* Values equal strtof's within one ulp, exotic forms included. */
static void test_numbers(void)
{
	const char *vals[] = {
		"1",	   "0.5",	 "-2.5E+2",    "1e-3",	 "0.1",
		"3.4028234e38", "1.17549435e-38", "1e-45", "123456789",
		"0.000123456789", "12345678901234567890123", "7.0e-10",
		"+0.3",	  "5.",	 ".25",	 "-0",	   "2.718281828459045235",
		"1e22",	   "1e23",	 "9007199254740993", "0.30000001192092896",
		"4.9406564584124654e-324",
		"0.000000000000000000000123456789012345678901",
		"98765432109876543210987654321e-40", "1.5E-7", "-.5e1",
	};
	size_t nv = sizeof vals / sizeof vals[0];
	char t[16384];
	size_t n = (size_t)sprintf(t, "1");
	for (size_t k = 0; k < nv; k++)
		n += (size_t)sprintf(t + n, " %zu:%s", k + 1, vals[k]);
	/* and many random decimal strings */
	srand(7);
	size_t nr = 150;
	for (size_t k = 0; k < nr; k++)
		n += (size_t)sprintf(t + n, " %zu:%d.%0*d", nv + k + 1,
				     rand() % 100000, 1 + rand() % 8,
				     rand() % 10000000);
	/* and exponents over the whole float range, long mantissas */
	size_t ne = 150;
	for (size_t k = 0; k < ne; k++)
		n += (size_t)sprintf(t + n, " %zu:%s%d.%de%d",
				     nv + nr + k + 1, k & 1 ? "-" : "",
				     1 + rand() % 9, rand(), -44 + rand() % 82);
	t[n++] = '\n';
	boar_dataset *d;
	boar_error e;
	CHECK_EQ_INT(load(t, n, 1, 0, &d, &e), 0);
	if (test_failures)
		return;
	nr += ne;
	CHECK_EQ_INT(boar_dataset_nnz(d), nv + nr);
	const char *s = t + 2;
	for (size_t k = 0; k < nv + nr; k++) {
		s = strchr(s, ':') + 1;
		float want = strtof(s, NULL), got = d->val[k];
		float lo = nextafterf(want, -INFINITY),
		      hi = nextafterf(want, INFINITY);
		CHECK(got >= lo && got <= hi, "value %zu: \"%.30s\": strtof %.9g got %.9g",
		      k, s, want, got);
	}
	boar_dataset_free(d);
}

/* A big file: same arrays at 1, 2 and 5 threads; an error late in the file
 * reported at the same global line. */
static void test_threads(void)
{
	size_t rows = 300000, cap = rows * 120, n = 0;
	char *t = malloc(cap);
	uint64_t s = 12345;
	for (size_t r = 0; r < rows; r++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		int k = (int)(s >> 60); /* 0..15 features */
		n += (size_t)sprintf(t + n, "%s", (s >> 40) & 1 ? "+1" : "-1");
		unsigned id = 0;
		for (int j = 0; j < k; j++) {
			id += 1 + (unsigned)((s >> (j * 3)) & 7);
			n += (size_t)sprintf(t + n, " %u:%u.%u", id, j, (unsigned)(s >> 50) % 100);
		}
		if (r % 1000 == 999)
			n += (size_t)sprintf(t + n, "\n# comment");
		t[n++] = '\n';
	}
	boar_dataset *d1, *d2, *d5;
	boar_error e;
	CHECK_EQ_INT(load(t, n, 1, 0, &d1, &e), 0);
	CHECK_EQ_INT(load(t, n, 2, 0, &d2, &e), 0);
	CHECK_EQ_INT(load(t, n, 5, 0, &d5, &e), 0);
	if (test_failures)
		return;
	CHECK_EQ_INT(d1->n_rows, rows);
	const boar_dataset *ds[2] = { d2, d5 };
	for (int k = 0; k < 2; k++) {
		const boar_dataset *d = ds[k];
		CHECK_EQ_INT(d->n_rows, d1->n_rows);
		CHECK_EQ_INT(d->nnz, d1->nnz);
		CHECK_EQ_INT(d->dim, d1->dim);
		CHECK(!memcmp(d->row_ptr, d1->row_ptr, (rows + 1) * 8),
		      "row_ptr differs at %d threads", k ? 5 : 2);
		CHECK(!memcmp(d->idx, d1->idx, d1->nnz * 4), "idx differs");
		CHECK(!memcmp(d->val, d1->val, d1->nnz * 4), "val differs");
		CHECK(!memcmp(d->label, d1->label, rows * 4), "label differs");
	}
	boar_dataset_free(d1);
	boar_dataset_free(d2);
	boar_dataset_free(d5);

	/* break a line deep in the file: line numbers are global */
	uint64_t line = 1;
	size_t at = 0;
	while (line < 250123) {
		at = (size_t)((char *)memchr(t + at, '\n', n - at) - t) + 1;
		line++;
	}
	t[at] = 'z';
	for (int th = 1; th <= 5; th += 2) {
		memset(&e, 0, sizeof e);
		CHECK_EQ_INT(load(t, n, th, 0, &d1, &e), BOAR_EPARSE);
		CHECK_EQ_INT(e.line, 250123);
		CHECK(strstr(e.message, ":250123: label 'z"), "got \"%s\"",
		      e.message);
	}
	/* and an earlier error wins over a later one in another piece */
	t[10] = '#';
	t[11] = 'x';
	size_t first_nl = (size_t)((char *)memchr(t, '\n', n) - t);
	t[first_nl + 1] = 'q';
	memset(&e, 0, sizeof e);
	CHECK_EQ_INT(load(t, n, 4, 0, &d1, &e), BOAR_EPARSE);
	CHECK_EQ_INT(e.line, 2);
	free(t);
}

static void test_hashing(void)
{
	const char t[] = "1 1:1 2:2 3:3 10:4 1000:5 70000:6\n-1\n1 5:0.5\n";
	boar_dataset *d, *h;
	boar_error e;
	CHECK_EQ_INT(load(t, sizeof t - 1, 1, 0, &d, &e), 0);
	CHECK_EQ_INT(load(t, sizeof t - 1, 1, 3, &h, &e), 0);
	if (test_failures)
		return;
	CHECK_EQ_INT(h->hash_bits, 3);
	CHECK_EQ_INT(boar_dataset_features(h), 8);
	CHECK_EQ_INT(h->n_rows, 3);
	/* each row: ascending unique slots whose values sum per slot */
	for (uint64_t r = 0; r < d->n_rows; r++) {
		float want[8] = { 0 }, got[8] = { 0 };
		for (uint64_t k = d->row_ptr[r]; k < d->row_ptr[r + 1]; k++)
			want[boar_feature_slot(d->idx[k], 3)] += d->val[k];
		for (uint64_t k = h->row_ptr[r]; k < h->row_ptr[r + 1]; k++) {
			CHECK(h->idx[k] < 8, "slot %u", h->idx[k]);
			if (k > h->row_ptr[r])
				CHECK(h->idx[k] > h->idx[k - 1],
				      "row %llu not ascending",
				      (unsigned long long)r);
			got[h->idx[k] & 7] += h->val[k];
		}
		for (int s = 0; s < 8; s++)
			CHECK_NEAR(got[s], want[s], 0);
	}
	boar_dataset_free(d);
	boar_dataset_free(h);
	/* 2^20 slots: no collisions for these ids, one slot each */
	CHECK_EQ_INT(load(t, sizeof t - 1, 2, 20, &h, &e), 0);
	CHECK_EQ_INT(h->nnz, 7);
	CHECK_EQ_INT(h->dim, 1 << 20);
	CHECK_EQ_INT(h->idx[h->row_ptr[2]], boar_feature_slot(4, 20));
	boar_dataset_free(h);
}

static void test_a9a(void)
{
	const char *a9a = "datasets/a9a", *a9at = "datasets/a9a.t";
	if (access(a9a, R_OK))
		a9a = "../shared/datasets/libsvm/a9a";
	if (access(a9at, R_OK))
		a9at = "../shared/datasets/libsvm/a9a.t";
	if (access(a9a, R_OK) || access(a9at, R_OK)) {
		fprintf(stderr, "note: a9a not found, its checks skipped\n");
		return;
	}
	boar_dataset *d;
	boar_error e;
	CHECK_EQ_INT(boar_dataset_load(a9a, NULL, &d, &e), 0);
	if (test_failures) {
		fprintf(stderr, "%s\n", e.message);
		return;
	}
	CHECK_EQ_INT(boar_dataset_task(d), BOAR_TASK_LINEAR);
	CHECK_EQ_INT(boar_dataset_rows(d), 32561);
	CHECK_EQ_INT(boar_dataset_features(d), 123);
	CHECK_EQ_INT(d->label_kind, BOAR_LABELS_BINARY);
	CHECK_EQ_INT(d->all_ones, 1);
	/* first row: "-1 3:1 11:1 14:1 ..." */
	CHECK_NEAR(d->label[0], -1, 0);
	CHECK_EQ_INT(d->idx[0], 2);
	CHECK_EQ_INT(d->idx[1], 10);
	uint64_t nnz = boar_dataset_nnz(d);
	CHECK(nnz > 32561 * 10 && nnz < 32561 * 15, "nnz %llu",
	      (unsigned long long)nnz);
	boar_dataset_free(d);
	CHECK_EQ_INT(boar_dataset_load(a9at, NULL, &d, &e), 0);
	CHECK_EQ_INT(boar_dataset_rows(d), 16281);
	CHECK_EQ_INT(boar_dataset_features(d), 122);
	boar_dataset_free(d);
}

/* Random bytes from a hostile alphabet, read as every format: any code may
 * come back, but never a crash, and a dataset that loads is consistent. */
static void test_random_bytes(void)
{
	static const char alpha[] = "0123456789:.-+eE \t\r\n\n#qid,nainf\0\xff";
	static const char *tok[] = {
		"1 ", "-1 ", "0 ", "+1 ", "3:1 ", "2:0.5 ", "10:2e3 ", "7:-1 ",
		"qid:4 ", "# c ", "\n", "\n", "\n", "\r\n", "\t", " ", "1 2 3\n",
		"5,6,7.5\n", "8::9::1\n", ":", "nan", "1:inf ", "9", "0:1 ",
		"4294967296:1 ", "\xff", "userId,item,rating\n",
	};
	char buf[400];
	uint64_t s = 2024;
	int loaded = 0;
	for (int round = 0; round < 1500; round++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		size_t n = 0, want = (size_t)(s >> 33) % (round & 2 ? 60 : sizeof buf - 40);
		while (n < want) {
			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			if (round & 1) { /* bytes */
				buf[n++] = alpha[(s >> 40) % (sizeof alpha - 1)];
			} else { /* tokens, mostly well-formed */
				const char *t = tok[(s >> 40) % (sizeof tok / sizeof tok[0])];
				size_t l = strlen(t);
				memcpy(buf + n, t, l);
				n += l;
			}
		}
		boar_load_options o;
		boar_load_options_default(&o);
		o.format = round % 3; /* auto, LIBSVM, ratings */
		o.threads = 1 + round % 2;
		o.hash_bits = round % 5 == 0 ? 4 : 0;
		boar_dataset *d = NULL;
		boar_error e;
		int r = boar_dataset_load(test_put_file("rnd", buf, n), &o, &d, &e);
		CHECK(r == 0 || r == BOAR_EPARSE, "round %d: code %d \"%s\"",
		      round, r, e.message);
		if (r)
			continue;
		loaded++;
		uint64_t bad = 0;
		for (uint64_t k = 0; k < d->n_rows; k++)
			bad += !isfinite(d->label[k]);
		if (d->task == BOAR_TASK_LINEAR) {
			bad += d->row_ptr[0] != 0 || d->row_ptr[d->n_rows] != d->nnz;
			for (uint64_t r2 = 0; r2 < d->n_rows; r2++)
				bad += d->row_ptr[r2 + 1] < d->row_ptr[r2];
			for (uint64_t k = 0; k < d->nnz; k++)
				bad += d->idx[k] >= d->dim || !isfinite(d->val[k]);
		} else {
			for (uint64_t k = 0; k < d->n_rows; k++)
				bad += d->user[k] >= d->dim || d->item[k] >= d->n_items;
		}
		CHECK(bad == 0, "round %d: inconsistent dataset", round);
		boar_dataset_free(d);
	}
	CHECK(loaded >= 5, "only %d random inputs loaded at all", loaded);
	fprintf(stderr, "random inputs: %d of 1500 loaded\n", loaded);
	char p[600];
	snprintf(p, sizeof p, "%s/rnd", test_dir);
	unlink(p);
}

/* The fixtures in tests/data and their table in tests/data/README. */
static void test_fixtures(void)
{
	FILE *f = fopen("tests/data/README", "r");
	if (!f) {
		fprintf(stderr, "note: tests/data/README not found (run from the "
				"repository root), fixtures skipped\n");
		return;
	}
	char ln[512];
	int seen = 0, table = 0;
	while (fgets(ln, sizeof ln, f)) {
		char name[128], code[16];
		unsigned long long line;
		int off = 0;
		if (!strncmp(ln, "FILE", 4)) {
			table = 1;
			continue;
		}
		if (!table || sscanf(ln, "%127s %15s %llu %n", name, code, &line,
				     &off) < 3)
			continue;
		char *phrase = ln + off;
		phrase[strcspn(phrase, "\n")] = '\0';
		char path[300];
		snprintf(path, sizeof path, "tests/data/%s", name);
		boar_dataset *d = NULL;
		boar_error e;
		memset(&e, 0, sizeof e);
		int r = boar_dataset_load(path, NULL, &d, &e);
		if (!strcmp(code, "OK")) {
			CHECK(r == 0 && d && d->n_rows == line,
			      "%s: expected %llu rows, got %d \"%s\"", name, line,
			      r, e.message);
		} else {
			CHECK(r == BOAR_EPARSE && !d && e.line == line &&
				      strstr(e.message, phrase) &&
				      strstr(e.message, path),
			      "%s: expected EPARSE at line %llu with \"%s\", got %d line %llu \"%s\"",
			      name, line, phrase, r, (unsigned long long)e.line,
			      e.message);
		}
		boar_dataset_free(d);
		seen++;
	}
	fclose(f);
	CHECK(seen >= 15, "only %d fixtures in the table", seen);
}

int main(void)
{
	test_dir_make("libsvm");
	test_good_shapes();
	test_bad_input();
	test_files();
	test_long_lines();
	test_numbers();
	test_threads();
	test_hashing();
	test_a9a();
	test_fixtures();
	test_random_bytes();
	test_dir_remove();
	return TEST_RESULT();
}
