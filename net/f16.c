/* f16.c - IEEE half precision: one value in portable integer code (the
 * reference), arrays through F16C where the CPU has it (f16.h).
 *
 * The F16C instructions give the reference's bits for every non-NaN value
 * whatever MXCSR says: vcvtps2ph takes its rounding from the immediate
 * (0: to nearest even), not from MXCSR.RC, and ignores FTZ (subnormal
 * halves come out as subnormals); a float subnormal read as zero under DAZ
 * rounds to the same signed zero it would anyway; vcvtph2ps makes every
 * half, subnormals included, exactly. tests/unit/test_net_f16_bulk.c
 * checks all of this against the reference, with FTZ and DAZ on as well.
 */
#include <math.h>
#include <string.h>

#include "net/f16.h"

/* ------------------------------------------------------ one value */

uint16_t f16_from_f32(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000;
	uint32_t mant = x & 0x7fffff;
	int32_t exp = (int32_t)((x >> 23) & 0xff);

	if (exp == 255) /* inf stays inf, NaN stays a (quiet) NaN */
		return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
	int32_t e = exp - 127 + 15;
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (e <= 0) {
		/* Subnormal half: value = h * 2^-24 with h = m >> (14 - e). */
		if (e < -10)
			return (uint16_t)sign;
		mant |= 0x800000;
		uint32_t shift = (uint32_t)(14 - e);
		uint32_t h = mant >> shift;
		uint32_t rem = mant & ((1u << shift) - 1);
		uint32_t half = 1u << (shift - 1);
		if (rem > half || (rem == half && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
	uint32_t h = (uint32_t)e << 10 | mant >> 13;
	uint32_t rem = mant & 0x1fff;
	/* A carry out of the mantissa correctly bumps the exponent (and
	 * reaches infinity from the largest finite value). */
	if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
		h++;
	return (uint16_t)(sign | h);
}

float f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t e = (h >> 10) & 0x1f;
	uint32_t m = h & 0x3ff;
	uint32_t x;
	float f;

	if (e == 0) {
		f = (float)m * (1.0f / 16777216.0f); /* m * 2^-24, exact */
		return sign ? -f : f;
	}
	if (e == 31)
		x = sign | 0x7f800000 | m << 13;
	else
		x = sign | (e - 15 + 127) << 23 | m << 13;
	memcpy(&f, &x, 4);
	return f;
}

/* ------------------------------------------------ arrays, portable */

static void put_le16(uint8_t *p, uint16_t h)
{
	p[0] = (uint8_t)h;
	p[1] = (uint8_t)(h >> 8);
}

static void encode_scalar(uint8_t *dst, const float *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put_le16(dst + 2 * i, f16_from_f32(src[i]));
}

static void encode_at_scalar(uint8_t *dst, const float *base,
			     const uint64_t *keys, size_t n, uint64_t off)
{
	for (size_t i = 0; i < n; i++)
		put_le16(dst + 2 * i, f16_from_f32(base[keys[i] - off]));
}

static void decode_scalar(float *dst, const uint8_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = f16_to_f32((uint16_t)(src[2 * i] | src[2 * i + 1] << 8));
}

static int round_scalar(float *v, size_t n)
{
	int finite = 1;
	for (size_t i = 0; i < n; i++) {
		v[i] = f16_to_f32(f16_from_f32(v[i]));
		finite &= isfinite(v[i]) != 0;
	}
	return finite;
}

struct f16_ops {
	void (*encode)(uint8_t *, const float *, size_t);
	void (*encode_at)(uint8_t *, const float *, const uint64_t *, size_t,
			  uint64_t);
	void (*decode)(float *, const uint8_t *, size_t);
	int (*round)(float *, size_t);
};

static const struct f16_ops scalar_ops = {
	encode_scalar, encode_at_scalar, decode_scalar, round_scalar
};

/* ---------------------------------------------------- arrays, F16C */

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>

/* Compiled for F16C whatever -march says; called only where the CPU has
 * it. Halves are little-endian like the host, so they load and store as
 * they lie. A tail of fewer than 8 goes through a zero-padded block, so
 * every value takes the same instruction. */
#define F16C_FN __attribute__((target("avx,f16c")))
#define RNE _MM_FROUND_TO_NEAREST_INT /* the immediate, not MXCSR.RC */

F16C_FN static void store8(uint8_t *dst, __m256 v)
{
	_mm_storeu_si128((__m128i *)(void *)dst, _mm256_cvtps_ph(v, RNE));
}

F16C_FN static __m256 load8(const uint8_t *src)
{
	return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)src));
}

