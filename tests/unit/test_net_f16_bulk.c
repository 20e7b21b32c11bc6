/* test_net_f16_bulk.c - the float16 arrays of net/f16.h (F16C where the
 * CPU has it, and the portable code forced) against the one-value
 * reference, bit for bit (a NaN only has to stay a NaN): every half; floats
 * on a strided sweep of all 2^32 patterns and at every rounding boundary
 * of every exponent; lengths 0..33 at unaligned addresses, nothing written
 * past the end; all of it again with MXCSR's FTZ and DAZ on. Where the
 * compiler has _Float16, the reference is checked against its conversion.
 *
 * F16_STRIDE=1 build/tests/test_net_f16_bulk checks all 2^32 floats (on
 * every core), off the suite; the suite's own stride keeps it ~1 s.
 */
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "net/f16.h"
#include "testutil.h"

#define STRIDE 37 /* odd: every low mantissa pattern comes round */
#define CHUNK 4096

static int is_nan16(uint16_t h)
{
	return (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
}

static int same16(uint16_t got, uint16_t want)
{
	return got == want || (is_nan16(got) && is_nan16(want));
}

static uint32_t bits(float f)
{
	uint32_t b;
	memcpy(&b, &f, 4);
	return b;
}

static float from_bits(uint32_t b)
{
	float f;
	memcpy(&f, &b, 4);
	return f;
}

static int same32(float got, float want)
{
	return bits(got) == bits(want) || (isnan(got) && isnan(want));
}

/* Mismatches of f16_encode and f16_round on in[0..n) against the
 * reference; the first few are printed. Thread-safe (the sweep's). */
static uint64_t check_batch(const float *in, size_t n)
{
	uint8_t out[2 * CHUNK];
	float r[CHUNK];
	uint64_t bad = 0;
	int finite = 1;
	memcpy(r, in, n * sizeof *r);
	f16_encode(out, in, n);
	int got_finite = f16_round(r, n);
	for (size_t i = 0; i < n; i++) {
		uint16_t want = f16_from_f32(in[i]);
		uint16_t got = (uint16_t)(out[2 * i] | out[2 * i + 1] << 8);
		float back = f16_to_f32(want);
		finite &= isfinite(back) != 0;
		if (!same16(got, want) || !same32(r[i], back)) {
			if (bad++ < 5)
				fprintf(stderr,
					"FAIL %08x: encode %04x round %08x, "
					"want %04x %08x\n",
					bits(in[i]), got, bits(r[i]), want,
					bits(back));
		}
	}
	if (got_finite != finite) {
		fprintf(stderr, "FAIL f16_round said finite=%d, want %d\n",
			got_finite, finite);
		bad++;
	}
	return bad;
}

/* Every stride-th float pattern from 0, in chunks over all threads. */
static uint64_t sweep(uint64_t stride)
{
	uint64_t per = CHUNK * stride, chunks = ((1ull << 32) + per - 1) / per;
	uint64_t bad = 0;
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : bad)
	for (uint64_t c = 0; c < chunks; c++) {
		float in[CHUNK];
		size_t n = 0;
		for (uint64_t x = c * per; n < CHUNK && x < (1ull << 32);
		     x += stride)
			in[n++] = from_bits((uint32_t)x);
		bad += check_batch(in, n);
	}
	return bad;
}

/* Floats at every rounding boundary of every exponent, both signs: for
 * each bit b of the mantissa, 2^b, with all bits above it set or with one
 * above it set (the ties that round to even up and down, and the carries
 * into the next exponent and into infinity), and one either side of each;
 * then the named edges. @return how many written (at most CHUNK). */
