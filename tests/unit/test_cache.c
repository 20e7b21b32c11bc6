/* test_cache.c - the binary dataset cache: a cached load equals the parse
 * and maps the file; a changed source, other hashing or another cache path
 * rebuild it; truncated, bit-flipped and foreign caches fail with
 * BOAR_ECORRUPT naming the cache file (the documented choice: no silent
 * reparse).
 *
 * Issue 14: a cache whose checksums are right but whose arrays lie (a
 * feature id at or past the dimension, row offsets out of order, a NaN
 * label, a user id past the users) is refused naming the file and the
 * field; on main at 7a340ce the id indexed the weights out of bounds. A
 * source replaced by same-size data with its mtime put back (touch -r,
 * cp -p) is stale; on main it was served from the cache. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "boar.h"
#include "data/cache.h"
#include "base/checksum.h"
#include "data/dataset.h"
#include "testutil.h"

static char dir[256], src[300], cache[320];

static void same(const boar_dataset *a, const boar_dataset *b,
		 const char *what)
{
	CHECK(a->task == b->task && a->n_rows == b->n_rows &&
		      a->nnz == b->nnz && a->dim == b->dim &&
		      a->n_items == b->n_items &&
		      a->label_kind == b->label_kind &&
		      a->all_ones == b->all_ones && a->hash_bits == b->hash_bits,
	      "%s: header fields differ", what);
	if (test_failures)
		return;
	uint64_t n = a->n_rows;
	if (a->task == BOAR_TASK_LINEAR) {
		CHECK(!memcmp(a->row_ptr, b->row_ptr, (n + 1) * 8), "%s: row_ptr", what);
		CHECK(!memcmp(a->idx, b->idx, a->nnz * 4), "%s: idx", what);
		CHECK(!memcmp(a->val, b->val, a->nnz * 4), "%s: val", what);
	} else {
		CHECK(!memcmp(a->user, b->user, n * 4), "%s: user", what);
		CHECK(!memcmp(a->item, b->item, n * 4), "%s: item", what);
	}
	CHECK(!memcmp(a->label, b->label, n * 4), "%s: label", what);
}

static int load(int use_cache, int hash_bits, boar_dataset **d, boar_error *e)
{
	boar_load_options o;
	boar_load_options_default(&o);
	o.use_cache = use_cache;
	o.hash_bits = hash_bits;
	o.threads = 2;
	return boar_dataset_load(src, &o, d, e);
}

static void set_mtime(const char *path, time_t sec)
{
	struct timespec ts[2] = { { sec, 0 }, { sec, 0 } };
	utimensat(AT_FDCWD, path, ts, 0);
}

/* Rewrites byte `at` of the cache file (XOR with x), or truncates to len. */
static void damage(long at, int x, long truncate_to)
{
	FILE *f = fopen(cache, "r+b");
	if (!f) {
		CHECK(0, "cannot open %s", cache);
		return;
	}
	if (truncate_to >= 0) {
		fclose(f);
		CHECK(truncate(cache, truncate_to) == 0, "truncate");
		return;
	}
	fseek(f, at, SEEK_SET);
	int c = fgetc(f);
	fseek(f, at, SEEK_SET);
	fputc(c ^ x, f);
	fclose(f);
}

static void expect_corrupt(int lineno, const char *want)
{
	boar_dataset *d = NULL;
	boar_error e;
	memset(&e, 0, sizeof e);
	int r = load(1, 0, &d, &e);
	if (r != BOAR_ECORRUPT || d || !strstr(e.message, cache) ||
	    !strstr(e.message, want)) {
		fprintf(stderr,
			"FAIL %s:%d: expected ECORRUPT naming %s and \"%s\", got %d \"%s\"\n",
			__FILE__, lineno, cache, want, r, e.message);
		test_failures++;
	}
	boar_dataset_free(d);
}

