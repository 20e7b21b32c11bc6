/* test_parse_vw.c - the Vowpal Wabbit text parser: MurmurHash3 against
 * its published test vectors, VW's name hashing, every part of a line
 * (label, importance, tag, namespaces with scales, name:value), rows
 * sorted and merged, every error with its line, auto-detection, and the
 * same dataset and the same error line at any thread count. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boar.h"
#include "data/dataset.h"
#include "data/murmur3.h"
#include "data/parse_common.h"
#include "testutil.h"


static int load_fmt(const char *text, size_t len, int format, int threads,
		    int hash_bits, boar_dataset **d, boar_error *e)
{
	boar_load_options o;
	boar_load_options_default(&o);
	o.threads = threads;
	o.hash_bits = hash_bits;
	o.format = format;
	const char *p = test_put_file("in.vw", text, len);
	return boar_dataset_load(p, &o, d, e);
}

static int load(const char *text, int threads, int hash_bits,
		boar_dataset **d, boar_error *e)
{
	return load_fmt(text, strlen(text), BOAR_FORMAT_VW, threads, hash_bits,
			d, e);
}

static uint32_t slot(const char *name, const char *ns, int bits)
{
	uint32_t seed = ns ? boar_vw_hash_name(ns, strlen(ns), 0) : 0;
	return boar_vw_hash_name(name, strlen(name), seed) &
	       (uint32_t)((1ULL << bits) - 1);
}

static void test_murmur3(void)
{
	/* the published x86_32 vectors */
	CHECK_EQ_INT(boar_murmur3_32("", 0, 0), 0);
	CHECK_EQ_INT(boar_murmur3_32("", 0, 1), 0x514E28B7u);
	CHECK_EQ_INT(boar_murmur3_32("", 0, 0xffffffffu), 0x81F16F39u);
	CHECK_EQ_INT(boar_murmur3_32("\0\0\0\0", 4, 0), 0x2362F9DEu);
	CHECK_EQ_INT(boar_murmur3_32("aaaa", 4, 0x9747b28cu), 0x5A97808Au);
	CHECK_EQ_INT(boar_murmur3_32("aaa", 3, 0x9747b28cu), 0x283E0130u);
	CHECK_EQ_INT(boar_murmur3_32("aa", 2, 0x9747b28cu), 0x5D211726u);
	CHECK_EQ_INT(boar_murmur3_32("a", 1, 0x9747b28cu), 0x7FA09EA6u);
	CHECK_EQ_INT(boar_murmur3_32("abcd", 4, 0x9747b28cu), 0xF0478627u);
	CHECK_EQ_INT(boar_murmur3_32("Hello, world!", 13, 0x9747b28cu),
		     0x24884CBAu);
	const char *fox = "The quick brown fox jumps over the lazy dog";
	CHECK_EQ_INT(boar_murmur3_32(fox, strlen(fox), 0x9747b28cu),
		     0x2FA826CDu);
	/* VW: all-digit names are their number plus the seed */
	CHECK_EQ_INT(boar_vw_hash_name("123", 3, 0), 123);
	CHECK_EQ_INT(boar_vw_hash_name("123", 3, 1000), 1123);
	CHECK_EQ_INT(boar_vw_hash_name("12a", 3, 7), boar_murmur3_32("12a", 3, 7));
	CHECK_EQ_INT(boar_vw_hash_name("-1", 2, 7), boar_murmur3_32("-1", 2, 7));
}

