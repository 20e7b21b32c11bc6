/* test_dataset_api.c - the dataset functions of boar.h that do not parse:
 * the CSR and ratings constructors and their rules, classification of
 * labels, accessors, option defaults and checks, and text output read back. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "boar.h"
#include "data/dataset.h"
#include "testutil.h"

static char dir[256];

/* A small valid CSR problem; tests break one rule at a time on a copy. */
static uint64_t rp[4] = { 0, 2, 2, 5 };
static uint32_t ix[5] = { 0, 4, 1, 2, 9 };
static float vx[5] = { 0.5f, -1, 2, 3, 1e-3f };
static float ly[3] = { 1, -1, 1 };

static void expect_inval(int lineno, uint64_t n, uint32_t nf,
			 const uint64_t *r, const uint32_t *i, const float *v,
			 const float *y, const char *want)
{
	boar_dataset *d = NULL;
	boar_error e;
	memset(&e, 0, sizeof e);
	int ret = boar_dataset_from_csr(n, nf, r, i, v, y, &d, &e);
	if (ret != BOAR_EINVAL || d || !strstr(e.message, want)) {
		fprintf(stderr,
			"FAIL %s:%d: expected EINVAL \"%s\", got %d \"%s\"\n",
			__FILE__, lineno, want, ret, e.message);
		test_failures++;
	}
	CHECK_EQ_INT(e.code, BOAR_EINVAL);
}

static void test_from_csr(void)
{
	boar_dataset *d;
	boar_error e;
	CHECK_EQ_INT(boar_dataset_from_csr(3, 10, rp, ix, vx, ly, &d, &e), 0);
	if (test_failures)
		return;
	CHECK_EQ_INT(boar_dataset_task(d), BOAR_TASK_LINEAR);
	CHECK_EQ_INT(boar_dataset_rows(d), 3);
	CHECK_EQ_INT(boar_dataset_nnz(d), 5);
	CHECK_EQ_INT(boar_dataset_features(d), 10);
	CHECK_EQ_INT(boar_dataset_items(d), 0);
	CHECK_EQ_INT(d->label_kind, BOAR_LABELS_BINARY);
	CHECK_EQ_INT(d->all_ones, 0);
	/* the arrays were copied */
	CHECK(d->idx != ix && d->val != vx && d->row_ptr != rp &&
		      d->label != ly,
	      "arrays must be copies");
	CHECK(!memcmp(d->idx, ix, sizeof ix) && !memcmp(d->val, vx, sizeof vx) &&
		      !memcmp(d->row_ptr, rp, sizeof rp),
	      "copies differ");
	boar_dataset_free(d);

	uint64_t r[4];
	uint32_t i[5];
	float v[5], y[3];
#define RESET()                                 \
	do {                                    \
		memcpy(r, rp, sizeof r);        \
		memcpy(i, ix, sizeof i);        \
		memcpy(v, vx, sizeof v);        \
		memcpy(y, ly, sizeof y);        \
	} while (0)
	RESET();
	i[3] = 1;
	expect_inval(__LINE__, 3, 10, r, i, v, y, "row 2: feature ids must be strictly ascending (1 repeats 1)");
	RESET();
	i[3] = 0;
	expect_inval(__LINE__, 3, 10, r, i, v, y, "row 2: feature ids must be strictly ascending (0 after 1)");
	RESET();
	expect_inval(__LINE__, 3, 9, r, i, v, y, "row 2: feature id 9 is not below n_features 9");
	RESET();
	v[1] = NAN;
	expect_inval(__LINE__, 3, 10, r, i, v, y, "row 0: value of feature 4 is NaN or infinite");
	RESET();
	v[4] = INFINITY;
	expect_inval(__LINE__, 3, 10, r, i, v, y, "NaN or infinite");
	RESET();
	y[1] = NAN;
	expect_inval(__LINE__, 3, 10, r, i, v, y, "row 1: label is NaN or infinite");
	RESET();
	r[0] = 1;
	expect_inval(__LINE__, 3, 10, r, i, v, y, "row_ptr[0]");
	RESET();
	r[2] = 1;
	expect_inval(__LINE__, 3, 10, r, i, v, y, "row 1: row_ptr decreases");
	RESET();
	expect_inval(__LINE__, 0, 10, r, i, v, y, "no rows");
	expect_inval(__LINE__, 3, 10, NULL, i, v, y, "NULL");
	expect_inval(__LINE__, 3, 10, r, NULL, v, y, "NULL");
	expect_inval(__LINE__, 3, 10, r, i, v, NULL, "NULL");
	CHECK_EQ_INT(boar_dataset_from_csr(3, 10, r, i, v, y, NULL, NULL),
		     BOAR_EINVAL);

	/* rows without non-zeros and NULL arrays are fine together */
	uint64_t z[3] = { 0, 0, 0 };
	float zy[2] = { 0, 1 };
	CHECK_EQ_INT(boar_dataset_from_csr(2, 5, z, NULL, NULL, zy, &d, &e), 0);
	CHECK_EQ_INT(boar_dataset_nnz(d), 0);
	CHECK_EQ_INT(d->label_kind, BOAR_LABELS_BINARY);
	boar_dataset_free(d);
}

