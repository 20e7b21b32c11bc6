/* test_vw_interactions.c - features the VW reader generates: namespace
 * interactions (VW's -q / --interactions: FNV-combined hashes, products
 * of values, combinations for a namespace crossed with itself, duplicate
 * and reordered interactions dropped, ':' wildcards) and n-grams with
 * skips, checked slot by slot against values computed by hand (the
 * literal slots come from an independent MurmurHash3 written for this
 * test); the options' errors, a row past the feature limit, the memory
 * limit, thread counts, the model's note of the options and the cache key.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boar.h"
#include "data/dataset.h"
#include "data/input_spec.h"
#include "data/murmur3.h"
#include "testutil.h"

#define FNV 16777619u

static int load_with(const char *text, const char *inter, const char *ngram,
		     const char *skips, int bits, int threads,
		     boar_dataset **d, boar_error *e)
{
	boar_load_options o;
	boar_load_options_default(&o);
	o.format = BOAR_FORMAT_VW;
	o.hash_bits = bits;
	o.threads = threads;
	o.vw_interactions = inter;
	o.vw_ngrams = ngram;
	o.vw_skips = skips;
	const char *p = test_put_file("in.vw", text, strlen(text));
	return boar_dataset_load(p, &o, d, e);
}

/* Row r's (slot, value) pairs must be exactly want[0..n) (any order). */
static void check_row(const boar_dataset *d, uint64_t r, const uint32_t *ws,
		      const float *wv, size_t n, const char *what)
{
	const uint32_t *ix;
	const float *vx;
	float y;
	int64_t m = boar_dataset_row(d, r, &ix, &vx, &y, NULL);
	CHECK(m == (int64_t)n, "%s: row %llu has %lld features, want %zu",
	      what, (unsigned long long)r, (long long)m, n);
	for (size_t k = 0; k < n; k++) {
		int found = 0;
		for (int64_t j = 0; j < m; j++)
			if (ix[j] == ws[k]) {
				found = 1;
				CHECK_NEAR(vx[j], wv[k], 1e-6);
			}
		CHECK(found, "%s: slot %u missing", what, ws[k]);
	}
}

static uint32_t h(const char *ns, const char *name)
{
	return boar_hash_vw(ns, name);
}

/* The unnamed namespace (' ') crossed with itself: numeric names hash to
 * themselves there, so every slot is arithmetic: combinations (3,3),
 * (3,5), (5,5), never (5,3). */
static void test_self_numeric(void)
{
	boar_dataset *d = NULL;
	boar_error e;
	CHECK_EQ_INT(load_with("1 | 3:2 5:0.5\n", "  ", NULL, NULL, 32, 1, &d,
			       &e), 0);
	if (!d)
		return;
	uint32_t ws[] = { 3, 5, 3u * FNV ^ 3u, 3u * FNV ^ 5u, 5u * FNV ^ 5u };
	float wv[] = { 2, 0.5f, 4, 1, 0.25f };
	check_row(d, 0, ws, wv, 5, "-q '  '");
	boar_dataset_free(d);
}

/* -q ab on named namespaces, slots as VW gives them at -b 18. */
static void test_quadratic(void)
{
	boar_dataset *d = NULL;
	boar_error e;
	CHECK_EQ_INT(load_with("1 |user alice bob:3 |doc sports:2\n", "ud",
			       NULL, NULL, 0, 1, &d, &e), 0);
	if (!d)
		return;
	/* independent murmur3: alice 169390, bob 97449, sports 227849,
	 * alice*sports 187107, bob*sports 17410 */
	CHECK_EQ_INT(h("user", "alice") & 0x3ffff, 169390);
	CHECK_EQ_INT(((h("user", "alice") * FNV) ^ h("doc", "sports")) &
			     0x3ffff, 187107);
	uint32_t ws[] = { 169390, 97449, 227849, 187107, 17410 };
	float wv[] = { 1, 3, 2, 2, 6 };
	check_row(d, 0, ws, wv, 5, "-q ud");
	boar_dataset_free(d);

	/* "du" is the same pair crossed the other way: its own hashes */
	CHECK_EQ_INT(load_with("1 |user alice |doc sports\n", "du", NULL, NULL,
			       0, 1, &d, &e), 0);
	if (d) {
		uint32_t w2[] = { 169390, 227849,
				  ((h("doc", "sports") * FNV) ^
				   h("user", "alice")) & 0x3ffff };
		float v2[] = { 1, 1, 1 };
		check_row(d, 0, w2, v2, 3, "-q du");
		boar_dataset_free(d);
	}
}

