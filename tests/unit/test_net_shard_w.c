/* test_net_shard_w.c - a shard's sparse store (net/shard_w.h): over a range
 * of 2^32 keys (a dense one would be 16 GiB) it holds only keys pushed with
 * a non-zero delta, a key never pushed pulls as 0, sums are those of a
 * dense store of the same frames bit for bit (pulls and ranges alike), and
 * its checkpoint (BOARCKP3: pairs) round-trips into a sparse or a dense
 * store; a forged one (keys out of order or out of range) is refused
 * naming the field. A pull's keys as the bitmap a worker sends
 * (WIRE_F_BITS, walked in place) pull and add exactly what the same keys
 * as a list do, across stripes and at any alignment, in both stores,
 * with the values added read at any alignment (a push's frame leaves
 * them where they fall).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/checkpoint.h"
#include "net/server.h"
#include "net/shard_w.h"
#include "testutil.h"

#define FRAMES 200
#define PER 500

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* n distinct ascending keys in [lo, lo + span) into k; @return n. */
static uint32_t frame_keys(uint64_t *k, uint32_t n, uint64_t lo, uint64_t span)
{
	for (uint32_t i = 0; i < n; i++)
		k[i] = lo + next() % span;
	qsort(k, n, sizeof *k, cmp_u64);
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!m || k[i] != k[m - 1])
			k[m++] = k[i];
	return m;
}

/* The values shard_w_put_keys gives for a span of n keys, as float32 or
 * as the bytes of float16 (f16). */
static void pull_span(struct shard_w *sw, const struct key_span *ks,
		      void *out, int f16)
{
	struct wire_out o;
	size_t each = f16 ? 2 : 4;
	wire_out_init(&o);
	shard_w_put_keys(sw, &o, ks, f16);
	CHECK(!o.failed && o.len == each * ks->n, "pull of %u keys: %zu bytes",
	      ks->n, o.len);
	memcpy(out, o.buf, each * ks->n);
	wire_out_free(&o);
}

/* The values of keys[0..n) (a list). */
static void pull(struct shard_w *sw, const uint64_t *keys, uint32_t n,
		 float *out)
{
	struct key_span ks = key_span_list(keys, n);
	pull_span(sw, &ks, out, 0);
}

static int add(struct shard_w *sw, const uint64_t *keys, const float *vals,
	       uint32_t n)
{
	struct key_span ks = key_span_list(keys, n);
	return shard_w_add(sw, &ks, vals);
}

/* Frames of random keys into a sparse and a dense store of the same
 * range; every pull and range read agrees bit for bit. */
static void same_as_dense(void)
{
	struct shard_w sp, de;
	uint64_t lo = 1000, hi = lo + (1u << 20);
	CHECK(shard_w_init_store(&sp, lo, hi, SHARD_W_SPARSE) == 0 &&
		      shard_w_init_store(&de, lo, hi, SHARD_W_DENSE) == 0,
	      "init");
	CHECK(shard_w_sparse(&sp) && !shard_w_sparse(&de), "store kinds");
	static uint64_t k[PER];
	static float v[PER], a[PER], b[PER];
	for (int f = 0; f < FRAMES; f++) {
		uint32_t n = frame_keys(k, PER, lo, hi - lo);
		for (uint32_t i = 0; i < n; i++)
			v[i] = (float)((int)(next() % 2001) - 1000) / 256;
		CHECK(add(&sp, k, v, n) == 0, "sparse add");
		add(&de, k, v, n);
		n = frame_keys(k, PER, lo, hi - lo);
		pull(&sp, k, n, a);
		pull(&de, k, n, b);
		CHECK(!memcmp(a, b, 4ull * n), "frame %d: pulls differ", f);
	}
	struct wire_out x, y;
	wire_out_init(&x);
	wire_out_init(&y);
	shard_w_put_range(&sp, &x, lo + 12345, 70000);
	shard_w_put_range(&de, &y, lo + 12345, 70000);
	CHECK(x.len == y.len && !memcmp(x.buf, y.buf, x.len),
	      "ranges differ");
	wire_out_free(&x);
	wire_out_free(&y);
	CHECK(shard_w_stored(&sp) < (uint64_t)FRAMES * PER,
	      "sparse store holds %llu keys",
	      (unsigned long long)shard_w_stored(&sp));
	shard_w_free(&sp);
	shard_w_free(&de);
}