F16C_FN static void encode_f16c(uint8_t *dst, const float *src, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		store8(dst + 2 * i, _mm256_loadu_ps(src + i));
	if (i < n) {
		float t[8] = { 0 };
		uint8_t h[16];
		memcpy(t, src + i, (n - i) * sizeof *t);
		store8(h, _mm256_loadu_ps(t));
		memcpy(dst + 2 * i, h, (n - i) * 2);
	}
}

F16C_FN static void encode_at_f16c(uint8_t *dst, const float *base,
				   const uint64_t *keys, size_t n, uint64_t off)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		const uint64_t *k = keys + i;
		store8(dst + 2 * i,
		       _mm256_setr_ps(base[k[0] - off], base[k[1] - off],
				      base[k[2] - off], base[k[3] - off],
				      base[k[4] - off], base[k[5] - off],
				      base[k[6] - off], base[k[7] - off]));
	}
	if (i < n) {
		float t[8] = { 0 };
		uint8_t h[16];
		for (size_t j = 0; i + j < n; j++)
			t[j] = base[keys[i + j] - off];
		store8(h, _mm256_loadu_ps(t));
		memcpy(dst + 2 * i, h, (n - i) * 2);
	}
}

F16C_FN static void decode_f16c(float *dst, const uint8_t *src, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(dst + i, load8(src + 2 * i));
	if (i < n) {
		uint8_t h[16] = { 0 };
		float t[8];
		memcpy(h, src + 2 * i, (n - i) * 2);
		_mm256_storeu_ps(t, load8(h));
		memcpy(dst + i, t, (n - i) * sizeof *t);
	}
}

/* Lanes of r that are infinite or NaN: |r| not below infinity. */
F16C_FN static __m256 not_finite(__m256 r)
{
	__m256 abs = _mm256_and_ps(r, _mm256_castsi256_ps(
					      _mm256_set1_epi32(0x7fffffff)));
	return _mm256_cmp_ps(abs, _mm256_set1_ps(INFINITY), _CMP_NLT_UQ);
}

F16C_FN static int round_f16c(float *v, size_t n)
{
	__m256 bad = _mm256_setzero_ps();
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 r = _mm256_cvtph_ps(
			_mm256_cvtps_ph(_mm256_loadu_ps(v + i), RNE));
		_mm256_storeu_ps(v + i, r);
		bad = _mm256_or_ps(bad, not_finite(r));
	}
	if (i < n) {
		float t[8] = { 0 };
		memcpy(t, v + i, (n - i) * sizeof *t);
		__m256 r = _mm256_cvtph_ps(
			_mm256_cvtps_ph(_mm256_loadu_ps(t), RNE));
		_mm256_storeu_ps(t, r);
		memcpy(v + i, t, (n - i) * sizeof *t);
		bad = _mm256_or_ps(bad, not_finite(r));
	}
	return _mm256_movemask_ps(bad) == 0;
}

static const struct f16_ops f16c_ops = {
	encode_f16c, encode_at_f16c, decode_f16c, round_f16c
};

/* AVX through the builtin, which also checks that the OS saves the
 * 256-bit registers; F16C from CPUID itself (clang 14's builtin does not
 * know the name). */
static const struct f16_ops *fastest(void)
{
	unsigned a, b, c, d;
	if (__builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) &&
	    (c & bit_F16C))
		return &f16c_ops;
	return &scalar_ops;
}
#else
static const struct f16_ops *fastest(void)
{
	return &scalar_ops;
}
#endif

int f16_all_finite(const uint8_t *src, size_t n)
{
	/* or-ed, not a loop that stops at the first: it vectorizes */
	unsigned bad = 0;
	for (size_t i = 0; i < n; i++)
		bad |= (src[2 * i + 1] & 0x7c) == 0x7c;
	return !bad;
}

/* ------------------------------------------------------- dispatch */

/* Chosen at the first call; threads racing there store the same answer. */
static const struct f16_ops *chosen;

static const struct f16_ops *ops(void)
{
	const struct f16_ops *o = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE);
	if (!o) {
		o = fastest();
		__atomic_store_n(&chosen, o, __ATOMIC_RELEASE);
	}
	return o;
}

int f16_use_vector(int on)
{
	const struct f16_ops *best = fastest();
	__atomic_store_n(&chosen, on ? best : &scalar_ops, __ATOMIC_RELEASE);
	return best != &scalar_ops;
}

void f16_encode(uint8_t *dst, const float *src, size_t n)
{
	ops()->encode(dst, src, n);
}

void f16_encode_at(uint8_t *dst, const float *base, const uint64_t *keys,
		   size_t n, uint64_t off)
{
	ops()->encode_at(dst, base, keys, n, off);
}

void f16_decode(float *dst, const uint8_t *src, size_t n)
{
	ops()->decode(dst, src, n);
}

int f16_round(float *v, size_t n)
{
	return ops()->round(v, n);
}
