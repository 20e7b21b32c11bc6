/* test_gzip_input.c - gzip-compressed input in every format: a9a.gz made
 * by gzip(1) loads as the plain a9a does; VW (with its weights) and CSV
 * too; errors still name the .gz file and the line; a truncated stream
 * is an error naming the file; the binary cache works for .gz sources
 * (keyed on the .gz file), fits the format (VW hashing) and the CSV
 * options, and is not written for weighted VW data it could not hold. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <zlib.h>

#include "boar.h"
#include "data/dataset.h"
#include "data/gzip_input.h"
#include "testutil.h"

static char dir[256];

static char *path_of(const char *name)
{
	static char p[4][600];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
	return p[k];
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *b = malloc((size_t)n + 1);
	if (fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return b;
}

/* Writes text gzip-compressed with zlib. */
static void gz_write(const char *path, const char *text, size_t len)
{
	gzFile z = gzopen(path, "wb");
	if (!z || gzwrite(z, text, (unsigned)len) != (int)len || gzclose(z) != Z_OK) {
		fprintf(stderr, "cannot write %s\n", path);
		exit(1);
	}
}

static void same(int lineno, const boar_dataset *a, const boar_dataset *b)
{
	int ok = a && b && a->task == b->task && a->n_rows == b->n_rows &&
		 a->nnz == b->nnz && a->dim == b->dim &&
		 a->hash_bits == b->hash_bits &&
		 !memcmp(a->row_ptr, b->row_ptr, (a->n_rows + 1) * 8) &&
		 !memcmp(a->idx, b->idx, a->nnz * 4) &&
		 !memcmp(a->val, b->val, a->nnz * 4) &&
		 !memcmp(a->label, b->label, a->n_rows * 4) &&
		 !a->weight == !b->weight &&
		 (!a->weight || !memcmp(a->weight, b->weight, a->n_rows * 4));
	if (!ok) {
		fprintf(stderr, "FAIL %s:%d: datasets differ\n", __FILE__,
			lineno);
		test_failures++;
	}
}

static boar_dataset *load(const char *path, const boar_load_options *o)
{
	boar_dataset *d = NULL;
	boar_error e;
	int r = boar_dataset_load(path, o, &d, &e);
	if (r) {
		fprintf(stderr, "FAIL: loading %s: %d %s\n", path, r, e.message);
		test_failures++;
	}
	return d;
}

static void test_a9a(void)
{
	const char *src = "/work/shared/datasets/libsvm/a9a";
	const char *bundled = "datasets/a9a";
	if (access(src, R_OK))
		src = bundled;
	if (access(src, R_OK)) {
		fprintf(stderr, "note: no a9a here; the a9a check is skipped\n");
		return;
	}
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "gzip -c '%s' > '%s' 2>/dev/null", src,
		 path_of("a9a.gz"));
	if (system(cmd)) {
		/* no gzip(1): zlib writes the same format */
		size_t n;
		char *t = slurp(src, &n);
		gz_write(path_of("a9a.gz"), t, n);
		free(t);
	}
	boar_dataset *plain = load(src, NULL), *gz = load(path_of("a9a.gz"), NULL);
	same(__LINE__, plain, gz);
	if (gz)
		CHECK_EQ_INT(gz->n_rows, 32561);
	boar_dataset_free(gz);

	/* the cache of a .gz source: written, then mapped, and equal */
	boar_load_options o;
	boar_load_options_default(&o);
	o.use_cache = 1;
	gz = load(path_of("a9a.gz"), &o);
	CHECK(gz && !gz->map, "first load came from a cache");
	boar_dataset_free(gz);
	CHECK(!access(path_of("a9a.gz.boarcache"), R_OK), "no cache written");
	gz = load(path_of("a9a.gz"), &o);
	CHECK(gz && gz->map, "second load did not map the cache");
	same(__LINE__, plain, gz);
	boar_dataset_free(gz);
	/* a newer .gz makes it stale */
	struct timeval tv[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	utimes(path_of("a9a.gz"), tv);
	gz = load(path_of("a9a.gz"), &o);
	CHECK(gz && !gz->map, "stale cache was used");
	same(__LINE__, plain, gz);
	boar_dataset_free(gz);
	boar_dataset_free(plain);
	unlink(path_of("a9a.gz"));
	unlink(path_of("a9a.gz.boarcache"));
}

