/* test_net_wire_bits.c - a frame's keys as a bitmap (WIRE_F_BITS, wire.h).
 *
 * Key sets of every density round-trip through the bitmap form and come
 * back as the same list (wire_msg_list_keys); the encoder picks the form
 * that is smaller; a PUSH carries its keys that way with its values,
 * float32 or float16; a bitmap whose count, first bit, last word, length
 * or keys do not hold together is refused, and so is the flag where no
 * keys are (a CLOCK, a push naming its pull). A real shard adds and
 * answers bitmaps as lists, and refuses (ERROR, peer dropped) one that
 * reaches past its range.
 */
#include <string.h>

#include "net/key_span.h"
#include "net/wire.h"
#include "net_testutil.h"
#include "testutil.h"

/* A PULL of keys[0..n) as a bitmap, into o. */
static void pull_bits(struct wire_out *o, const uint64_t *keys, uint32_t n)
{
	wire_out_reset(o);
	wire_begin(o, WIRE_PULL, WIRE_F_BITS);
	wire_put_u32(o, 9);
	wire_put_u64(o, 4);
	wire_put_key_bits(o, keys, n);
	wire_end(o);
}

/* A bitmap PULL as written, however wrong: n keys from base, a count
 * of `said` words, words[0..n_words) written, then `trail` zero bytes. */
static void pull_frame(struct wire_out *o, uint64_t n, uint64_t base,
		       uint64_t said, const uint64_t *words, uint64_t n_words,
		       int trail)
{
	wire_out_reset(o);
	wire_begin(o, WIRE_PULL, WIRE_F_BITS);
	wire_put_u32(o, 9);
	wire_put_u64(o, 4);
	wire_put_varint(o, n);
	wire_put_varint(o, base);
	wire_put_varint(o, said);
	for (uint64_t w = 0; w < n_words; w++)
		wire_put_u64(o, words[w]);
	while (trail-- > 0)
		wire_put_u8(o, 0);
	wire_end(o);
}

/* A PULL with a hand-made bitmap: count, base, the words. */
static void pull_raw(struct wire_out *o, uint64_t n, uint64_t base,
		     const uint64_t *words, uint64_t n_words)
{
	pull_frame(o, n, base, n_words, words, n_words, 0);
}

static void roundtrip(void)
{
	static uint64_t keys[20000];
	struct wire_out o;
	struct wire_msg m;
	wire_out_init(&o);
	memset(&m, 0, sizeof m);
	for (int t = 0; t < 300; t++) {
		/* from one key to every key of a stretch, at any base */
		uint64_t base = t % 7 == 0 ? WIRE_MAX_KEY - 20000 - 1
					   : test_rng() % (1ull << 36);
		uint32_t span = 1 + (uint32_t)(test_rng() % 20000), n = 0;
		uint64_t keep = test_rng() % 101; /* percent of the keys kept */
		for (uint32_t i = 0; i < span; i++)
			if (i == 0 || test_rng() % 100 < keep)
				keys[n++] = base + i;
		pull_bits(&o, keys, n);
		int rc = wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m);
		CHECK(rc == 0, "case %d (%u keys): decode %d", t, n, rc);
		if (rc)
			continue;
		CHECK(m.type == WIRE_PULL && (m.flags & WIRE_F_BITS) &&
			      m.req == 9 && m.clock == 4 && m.n_keys == n &&
			      m.base == base,
		      "case %d: the pull's fields", t);
		/* 8 bytes per 64 keys of the span */
		uint64_t words = (keys[n - 1] - base) / 64 + 1;
		CHECK(m.n_words == words, "case %d: %u words, want %llu", t,
		      m.n_words, (unsigned long long)words);
		CHECK(wire_msg_list_keys(&m) == 0 && !(m.flags & WIRE_F_BITS),
		      "case %d: listing", t);
		CHECK(!memcmp(m.keys, keys, n * sizeof *keys),
		      "case %d: keys differ", t);
		/* the smaller form is chosen: a list is at least n bytes */
		CHECK(wire_keys_as_bits(keys, n) == (words * 8 < n),
		      "case %d: %u keys in %llu words", t, n,
		      (unsigned long long)words);
	}
	CHECK(!wire_keys_as_bits(keys, 0), "no keys as a bitmap");
	wire_out_free(&o);
	wire_msg_free(&m);
}

/* A request's bitmap shifted out of words the caller set
 * (wire_put_key_bits_from) is the one wire_put_key_bits sets a bit a
 * key, byte for byte: every shard's slice of one key set (any first key
 * against the words' 64-key grid, slices ending mid-word or on a word's
 * last bit, one key, neighbours set in the words on either side). */