static void test_classify(void)
{
	uint64_t r[3] = { 0, 1, 2 };
	uint32_t i[2] = { 0, 1 };
	float ones[2] = { 1, 1 };
	struct {
		float y0, y1;
		int kind;
	} cases[] = {
		{ 1, -1, BOAR_LABELS_BINARY }, { 1, 0, BOAR_LABELS_BINARY },
		{ 0, 0, BOAR_LABELS_BINARY },  { -1, -1, BOAR_LABELS_BINARY },
		{ 0, -1, BOAR_LABELS_REAL },   { 2, 1, BOAR_LABELS_REAL },
		{ 0.5, 1, BOAR_LABELS_REAL },
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		float y[2] = { cases[k].y0, cases[k].y1 };
		boar_dataset *d;
		CHECK_EQ_INT(boar_dataset_from_csr(2, 2, r, i, ones, y, &d, NULL), 0);
		CHECK(d->label_kind == cases[k].kind,
		      "labels %g %g: expected kind %d, got %d", y[0], y[1],
		      cases[k].kind, d->label_kind);
		CHECK_EQ_INT(d->all_ones, 1);
		boar_dataset_free(d);
	}
}

static void test_from_ratings(void)
{
	uint32_t u[4] = { 3, 0, 7, 3 }, it[4] = { 1, 1, 0, 20 };
	float r[4] = { 4, 3.5f, -1, 0 };
	boar_dataset *d;
	boar_error e;
	CHECK_EQ_INT(boar_dataset_from_ratings(4, u, it, r, &d, &e), 0);
	if (test_failures)
		return;
	CHECK_EQ_INT(boar_dataset_task(d), BOAR_TASK_MF);
	CHECK_EQ_INT(boar_dataset_rows(d), 4);
	CHECK_EQ_INT(boar_dataset_nnz(d), 4);
	CHECK_EQ_INT(boar_dataset_features(d), 8);
	CHECK_EQ_INT(boar_dataset_items(d), 21);
	CHECK(d->user != u && !memcmp(d->user, u, sizeof u), "users copied");
	CHECK_EQ_INT(d->label_kind, BOAR_LABELS_REAL);
	boar_dataset_free(d);
	r[2] = NAN;
	CHECK_EQ_INT(boar_dataset_from_ratings(4, u, it, r, &d, &e),
		     BOAR_EINVAL);
	CHECK(strstr(e.message, "rating 2 is NaN"), "got \"%s\"", e.message);
	CHECK_EQ_INT(boar_dataset_from_ratings(0, u, it, r, &d, &e),
		     BOAR_EINVAL);
	CHECK_EQ_INT(boar_dataset_from_ratings(4, u, NULL, r, &d, &e),
		     BOAR_EINVAL);
}

