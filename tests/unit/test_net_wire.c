/* test_net_wire.c - frames round-trip, and malformed frames are refused.
 *
 * Encodes every message type and decodes it back; checks the key list
 * compression (delta + varint sizes), float16 rounding, and that truncated,
 * oversized, wrongly versioned, non-ascending and trailing-garbage frames
 * are all refused by the decoder; an answer's values decoded into
 * the caller's array where it asks, and a push's left in its frame.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/f16.h"
#include "net/wire.h"

static int failures;

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, \
				#cond);                                    \
			fprintf(stderr, __VA_ARGS__);                      \
			fputc('\n', stderr);                               \
			failures++;                                        \
		}                                                          \
	} while (0)

static void test_push_roundtrip(int f16)
{
	struct wire_out o;
	struct wire_msg m = { 0 };
	uint64_t keys[] = { 0, 1, 2, 3, 200, 70000, 1ull << 33 };
	float vals[] = { 0.5f, -1.25f, 3.0f, 0.0f, 1e-3f, -7.5f, 2.0f };
	uint32_t n = 7;

	wire_out_init(&o);
	wire_begin(&o, WIRE_PUSH, f16 ? WIRE_F_F16 : 0);
	wire_put_u64(&o, 42);
	wire_put_u64(&o, 77); /* seq */
	wire_put_keys(&o, keys, n);
	wire_put_vals(&o, vals, n, f16);
	CHECK(wire_end(&o) == 0, "wire_end failed");
	int rc = wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m);
	CHECK(rc == 0, "decode push f16=%d: expected 0, got %d", f16, rc);
	CHECK(m.type == WIRE_PUSH && m.clock == 42 && m.seq == 77,
	      "type %d clock %llu seq %llu", m.type,
	      (unsigned long long)m.clock, (unsigned long long)m.seq);
	CHECK(m.n_keys == n && m.n_vals == n, "n_keys %u n_vals %u", m.n_keys,
	      m.n_vals);
	for (uint32_t i = 0; i < n && i < m.n_keys; i++) {
		CHECK(m.keys[i] == keys[i], "key %u: expected %llu got %llu", i,
		      (unsigned long long)keys[i],
		      (unsigned long long)m.keys[i]);
		float tol = f16 ? fabsf(vals[i]) * 1e-3f + 1e-7f : 0;
		CHECK(fabsf(m.vals[i] - vals[i]) <= tol,
		      "val %u: expected %g got %g", i, vals[i], m.vals[i]);
	}
	/* 0,1,2,3 cost one byte each: the gap minus one is 0. */
	size_t want = WIRE_HDR_LEN + 8 + 8 /* clock, seq */ + 1 + 4 +
		      wire_varint_len(196) +
		      wire_varint_len(70000 - 200 - 1) +
		      wire_varint_len((1ull << 33) - 70000 - 1) +
		      n * (f16 ? 2 : 4);
	CHECK(o.len == want, "push size: expected %zu got %zu", want, o.len);
	wire_out_free(&o);
	wire_msg_free(&m);
}

