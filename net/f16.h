/* f16.h - IEEE half precision for the wire's values (library-internal).
 *
 * The one place for the float16 math: one value at a time (the portable
 * code, and the reference every other path must match bit for bit), and
 * arrays, which on x86-64 go through F16C (vcvtps2ph / vcvtph2ps, 8 values
 * an instruction) where the CPU has it, chosen once at run time.
 *
 * float -> half rounds to nearest, ties to even; what is too large for a
 * half (65520 and over, in magnitude) becomes infinity, what is too small
 * a (signed) zero or a subnormal half. Halves on the wire are
 * little-endian, 2 bytes each, at any alignment. Every non-NaN value gives
 * the same bits on every path; a NaN stays a NaN (its payload may differ).
 */
#ifndef BOAR_NET_F16_H
#define BOAR_NET_F16_H

#include <stddef.h>
#include <stdint.h>

uint16_t f16_from_f32(float f);
float f16_to_f32(uint16_t h);

/* n values of src as halves at dst (2n bytes). */
void f16_encode(uint8_t *dst, const float *src, size_t n);
/* The values base[keys[i] - off] for i < n, as f16_encode writes them. */
void f16_encode_at(uint8_t *dst, const float *base, const uint64_t *keys,
		   size_t n, uint64_t off);
/* n halves at src (2n bytes) as floats. */
void f16_decode(float *dst, const uint8_t *src, size_t n);
/* Each v[i] replaced by what it reads as after a trip through a half.
 * @return 1 when every result is finite, 0 when any is not (infinite:
 *         the value was too large, or was already infinite or NaN). */
int f16_round(float *v, size_t n);

/* Whether each of the n halves at src (2n bytes) is finite: 0 where one
 * is an infinity or a NaN (a value over 65504 became one). */
int f16_all_finite(const uint8_t *src, size_t n);

/* For the tests: on 0 every array above runs the portable code, on 1 the
 * fastest the CPU has. @return 1 when the CPU has a faster path (F16C). */
int f16_use_vector(int on);

#endif