/* Rows of the same text under two option sets must be equal. */
static void same_rows(const char *text, const char *a, const char *b,
		      const char *what)
{
	boar_dataset *x = NULL, *y = NULL;
	boar_error e;
	CHECK_EQ_INT(load_with(text, a, NULL, NULL, 0, 1, &x, &e), 0);
	CHECK_EQ_INT(load_with(text, b, NULL, NULL, 0, 1, &y, &e), 0);
	if (x && y) {
		CHECK_EQ_INT(boar_dataset_rows(x), boar_dataset_rows(y));
		for (uint64_t r = 0; r < boar_dataset_rows(x); r++) {
			const uint32_t *ix, *iy;
			const float *vx, *vy;
			float lx, ly;
			int64_t n = boar_dataset_row(x, r, &ix, &vx, &lx, NULL);
			CHECK(n == boar_dataset_row(y, r, &iy, &vy, &ly, NULL) &&
				      !memcmp(ix, iy, (size_t)n * 4) &&
				      !memcmp(vx, vy, (size_t)n * 4),
			      "%s: row %llu differs", what,
			      (unsigned long long)r);
		}
	}
	boar_dataset_free(x);
	boar_dataset_free(y);
}

static void test_duplicates_and_wildcards(void)
{
	const char *t = "1 |a p q |b r |c s:2\n0 |b r |c s\n";
	/* -q ab -q ba: the second is dropped, as VW drops it */
	same_rows(t, "ab,ba", "ab", "ab,ba");
	/* a repeated letter sorts the interaction: bab is abb */
	same_rows(t, "bab", "abb", "bab");
	/* ':' is every namespace of the row, each set once */
	same_rows(t, "::", "aa,ab,ac,bb,bc,cc", "::");
	same_rows(t, "a:", "aa,ab,ac", "a:");
	same_rows(t, "cb,::", "cb,aa,ab,ac,bb,cc", "cb,::");
	/* a self-interaction of three: a p q gives ppp ppq pqq qqq */
	boar_dataset *d = NULL;
	boar_error e;
	CHECK_EQ_INT(load_with("1 | 2 7\n", "   ", NULL, NULL, 32, 1, &d, &e),
		     0);
	if (d) {
		uint32_t ws[] = { 2, 7, (2u * FNV ^ 2u) * FNV ^ 2u,
				  (2u * FNV ^ 2u) * FNV ^ 7u,
				  (2u * FNV ^ 7u) * FNV ^ 7u,
				  (7u * FNV ^ 7u) * FNV ^ 7u };
		float wv[] = { 1, 1, 1, 1, 1, 1 };
		check_row(d, 0, ws, wv, 6, "cubic of the unnamed namespace");
		boar_dataset_free(d);
	}
}

/* A long row (20 tokens crossed with themselves: 230 features, sorted
 * by radix) in 64 slots, where most collide: each slot must hold the sum
 * of its features, in ascending slot order, as counted here by hand. */
static void test_long_row_collisions(void)
{
	char text[200] = "1 |";
	for (int k = 0; k < 20; k++)
		snprintf(text + strlen(text), sizeof text - strlen(text), " %d:%d",
			 k, k + 1);
	strcat(text, "\n");
	float want[64] = { 0 };
	for (uint32_t i = 0; i < 20; i++) {
		want[i & 63] += (float)(i + 1);
		for (uint32_t j = i; j < 20; j++)
			want[(i * FNV ^ j) & 63] += (float)((i + 1) * (j + 1));
	}
	boar_dataset *d = NULL;
	boar_error e;
	CHECK_EQ_INT(load_with(text, "  ", NULL, NULL, 6, 1, &d, &e), 0);
	if (!d)
		return;
	const uint32_t *ix;
	const float *vx;
	float y;
	int64_t n = boar_dataset_row(d, 0, &ix, &vx, &y, NULL);
	int64_t k = 0;
	for (uint32_t s = 0; s < 64; s++) {
		if (want[s] == 0.0f)
			continue;
		CHECK(k < n && ix[k] == s, "slot %u: entry %lld is %u", s,
		      (long long)k, k < n ? ix[k] : 0);
		if (k < n)
			CHECK_NEAR(vx[k], want[s], 1e-3);
		k++;
	}
	CHECK_EQ_INT(n, k);
	boar_dataset_free(d);
}