static void test_null_and_defaults(void)
{
	boar_dataset_free(NULL);
	CHECK_EQ_INT(boar_dataset_rows(NULL), 0);
	CHECK_EQ_INT(boar_dataset_nnz(NULL), 0);
	CHECK_EQ_INT(boar_dataset_features(NULL), 0);
	CHECK_EQ_INT(boar_dataset_items(NULL), 0);
	boar_load_options o;
	memset(&o, 0x5a, sizeof o);
	boar_load_options_default(&o);
	CHECK_EQ_INT(o.task, BOAR_TASK_AUTO);
	CHECK_EQ_INT(o.format, BOAR_FORMAT_AUTO);
	CHECK_EQ_INT(o.threads, 0);
	CHECK_EQ_INT(o.use_cache, 0);
	CHECK(o.cache_path == NULL, "cache_path");
	CHECK_EQ_INT(o.hash_bits, 0);

	boar_dataset *d = NULL;
	boar_error e;
	const char *a9a = "datasets/a9a";
	o.hash_bits = 33;
	CHECK_EQ_INT(boar_dataset_load(a9a, &o, &d, &e), BOAR_EINVAL);
	CHECK(strstr(e.message, "hash_bits"), "got \"%s\"", e.message);
	boar_load_options_default(&o);
	o.threads = -2;
	CHECK_EQ_INT(boar_dataset_load(a9a, &o, &d, &e), BOAR_EINVAL);
	boar_load_options_default(&o);
	o.task = 9;
	CHECK_EQ_INT(boar_dataset_load(a9a, &o, &d, &e), BOAR_EINVAL);
	boar_load_options_default(&o);
	o.format = 7;
	CHECK_EQ_INT(boar_dataset_load(a9a, &o, &d, &e), BOAR_EINVAL);
	CHECK_EQ_INT(boar_dataset_load(NULL, NULL, &d, &e), BOAR_EINVAL);
	CHECK(d == NULL, "out untouched on failure");
}

/* Text output: LIBSVM and ratings files that read back to the same data
 * (values exactly: the writer checks that its digits read back). */