static void test_linear(void)
{
	boar_gen_options g;
	boar_gen_options_default(&g);
	g.rows = 50000;
	g.features = 5000;
	g.nnz_per_row = 12;
	g.skew = 1;
	boar_dataset *gen, *parsed, *cached, *d;
	boar_error e;
	CHECK_EQ_INT(boar_generate(&g, &gen, &e), 0);
	CHECK_EQ_INT(boar_dataset_write_text(gen, src, &e), 0);
	boar_dataset_free(gen);
	set_mtime(src, 1000000);

	CHECK_EQ_INT(load(0, 0, &parsed, &e), 0);
	CHECK(access(cache, F_OK) != 0, "no cache unless asked");
	CHECK_EQ_INT(load(1, 0, &d, &e), 0); /* writes it */
	CHECK(access(cache, F_OK) == 0, "cache written at %s", cache);
	CHECK(d && d->map == NULL, "first load parses");
	same(parsed, d, "parse with cache on");
	boar_dataset_free(d);
	CHECK_EQ_INT(load(1, 0, &cached, &e), 0);
	if (test_failures)
		return;
	CHECK(cached->map != NULL, "second load maps the cache");
	CHECK(((uintptr_t)cached->idx & 63) == 0 &&
		      ((uintptr_t)cached->val & 63) == 0 &&
		      ((uintptr_t)cached->row_ptr & 63) == 0,
	      "arrays are 64-byte aligned");
	same(parsed, cached, "cache round trip");
	boar_dataset_free(cached);

	/* other hashing: rebuilt, and then used */
	CHECK_EQ_INT(load(1, 10, &d, &e), 0);
	CHECK(d->map == NULL && d->hash_bits == 10 && d->dim == 1024,
	      "hash_bits change rebuilds");
	boar_dataset_free(d);
	CHECK_EQ_INT(load(1, 10, &d, &e), 0);
	CHECK(d->map != NULL && d->hash_bits == 10, "hashed cache is used");
	boar_dataset_free(d);

	/* a forced format that the cache does not hold: rebuilt as asked */
	boar_load_options o;
	boar_load_options_default(&o);
	o.use_cache = 1;
	o.task = BOAR_TASK_MF;
	CHECK_EQ_INT(boar_dataset_load(src, &o, &d, &e), BOAR_EPARSE);

	/* the source changes (mtime only, then content): stale, rebuilt */
	CHECK_EQ_INT(load(1, 0, &d, &e), 0); /* back to an unhashed cache */
	boar_dataset_free(d);
	set_mtime(src, 2000000);
	CHECK_EQ_INT(load(1, 0, &d, &e), 0);
	CHECK(d->map == NULL, "new mtime rebuilds");
	same(parsed, d, "rebuilt");
	boar_dataset_free(d);
	FILE *f = fopen(src, "w");
	fputs("1 1:1 2:2\n-1 3:3\n", f);
	fclose(f);
	set_mtime(src, 2000000); /* same mtime, other size */
	CHECK_EQ_INT(load(1, 0, &d, &e), 0);
	CHECK(d->map == NULL && d->n_rows == 2 && d->nnz == 3,
	      "new size rebuilds");
	boar_dataset_free(d);
	CHECK_EQ_INT(load(1, 0, &d, &e), 0);
	CHECK(d->map != NULL && d->n_rows == 2 && d->val[2] == 3,
	      "and the new cache holds the new data");
	boar_dataset_free(d);
	boar_dataset_free(parsed);
}

static void test_corruption(void)
{
	boar_dataset *d;
	boar_error e;
	struct stat st;
	/* a fresh, valid cache of the small file */
	unlink(cache);
	CHECK_EQ_INT(load(1, 0, &d, &e), 0);
	boar_dataset_free(d);
	CHECK_EQ_INT(stat(cache, &st), 0);
	long size = (long)st.st_size;

	damage(size - 64, 0x10, -1); /* the first label */
	expect_corrupt(__LINE__, "data checksum mismatch");
	damage(size - 64, 0x10, -1); /* undo */
	CHECK_EQ_INT(load(1, 0, &d, &e), 0);
	CHECK(d && d->map, "repaired cache loads");
	boar_dataset_free(d);

	damage(60, 0x01, -1); /* header: a count */
	expect_corrupt(__LINE__, "header checksum mismatch");
	damage(60, 0x01, -1);

	damage(0, 0x20, -1); /* magic */
	expect_corrupt(__LINE__, "not a boar dataset cache");
	damage(0, 0x20, -1);

	damage(0, 0, size - 64); /* lost its tail */
	expect_corrupt(__LINE__, "truncated");
	damage(0, 0, 100); /* lost most of its header */
	expect_corrupt(__LINE__, "truncated");
	damage(0, 0, 0);
	expect_corrupt(__LINE__, "truncated");

	/* something else entirely sits at the cache path */
	FILE *f = fopen(cache, "w");
	for (int k = 0; k < 1000; k++)
		fputs("this is not a cache\n", f);
	fclose(f);
	expect_corrupt(__LINE__, "not a boar dataset cache");

	/* deleting the cache rebuilds it */
	unlink(cache);
	CHECK_EQ_INT(load(1, 0, &d, &e), 0);
	boar_dataset_free(d);
	CHECK_EQ_INT(load(1, 0, &d, &e), 0);
	CHECK(d && d->map, "rebuilt after delete");
	boar_dataset_free(d);
}