static void test_good_lines(void)
{
	boar_dataset *d = NULL;
	boar_error e;
	const char *t = "1 |f a b:2.5 c\n"
			"\n"
			"-1 2 'tag1 |f:2 a:3 |g a\n"
			"0 0.5 tag2| x:0 123\n"
			"1|f a a:2\n";
	int r = load(t, 1, 0, &d, &e);
	CHECK_EQ_INT(r, 0);
	if (r) {
		fprintf(stderr, "  %s\n", e.message);
		return;
	}
	CHECK_EQ_INT(boar_dataset_rows(d), 4);
	CHECK_EQ_INT(d->hash_bits, 18);
	CHECK_EQ_INT(boar_dataset_features(d), 1 << 18);
	CHECK_EQ_INT(d->task, BOAR_TASK_LINEAR);
	const uint32_t *ix;
	const float *vx;
	float y;
	/* row 0: three features, sorted by slot */
	CHECK_EQ_INT(boar_dataset_row(d, 0, &ix, &vx, &y, NULL), 3);
	CHECK_NEAR(y, 1, 0);
	uint32_t want[3] = { slot("a", "f", 18), slot("b", "f", 18),
			     slot("c", "f", 18) };
	float wv[3] = { 1, 2.5f, 1 };
	for (int k = 0; k < 3; k++) {
		int found = 0;
		for (int j = 0; j < 3; j++)
			if (ix[j] == want[k] && vx[j] == wv[k])
				found = 1;
		CHECK(found, "row 0 lacks slot %u value %g", want[k], wv[k]);
	}
	CHECK(ix[0] < ix[1] && ix[1] < ix[2], "row 0 not ascending");
	/* row 1: importance 2, namespace scale 2, two namespaces */
	CHECK_EQ_INT(boar_dataset_row(d, 1, &ix, &vx, &y, NULL), 2);
	CHECK_NEAR(y, -1, 0);
	for (int j = 0; j < 2; j++) {
		if (ix[j] == slot("a", "f", 18))
			CHECK_NEAR(vx[j], 6, 0);
		else
			CHECK(ix[j] == slot("a", "g", 18) && vx[j] == 1,
			      "row 1 entry %d: slot %u value %g", j, ix[j],
			      vx[j]);
	}
	/* row 2: the unnamed namespace (seed 0), x:0 dropped, 123 -> 123 */
	CHECK_EQ_INT(boar_dataset_row(d, 2, &ix, &vx, &y, NULL), 1);
	CHECK_NEAR(y, 0, 0);
	CHECK_EQ_INT(ix[0], 123);
	/* row 3: "1|f" is label 1; a twice is merged */
	CHECK_EQ_INT(boar_dataset_row(d, 3, &ix, &vx, &y, NULL), 1);
	CHECK_NEAR(y, 1, 0);
	CHECK_EQ_INT(ix[0], slot("a", "f", 18));
	CHECK_NEAR(vx[0], 3, 0);
	/* weights: 1, 2, 0.5, 1 */
	CHECK(d->weight != NULL, "importance weights missing");
	if (d->weight) {
		CHECK_NEAR(d->weight[0], 1, 0);
		CHECK_NEAR(d->weight[1], 2, 0);
		CHECK_NEAR(d->weight[2], 0.5, 0);
		CHECK_NEAR(d->weight[3], 1, 0);
	}
	boar_dataset_free(d);

	/* no importance other than 1: no weight array */
	CHECK_EQ_INT(load("1 1 |a x\n-1 |a y\n", 1, 0, &d, &e), 0);
	if (d) {
		CHECK(d->weight == NULL, "weights of all 1 kept");
		CHECK_EQ_INT(d->label_kind, BOAR_LABELS_BINARY);
		boar_dataset_free(d);
	}
	/* hash_bits asked for; the base (third number) is ignored */
	CHECK_EQ_INT(load("3.5 1 0.2 |ns feat:2\n", 1, 10, &d, &e), 0);
	if (d) {
		CHECK_EQ_INT(d->hash_bits, 10);
		CHECK_EQ_INT(boar_dataset_features(d), 1024);
		CHECK_EQ_INT(boar_dataset_row(d, 0, &ix, &vx, &y, NULL), 1);
		CHECK_EQ_INT(ix[0], slot("feat", "ns", 10));
		CHECK_EQ_INT(d->label_kind, BOAR_LABELS_REAL);
		boar_dataset_free(d);
	}
	/* a long row (past the small-row sort) with repeats */
	{
		char line[2048];
		size_t n = (size_t)sprintf(line, "1 |f");
		for (int k = 0; k < 80; k++)
			n += (size_t)sprintf(line + n, " a%d", k);
		sprintf(line + n, " a5:2 a7\n");
		CHECK_EQ_INT(load(line, 1, 0, &d, &e), 0);
		if (d) {
			CHECK_EQ_INT(boar_dataset_row(d, 0, &ix, &vx, &y, NULL), 80);
			int asc = 1, five = 0, seven = 0;
			for (int k = 0; k < 80; k++) {
				asc &= !k || ix[k - 1] < ix[k];
				if (ix[k] == slot("a5", "f", 18))
					five = vx[k] == 3;
				if (ix[k] == slot("a7", "f", 18))
					seven = vx[k] == 2;
			}
			CHECK(asc && five && seven,
			      "long row: ascending %d, a5 %d, a7 %d", asc,
			      five, seven);
			boar_dataset_free(d);
		}
	}
	/* a row with no features; CRLF line ends; tabs */
	CHECK_EQ_INT(load("1 |f\r\n-1\t|f\ta:2\r\n", 1, 0, &d, &e), 0);
	if (d) {
		CHECK_EQ_INT(boar_dataset_rows(d), 2);
		CHECK_EQ_INT(boar_dataset_row(d, 0, &ix, &vx, &y, NULL), 0);
		CHECK_EQ_INT(boar_dataset_row(d, 1, &ix, &vx, &y, NULL), 1);
		CHECK_NEAR(vx[0], 2, 0);
		boar_dataset_free(d);
	}
}