static void test_ngrams(void)
{
	boar_dataset *d = NULL;
	boar_error e;
	/* independent murmur3 in namespace "text": new 138575, york 192332,
	 * city 117285, new^york 201503, york^city 213275, new^city 153390,
	 * new^york^city 84764 */
	const char *t = "1 |text new york:2 city:3\n";
	CHECK_EQ_INT(load_with(t, NULL, "2", NULL, 0, 1, &d, &e), 0);
	if (d) {
		uint32_t ws[] = { 138575, 192332, 117285, 201503, 213275 };
		float wv[] = { 1, 2, 3, 2, 6 };
		check_row(d, 0, ws, wv, 5, "--ngram 2");
		boar_dataset_free(d);
	}
	CHECK_EQ_INT(load_with(t, NULL, "t2", "t1", 0, 1, &d, &e), 0);
	if (d) {
		uint32_t ws[] = { 138575, 192332, 117285, 201503, 213275,
				  153390 };
		float wv[] = { 1, 2, 3, 2, 6, 3 };
		check_row(d, 0, ws, wv, 6, "--ngram t2 --skips t1");
		boar_dataset_free(d);
	}
	CHECK_EQ_INT(load_with(t, NULL, "3", NULL, 0, 1, &d, &e), 0);
	if (d) {
		uint32_t ws[] = { 138575, 192332, 117285, 201503, 213275,
				  84764 };
		float wv[] = { 1, 2, 3, 2, 6, 6 };
		check_row(d, 0, ws, wv, 6, "--ngram 3");
		boar_dataset_free(d);
	}
	/* grams are per namespace segment and per letter: --ngram x2 leaves
	 * |text alone */
	CHECK_EQ_INT(load_with(t, NULL, "x2", NULL, 0, 1, &d, &e), 0);
	if (d) {
		uint32_t ws[] = { 138575, 192332, 117285 };
		float wv[] = { 1, 2, 3 };
		check_row(d, 0, ws, wv, 3, "--ngram x2");
		boar_dataset_free(d);
	}
	/* grams join their namespace: crossed by -q tu */
	CHECK_EQ_INT(load_with("1 |text new york |u k\n", "tu", "2", NULL, 0,
			       1, &d, &e), 0);
	if (d) {
		uint32_t g = h("text", "new^york"), k = h("u", "k");
		uint32_t ws[] = { h("text", "new") & 0x3ffff,
				  h("text", "york") & 0x3ffff, g & 0x3ffff,
				  k & 0x3ffff,
				  (h("text", "new") * FNV ^ k) & 0x3ffff,
				  (h("text", "york") * FNV ^ k) & 0x3ffff,
				  (g * FNV ^ k) & 0x3ffff };
		float wv[] = { 1, 1, 1, 1, 1, 1, 1 };
		check_row(d, 0, ws, wv, 7, "--ngram 2 -q tu");
		boar_dataset_free(d);
	}
}

static void expect_error(const char *text, const char *inter,
			 const char *ngram, const char *skips, int code,
			 const char *needle, uint64_t line)
{
	boar_dataset *d = NULL;
	boar_error e = { 0 };
	int rc = load_with(text, inter, ngram, skips, 0, 2, &d, &e);
	CHECK_EQ_INT(rc, code);
	CHECK(strstr(e.message, needle) != NULL, "message '%s' lacks '%s'",
	      e.message, needle);
	if (line)
		CHECK_EQ_INT(e.line, line);
	boar_dataset_free(d);
}