static void test_ratings_and_path(void)
{
	char other[340];
	snprintf(other, sizeof other, "%s/elsewhere.cache", dir);
	FILE *f = fopen(src, "w");
	fputs("user,item,rating\n1,2,3.5\n4,5,1\n0,0,-2\n", f);
	fclose(f);
	boar_load_options o;
	boar_load_options_default(&o);
	o.use_cache = 1;
	o.cache_path = other;
	boar_dataset *a, *b;
	boar_error e;
	CHECK_EQ_INT(boar_dataset_load(src, &o, &a, &e), 0);
	CHECK(access(other, F_OK) == 0, "cache_path honoured");
	CHECK_EQ_INT(boar_dataset_load(src, &o, &b, &e), 0);
	if (test_failures)
		return;
	CHECK(a->map == NULL && b->map != NULL, "second load maps");
	CHECK_EQ_INT(boar_dataset_task(b), BOAR_TASK_MF);
	CHECK_EQ_INT(boar_dataset_items(b), 6);
	same(a, b, "ratings cache");
	boar_dataset_free(a);
	boar_dataset_free(b);
	unlink(other);
}

/* The payload checksum: the same at any thread count, and any one flipped
 * bit (of a buffer spanning several blocks) changes it. */
static void test_checksum(void)
{
	size_t n = (20u << 20) + 13;
	unsigned char *b = malloc(n);
	for (size_t k = 0; k < n; k++)
		b[k] = (unsigned char)(k * 2654435761u >> 13);
	uint64_t h1 = boar_checksum(b, n, 1), h3 = boar_checksum(b, n, 3);
	CHECK(h1 == h3, "checksum differs with threads: %llx vs %llx",
	      (unsigned long long)h1, (unsigned long long)h3);
	size_t at[] = { 0, 7, 8u << 20, n - 1, n / 2 };
	for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
		b[at[k]] ^= 0x40;
		CHECK(boar_checksum(b, n, 2) != h1, "flip at %zu not seen", at[k]);
		b[at[k]] ^= 0x40;
	}
	CHECK(boar_checksum(b, n - 1, 2) != h1, "truncation not seen");
	free(b);
}

/* Writes d as the cache of src with valid checksums, loads it, and
 * expects BOAR_ECORRUPT with `want` in the message. */
static void expect_forged(int lineno, const struct boar_dataset *d,
			  const char *want)
{
	struct src_id id;
	int regular;
	boar_error e;
	memset(&e, 0, sizeof e);
	CHECK_EQ_INT(text_file_stat(src, &id, &regular, &e), 0);
	CHECK_EQ_INT(boar_cache_write(cache, d, &id, 0, 2, &e), 0);
	struct cache_want w = { .src = id, .options_key = 0,
				.task = d->task, .hash_bits = d->hash_bits,
				.threads = 2 };
	struct boar_dataset *got = NULL;
	int r = boar_cache_load(cache, &w, &got, &e);
	if (r != BOAR_ECORRUPT || got || !strstr(e.message, cache) ||
	    !strstr(e.message, want)) {
		fprintf(stderr,
			"FAIL %s:%d: forged cache: expected ECORRUPT with \"%s\", got %d \"%s\"\n",
			__FILE__, lineno, want, r, e.message);
		test_failures++;
	}
	boar_dataset_free(got);
	unlink(cache);
}