static void bad_case(int lineno, const char *text, uint64_t line,
		     const char *want)
{
	boar_dataset *d = NULL;
	boar_error e;
	memset(&e, 0, sizeof e);
	int r = load(text, 2, 0, &d, &e);
	if (r != BOAR_EPARSE || e.line != line || !strstr(e.message, want) ||
	    d) {
		fprintf(stderr,
			"FAIL %s:%d: expected EPARSE line %llu \"%s\", got code %d line %llu \"%s\"\n",
			__FILE__, lineno, (unsigned long long)line, want, r,
			(unsigned long long)e.line, e.message);
		test_failures++;
	}
	char pre[600];
	snprintf(pre, sizeof pre, "%s/in.vw:%llu: ", test_dir,
		 (unsigned long long)line);
	CHECK(!strncmp(e.message, pre, strlen(pre)),
	      "message \"%s\" should start with \"%s\"", e.message, pre);
	boar_dataset_free(d);
}

#define BAD(text, line, want) bad_case(__LINE__, text, line, want)

static void test_errors(void)
{
	BAD("1 |f a\n\n-1 f b\n", 3, "missing '|'");
	BAD("1 |f a\nyes |f a\n", 2, "label 'yes' is not a number");
	BAD("1 |f a:x\n", 1, "bad number after ':' in 'a:x'");
	BAD("1 |f a:1.5.2\n", 1, "bad number after ':'");
	BAD("1 |f a:\n", 1, "bad number after ':'");
	BAD("|f a\n", 1, "missing label");
	BAD("'tag |f a\n", 1, "missing label");
	BAD("1 |f :3\n", 1, "empty feature name");
	BAD("1 -2 |f a\n", 1, "importance weight -2 is negative");
	BAD("1 1 1 1 |f a\n", 1, "too many numbers");
	BAD("1 x y |f a\n", 1, "'x' is not a number");
	BAD("1 |f:abc a\n", 1, "namespace scale 'abc' is not a finite number");
	BAD("nan |f a\n", 1, "label is NaN or infinite");
	BAD("1 |f a:inf\n", 1, "value of feature 'a' is NaN or infinite");
}

/* A file big enough for several pieces: the same arrays at 1 and 4
 * threads, and an error deep in it reported at its line either way. */
static void test_threads(void)
{
	size_t cap = 6 << 20, len = 0;
	char *t = malloc(cap);
	unsigned x = 12345;
	uint64_t lines = 0;
	while (len + 200 < cap) {
		x = x * 1103515245u + 12345u;
		len += (size_t)sprintf(t + len, "%d%s |a", (x >> 16) & 1 ? 1 : -1,
				       (x >> 20) % 7 ? "" : " 2");
		for (int k = 0; k < 6; k++) {
			x = x * 1103515245u + 12345u;
			len += (size_t)sprintf(t + len, " w%u:%u", (x >> 8) % 5000,
					       (x >> 24) % 9);
		}
		len += (size_t)sprintf(t + len, " |b %u\n", (x >> 4) % 100);
		lines++;
	}
	boar_dataset *a = NULL, *b = NULL;
	boar_error e;
	CHECK_EQ_INT(load_fmt(t, len, BOAR_FORMAT_VW, 1, 20, &a, &e), 0);
	CHECK_EQ_INT(load_fmt(t, len, BOAR_FORMAT_AUTO, 4, 20, &b, &e), 0);
	if (a && b) {
		CHECK_EQ_INT(a->n_rows, lines);
		CHECK_EQ_INT(b->n_rows, lines);
		CHECK(a->nnz == b->nnz &&
			      !memcmp(a->row_ptr, b->row_ptr, (a->n_rows + 1) * 8) &&
			      !memcmp(a->idx, b->idx, a->nnz * 4) &&
			      !memcmp(a->val, b->val, a->nnz * 4) &&
			      !memcmp(a->label, b->label, a->n_rows * 4) &&
			      a->weight && b->weight &&
			      !memcmp(a->weight, b->weight, a->n_rows * 4),
		      "1 and 4 threads (auto-detected) differ");
	}
	boar_dataset_free(a);
	boar_dataset_free(b);
	/* break a line three quarters in */
	char *bad = t + len * 3 / 4;
	while (*bad != '\n')
		bad++;
	bad++;
	uint64_t at = 1;
	for (char *s = t; s < bad; s++)
		at += *s == '\n';
	char *bar = memchr(bad, '|', 64);
	*bar = ' ';
	for (int th = 1; th <= 4; th += 3) {
		a = NULL;
		int r = load_fmt(t, len, BOAR_FORMAT_VW, th, 0, &a, &e);
		CHECK(r == BOAR_EPARSE && e.line == at,
		      "threads %d: expected line %llu, got %d line %llu (%s)",
		      th, (unsigned long long)at, r,
		      (unsigned long long)e.line, e.message);
		boar_dataset_free(a);
	}
	free(t);
}