/* 2^32 keys: sparse on its own; unseen keys are 0; zero deltas add no
 * key; the checkpoint round-trips. */
static void big_range_and_checkpoint(const char *dir)
{
	uint64_t dim = 1ull << 33, lo, hi;
	ps_shard_range(dim, 1, 2, &lo, &hi);
	struct shard_w sw;
	CHECK(shard_w_init(&sw, lo, hi) == 0, "init of 2^32 keys");
	CHECK(shard_w_sparse(&sw), "a 2^32-key range is not sparse");
	uint64_t k[4] = { lo, lo + 77, hi - 2, hi - 1 };
	float v[4] = { 1.5f, -2.0f, 0.0f, 3.25f }, got[4];
	CHECK(add(&sw, k, v, 4) == 0, "add");
	CHECK(add(&sw, k, v, 4) == 0, "add again");
	CHECK(shard_w_stored(&sw) == 3, "%llu keys held, want 3 (a zero "
	      "delta adds no key)", (unsigned long long)shard_w_stored(&sw));
	uint64_t q[4] = { lo, lo + 1, lo + 77, hi - 1 };
	pull(&sw, q, 4, got);
	CHECK(got[0] == 3.0f && got[1] == 0.0f && got[2] == -4.0f &&
		      got[3] == 6.5f,
	      "pulled %g %g %g %g", got[0], got[1], got[2], got[3]);

	uint64_t clocks[1] = { 9 };
	struct ckpt c = { .shard = 1, .n_shards = 2, .dim = dim, .lo = lo,
			  .hi = hi, .n_workers = 1, .clocks = clocks };
	CHECK(shard_w_export(&sw, &c.keys, &c.w, &c.n_pairs) == 0 &&
		      c.n_pairs == 3 && c.keys[0] == lo && c.keys[2] == hi - 1,
	      "export");
	boar_error err;
	CHECK(ckpt_save(dir, &c, &err) == 0, "save: %s", err.message);
	struct ckpt r;
	int rc = ckpt_load(dir, 1, 2, &r, &err);
	CHECK(rc == 0, "load: %s", err.message);
	if (!rc) {
		struct shard_w back;
		CHECK(r.keys && r.n_pairs == 3, "pairs lost");
		CHECK(shard_w_init(&back, lo, hi) == 0 &&
			      shard_w_load(&back, r.keys, r.w, r.n_pairs) == 0,
		      "reload");
		pull(&back, q, 4, got);
		CHECK(got[0] == 3.0f && got[1] == 0.0f && got[2] == -4.0f &&
			      got[3] == 6.5f,
		      "after the checkpoint: %g %g %g %g", got[0], got[1],
		      got[2], got[3]);
		shard_w_free(&back);
		ckpt_free(&r);
	}
	/* forged: keys out of order, then out of the range */
	uint64_t t = c.keys[0];
	c.keys[0] = c.keys[1];
	c.keys[1] = t;
	CHECK(ckpt_save(dir, &c, &err) == 0, "save");
	CHECK(ckpt_load(dir, 1, 2, &r, &err) == BOAR_ECORRUPT &&
		      strstr(err.message, "key[1]"),
	      "keys out of order: '%s'", err.message);
	c.keys[1] = c.keys[0];
	c.keys[0] = lo - 1;
	CHECK(ckpt_save(dir, &c, &err) == 0, "save");
	CHECK(ckpt_load(dir, 1, 2, &r, &err) == BOAR_ECORRUPT &&
		      strstr(err.message, "key[0]"),
	      "key below the range: '%s'", err.message);
	free(c.keys);
	free(c.w);
	shard_w_free(&sw);
}

/* A dense checkpoint loads into a sparse store (its non-zeros). */
static void dense_into_sparse(void)
{
	struct shard_w sw;
	float w[64] = { 0 };
	w[3] = 2.0f;
	w[63] = -1.0f;
	CHECK(shard_w_init_store(&sw, 64, 128, SHARD_W_SPARSE) == 0, "init");
	CHECK(shard_w_load(&sw, NULL, w, 64) == 0, "load");
	uint64_t q[3] = { 64 + 3, 64 + 4, 127 };
	float got[3];
	pull(&sw, q, 3, got);
	CHECK(got[0] == 2.0f && got[1] == 0.0f && got[2] == -1.0f &&
		      shard_w_stored(&sw) == 2,
	      "dense checkpoint into sparse: %g %g %g", got[0], got[1], got[2]);
	shard_w_free(&sw);
}

