/* test_net_wire_fast.c - the key lists' word-at-a-time decode and block
 * encode, and the values' whole copies, give exactly what a byte-at-a-time
 * reading of the format gives.
 *
 * The reference here is written from wire.h's description alone (varint
 * count, first key, gaps minus one; keys below WIRE_MAX_KEY; nothing left
 * over): it encodes the lists and judges every frame, and the library must
 * agree on the bytes, the verdict and the keys: on random lists whose gaps
 * cross every varint length, on those lists mutated (bits flipped, bytes
 * cut or added, counts that lie), and on frames made to hit the fast
 * path's edges: a continuation bit at each byte of a word, a list ending
 * mid-word (with a push's values right behind it), keys running into
 * WIRE_MAX_KEY inside a word of one-byte gaps, over-long varints.
 */
#include <string.h>

#include "net/wire.h"
#include "testutil.h"

static uint64_t seed = 12345;

static uint64_t rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

/* ------------------------------------------------------- the reference */

static size_t ref_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		p[n++] = (uint8_t)(b | (v ? 0x80 : 0));
	} while (v);
	return n;
}

/* Reads a varint at *at (< len): @return 0, or -1 if it runs past len,
 * takes over 10 bytes or over 64 bits. */
static int ref_read(const uint8_t *p, size_t len, size_t *at, uint64_t *v)
{
	*v = 0;
	for (int i = 0; i < 10; i++) {
		if (*at >= len)
			return -1;
		uint8_t b = p[(*at)++];
		if (i == 9 && b > 1)
			return -1;
		*v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

/* A PULL payload (req u32, clock u64, keys) or, vals, a PUSH payload
 * (clock, seq, keys, f32 values), judged by the format's rules. @return
 * 0 with out[*n], or -1. */
static int ref_decode(const uint8_t *p, size_t len, int vals, uint64_t *out,
		      uint64_t *n)
{
	size_t at = 12 + (vals ? 4 : 0);
	uint64_t count, key = 0;
	if (len < at || ref_read(p, len, &at, &count) || count > len - at)
		return -1;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t d;
		if (ref_read(p, len, &at, &d))
			return -1;
		if (i == 0)
			key = d;
		else if (d >= WIRE_MAX_KEY || key + d + 1 >= WIRE_MAX_KEY)
			return -1;
		else
			key += d + 1;
		if (key >= WIRE_MAX_KEY)
			return -1;
		out[i] = key;
	}
	*n = count;
	if (vals && (len - at) / 4 < count)
		return -1;
	at += vals ? count * 4 : 0;
	return at == len ? 0 : -1;
}

/* A frame of the payload p[0..len): PUSH (vals) or PULL. */
static size_t frame(uint8_t *f, const uint8_t *p, size_t len, int vals)
{
	struct wire_out o;
	wire_out_init(&o);
	wire_begin(&o, vals ? WIRE_PUSH : WIRE_PULL, 0);
	wire_put_bytes(&o, p, len);
	wire_end(&o);
	memcpy(f, o.buf, o.len);
	size_t n = o.len;
	wire_out_free(&o);
	return n;
}

/* Decodes frame f with the library and p with the reference: the same
 * verdict, and the same keys where both accept. */
static void agree(const uint8_t *f, size_t flen, const uint8_t *p,
		  size_t len, int vals, const char *what)
{
	static uint64_t want[1 << 17];
	static struct wire_msg m;
	uint64_t n = 0;
	int ref = ref_decode(p, len, vals, want, &n);
	int rc = wire_decode_frame(f, flen, WIRE_MAX_PAYLOAD, &m);
	CHECK((rc == 0) == (ref == 0), "%s: library %d, reference %d", what,
	      rc, ref);
	if (rc || ref)
		return;
	CHECK(m.n_keys == n, "%s: %u keys, reference %llu", what, m.n_keys,
	      (unsigned long long)n);
	CHECK(m.n_keys != n || !memcmp(m.keys, want, n * 8),
	      "%s: keys differ", what);
}

/* A payload's header part: PULL req + clock, or PUSH clock + seq. */
static size_t head(uint8_t *p, int vals)
{
	memset(p, 0x11, 12 + (vals ? 4 : 0));
	return 12 + (vals ? 4 : 0);
}

/* ------------------------------------------------------------- the tests */

/* A gap of varint length 1..6 (keys stay far below 2^40 with the caller's
 * counts), one-byte gaps most often, as in a dense list. */
static uint64_t gap(void)
{
	unsigned len = rnd() % 3 ? 1 : 1 + (unsigned)(rnd() % 6);
	uint64_t lo = len == 1 ? 0 : 1ull << (7 * (len - 1));
	uint64_t span = (1ull << (7 * len)) - lo;
	if (len == 6)
		span = 1ull << 30; /* 2^35 + below 2^30: room for the others */
	return lo + rnd() % span;
}

static uint64_t keys[4096];
static uint8_t pay[1 << 17], fr[(1 << 17) + 64];

/* Random lists: the library's encoding is the reference's, byte for byte,
 * and decodes back to the keys; then each mutated copy is judged alike. */
static void random_lists(void)
{
	for (int t = 0; t < 400; t++) {
		uint32_t n = (uint32_t)(rnd() % (t < 50 ? 24 : 4000));
		uint64_t k = rnd() % 300;
		for (uint32_t i = 0; i < n; i++) {
			keys[i] = k;
			uint64_t g = gap();
			k += (g < WIRE_MAX_KEY / 2 - k ? g : rnd() % 128) + 1;
		}
		int vals = t & 1;
		size_t len = head(pay, vals);
		len += ref_varint(pay + len, n);
		for (uint32_t i = 0; i < n; i++)
			len += ref_varint(pay + len,
					  i ? keys[i] - keys[i - 1] - 1 : keys[0]);
		for (uint32_t i = 0; vals && i < n; i++, len += 4)
			memset(pay + len, (int)(rnd() % 128), 4);

		struct wire_out o;
		wire_out_init(&o);
		wire_begin(&o, vals ? WIRE_PUSH : WIRE_PULL, 0);
		wire_put_bytes(&o, pay, head(pay, vals));
		wire_put_keys(&o, keys, n);
		if (vals)
			wire_put_bytes(&o, pay + len - 4 * n, 4 * (size_t)n);
		CHECK(wire_end(&o) == 0, "encode");
		CHECK(o.len == WIRE_HDR_LEN + len &&
			      !memcmp(o.buf + WIRE_HDR_LEN, pay, len),
		      "list %d: encoding differs from the reference", t);
		agree(o.buf, o.len, pay, len, vals, "random list");
		wire_out_free(&o);

		for (int mtry = 0; mtry < 12; mtry++) {
			static uint8_t mut[1 << 17];
			size_t ml = len;
			memcpy(mut, pay, len);
			size_t h = head(pay, vals), at = h + rnd() % (len - h + 1);
			switch (mtry % 4) {
			case 0: /* flip bits (the count's too) */
				for (int b = 0; b < 3; b++)
					mut[h + rnd() % (len - h)] ^=
						(uint8_t)(1u << (rnd() % 8));
				break;
			case 1: /* cut */
				ml = at;
				break;
			case 2: /* insert a byte */
				memmove(mut + at + 1, mut + at, len - at);
				mut[at] = (uint8_t)rnd();
				ml++;
				break;
			default: /* a count that lies (a byte, so <= 127) */
				mut[h] = (uint8_t)(rnd() % 128);
			}
			size_t fl = frame(fr, mut, ml, vals);
			agree(fr, fl, mut, ml, vals, "mutated list");
		}
	}
}

/* One payload from raw varints v[0..nv) (count first), then extra bytes. */
static size_t raw(uint8_t *p, int vals, const uint64_t *v, size_t nv,
		  const uint8_t *extra, size_t ne)
{
	size_t len = head(p, vals);
	for (size_t i = 0; i < nv; i++)
		len += ref_varint(p + len, v[i]);
	memcpy(p + len, extra, ne);
	return len + ne;
}

static void judge(const uint8_t *p, size_t len, int vals, const char *what)
{
	size_t fl = frame(fr, p, len, vals);
	agree(fr, fl, p, len, vals, what);
}

/* A two-byte gap after 0..15 one-byte ones: its continuation bit at each
 * byte of a word. */
static void continuation_at_each_byte(void)
{
	uint64_t v[40];
	for (int pos = 0; pos < 16; pos++) {
		size_t nv = 0;
		v[nv++] = (uint64_t)pos + 12; /* count */
		v[nv++] = 5;
		for (int i = 0; i < pos; i++)
			v[nv++] = (uint64_t)(i * 37 % 128);
		v[nv++] = 300;
		for (int i = 0; i < 10; i++)
			v[nv++] = 1;
		size_t len = raw(pay, 0, v, nv, NULL, 0);
		judge(pay, len, 0, "continuation bit in a word");
		static struct wire_msg m;
		CHECK(wire_decode_frame(fr, frame(fr, pay, len, 0),
					WIRE_MAX_PAYLOAD, &m) == 0,
		      "continuation at byte %d refused", pos);
		wire_msg_free(&m);
	}
}

/* Lists of 1..20 one-byte gaps ending the frame (PULL) or followed by a
 * push's values whose bytes look like one-byte gaps too: the words read
 * run past the list, which must end at its count. Counts one too many
 * and one too few are refused. */
static void ending_mid_word(void)
{
	uint64_t v[40];
	uint8_t extra[100];
	memset(extra, 0x01, sizeof extra);
	for (int vals = 0; vals < 2; vals++)
		for (int n = 1; n <= 20; n++)
			for (int lie = -1; lie <= 1; lie++) {
				size_t nv = 0;
				v[nv++] = (uint64_t)(n + lie);
				v[nv++] = 1000;
				for (int i = 1; i < n; i++)
					v[nv++] = (uint64_t)(i % 3);
				size_t len = raw(pay, vals, v, nv, extra,
						 vals ? 4 * (size_t)n : 0);
				judge(pay, len, vals, "list ending mid-word");
				static struct wire_msg m;
				int rc = wire_decode_frame(
					fr, frame(fr, pay, len, vals),
					WIRE_MAX_PAYLOAD, &m);
				CHECK((rc == 0) == (lie == 0),
				      "n %d lie %d vals %d: rc %d", n, lie, vals,
				      rc);
				wire_msg_free(&m);
			}
}

/* Keys that reach WIRE_MAX_KEY inside a run of one-byte gaps, from first
 * keys all around the point where the fast path stops. */
static void max_key_in_a_word(void)
{
	uint64_t v[64];
	int ok = 0, refused = 0;
	/* 40 gaps add 980: lists from 2000 below the limit pass */
	for (uint64_t back = 1; back <= 2000; back += 7) {
		size_t nv = 0;
		v[nv++] = 41;
		v[nv++] = WIRE_MAX_KEY - back;
		for (int i = 0; i < 40; i++)
			v[nv++] = (uint64_t)(i % 2 ? 47 : 0);
		size_t len = raw(pay, 0, v, nv, NULL, 0);
		judge(pay, len, 0, "keys reaching WIRE_MAX_KEY");
		static struct wire_msg m;
		if (wire_decode_frame(fr, frame(fr, pay, len, 0),
				      WIRE_MAX_PAYLOAD, &m))
			refused++;
		else
			ok++;
		wire_msg_free(&m);
	}
	CHECK(ok > 0 && refused > 0, "%d accepted, %d refused", ok, refused);
	/* the last key one below the limit is fine, at it is not */
	for (int last = 0; last < 2; last++) {
		size_t nv = 0;
		v[nv++] = 9;
		v[nv++] = WIRE_MAX_KEY - 9 + (uint64_t)last;
		for (int i = 0; i < 8; i++)
			v[nv++] = 0;
		size_t len = raw(pay, 0, v, nv, NULL, 0);
		static struct wire_msg m;
		int rc = wire_decode_frame(fr, frame(fr, pay, len, 0),
					   WIRE_MAX_PAYLOAD, &m);
		CHECK((rc == 0) == !last, "last key %s the limit: rc %d",
		      last ? "at" : "below", rc);
		CHECK(rc || m.keys[8] == WIRE_MAX_KEY - 1, "last key %llu",
		      (unsigned long long)m.keys[8]);
		judge(pay, len, 0, "last key by the limit");
		wire_msg_free(&m);
	}
}

/* Over-long varints: padded zeros are the same value (LEB128 allows
 * them), a tenth byte over 1 and an eleventh byte are refused; as a PULL
 * (the list ends the frame: read byte by byte) and as a PUSH (values
 * behind it: read unchecked, 10 bytes being left). */
static void long_varints(void)
{
	static const uint8_t cases[][16] = {
		{ 3, 0x85, 0x80, 0x00, 0x80, 0x00, 0x81, 0x80, 0x80, 0x00 },
		{ 2, 5, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		  0x01 },
		{ 2, 5, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
		  0x02 },
		{ 2, 5, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
		  0x80, 0x00 },
		{ 2, 5, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f },
		{ 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
		  0x80, 0x80, 0x80, 0x80, 0x80, 0x80 },
	};
	static const size_t lens[] = { 10, 12, 12, 13, 8, 16 };
	for (size_t c = 0; c < sizeof lens / sizeof *lens; c++)
		for (int vals = 0; vals < 2; vals++) {
			size_t len = head(pay, vals);
			memcpy(pay + len, cases[c], lens[c]);
			len += lens[c];
			size_t tail = vals ? 4 * (size_t)(cases[c][0] & 0x7f) : 0;
			memset(pay + len, 0, tail);
			judge(pay, len + tail, vals, "long varint");
		}
}

/* Float32 values go out and come back bit for bit (NaN payloads, -0,
 * subnormals, infinities), as little-endian bytes, also gathered. */
static void values_bit_exact(void)
{
	static const uint32_t bits[] = { 0x00000000, 0x80000000, 0x7fc00001,
					 0xffa00005, 0x7f800000, 0xff800000,
					 0x00000001, 0x807fffff, 0x3f800000,
					 0xc2f6e979 };
	enum { N = sizeof bits / sizeof *bits };
	float v[N], base[2 * N];
	uint64_t k[N];
	memcpy(v, bits, sizeof v);
	for (int i = 0; i < N; i++) {
		k[i] = (uint64_t)(100 + 2 * i);
		memcpy(&base[2 * i], &bits[i], 4);
		base[2 * i + 1] = 9;
	}
	struct wire_out o;
	wire_out_init(&o);
	wire_begin(&o, WIRE_PUSH, 0);
	wire_put_u64(&o, 1);
	wire_put_u64(&o, 2);
	wire_put_keys(&o, k, N);
	size_t at = o.len;
	wire_put_vals(&o, v, N, 0);
	size_t at2 = o.len;
	wire_put_vals_at(&o, base, k, N, 100, 0);
	for (int i = 0; i < N; i++)
		for (int b = 0; b < 4; b++) {
			uint8_t want = (uint8_t)(bits[i] >> (8 * b));
			CHECK(o.buf[at + 4 * (size_t)i + (size_t)b] == want &&
				      o.buf[at2 + 4 * (size_t)i + (size_t)b] == want,
			      "value %d byte %d", i, b);
		}
	o.len = at2; /* the gathered copy was only to compare */
	CHECK(wire_end(&o) == 0, "encode");
	struct wire_msg m = { 0 };
	CHECK(wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m) == 0 &&
		      m.n_vals == N && !memcmp(m.vals, bits, sizeof bits),
	      "values back bit for bit");
	wire_out_free(&o);
	wire_msg_free(&m);
}

int main(void)
{
	random_lists();
	continuation_at_each_byte();
	ending_mid_word();
	max_key_in_a_word();
	long_varints();
	values_bit_exact();
	return TEST_RESULT();
}