static void bits_from_words(void)
{
	enum { SPAN = 6000 };
	static uint64_t keys[SPAN], words[SPAN / 64 + 2];
	struct wire_out a, b;
	wire_out_init(&a);
	wire_out_init(&b);
	for (int t = 0; t < 400; t++) {
		uint64_t keep = t % 9 == 0 ? 100 : test_rng() % 101, n = 0;
		memset(words, 0, sizeof words);
		for (uint64_t k = 0; k < SPAN; k++)
			if (test_rng() % 100 < keep) {
				keys[n++] = k;
				words[k / 64] |= 1ull << (k % 64);
			}
		if (!n)
			continue;
		/* the set cut at random places into slices, as by shard */
		for (uint64_t i = 0; i < n;) {
			uint64_t len = 1 + test_rng() % (t % 3 ? n : 70);
			if (len > n - i)
				len = n - i;
			wire_out_reset(&a);
			wire_out_reset(&b);
			wire_put_key_bits(&a, keys + i, (uint32_t)len);
			wire_put_key_bits_from(&b, keys + i, (uint32_t)len,
					       words, 0);
			CHECK(!a.failed && !b.failed && a.len == b.len &&
				      !memcmp(a.buf, b.buf, a.len),
			      "case %d: keys %llu..%llu (%llu): the bitmaps "
			      "differ",
			      t, (unsigned long long)keys[i],
			      (unsigned long long)keys[i + len - 1],
			      (unsigned long long)len);
			i += len;
		}
	}
	/* words that start past key 0: bits_base */
	uint64_t k2[3] = { 64 * 1000 + 63, 64 * 1001, 64 * 1003 + 5 };
	uint64_t w2[4] = { 1ull << 63, 1, 0, 1ull << 5 };
	wire_out_reset(&a);
	wire_out_reset(&b);
	wire_put_key_bits(&a, k2, 3);
	wire_put_key_bits_from(&b, k2, 3, w2, 64 * 1000);
	CHECK(a.len == b.len && !memcmp(a.buf, b.buf, a.len),
	      "a bits_base of 64000: the bitmaps differ");
	wire_out_free(&a);
	wire_out_free(&b);
}

static void refused(void)
{
	struct wire_out o;
	struct wire_msg m;
	wire_out_init(&o);
	memset(&m, 0, sizeof m);
	uint64_t w[3] = { 0x5, 0, 0x8000000000000001ull };
#define REFUSED(what)                                                     \
	CHECK(wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m) == -1, \
	      "%s accepted", what)
	pull_raw(&o, 4, 100, w, 3);
	CHECK(wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m) == 0 &&
		      m.n_keys == 4,
	      "a good hand-made bitmap refused");
	pull_raw(&o, 5, 100, w, 3);
	REFUSED("a count above the bits");
	pull_raw(&o, 3, 100, w, 3);
	REFUSED("a count below the bits");
	pull_raw(&o, 0, 100, w, 0);
	REFUSED("an empty bitmap");
	uint64_t w2[3] = { 0x4, 0, 1 };
	pull_raw(&o, 2, 100, w2, 3);
	REFUSED("a first bit not set");
	uint64_t w3[2] = { 0x5, 0 };
	pull_raw(&o, 2, 100, w3, 2);
	REFUSED("a last word of 0");
	pull_raw(&o, 4, WIRE_MAX_KEY - 100, w, 3);
	REFUSED("a last key past WIRE_MAX_KEY");
	pull_raw(&o, 2, WIRE_MAX_KEY, w, 1);
	REFUSED("a base at WIRE_MAX_KEY");
	const uint64_t one = 1;
	pull_frame(&o, 1, 0, 1000000, &one, 1, 0);
	REFUSED("a word count past the frame");
	pull_frame(&o, 1, 7, 1, &one, 1, 1);
	REFUSED("a trailing byte");
	/* the flag where no keys are: a CLOCK, a push naming its pull */
	wire_out_reset(&o);
	wire_begin(&o, WIRE_CLOCK, WIRE_F_BITS);
	wire_put_u64(&o, 1);
	wire_end(&o);
	REFUSED("WIRE_F_BITS on a CLOCK");
	float v[2] = { 1, 2 };
	wire_out_reset(&o);
	wire_begin_push_pulled(&o, 1, 1, 7, 2, 0);
	wire_put_vals(&o, v, 2, 0);
	wire_end(&o);
	o.buf[6] |= WIRE_F_BITS;
	REFUSED("WIRE_F_BITS on a push naming its pull");
#undef REFUSED
	wire_out_free(&o);
	wire_msg_free(&m);
}

/* A PUSH that carries its keys as a bitmap, f16 values too: the keys
 * and values come back as sent. */