/* keys[0..n) through the wire as a PULL's bitmap, decoded into m: the
 * span a shard walks. */
static struct key_span as_bits(const uint64_t *keys, uint32_t n,
			       struct wire_msg *m)
{
	struct wire_out o;
	wire_out_init(&o);
	wire_begin(&o, WIRE_PULL, WIRE_F_BITS);
	wire_put_u32(&o, 1);
	wire_put_u64(&o, 0);
	wire_put_key_bits(&o, keys, n);
	CHECK(wire_end(&o) == 0 &&
		      wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, m) == 0,
	      "bitmap of %u keys does not decode", n);
	wire_out_free(&o);
	struct key_span ks = key_span_of(m);
	CHECK(ks.n_words && ks.n == n, "not a bitmap of %u keys", n);
	return ks;
}

/* Pulls and adds of keys of every density, as a list and as a bitmap,
 * into four stores (dense and sparse, each form): the same values, the
 * same sums, bit for bit, f16 answers too. lo is not a multiple of 64 and
 * the 2^16-key range has 256 stripes of 256 keys, so the bitmaps' words
 * straddle stripes. */
static void bits_as_list(void)
{
	uint64_t lo = 1000037, span = 1u << 16;
	struct shard_w st[4]; /* dense list, dense bits, sparse ... */
	for (int i = 0; i < 4; i++)
		CHECK(shard_w_init_store(&st[i], lo, lo + span,
					 i < 2 ? SHARD_W_DENSE
					       : SHARD_W_SPARSE) == 0,
		      "init");
	static uint64_t k[1u << 16];
	static float v[1u << 16], got[4][1u << 16];
	struct wire_msg m;
	memset(&m, 0, sizeof m);
	for (int f = 0; f < 60; f++) {
		/* from a handful of keys to every key of a stretch */
		uint64_t width = 1 + next() % span, at = next() % (span - width + 1);
		uint32_t want = (uint32_t)(1 + next() % width);
		uint32_t n = frame_keys(k, want, lo + at, width);
		if (f == 0) { /* the whole range, every key */
			n = (uint32_t)span;
			for (uint32_t i = 0; i < n; i++)
				k[i] = lo + i;
		}
		for (uint32_t i = 0; i < n; i++)
			v[i] = (float)((int)(next() % 2001) - 1000) / 64;
		struct key_span list = key_span_list(k, n);
		struct key_span bits = as_bits(k, n, &m);
		/* the values where a push's frame leaves them: 1-3 bytes
		 * off a float's alignment (all but the dense list's) */
		static unsigned char raw[4 * (1u << 16) + 4];
		unsigned char *off = raw + 1 + f % 3;
		memcpy(off, v, 4 * (size_t)n);
		for (int i = 0; i < 4; i++)
			CHECK(shard_w_add(&st[i], i % 2 ? &bits : &list,
					  i ? (const void *)off : v) == 0,
			      "add into store %d", i);
		n = frame_keys(k, (uint32_t)(1 + next() % width), lo + at, width);
		list = key_span_list(k, n);
		bits = as_bits(k, n, &m);
		int f16 = f % 3 == 2;
		for (int i = 0; i < 4; i++)
			pull_span(&st[i], i % 2 ? &bits : &list, got[i], f16);
		size_t bytes = (f16 ? 2u : 4u) * n;
		CHECK(!memcmp(got[0], got[1], bytes) &&
			      !memcmp(got[0], got[2], bytes) &&
			      !memcmp(got[0], got[3], bytes),
		      "frame %d (%u keys, f16 %d): a bitmap's pull differs",
		      f, n, f16);
	}
	wire_msg_free(&m);
	for (int i = 0; i < 4; i++)
		shard_w_free(&st[i]);
}

int main(void)
{
	char dir[] = "/tmp/boar-shard-w-XXXXXX";
	if (!mkdtemp(dir))
		TEST_SKIP("mkdtemp failed");
	same_as_dense();
	big_range_and_checkpoint(dir);
	dense_into_sparse();
	bits_as_list();
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	return TEST_RESULT();
}