static void test_vw(void)
{
	size_t n;
	char *t = slurp("tests/data/vw/good.vw", &n);
	CHECK(t != NULL, "tests/data/vw/good.vw missing");
	if (!t)
		return;
	gz_write(path_of("good.vw.gz"), t, n);
	free(t);
	boar_dataset *plain = load("tests/data/vw/good.vw", NULL);
	boar_dataset *gz = load(path_of("good.vw.gz"), NULL);
	same(__LINE__, plain, gz);
	CHECK(gz && gz->weight, "the importance weights were lost");
	boar_dataset_free(gz);
	/* weighted: the cache cannot hold weights, so none is written */
	boar_load_options o;
	boar_load_options_default(&o);
	o.use_cache = 1;
	boar_dataset_free(load(path_of("good.vw.gz"), &o));
	gz = load(path_of("good.vw.gz"), &o);
	CHECK(gz && !gz->map && gz->weight, "weighted VW data came from a cache");
	same(__LINE__, plain, gz);
	boar_dataset_free(gz);
	CHECK(access(path_of("good.vw.gz.boarcache"), F_OK),
	      "a cache was written for weighted data");
	boar_dataset_free(plain);

	/* unweighted VW: cached (18 bits when 0 is asked for), then mapped */
	const char u[] = "1 |a x y\n-1 |b x:2\n";
	gz_write(path_of("u.vw.gz"), u, sizeof u - 1);
	boar_dataset *first = load(path_of("u.vw.gz"), &o);
	gz = load(path_of("u.vw.gz"), &o);
	CHECK(gz && gz->map && gz->hash_bits == 18,
	      "unweighted VW cache not used");
	same(__LINE__, first, gz);
	boar_dataset_free(gz);
	boar_dataset_free(first);
	/* the same cache is not taken for another hash_bits */
	o.hash_bits = 12;
	gz = load(path_of("u.vw.gz"), &o);
	CHECK(gz && !gz->map && gz->hash_bits == 12, "cache of 18 bits for 12");
	boar_dataset_free(gz);

	/* a bad line inside the .gz: named with the .gz path and its line */
	const char bad[] = "1 |a x\n1 |a y\n1 a z\n";
	gz_write(path_of("bad.vw.gz"), bad, sizeof bad - 1);
	boar_error e;
	boar_dataset *d = NULL;
	CHECK_EQ_INT(boar_dataset_load(path_of("bad.vw.gz"), NULL, &d, &e),
		     BOAR_EPARSE);
	char want[700];
	snprintf(want, sizeof want, "%s:3: missing '|'", path_of("bad.vw.gz"));
	CHECK(strstr(e.message, want), "got \"%s\", want \"%s\"", e.message,
	      want);
	CHECK_EQ_INT(e.line, 3);
	unlink(path_of("good.vw.gz"));
	unlink(path_of("u.vw.gz"));
	unlink(path_of("u.vw.gz.boarcache"));
	unlink(path_of("bad.vw.gz"));
}

static void test_csv(void)
{
	size_t n;
	char *t = slurp("tests/data/csv/criteo-like.csv", &n);
	CHECK(t != NULL, "tests/data/csv/criteo-like.csv missing");
	if (!t)
		return;
	gz_write(path_of("c.csv.gz"), t, n);
	free(t);
	boar_load_options o;
	boar_load_options_default(&o);
	o.csv_label = "Label";
	o.csv_ignore = "Id";
	boar_dataset *plain = load("tests/data/csv/criteo-like.csv", &o);
	boar_dataset *gz = load(path_of("c.csv.gz"), &o);
	same(__LINE__, plain, gz);
	boar_dataset_free(gz);

	/* the cache follows the CSV options */
	o.use_cache = 1;
	boar_dataset_free(load(path_of("c.csv.gz"), &o));
	gz = load(path_of("c.csv.gz"), &o);
	CHECK(gz && gz->map, "CSV cache not used");
	same(__LINE__, plain, gz);
	boar_dataset_free(gz);
	boar_load_options o2 = o;
	o2.csv_categorical = "I1";
	o2.use_cache = 0;
	boar_dataset *other = load("tests/data/csv/criteo-like.csv", &o2);
	o2.use_cache = 1;
	gz = load(path_of("c.csv.gz"), &o2);
	CHECK(gz && !gz->map, "a cache of other CSV options was used");
	same(__LINE__, other, gz);
	boar_dataset_free(gz);
	gz = load(path_of("c.csv.gz"), &o2);
	CHECK(gz && gz->map, "rebuilt CSV cache not used");
	same(__LINE__, other, gz);
	boar_dataset_free(gz);
	boar_dataset_free(other);
	boar_dataset_free(plain);
	unlink(path_of("c.csv.gz"));
	unlink(path_of("c.csv.gz.boarcache"));
}

static void test_broken(void)
{
	/* a stream cut in half */
	size_t len = 0, cap = 1 << 20;
	char *t = malloc(cap);
	for (int k = 0; len + 64 < cap; k++)
		len += (size_t)sprintf(t + len, "%d |f a%d b%d:%d\n", k % 2 ? 1 : -1,
				       k % 97, k % 13, k % 7);
	gz_write(path_of("cut.vw.gz"), t, len);
	free(t);
	struct stat st;
	stat(path_of("cut.vw.gz"), &st);
	CHECK(truncate(path_of("cut.vw.gz"), st.st_size / 2) == 0, "truncate");
	boar_dataset *d = NULL;
	boar_error e;
	int r = boar_dataset_load(path_of("cut.vw.gz"), NULL, &d, &e);
	CHECK(r == BOAR_ECORRUPT || r == BOAR_EPARSE || r == BOAR_EIO,
	      "truncated gzip: got %d \"%s\"", r, e.message);
	CHECK(strstr(e.message, path_of("cut.vw.gz")),
	      "message \"%s\" does not name the file", e.message);
	/* peeking still reads what came before the damage */
	char head[64];
	long n = text_peek(path_of("cut.vw.gz"), head, sizeof head);
	CHECK(n == (long)sizeof head && !memcmp(head, "-1 |f a0 b0:0\n", 14),
	      "peek gave %ld bytes", n);
	CHECK_EQ_INT(text_peek(path_of("missing.gz"), head, sizeof head), -1);
	/* with a cache asked for, the damage is still reported */
	boar_load_options o;
	boar_load_options_default(&o);
	o.use_cache = 1;
	r = boar_dataset_load(path_of("cut.vw.gz"), &o, &d, &e);
	CHECK(r == BOAR_ECORRUPT || r == BOAR_EPARSE || r == BOAR_EIO,
	      "truncated gzip with cache: got %d \"%s\"", r, e.message);
	unlink(path_of("cut.vw.gz"));
	unlink(path_of("cut.vw.gz.boarcache"));
}

int main(void)
{
	snprintf(dir, sizeof dir, "%s/boar-test-gz.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_a9a();
	test_vw();
	test_csv();
	test_broken();
	if (rmdir(dir))
		CHECK(0, "temp dir %s not empty: a file was left behind", dir);
	return TEST_RESULT();
}