static void test_write_text(void)
{
	char p[600];
	snprintf(p, sizeof p, "%s/out.svm", dir);
	uint64_t r[4] = { 0, 3, 3, 6 };
	uint32_t i[6] = { 0, 7, 4294967294u, 2, 3, 100 };
	float v[6] = { 0.1f, -123456.7f, 1e-30f, 3.4028234e38f, 1.0f / 3,
		       16777216.0f };
	float y[3] = { 2.5f, -7, 1e7f };
	boar_dataset *d, *back;
	boar_error e;
	CHECK_EQ_INT(boar_dataset_from_csr(3, 4294967295u, r, i, v, y, &d, &e), 0);
	CHECK_EQ_INT(boar_dataset_write_text(d, p, &e), 0);
	boar_load_options o;
	boar_load_options_default(&o);
	CHECK_EQ_INT(boar_dataset_load(p, &o, &back, &e), 0);
	if (test_failures) {
		fprintf(stderr, "%s\n", e.message);
		return;
	}
	CHECK_EQ_INT(back->n_rows, 3);
	CHECK_EQ_INT(back->nnz, 6);
	CHECK(!memcmp(back->row_ptr, r, sizeof r), "row_ptr");
	CHECK(!memcmp(back->idx, i, sizeof i), "idx");
	for (int k = 0; k < 6; k++)
		CHECK(back->val[k] == v[k], "value %d: wrote %.9g, read %.9g",
		      k, v[k], back->val[k]);
	for (int k = 0; k < 3; k++)
		CHECK(back->label[k] == y[k], "label %d: wrote %.9g, read %.9g",
		      k, y[k], back->label[k]);
	boar_dataset_free(back);

	/* many random floats: every one reads back exactly */
	size_t n = 20000;
	uint64_t *rr = malloc((n + 1) * sizeof *rr);
	uint32_t *ii = malloc(n * sizeof *ii);
	float *vv = malloc(n * sizeof *vv), *yy = malloc(n * sizeof *yy);
	uint64_t s = 99;
	for (size_t k = 0; k < n; k++) {
		rr[k] = k;
		ii[k] = 0;
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		uint32_t bits = (uint32_t)(s >> 32);
		memcpy(&vv[k], &bits, 4);
		if (!isfinite(vv[k]))
			vv[k] = (float)k;
		yy[k] = -vv[k] / 3;
	}
	rr[n] = n;
	boar_dataset_free(d);
	CHECK_EQ_INT(boar_dataset_from_csr(n, 1, rr, ii, vv, yy, &d, &e), 0);
	CHECK_EQ_INT(boar_dataset_write_text(d, p, &e), 0);
	CHECK_EQ_INT(boar_dataset_load(p, &o, &back, &e), 0);
	if (!test_failures) {
		size_t bad = 0;
		for (size_t k = 0; k < n; k++)
			bad += back->val[k] != vv[k] || back->label[k] != yy[k];
		CHECK_EQ_INT(bad, 0);
		boar_dataset_free(back);
	}
	free(rr);
	free(ii);
	free(vv);
	free(yy);
	boar_dataset_free(d);

	/* ratings */
	uint32_t u[3] = { 0, 5, 4000000000u }, it[3] = { 9, 0, 1 };
	float rt[3] = { 4.5f, -0.25f, 3 };
	CHECK_EQ_INT(boar_dataset_from_ratings(3, u, it, rt, &d, &e), 0);
	snprintf(p, sizeof p, "%s/out.ratings", dir);
	CHECK_EQ_INT(boar_dataset_write_text(d, p, &e), 0);
	CHECK_EQ_INT(boar_dataset_load(p, &o, &back, &e), 0);
	if (!test_failures) {
		CHECK_EQ_INT(boar_dataset_task(back), BOAR_TASK_MF);
		CHECK(!memcmp(back->user, u, sizeof u), "users");
		CHECK(!memcmp(back->item, it, sizeof it), "items");
		CHECK(!memcmp(back->label, rt, sizeof rt), "ratings");
		boar_dataset_free(back);
	}
	/* a path that cannot be written: an error, and nothing left behind */
	snprintf(p, sizeof p, "%s/no/such/dir/out", dir);
	CHECK_EQ_INT(boar_dataset_write_text(d, p, &e), BOAR_EIO);
	CHECK(strstr(e.message, "no/such/dir"), "got \"%s\"", e.message);
	boar_dataset_free(d);
	snprintf(p, sizeof p, "%s/out.svm", dir);
	unlink(p);
	snprintf(p, sizeof p, "%s/out.ratings", dir);
	unlink(p);
}

/* Input that is not a regular file (a FIFO, like a shell pipe) is read,
 * not mapped, and never cached; absurd thread counts are capped. */
static void test_pipe_and_threads(void)
{
	char p[600], c[620];
	snprintf(p, sizeof p, "%s/fifo", dir);
	snprintf(c, sizeof c, "%s.boarcache", p);
	if (mkfifo(p, 0600)) {
		CHECK(0, "mkfifo");
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		FILE *f = fopen(p, "w");
		if (f) {
			for (int k = 0; k < 50000; k++)
				fprintf(f, "%d %d:1 %d:0.5\n", k % 2 ? 1 : -1,
					1 + k % 7, 9 + k % 5);
			fclose(f);
		}
		_exit(0);
	}
	boar_load_options o;
	boar_load_options_default(&o);
	o.use_cache = 1;
	o.threads = 100000;
	boar_dataset *d = NULL;
	boar_error e;
	CHECK_EQ_INT(boar_dataset_load(p, &o, &d, &e), 0);
	waitpid(pid, NULL, 0);
	if (d) {
		CHECK_EQ_INT(boar_dataset_rows(d), 50000);
		CHECK_EQ_INT(boar_dataset_nnz(d), 100000);
		CHECK_EQ_INT(boar_dataset_features(d), 13);
		boar_dataset_free(d);
	}
	CHECK(access(c, F_OK) != 0, "no cache for a pipe");
	unlink(p);
}

