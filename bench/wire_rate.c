/* wire_rate.c - nanoseconds per key of the cluster's per-key work: the
 * wire's key lists (encode, decode) and values (out, in, gathered from a
 * dense shard; as float32 and as float16, the rows ending in 16), the
 * client's merge of its own pushes into a pull answered
 * ahead, and a dense shard's apply and reply; the rows ending in _bits
 * do the same with a pull's keys as a bitmap (WIRE_F_BITS), which the
 * shard walks in place of a list; encode_words writes that bitmap from
 * words the worker set (wire_put_key_bits_from: the same bytes, so the
 * same checksum, as encode_bits).
 *
 *   wire_rate [reps]
 *
 * Keys are drawn as bench/net's data draws features: id = D * u^2 (u
 * uniform), a power law whose head (low ids) is dense; a clock's keys are
 * the distinct ids drawn, sorted, drawn until they cover a given share of
 * [0, D). Two cases, the densities of the weak-scaling runs (a worker's
 * clock over 4M keys, ~45% dense, and over 1M, ~88%), plus a sparse one
 * (the pushes a thirty-second as many keys as the pull) where a merge
 * could skip ahead. The merge adds clock B's pushes to clock A's pull, as
 * a worker does every clock.
 *
 * Each operation runs `reps` times (default 15); the fastest is reported
 * with a checksum of its output (FNV-1a of the bytes, keys or value bits):
 * two builds (say main and a branch) must print the same checksums, and
 * their ns/key compare the code on the same machine.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net/client_int.h"
#include "net/shard_w.h"
#include "net/wire.h"

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Distinct power-law ids in [0, d), sorted, covering `share` of it (or
 * what 64 * d draws reach). */
static uint64_t *draw_clock(uint64_t d, double share, uint64_t seed,
			    uint32_t *n)
{
	uint8_t *seen = calloc(d, 1);
	uint64_t want = (uint64_t)(share * (double)d), got = 0;
	for (uint64_t t = 0; got < want && t < 64 * d; t++) {
		double u = (double)(rng_next(&seed) >> 11) / 9007199254740992.0;
		uint64_t id = (uint64_t)((double)d * u * u);
		if (id < d && !seen[id]) {
			seen[id] = 1;
			got++;
		}
	}
	uint64_t *k = malloc((got ? got : 1) * sizeof *k);
	uint32_t m = 0;
	for (uint64_t id = 0; id < d; id++)
		if (seen[id])
			k[m++] = id;
	free(seen);
	*n = m;
	return k;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}
#define FNV0 0xcbf29ce484222325ull

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int reps = 15;

struct ctx {
	uint64_t d;
	const uint64_t *ka, *kb; /* clock A (pulled), clock B (pushed) */
	uint32_t na, nb;
	float *va, *vb, *merged, *dense;
	struct wire_out o;
	struct wire_msg m;
	struct pull_ahead ahead;
	struct own_run run;
	struct shard_w sw;
	int f16;         /* values as float16 (WIRE_F_F16) */
	int bits;        /* keys as a bitmap (WIRE_F_BITS) */
	struct key_span sa, sb; /* clocks A and B as the shard holds them */
	struct wire_msg ma, mb; /* their bitmaps, decoded */
	uint64_t *words; /* clock A's keys as bits from key 0 */
	const void *out; /* the output, checksummed after the timing */
	size_t out_len;
};

/* A PULL (request 1, clock 2) begun in o, its keys to follow as a
 * bitmap (bits) or a list. */
static void pull_head(struct wire_out *o, int bits)
{
	wire_out_reset(o);
	wire_begin(o, WIRE_PULL, bits ? WIRE_F_BITS : 0);
	wire_put_u32(o, 1);
	wire_put_u64(o, 2);
}

/* The PULL in c->o ended, and its bytes the output checksummed. */
static void pull_encoded(struct ctx *c)
{
	wire_end(&c->o);
	c->out = c->o.buf;
	c->out_len = c->o.len;
}

static void op_encode(struct ctx *c)
{
	pull_head(&c->o, c->bits);
	wire_put_keys_as(&c->o, c->ka, c->na, c->bits);
	pull_encoded(c);
}

/* op_encode's bitmap, from c->words. */
static void op_encode_words(struct ctx *c)
{
	pull_head(&c->o, 1);
	wire_put_key_bits_from(&c->o, c->ka, c->na, c->words, 0);
	pull_encoded(c);
}