static void test_errors(void)
{
	const char *t = "1 |a x |b y\n";
	expect_error(t, "a", NULL, NULL, BOAR_EINVAL, "give 2 to 8", 0);
	expect_error(t, "ab,", NULL, NULL, BOAR_EINVAL, "give 2 to 8", 0);
	expect_error(t, "abcdefghi", NULL, NULL, BOAR_EINVAL, "give 2 to 8", 0);
	expect_error(t, NULL, "0", NULL, BOAR_EINVAL, "from 1 to 8", 0);
	expect_error(t, NULL, "a9", NULL, BOAR_EINVAL, "from 1 to 8", 0);
	expect_error(t, NULL, "2,2", NULL, BOAR_EINVAL, "twice", 0);
	expect_error(t, NULL, NULL, "1", BOAR_EINVAL, "needs --ngram", 0);
	expect_error(t, NULL, "a2", "b1", BOAR_EINVAL, "namespace b", 0);
	/* 40 tokens crossed 8 times with themselves: C(47, 8) = 314457495
	 * features, over the 2^28 a row may have */
	char big[400] = "1 |a x\n1 |a";
	for (int k = 0; k < 40; k++)
		snprintf(big + strlen(big), sizeof big - strlen(big), " t%d", k);
	strcat(big, "\n");
	expect_error(big, "aaaaaaaa", NULL, NULL, BOAR_EPARSE,
		     "more than 268435456 features", 2);
	expect_error("1 |a x:1e30 |b y:1e30\n", "ab", NULL, NULL, BOAR_EPARSE,
		     "infinite", 1);
	expect_error("1 |a x:1e30 y:1e30\n", NULL, "2", NULL, BOAR_EPARSE,
		     "infinite", 1);

	/* the memory limit counts the generated features */
	boar_load_options o;
	boar_load_options_default(&o);
	o.vw_interactions = "aa";
	o.max_memory = 4096;
	char row[2000] = "1 |a";
	for (int k = 0; k < 60; k++)
		snprintf(row + strlen(row), sizeof row - strlen(row), " w%d", k);
	strcat(row, "\n");
	boar_dataset *d = NULL;
	boar_error e = { 0 };
	const char *p = test_put_file("mem.vw", row, strlen(row));
	CHECK_EQ_INT(boar_dataset_load(p, &o, &d, &e), BOAR_ENOMEM);
	CHECK(strstr(e.message, "interactions") != NULL, "%s", e.message);
	o.vw_interactions = NULL; /* 60 features fit */
	CHECK_EQ_INT(boar_dataset_load(p, &o, &d, &e), 0);
	boar_dataset_free(d);
	/* a caller built before these fields (a smaller size) gets none of
	 * them, whatever lies past its struct */
	struct {
		boar_load_options o;
		char pad[64];
	} old;
	memset(&old, 0xff, sizeof old);
	boar_load_options_init(&old.o, offsetof(boar_load_options,
						 vw_interactions));
	old.o.format = BOAR_FORMAT_VW;
	CHECK_EQ_INT(boar_dataset_load(p, &old.o, &d, &e), 0);
	CHECK_EQ_INT(d ? boar_dataset_nnz(d) : 0, 60);
	boar_dataset_free(d);
	/* a format other than VW is refused */
	o.vw_interactions = "ab";
	o.format = BOAR_FORMAT_CSV;
	CHECK_EQ_INT(boar_dataset_load(p, &o, &d, &e), BOAR_EINVAL);
}

/* The same dataset at 1 and 4 threads over a text of several 1 MiB
 * pieces, and an error in a late piece reported at its line. */