static void test_all_types(void)
{
	struct wire_out o;
	struct wire_msg m = { 0 };
	uint8_t nonce[WIRE_NONCE_LEN], mac[WIRE_MAC_LEN];
	for (int i = 0; i < WIRE_NONCE_LEN; i++)
		nonce[i] = (uint8_t)(i * 7 + 1);
	for (int i = 0; i < WIRE_MAC_LEN; i++)
		mac[i] = (uint8_t)(255 - i);

	wire_out_init(&o);
	wire_begin(&o, WIRE_HELLO, 0);
	wire_put_u32(&o, 2);
	wire_put_u32(&o, 3);
	wire_put_u64(&o, 124);
	wire_put_u64(&o, 9);
	wire_put_bytes(&o, nonce, sizeof nonce);
	CHECK(wire_end(&o) == 0, "end");
	CHECK(wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD_PREAUTH, &m) == 0,
	      "hello");
	CHECK(m.rank == 2 && m.n_workers == 3 && m.dim == 124 && m.clock == 9 &&
		      !memcmp(m.nonce, nonce, sizeof nonce),
	      "hello fields %u %u %llu", m.rank, m.n_workers,
	      (unsigned long long)m.dim);

	/* rank >= n_workers is refused */
	wire_out_reset(&o);
	wire_begin(&o, WIRE_HELLO, 0);
	wire_put_u32(&o, 3);
	wire_put_u32(&o, 3);
	wire_put_u64(&o, 124);
	wire_put_u64(&o, 0);
	wire_put_bytes(&o, nonce, sizeof nonce);
	wire_end(&o);
	CHECK(wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m) == -1,
	      "hello with rank 3 of 3 accepted");

	wire_out_reset(&o);
	wire_begin(&o, WIRE_WELCOME, 0);
	wire_put_u32(&o, 1);
	wire_put_u32(&o, 2);
	wire_put_u64(&o, 62);
	wire_put_u64(&o, 124);
	wire_put_u64(&o, 5);
	wire_put_u8(&o, 1);
	wire_put_bytes(&o, nonce, sizeof nonce);
	wire_put_bytes(&o, mac, sizeof mac);
	wire_end(&o);
	CHECK(wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m) == 0,
	      "welcome");
	CHECK(m.shard == 1 && m.n_shards == 2 && m.lo == 62 && m.hi == 124 &&
		      m.clock == 5 && m.auth == 1 &&
		      !memcmp(m.mac, mac, sizeof mac),
	      "welcome fields");

	uint64_t keys[] = { 5, 9, 10 };
	wire_out_reset(&o);
	wire_begin(&o, WIRE_PULL, 0);
	wire_put_u32(&o, 77);
	wire_put_u64(&o, 12);
	wire_put_keys(&o, keys, 3);
	wire_end(&o);
	CHECK(wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m) == 0, "pull");
	CHECK(m.req == 77 && m.clock == 12 && m.n_keys == 3 && m.keys[2] == 10,
	      "pull fields");

	float v[] = { 1, 2, 3 };
	wire_out_reset(&o);
	wire_begin(&o, WIRE_PULL_REPLY, 0);
	wire_put_u32(&o, 77);
	wire_put_u32(&o, 1);
	wire_put_varint(&o, 3);
	wire_put_vals(&o, v, 3, 0);
	wire_end(&o);
	CHECK(wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m) == 0,
	      "pull reply");
	CHECK(m.req == 77 && m.staleness == 1 && m.n_vals == 3 &&
		      m.vals[2] == 3.0f,
	      "pull reply fields");

	struct wire_stats s = { 3, 10, 11, 12, 13, 14, 15, 16, 2, 1 };
	wire_out_reset(&o);
	wire_put_stats(&o, 4, &s);
	CHECK(wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m) == 0,
	      "stats");
	CHECK(m.req == 4 && !memcmp(&m.stats, &s, sizeof s), "stats fields");

	wire_out_reset(&o);
	wire_put_error(&o, -15, "authentication failed");
	CHECK(wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m) == 0,
	      "error");
	CHECK(m.code == -15 && !strcmp(m.text, "authentication failed"),
	      "error fields: %d '%s'", m.code, m.text);

	wire_out_reset(&o);
	wire_begin(&o, WIRE_GATHER, 0);
	wire_put_u32(&o, 1);
	wire_put_u64(&o, 100);
	wire_put_u32(&o, 50);
	wire_end(&o);
	CHECK(wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m) == 0 &&
		      m.lo == 100 && m.count == 50,
	      "gather");

	wire_out_free(&o);
	wire_msg_free(&m);
}