/* The PULL of op_encode must be in c->o. */
static void op_decode(struct ctx *c)
{
	if (wire_decode_frame(c->o.buf, c->o.len, WIRE_MAX_PAYLOAD, &c->m) ||
	    c->m.n_keys != c->na) {
		fprintf(stderr, "wire_rate: decode failed\n");
		exit(1);
	}
	c->out = c->bits ? c->m.bits : c->m.keys;
	c->out_len = (size_t)(c->bits ? c->m.n_words : c->m.n_keys) * 8;
}

static void op_put_vals(struct ctx *c)
{
	wire_out_reset(&c->o);
	wire_begin(&c->o, WIRE_PULL_REPLY, c->f16 ? WIRE_F_F16 : 0);
	wire_put_u32(&c->o, 1);
	wire_put_u32(&c->o, 0);
	wire_put_varint(&c->o, c->na);
	wire_put_vals(&c->o, c->va, c->na, c->f16);
	wire_end(&c->o);
	c->out = c->o.buf;
	c->out_len = c->o.len;
}

/* The PULL_REPLY of op_put_vals must be in c->o. */
static void op_rd_vals(struct ctx *c)
{
	if (wire_decode_frame(c->o.buf, c->o.len, WIRE_MAX_PAYLOAD, &c->m) ||
	    c->m.n_vals != c->na) {
		fprintf(stderr, "wire_rate: decode of values failed\n");
		exit(1);
	}
	c->out = c->m.vals;
	c->out_len = (size_t)c->m.n_vals * 4;
}

static void op_vals_at(struct ctx *c)
{
	wire_out_reset(&c->o);
	wire_put_vals_at(&c->o, c->dense, c->ka, c->na, 0, c->f16);
	c->out = c->o.buf;
	c->out_len = c->o.len;
}

static void op_merge(struct ctx *c)
{
	memcpy(c->merged, c->va, (size_t)c->na * sizeof *c->merged);
	client_ahead_add_own(&c->ahead, c->ka, 0, c->na, c->merged);
	c->out = c->merged;
	c->out_len = (size_t)c->na * 4;
}

static void op_shard_add(struct ctx *c)
{
	shard_w_add(&c->sw, &c->sb, c->vb);
	c->out_len = 0; /* the weights grow every rep: op_shard_put reads them */
}

static void op_shard_put(struct ctx *c)
{
	wire_out_reset(&c->o);
	shard_w_put_keys(&c->sw, &c->o, &c->sa, c->f16);
	c->out = c->o.buf;
	c->out_len = c->o.len;
}

/* Fastest of reps runs, in ns per key of `per`. */
static void timed(struct ctx *c, const char *label, const char *name,
		  void (*op)(struct ctx *), uint32_t per)
{
	double best = 1e30;
	for (int r = 0; r < reps; r++) {
		double t0 = now();
		op(c);
		double t = now() - t0;
		if (t < best)
			best = t;
	}
	printf("%-10s %-12s %8.3f ns/key  %10u keys  sum %016llx\n", label,
	       name, best * 1e9 / (per ? per : 1), per,
	       (unsigned long long)fnv(FNV0, c->out, c->out_len));
}

/* The pull's encoding timed, then its bytes a key. */
static void timed_encode(struct ctx *c, const char *label, const char *name)
{
	timed(c, label, name, op_encode, c->na);
	printf("%-10s %-12s %8.3f bytes/key\n", label, "  size",
	       (double)c->o.len / c->na);
}

/* keys[0..n) as a PULL's bitmap, decoded into m: *ks walks it. */
static void as_bits(struct wire_msg *m, const uint64_t *keys, uint32_t n,
		    struct wire_out *o, struct key_span *ks)
{
	pull_head(o, 1);
	wire_put_key_bits(o, keys, n);
	if (wire_end(o) ||
	    wire_decode_frame(o->buf, o->len, WIRE_MAX_PAYLOAD, m)) {
		fprintf(stderr, "wire_rate: a bitmap does not decode\n");
		exit(1);
	}
	*ks = key_span_of(m);
}