/* gzip input reads like the text inside it, in every format; a truncated
 * or damaged one is BOAR_ECORRUPT naming the file. */
static void test_gzip(void)
{
	char p[600], q[620];
	snprintf(p, sizeof p, "%s/data.svm", dir);
	snprintf(q, sizeof q, "%s/data.gz", dir);
	boar_gen_options g;
	boar_gen_options_default(&g);
	g.rows = 30000;
	g.features = 1000;
	boar_dataset *gen, *plain = NULL, *gz = NULL;
	boar_error e;
	CHECK_EQ_INT(boar_generate(&g, &gen, &e), 0);
	CHECK_EQ_INT(boar_dataset_write_text(gen, p, &e), 0);
	boar_dataset_free(gen);
	/* two gzip members, as `cat a.gz b.gz` makes */
	FILE *in = fopen(p, "rb");
	fseek(in, 0, SEEK_END);
	long n = ftell(in);
	rewind(in);
	char *text = malloc((size_t)n);
	CHECK(fread(text, 1, (size_t)n, in) == (size_t)n, "read back");
	fclose(in);
	long half = 0;
	while (half < n / 2)
		half = (long)((char *)memchr(text + half, '\n', (size_t)(n - half)) - text) + 1;
	gzFile z = gzopen(q, "wb");
	gzwrite(z, text, (unsigned)half);
	gzclose(z);
	z = gzopen(q, "ab");
	gzwrite(z, text + half, (unsigned)(n - half));
	gzclose(z);
	free(text);
	CHECK_EQ_INT(boar_dataset_load(p, NULL, &plain, &e), 0);
	CHECK_EQ_INT(boar_dataset_load(q, NULL, &gz, &e), 0);
	if (plain && gz) {
		CHECK(gz->n_rows == plain->n_rows && gz->nnz == plain->nnz &&
			      !memcmp(gz->idx, plain->idx, gz->nnz * 4) &&
			      !memcmp(gz->val, plain->val, gz->nnz * 4) &&
			      !memcmp(gz->label, plain->label, gz->n_rows * 4),
		      "gzip load differs from the plain one");
	}
	boar_dataset_free(plain);
	boar_dataset_free(gz);

	/* ratings, compressed */
	z = gzopen(q, "wb");
	gzputs(z, "userId,movieId,rating\n1,2,3.5\n4,5,1\n");
	gzclose(z);
	CHECK_EQ_INT(boar_dataset_load(q, NULL, &gz, &e), 0);
	if (gz) {
		CHECK_EQ_INT(boar_dataset_task(gz), BOAR_TASK_MF);
		CHECK_EQ_INT(boar_dataset_rows(gz), 2);
		boar_dataset_free(gz);
	}
	/* and a compressed file with a bad line still names the line */
	z = gzopen(q, "wb");
	gzputs(z, "1 1:1\n1 0:1\n");
	gzclose(z);
	CHECK_EQ_INT(boar_dataset_load(q, NULL, &gz, &e), BOAR_EPARSE);
	CHECK_EQ_INT(e.line, 2);

	/* truncated: cut the file short */
	z = gzopen(q, "wb");
	for (int k = 0; k < 20000; k++)
		gzprintf(z, "%d %d:%d\n", k % 2, 1 + k % 50, k);
	gzclose(z);
	struct stat st;
	stat(q, &st);
	CHECK(truncate(q, st.st_size / 2) == 0, "truncate");
	CHECK_EQ_INT(boar_dataset_load(q, NULL, &gz, &e), BOAR_ECORRUPT);
	CHECK(strstr(e.message, "truncated") && strstr(e.message, q),
	      "got \"%s\"", e.message);
	/* damaged: flip bytes in the middle of the deflate data */
	z = gzopen(q, "wb");
	for (int k = 0; k < 20000; k++)
		gzprintf(z, "%d %d:%d\n", k % 2, 1 + k % 50, k);
	gzclose(z);
	FILE *f = fopen(q, "r+b");
	fseek(f, 100, SEEK_SET);
	fputs("\xde\xad\xbe\xef\xde\xad\xbe\xef", f);
	fclose(f);
	int r = boar_dataset_load(q, NULL, &gz, &e);
	CHECK(r == BOAR_ECORRUPT || r == BOAR_EPARSE,
	      "damaged gzip: got %d \"%s\"", r, e.message);
	unlink(p);
	unlink(q);
}