static void push_bits(void)
{
	uint64_t keys[600];
	float v[600];
	uint32_t n = 0;
	for (uint64_t k = 1000; k < 1600; k++)
		if (test_rng() % 2 || k == 1000)
			keys[n] = k, v[n] = (float)(int)(test_rng() % 200) / 8, n++;
	struct wire_out o;
	struct wire_msg m;
	wire_out_init(&o);
	memset(&m, 0, sizeof m);
	for (int f16 = 0; f16 < 2; f16++) {
		wire_out_reset(&o);
		wire_begin(&o, WIRE_PUSH,
			   WIRE_F_BITS | (f16 ? WIRE_F_F16 : 0));
		wire_put_u64(&o, 3);
		wire_put_u64(&o, 9);
		wire_put_key_bits(&o, keys, n);
		wire_put_vals(&o, v, n, f16);
		wire_end(&o);
		int rc = wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m);
		CHECK(rc == 0 && m.type == WIRE_PUSH && m.n_keys == n &&
			      m.n_vals == n && m.seq == 9 && m.base == 1000,
		      "push of %u keys as a bitmap (f16 %d): decode %d", n, f16,
		      rc);
		if (rc)
			continue;
		CHECK(!memcmp(m.vals, v, n * sizeof *v),
		      "push values differ (f16 %d)", f16);
		CHECK(wire_msg_list_keys(&m) == 0 &&
			      !memcmp(m.keys, keys, n * sizeof *keys),
		      "push keys differ (f16 %d)", f16);
	}
	wire_out_free(&o);
	wire_msg_free(&m);
}

/* A PULL (vals NULL) or PUSH of keys[0..n) as a bitmap to fd. */
static void send_bits(int fd, struct wire_out *o, uint32_t req,
		      const uint64_t *keys, const float *vals, uint32_t n)
{
	wire_begin(o, vals ? WIRE_PUSH : WIRE_PULL, WIRE_F_BITS);
	if (vals) {
		wire_put_u64(o, 0);
		wire_put_u64(o, req); /* seq */
	} else {
		wire_put_u32(o, req);
		wire_put_u64(o, 0);
	}
	wire_put_key_bits(o, keys, n);
	if (vals)
		wire_put_vals(o, vals, n, 0);
	wire_end(o);
	net_test_send(fd, o);
}

/* The frame read after a bitmap of keys outside the shard must be an
 * ERROR saying so, and the connection must end. */
static void outside(int fd, struct wire_msg *m, const char *what)
{
	int rc = net_test_refused(fd, m, "outside the shard");
	CHECK(!(rc & 1), "%s: no ERROR saying 'outside the shard' (type %d)",
	      what, m->type);
	CHECK(!(rc & 2), "%s: the peer was not dropped", what);
}

/* A real shard (0 of 2: keys [0, 50) of 100) takes bitmap pushes and
 * pulls as lists, and refuses a bitmap that reaches past its range. */
static void real_shard(void)
{
	struct net_test_shard sh;
	struct ps_config pc = { .shard = 0, .n_shards = 2, .staleness = 1 };
	if (net_test_shard_start(&sh, pc)) {
		CHECK(0, "shard did not start");
		return;
	}
	struct wire_out o;
	struct wire_msg m;
	wire_out_init(&o);
	memset(&m, 0, sizeof m);
	int durable;
	int fd = net_test_join(sh.port, 100, &o, &m, &durable);
	CHECK(fd >= 0, "join");
	const uint64_t pushed[4] = { 3, 4, 5, 49 }, pulled[5] = { 3, 4, 6, 7, 49 };
	const float d[4] = { 1, 2, 3, 4 };
	send_bits(fd, &o, 1, pushed, d, 4);
	send_bits(fd, &o, 7, pulled, NULL, 5);
	int rc = net_test_read_frame(fd, &m);
	CHECK(rc == 0 && m.type == WIRE_PULL_REPLY && m.req == 7 &&
		      m.n_vals == 5 && m.vals[0] == 1 && m.vals[1] == 2 &&
		      m.vals[2] == 0 && m.vals[3] == 0 && m.vals[4] == 4,
	      "bitmap pull after a bitmap push: rc %d, %u values", rc,
	      m.n_vals);
	/* a pull's last key, then a push's, one past the range */
	const uint64_t over[3] = { 40, 45, 50 };
	send_bits(fd, &o, 8, over, NULL, 3);
	outside(fd, &m, "a bitmap pull past the shard");
	fd = net_test_join(sh.port, 100, &o, &m, &durable);
	CHECK(fd >= 0, "rejoin");
	send_bits(fd, &o, 2, over, d, 3);
	outside(fd, &m, "a bitmap push past the shard");
	struct wire_stats st;
	ps_server_stats(sh.s, &st);
	CHECK(st.pushes == 1 && st.keys_pushed == 4,
	      "refused push counted: %llu pushes of %llu keys",
	      (unsigned long long)st.pushes,
	      (unsigned long long)st.keys_pushed);
	net_test_shard_stop(&sh);
	wire_out_free(&o);
	wire_msg_free(&m);
}

int main(void)
{
	test_rng_seed(0x9e3779b97f4a7c15ull);
	roundtrip();
	bits_from_words();
	push_bits();
	refused();
	real_shard();
	return TEST_RESULT();
}