static void test_malformed(void)
{
	struct wire_out o;
	struct wire_msg m = { 0 };
	uint64_t keys[] = { 1, 2, 3 };
	float v[] = { 1, 2, 3 };

	wire_out_init(&o);
	wire_begin(&o, WIRE_PUSH, 0);
	wire_put_u64(&o, 1);
	wire_put_u64(&o, 1); /* seq */
	wire_put_keys(&o, keys, 3);
	wire_put_vals(&o, v, 3, 0);
	wire_end(&o);
	size_t len = o.len;
	uint8_t *good = malloc(len + 8);
	memcpy(good, o.buf, len);

	/* every truncation is refused */
	for (size_t cut = 0; cut < len; cut++)
		CHECK(wire_decode_frame(good, cut, WIRE_MAX_PAYLOAD, &m) == -1,
		      "truncated to %zu accepted", cut);
	/* trailing garbage inside the payload: bump the length by one */
	memcpy(good, o.buf, len);
	good[len] = 0;
	good[8]++;
	CHECK(wire_decode_frame(good, len + 1, WIRE_MAX_PAYLOAD, &m) == -1,
	      "trailing byte accepted");
	/* bad magic, version, type, flags */
	int offs[] = { 0, 4, 5, 7 };
	for (int i = 0; i < 4; i++) {
		memcpy(good, o.buf, len);
		good[offs[i]] ^= 0x40;
		CHECK(wire_decode_frame(good, len, WIRE_MAX_PAYLOAD, &m) == -1,
		      "header byte %d flipped accepted", offs[i]);
	}
	/* oversized: over the receiver's limit */
	memcpy(good, o.buf, len);
	CHECK(wire_decode_frame(good, len, 8, &m) == -1,
	      "payload over max accepted");
	struct wire_hdr h;
	good[8] = 0xff, good[9] = 0xff, good[10] = 0xff, good[11] = 0x7f;
	CHECK(wire_parse_header(good, WIRE_MAX_PAYLOAD, &h) == -1,
	      "2 GiB length accepted");

	/* a key count larger than the bytes present */
	wire_out_reset(&o);
	wire_begin(&o, WIRE_PULL, 0);
	wire_put_u32(&o, 1);
	wire_put_u64(&o, 1);
	wire_put_varint(&o, 1000000);
	wire_put_varint(&o, 1);
	wire_end(&o);
	CHECK(wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m) == -1,
	      "lying key count accepted");

	/* keys beyond the key space (overflowing gap) */
	wire_out_reset(&o);
	wire_begin(&o, WIRE_PULL, 0);
	wire_put_u32(&o, 1);
	wire_put_u64(&o, 1);
	wire_put_varint(&o, 2);
	wire_put_varint(&o, 5);
	wire_put_varint(&o, UINT64_MAX - 2);
	wire_end(&o);
	CHECK(wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m) == -1,
	      "overflowing key gap accepted");

	/* an 11-byte varint */
	wire_out_reset(&o);
	wire_begin(&o, WIRE_PULL, 0);
	wire_put_u32(&o, 1);
	wire_put_u64(&o, 1);
	for (int i = 0; i < 11; i++)
		wire_put_u8(&o, 0x81);
	wire_put_u8(&o, 0);
	wire_end(&o);
	CHECK(wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m) == -1,
	      "overlong varint accepted");

	/* push with fewer values than keys */
	wire_out_reset(&o);
	wire_begin(&o, WIRE_PUSH, 0);
	wire_put_u64(&o, 1);
	wire_put_u64(&o, 1); /* seq */
	wire_put_keys(&o, keys, 3);
	wire_put_vals(&o, v, 2, 0);
	wire_end(&o);
	CHECK(wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m) == -1,
	      "short values accepted");

	/* error text without its NUL room */
	wire_out_reset(&o);
	wire_begin(&o, WIRE_ERROR, 0);
	wire_put_u32(&o, 1);
	wire_put_varint(&o, 300);
	for (int i = 0; i < 300; i++)
		wire_put_u8(&o, 'a');
	wire_end(&o);
	CHECK(wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m) == -1,
	      "300-byte error text accepted");

	free(good);
	wire_out_free(&o);
	wire_msg_free(&m);
}

static void test_f16(void)
{
	struct {
		float f;
		uint16_t h;
	} cases[] = {
		{ 0.0f, 0x0000 },     { -0.0f, 0x8000 },   { 1.0f, 0x3c00 },
		{ -2.0f, 0xc000 },    { 65504.0f, 0x7bff }, { 65520.0f, 0x7c00 },
		{ 1e9f, 0x7c00 },     { 5.9604645e-8f, 0x0001 },
		{ 2.9e-8f, 0x0000 },  { 6.1035156e-5f, 0x0400 },
		{ 1.0009766f, 0x3c01 }, /* exactly representable */
		{ 1.00048828125f, 0x3c00 }, /* tie: rounds to even */
		{ 1.00146484375f, 0x3c02 }, /* tie: rounds to even (up) */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint16_t h = f16_from_f32(cases[i].f);
		CHECK(h == cases[i].h, "f16(%g): expected %04x got %04x",
		      cases[i].f, cases[i].h, h);
	}
	/* every finite half survives a round trip through float */
	for (uint32_t h = 0; h < 0x10000; h++) {
		if ((h & 0x7c00) == 0x7c00)
			continue;
		float f = f16_to_f32((uint16_t)h);
		CHECK(f16_from_f32(f) == h, "round trip of %04x gave %04x",
		      h, f16_from_f32(f));
	}
	CHECK(isnan(f16_to_f32(f16_from_f32(NAN))), "NaN lost");
}

/* A PULL_REPLY of exactly n_into values lands in the caller's array, in
 * float32 and float16; one of another count, and frames of other types,
 * keep to vals and leave that array alone. */