static size_t boundaries(float *out)
{
	static const uint32_t named[] = {
		0x00000000, 0x80000000, 0x00000001, 0x007fffff, 0x00800000,
		0x33000000, 0x33000001, 0x32ffffff, 0x33400000, 0x33800000,
		0x387fc000, 0x387fe000, 0x387fffff, 0x38800000,
		0x477fe000, 0x477fefff, 0x477ff000, 0x477ff001, 0x47800000,
		0x7f7fffff, 0x7f800000, 0x7f800001, 0x7fbfffff, 0x7fc00000,
		0x7fffffff, 0x3f800000, 0x3f801000, 0x3f803000,
	};
	size_t n = 0;
	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
		out[n++] = from_bits(named[i]);
		out[n++] = from_bits(named[i] | 0x80000000u);
	}
	for (uint32_t e = 0; e < 256; e++)
		for (uint32_t b = 0; b < 23; b++) {
			uint32_t one = 1u << b;
			uint32_t above = 0x7fffffu & ~(2 * one - 1);
			uint32_t m[3] = { one, above | one,
					  (one << 1 | one) & 0x7fffffu };
			for (int k = 0; k < 3; k++)
				for (int d = -1; d <= 1; d++) {
					uint32_t x = e << 23 |
						     ((m[k] + (uint32_t)d) &
						      0x7fffffu);
					if (n + 2 > CHUNK)
						return n;
					out[n++] = from_bits(x);
					out[n++] = from_bits(x | 0x80000000u);
				}
		}
	return n;
}

/* Every half through f16_decode against the reference. */
static void every_half(const char *mode)
{
	static uint8_t in[2 * 65536];
	static float out[65536];
	for (uint32_t h = 0; h < 65536; h++) {
		in[2 * h] = (uint8_t)h;
		in[2 * h + 1] = (uint8_t)(h >> 8);
	}
	f16_decode(out, in, 65536);
	int bad = 0;
	for (uint32_t h = 0; h < 65536; h++)
		if (!same32(out[h], f16_to_f32((uint16_t)h)) && bad++ < 5)
			CHECK(0, "%s: half %04x decoded as %08x, want %08x",
			      mode, h, bits(out[h]),
			      bits(f16_to_f32((uint16_t)h)));
	/* the reference itself: every non-NaN half survives the round trip */
	for (uint32_t h = 0; h < 65536; h++)
		if (!is_nan16((uint16_t)h))
			CHECK(f16_from_f32(f16_to_f32((uint16_t)h)) == h,
			      "round trip of %04x", h);
}

static void at_boundaries(const char *mode)
{
	static float in[CHUNK];
	size_t n = boundaries(in);
	CHECK(n > 2000, "only %zu boundary values", n);
	CHECK(check_batch(in, n) == 0, "%s: boundary values", mode);
#ifdef __FLT16_MAX__
	for (size_t i = 0; i < n; i++) {
		_Float16 h = (_Float16)in[i];
		uint16_t hb;
		memcpy(&hb, &h, 2);
		CHECK(same16(f16_from_f32(in[i]), hb),
		      "reference of %08x: %04x, the compiler's %04x",
		      bits(in[i]), f16_from_f32(in[i]), hb);
	}
#endif
}

/* Lengths 0..33 (the vector blocks and every tail) at addresses off the
 * vector alignment: float arrays by whole floats, halves by bytes. */