static void test_forged(void)
{
	FILE *f = fopen(src, "w");
	fputs("+1 1:1\n", f);
	fclose(f);
	uint64_t row_ptr[3] = { 0, 2, 3 };
	uint32_t idx[3] = { 0, 3, 1 };
	float val[3] = { 1, 1, 1 }, label[2] = { 1, -1 };
	struct boar_dataset d = {
		.task = BOAR_TASK_LINEAR, .label_kind = BOAR_LABELS_BINARY,
		.n_rows = 2, .nnz = 3, .dim = 4, .row_ptr = row_ptr,
		.idx = idx, .val = val, .label = label,
	};
	struct boar_dataset *ok = NULL;
	boar_error e;
	struct src_id id;
	int regular;
	/* the honest one loads */
	CHECK_EQ_INT(text_file_stat(src, &id, &regular, &e), 0);
	CHECK_EQ_INT(boar_cache_write(cache, &d, &id, 0, 2, &e), 0);
	struct cache_want w = { .src = id, .task = BOAR_TASK_LINEAR,
				.threads = 2 };
	CHECK_EQ_INT(boar_cache_load(cache, &w, &ok, &e), 0);
	CHECK(ok && ok->idx[1] == 3, "honest cache");
	boar_dataset_free(ok);

	idx[1] = 9; /* past the dimension */
	expect_forged(__LINE__, &d, "row 0: feature id 9 is not below the dimension 4");
	idx[1] = 0; /* not ascending */
	expect_forged(__LINE__, &d, "row 0: feature ids are not strictly ascending");
	idx[1] = 3;
	row_ptr[1] = 4; /* past nnz */
	expect_forged(__LINE__, &d, "row offset 4 of row 0 is out of order");
	row_ptr[1] = 2;
	label[1] = NAN;
	expect_forged(__LINE__, &d, "row 1: label is not finite");
	label[1] = -1;
	val[2] = INFINITY;
	expect_forged(__LINE__, &d, "row 1: value of feature 1 is not finite");
	val[2] = 1;
	d.hash_bits = 3; /* 2^3 is not the dimension 4 */
	expect_forged(__LINE__, &d, "dimension 4 does not fit hash_bits 3");
	d.hash_bits = 0;
	d.label_kind = 7;
	expect_forged(__LINE__, &d, "impossible header values");
	d.label_kind = BOAR_LABELS_BINARY;

	uint32_t user[2] = { 0, 5 }, item[2] = { 1, 0 };
	float rating[2] = { 3, 4 };
	struct boar_dataset m = {
		.task = BOAR_TASK_MF, .label_kind = BOAR_LABELS_REAL,
		.n_rows = 2, .nnz = 2, .dim = 2, .n_items = 2, .user = user,
		.item = item, .label = rating,
	};
	expect_forged(__LINE__, &m, "rating 1: user 5 / item 0 not below the 2 users / 2 items");
	user[1] = 1;
	rating[0] = NAN;
	expect_forged(__LINE__, &m, "rating 0 is not finite");
	unlink(src);
}

/* The source replaced by same-size data with its mtime put back, as
 * touch -r, cp -p and rsync -a leave it: the cache is stale. */
static void test_same_size_same_mtime(void)
{
	FILE *f = fopen(src, "w");
	fputs("+1 1:1\n-1 2:1\n", f);
	fclose(f);
	set_mtime(src, 3000000);
	boar_dataset *d = NULL;
	boar_error e;
	CHECK_EQ_INT(load(1, 0, &d, &e), 0);
	boar_dataset_free(d);
	d = NULL;
	CHECK_EQ_INT(load(1, 0, &d, &e), 0);
	CHECK(d && d->map, "the cache is used");
	boar_dataset_free(d);
	d = NULL;
	f = fopen(src, "w");
	fputs("+1 2:1\n-1 1:1\n", f); /* same size */
	fclose(f);
	set_mtime(src, 3000000);
	CHECK_EQ_INT(load(1, 0, &d, &e), 0);
	CHECK(d && !d->map && d->idx[0] == 1 && d->idx[1] == 0,
	      "same size and mtime, other content: the stale cache was served");
	boar_dataset_free(d);
	unlink(cache);
	unlink(src);
}

int main(void)
{
	snprintf(dir, sizeof dir, "%s/boar-test-cache.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(src, sizeof src, "%s/data.svm", dir);
	snprintf(cache, sizeof cache, "%s.boarcache", src);
	test_checksum();
	test_linear();
	test_corruption();
	test_ratings_and_path();
	test_forged();
	test_same_size_same_mtime();
	unlink(cache);
	unlink(src);
	if (rmdir(dir))
		CHECK(0, "temp dir not empty: a temp file was left behind");
	return TEST_RESULT();
}