static void test_threads(void)
{
	size_t cap = 3 << 20, len = 0;
	char *t = malloc(cap + 64);
	uint64_t lines = 0;
	while (len + 100 < cap) {
		uint64_t r = lines++;
		len += (size_t)sprintf(t + len, "%d |a f%d g%d |b h%d:%d |c w x y\n",
				       (int)(r % 2), (int)(r % 7), (int)(r % 3),
				       (int)(r % 5), (int)(1 + r % 4));
	}
	boar_dataset *x = NULL, *y = NULL;
	boar_error e;
	CHECK_EQ_INT(load_with(t, "ab,c:", "c3", "c1", 28, 1, &x, &e), 0);
	CHECK_EQ_INT(load_with(t, "ab,c:", "c3", "c1", 28, 4, &y, &e), 0);
	if (x && y) {
		CHECK_EQ_INT(x->n_rows, lines);
		/* a f g, b h, c w x y + grams wx xy wy wxy: 10 own; ab 2;
		 * c crossed with a, b, c: 7 * (2 + 1) + C(8, 2) = 49 */
		CHECK_EQ_INT(x->nnz, lines * 61); /* no collision at 28 bits */
		CHECK(x->nnz == y->nnz &&
			      !memcmp(x->row_ptr, y->row_ptr, (lines + 1) * 8) &&
			      !memcmp(x->idx, y->idx, x->nnz * 4) &&
			      !memcmp(x->val, y->val, x->nnz * 4),
		      "1 and 4 threads differ");
	}
	boar_dataset_free(x);
	boar_dataset_free(y);
	/* an infinite product three quarters in */
	char *bad = t + len * 3 / 4;
	while (*bad != '\n')
		bad++;
	uint64_t at = 2;
	for (char *q = t; q < bad; q++)
		at += *q == '\n';
	memcpy(bad + 1, "1 |a u:1e30 |b v:1e30", 21);
	boar_error f = { 0 };
	CHECK_EQ_INT(load_with(t, "ab", NULL, NULL, 0, 4, &x, &f), BOAR_EPARSE);
	CHECK_EQ_INT(f.line, at);
	free(t);
}

/* The model's note keeps the options; the cache key tells them apart. */
static void test_note_and_cache(void)
{
	boar_load_options o;
	boar_load_options_default(&o);
	o.vw_interactions = "ab, a";
	o.vw_ngrams = "a2";
	o.vw_skips = "a1";
	struct boar_input_spec *s = boar_input_spec_new(BOAR_FORMAT_VW, &o);
	char *buf = NULL, why[200];
	size_t len = 0;
	CHECK(s && !boar_input_spec_encode(s, &buf, &len), "encode");
	struct boar_input_spec *t = NULL;
	CHECK_EQ_INT(boar_input_spec_decode(buf, len, &t, why, sizeof why), 0);
	if (t) {
		boar_load_options back;
		boar_load_options_default(&back);
		boar_input_spec_fill(t, &back);
		CHECK(back.vw_interactions &&
			      !strcmp(back.vw_interactions, "ab, a"),
		      "interactions back: %s", back.vw_interactions);
		CHECK(back.vw_ngrams && !strcmp(back.vw_ngrams, "a2"), "ngrams");
		CHECK(back.vw_skips && !strcmp(back.vw_skips, "a1"), "skips");
	}
	boar_input_spec_free(s);
	boar_input_spec_free(t);
	free(buf);

	const char *text = "1 |a x y |b z\n";
	const char *p = test_put_file("c.vw", text, strlen(text));
	boar_load_options c;
	boar_load_options_default(&c);
	c.use_cache = 1;
	boar_dataset *d = NULL;
	boar_error e;
	CHECK_EQ_INT(boar_dataset_load(p, &c, &d, &e), 0); /* writes it */
	CHECK_EQ_INT(d ? boar_dataset_nnz(d) : 0, 3);
	boar_dataset_free(d);
	c.vw_interactions = "ab";
	CHECK_EQ_INT(boar_dataset_load(p, &c, &d, &e), 0); /* not that cache */
	CHECK_EQ_INT(d ? boar_dataset_nnz(d) : 0, 5);
	boar_dataset_free(d);
	CHECK_EQ_INT(boar_dataset_load(p, &c, &d, &e), 0); /* its own cache */
	CHECK_EQ_INT(d ? boar_dataset_nnz(d) : 0, 5);
	boar_dataset_free(d);
	char q[600];
	snprintf(q, sizeof q, "%s.boarcache", p);
	unlink(q);
	unlink(p);
}

int main(void)
{
	snprintf(test_dir, sizeof test_dir, "%s/boar-test-vwi.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(test_dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_self_numeric();
	test_quadratic();
	test_duplicates_and_wildcards();
	test_long_row_collisions();
	test_ngrams();
	test_errors();
	test_threads();
	test_note_and_cache();
	const char *files[] = { "in.vw", "mem.vw" };
	for (size_t k = 0; k < 2; k++) {
		char p[600];
		snprintf(p, sizeof p, "%s/%s", test_dir, files[k]);
		unlink(p);
	}
	rmdir(test_dir);
	return TEST_RESULT();
}