static void test_reply_in_place(void)
{
	struct wire_out o;
	struct wire_msg m = { 0 };
	float v[] = { 1.5f, -2.0f, 0.25f }, into[5] = { 9, 9, 9, 9, 9 };
	wire_out_init(&o);
	for (int f16 = 0; f16 < 2; f16++) {
		for (uint32_t n = 2; n <= 3; n++) {
			for (int i = 0; i < 5; i++)
				into[i] = 9;
			wire_out_reset(&o);
			wire_begin(&o, WIRE_PULL_REPLY, f16 ? WIRE_F_F16 : 0);
			wire_put_u32(&o, 5);
			wire_put_u32(&o, 0);
			wire_put_varint(&o, n);
			wire_put_vals(&o, v, n, f16);
			wire_end(&o);
			m.into = into + 1;
			m.n_into = 3;
			CHECK(wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD,
						&m) == 0,
			      "reply of %u, f16 %d", n, f16);
			CHECK(m.into == into + 1 && m.n_into == 3,
			      "the caller's place was not kept");
			CHECK(m.in_place == (n == 3) && m.n_vals == n,
			      "%u values, f16 %d: in_place %d", n, f16,
			      m.in_place);
			const float *got = m.in_place ? into + 1 : m.vals;
			for (uint32_t i = 0; i < n; i++)
				CHECK(got[i] == v[i], "value %u: %g", i, got[i]);
			CHECK(into[0] == 9 && into[4] == 9 &&
				      (n == 3 || into[1] == 9),
			      "written outside the answer's place");
		}
	}
	uint64_t k[] = { 1, 2, 3 };
	wire_out_reset(&o);
	wire_begin(&o, WIRE_PUSH, 0);
	wire_put_u64(&o, 1);
	wire_put_u64(&o, 1);
	wire_put_keys(&o, k, 3);
	wire_put_vals(&o, v, 3, 0);
	wire_end(&o);
	into[1] = 9;
	CHECK(wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m) == 0 &&
		      !m.in_place && m.vals[0] == v[0] && into[1] == 9,
	      "a push's values went to the answer's place");
	wire_out_free(&o);
	wire_msg_free(&m);
}

/* A push's values left in its payload where the caller allows it
 * (borrow_push_vals, float32 on a little-endian host): push_vals points
 * there, at whatever alignment the frame puts them; float16 values, or a
 * caller that does not allow it, are decoded into vals. Either way a
 * values section cut short is refused. */
static void test_push_vals_borrowed(void)
{
	struct wire_out o;
	struct wire_msg m = { 0 };
	uint64_t k[] = { 3, 9, 10 };
	float v[] = { 1.5f, -2.0f, 0.25f };
	wire_out_init(&o);
	for (int borrow = 0; borrow < 2; borrow++) {
		for (int f16 = 0; f16 < 2; f16++) {
			for (int pulled = 0; pulled < 2; pulled++) {
				wire_out_reset(&o);
				if (pulled) {
					wire_begin_push_pulled(&o, 4, 8, 11, 3,
							       f16);
				} else {
					wire_begin(&o, WIRE_PUSH,
						   f16 ? WIRE_F_F16 : 0);
					wire_put_u64(&o, 4);
					wire_put_u64(&o, 8);
					wire_put_keys(&o, k, 3);
				}
				wire_put_vals(&o, v, 3, f16);
				wire_end(&o);
				m.borrow_push_vals = (uint8_t)borrow;
				CHECK(wire_decode_frame(o.buf, o.len,
							WIRE_MAX_PAYLOAD,
							&m) == 0,
				      "borrow %d f16 %d pulled %d", borrow, f16,
				      pulled);
				CHECK(m.borrow_push_vals == borrow,
				      "the caller's choice was not kept");
				const uint8_t *at = m.push_vals;
				int in_frame = at >= o.buf && at < o.buf + o.len;
				CHECK(in_frame == (borrow && !f16 && WIRE_LE_HOST),
				      "borrow %d f16 %d: values %s the frame",
				      borrow, f16, in_frame ? "in" : "not in");
				CHECK(in_frame || m.push_vals == m.vals,
				      "copied values not in vals");
				CHECK(m.n_vals == 3, "%u values", m.n_vals);
				for (uint32_t i = 0; i < 3; i++) {
					float f;
					memcpy(&f, at + 4 * i, 4);
					CHECK(f == v[i], "value %u: %g", i, f);
				}
				/* the last value cut off (the length says so) */
				uint32_t len = (uint32_t)(o.len - WIRE_HDR_LEN -
							  (f16 ? 2 : 4));
				for (int b = 0; b < 4; b++)
					o.buf[8 + b] = (uint8_t)(len >> (8 * b));
				CHECK(wire_decode_frame(o.buf, o.len -
							(f16 ? 2 : 4),
							WIRE_MAX_PAYLOAD, &m) != 0,
				      "a short values section was taken "
				      "(borrow %d f16 %d)", borrow, f16);
			}
		}
	}
	wire_out_free(&o);
	wire_msg_free(&m);
}

int main(void)
{
	test_push_roundtrip(0);
	test_push_roundtrip(1);
	test_all_types();
	test_malformed();
	test_f16();
	test_reply_in_place();
	test_push_vals_borrowed();
	if (failures) {
		fprintf(stderr, "test_net_wire: %d failures\n", failures);
		return 1;
	}
	return 0;
}