static void run_case(const char *label, uint64_t d, double share,
		     double push_share)
{
	struct ctx c;
	memset(&c, 0, sizeof c);
	c.d = d;
	uint64_t *ka = draw_clock(d, share, 1, &c.na);
	uint64_t *kb = draw_clock(d, push_share, 2, &c.nb);
	c.ka = ka;
	c.kb = kb;
	c.va = malloc((size_t)c.na * sizeof *c.va);
	c.merged = malloc((size_t)c.na * sizeof *c.merged);
	c.vb = malloc((size_t)c.nb * sizeof *c.vb);
	c.dense = malloc(d * sizeof *c.dense);
	c.words = calloc(d / 64 + 1, sizeof *c.words);
	if (!c.va || !c.merged || !c.vb || !c.dense || !c.words) {
		fprintf(stderr, "wire_rate: out of memory\n");
		exit(1);
	}
	uint64_t s = 3;
	for (uint32_t i = 0; i < c.na; i++)
		c.va[i] = (float)(int64_t)(rng_next(&s) % 2001 - 1000) / 512.0f;
	for (uint32_t i = 0; i < c.nb; i++)
		c.vb[i] = (float)(int64_t)(rng_next(&s) % 2001 - 1000) / 1024.0f;
	for (uint64_t i = 0; i < d; i++)
		c.dense[i] = (float)i * 0.25f;
	for (uint32_t i = 0; i < c.na; i++)
		c.words[ka[i] / 64] |= 1ull << (ka[i] % 64);
	c.sa = key_span_list(ka, c.na);
	c.sb = key_span_list(kb, c.nb);
	c.run = (struct own_run){ .k = kb, .v = c.vb, .n = c.nb };
	c.ahead.runs = &c.run;
	c.ahead.n_runs = 1;
	wire_out_init(&c.o);
	if (shard_w_init_store(&c.sw, 0, d, SHARD_W_DENSE)) {
		fprintf(stderr, "wire_rate: out of memory\n");
		exit(1);
	}
	printf("# %s: D %llu, pulled %u keys (%.0f%%), pushed %u (%.0f%%)\n",
	       label, (unsigned long long)d, c.na, 100.0 * c.na / (double)d,
	       c.nb, 100.0 * c.nb / (double)d);
	timed_encode(&c, label, "encode");
	timed(&c, label, "decode", op_decode, c.na);
	timed(&c, label, "put_vals", op_put_vals, c.na);
	timed(&c, label, "rd_vals", op_rd_vals, c.na);
	timed(&c, label, "put_vals_at", op_vals_at, c.na);
	timed(&c, label, "merge", op_merge, c.na);
	timed(&c, label, "shard_add", op_shard_add, c.nb);
	timed(&c, label, "shard_put", op_shard_put, c.na);
	c.f16 = 1;
	timed(&c, label, "put_vals16", op_put_vals, c.na);
	timed(&c, label, "rd_vals16", op_rd_vals, c.na);
	timed(&c, label, "vals_at16", op_vals_at, c.na);
	timed(&c, label, "shard_put16", op_shard_put, c.na);
	/* the same with the pulls' keys as bitmaps, the shard's as sent */
	c.f16 = 0;
	c.bits = 1;
	as_bits(&c.mb, kb, c.nb, &c.o, &c.sb);
	as_bits(&c.ma, ka, c.na, &c.o, &c.sa);
	timed_encode(&c, label, "encode_bits");
	timed(&c, label, "encode_words", op_encode_words, c.na);
	timed(&c, label, "decode_bits", op_decode, c.na);
	timed(&c, label, "sh_add_bits", op_shard_add, c.nb);
	timed(&c, label, "sh_put_bits", op_shard_put, c.na);
	c.f16 = 1;
	timed(&c, label, "sh_put16_bits", op_shard_put, c.na);
	wire_msg_free(&c.ma);
	wire_msg_free(&c.mb);
	shard_w_free(&c.sw);
	wire_out_free(&c.o);
	wire_msg_free(&c.m);
	free(ka);
	free(kb);
	free(c.va);
	free(c.vb);
	free(c.merged);
	free(c.dense);
	free(c.words);
}

int main(int argc, char **argv)
{
	if (argc > 1 && (reps = atoi(argv[1])) < 1) {
		fprintf(stderr, "usage: wire_rate [reps]\n");
		return 2;
	}
	run_case("4M-45%", 4u << 20, 0.45, 0.45);
	run_case("1M-88%", 1u << 20, 0.88, 0.88);
	run_case("4M-sparse", 4u << 20, 0.45, 0.45 / 32);
	return 0;
}