static void test_detect(void)
{
	const char *vw = "1 |f a b\n";
	CHECK_EQ_INT(boar_detect_format(vw, strlen(vw)), BOAR_FORMAT_VW);
	const char *vw2 = "\n-1 0.5 'x| a:1 b:2\n";
	CHECK_EQ_INT(boar_detect_format(vw2, strlen(vw2)), BOAR_FORMAT_VW);
	const char *vw3 = "1\t2\t|f a b\n";
	CHECK_EQ_INT(boar_detect_format(vw3, strlen(vw3)), BOAR_FORMAT_VW);
	const char *tsv = "1\t2\t3\t4\t5\ta|b\n";
	CHECK_EQ_INT(boar_detect_format(tsv, strlen(tsv)), BOAR_FORMAT_CSV);
	const char *svm = "1 1:2 3:4 # a|b\n";
	CHECK_EQ_INT(boar_detect_format(svm, strlen(svm)), BOAR_FORMAT_LIBSVM);
	/* the bundled fixture loads without --format */
	boar_dataset *d = NULL;
	boar_error e;
	CHECK_EQ_INT(boar_dataset_load("tests/data/vw/good.vw", NULL, &d, &e), 0);
	if (d) {
		CHECK_EQ_INT(boar_dataset_rows(d), 4);
		CHECK_EQ_INT(d->hash_bits, 18);
		boar_dataset_free(d);
	}
	/* the linear task reads VW; MF does not */
	boar_load_options o;
	boar_load_options_default(&o);
	o.task = BOAR_TASK_MF;
	o.format = BOAR_FORMAT_VW;
	CHECK_EQ_INT(boar_dataset_load("tests/data/vw/good.vw", &o, &d, &e),
		     BOAR_EINVAL);
	o.task = BOAR_TASK_LINEAR;
	o.format = BOAR_FORMAT_AUTO;
	CHECK_EQ_INT(boar_dataset_load("tests/data/vw/good.vw", &o, &d, &e), 0);
	boar_dataset_free(d);
}

/* The counting pass bounds a piece's features by the spaces a token
 * follows: features after tabs, CR, VT and FF, after a namespace's scale,
 * a tag and an importance, and a zero-valued one (dropped) all fit, read
 * from a file (windows) and from memory (one block). */
static void test_feature_bound(void)
{
	const char *text = "1 2 'tag|a:2\tx\ty:3\r\n"
			   "-1 |b c\fd\ve |c:0.5 f g:0\n"
			   "1 |a x y z\n";
	for (int mem = 0; mem < 2; mem++) {
		boar_dataset *d = NULL;
		boar_error e;
		memset(&e, 0, sizeof e);
		boar_load_options o;
		boar_load_options_default(&o);
		o.format = BOAR_FORMAT_VW;
		o.hash_bits = 24;
		int r = mem ? boar_dataset_parse_text(text, strlen(text), "t",
						      &o, &d, &e)
			    : load(text, 2, 24, &d, &e);
		CHECK(r == 0 && d, "%s: %d %s", mem ? "memory" : "file", r,
		      e.message);
		if (d) {
			CHECK_EQ_INT(boar_dataset_rows(d), 3);
			CHECK_EQ_INT(boar_dataset_nnz(d), 9);
		}
		boar_dataset_free(d);
	}
}

int main(void)
{
	snprintf(test_dir, sizeof test_dir, "%s/boar-test-vw.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(test_dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_murmur3();
	test_good_lines();
	test_errors();
	test_feature_bound();
	test_threads();
	test_detect();
	char p[600];
	snprintf(p, sizeof p, "%s/in.vw", test_dir);
	unlink(p);
	rmdir(test_dir);
	return TEST_RESULT();
}