static void lengths(const char *mode)
{
	float src[48], r[48], base[64];
	uint8_t dst[80], hin[80];
	uint64_t keys[40];
	uint64_t s = 7;
	for (int i = 0; i < 64; i++)
		base[i] = (float)((int64_t)(test_lcg(&s) % 200001) - 100000) /
			  3.0f;
	base[3] = 1e9f;
	base[5] = 3e-6f;
	for (size_t n = 0; n <= 33; n++)
		for (size_t at = 0; at < 8; at++) {
			for (size_t i = 0; i < n; i++) {
				src[at + i] = base[(i * 7 + at) % 64];
				keys[i] = 10 + (i * 13 + at) % 64;
			}
			size_t b = at % 4; /* byte offset of the halves */
			memset(dst, 0xa5, sizeof dst);
			f16_encode(dst + b, src + at, n);
			int ok = 1;
			for (size_t i = 0; i < sizeof dst; i++) {
				uint16_t want = 0xa5;
				if (i >= b && i < b + 2 * n) {
					uint16_t h = f16_from_f32(
						src[at + (i - b) / 2]);
					want = (i - b) % 2 ? h >> 8 : h & 0xff;
				}
				ok &= dst[i] == want;
			}
			CHECK(ok, "%s: encode of %zu at +%zu", mode, n, at);

			memset(dst, 0xa5, sizeof dst);
			f16_encode_at(dst + b, base, keys, n, 10);
			ok = 1;
			for (size_t i = 0; i < sizeof dst; i++) {
				uint16_t want = 0xa5;
				if (i >= b && i < b + 2 * n) {
					uint16_t h = f16_from_f32(
						base[keys[(i - b) / 2] - 10]);
					want = (i - b) % 2 ? h >> 8 : h & 0xff;
				}
				ok &= dst[i] == want;
			}
			CHECK(ok, "%s: encode_at of %zu at +%zu", mode, n, at);

			memcpy(hin, dst, sizeof hin);
			for (size_t i = 0; i < 48; i++)
				r[i] = -1.0f;
			f16_decode(r + at, hin + b, n);
			ok = 1;
			for (size_t i = 0; i < 48; i++) {
				float want = -1.0f;
				if (i >= at && i < at + n)
					want = f16_to_f32(f16_from_f32(
						base[keys[i - at] - 10]));
				ok &= same32(r[i], want);
			}
			CHECK(ok, "%s: decode of %zu at +%zu", mode, n, at);

			for (size_t i = 0; i < 48; i++)
				r[i] = i < at || i >= at + n ? -1.0f : src[i];
			int fin = f16_round(r + at, n);
			ok = 1;
			int want_fin = 1;
			for (size_t i = 0; i < 48; i++) {
				float want = -1.0f;
				if (i >= at && i < at + n) {
					want = f16_to_f32(f16_from_f32(src[i]));
					want_fin &= isfinite(want) != 0;
				}
				ok &= same32(r[i], want);
			}
			CHECK(ok && fin == want_fin,
			      "%s: round of %zu at +%zu (finite %d, want %d)",
			      mode, n, at, fin, want_fin);
		}
}

static void all_checks(const char *mode)
{
	every_half(mode);
	at_boundaries(mode);
	lengths(mode);
	uint64_t bad = sweep(STRIDE);
	CHECK(bad == 0, "%s: %llu of the strided sweep differ", mode,
	      (unsigned long long)bad);
}

int main(void)
{
	const char *all = getenv("F16_STRIDE");
	if (all) {
		uint64_t stride = strtoull(all, NULL, 10);
		int vec = f16_use_vector(1);
		uint64_t bad = sweep(stride ? stride : 1);
		printf("%s: every %llu-th of 2^32 floats, %llu differ from the "
		       "reference\n",
		       vec ? "F16C" : "portable (no F16C here)",
		       (unsigned long long)(stride ? stride : 1),
		       (unsigned long long)bad);
		return bad != 0;
	}
	int vec = f16_use_vector(1);
	all_checks(vec ? "F16C" : "portable");
	f16_use_vector(0);
	all_checks("portable, forced");
#if defined(__x86_64__) || defined(__i386__)
	/* Flush-to-zero and denormals-are-zero, as fast-math code sets them. */
	unsigned csr = _mm_getcsr();
	_mm_setcsr(csr | 0x8040);
	f16_use_vector(1);
	every_half("FTZ+DAZ");
	at_boundaries("FTZ+DAZ");
	_mm_setcsr(csr);
#endif
	f16_use_vector(1);
	if (!vec)
		printf("no F16C on this CPU: the portable code only\n");
	return TEST_RESULT();
}