/* Issue 14: ids near 2^32 make models of tens or hundreds of GiB; they
 * are refused before allocation with the size needed (main at 7a340ce
 * called calloc and died, or wrote a 16 GiB model). Integer class labels
 * beyond 2^24 are refused (main merged 16777216 and 16777217). */
static void test_limits_and_labels(void)
{
	uint64_t r[2] = { 0, 1 };
	uint32_t i[1] = { 4294967294u };
	float v[1] = { 1 }, y[1] = { 1 };
	boar_dataset *d = NULL;
	boar_model *m = NULL;
	boar_error e;
	CHECK_EQ_INT(boar_dataset_from_csr(1, 4294967295u, r, i, v, y, &d, &e), 0);
	boar_options o;
	boar_options_default(&o);
	o.epochs = 1;
	o.threads = 1;
	o.max_memory = (uint64_t)8 << 30;
	CHECK_EQ_INT(boar_train(d, &o, &m, &e), BOAR_ENOMEM);
	CHECK(!m && strstr(e.message, "a model of 4294967295 features") &&
		      strstr(e.message, "needs 64.0 GiB, over the memory limit of 8.0 GiB"),
	      "%s", e.message);
	boar_dataset_free(d);

	uint32_t users[2] = { 4294967290u, 1 }, items[2] = { 1, 2 };
	float ratings[2] = { 5, 3 };
	CHECK_EQ_INT(boar_dataset_from_ratings(2, users, items, ratings, &d, &e), 0);
	o.max_memory = (uint64_t)64 << 30;
	CHECK_EQ_INT(boar_train(d, &o, &m, &e), BOAR_ENOMEM);
	CHECK(!m && strstr(e.message, "4294967291 users") &&
		      strstr(e.message, "needs 288.0 GiB"),
	      "%s", e.message);
	boar_dataset_free(d);

	uint64_t r3[4] = { 0, 1, 2, 3 };
	uint32_t i3[3] = { 0, 1, 2 };
	float v3[3] = { 1, 1, 1 }, y3[3] = { 16777216.0f, 16777217.0f, 3 };
	CHECK_EQ_INT(boar_dataset_from_csr(3, 3, r3, i3, v3, y3, &d, &e), 0);
	o.loss = BOAR_LOSS_SOFTMAX;
	CHECK_EQ_INT(boar_train(d, &o, &m, &e), BOAR_EINVAL);
	CHECK(!m && strstr(e.message, "row 1: integer label 16777216 is beyond 2^24"),
	      "%s", e.message);
	boar_dataset_free(d);
	y3[0] = 16777215.0f; /* the largest exact one is still a class */
	y3[1] = -16777215.0f;
	CHECK_EQ_INT(boar_dataset_from_csr(3, 3, r3, i3, v3, y3, &d, &e), 0);
	CHECK_EQ_INT(boar_train(d, &o, &m, &e), 0);
	CHECK(m && boar_model_classes(m, NULL) == 3, "three classes");
	boar_model_free(m);
	boar_dataset_free(d);
}

int main(void)
{
	snprintf(dir, sizeof dir, "%s/boar-test-api.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_from_csr();
	test_classify();
	test_from_ratings();
	test_null_and_defaults();
	test_write_text();
	test_pipe_and_threads();
	test_gzip();
	test_limits_and_labels();
	if (rmdir(dir))
		CHECK(0, "temp dir not empty: a temp file was left behind");
	return TEST_RESULT();
}
