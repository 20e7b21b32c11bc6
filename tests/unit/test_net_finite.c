/* test_net_finite.c - the shard's check that a push holds only finite
 * values (all_finite, server_int.h), which refuses the whole push before
 * any of it is applied: NaN, +Inf and -Inf anywhere (the first value, in
 * the middle of the vectorized part, in the scalar tail) are caught;
 * the largest finite value, subnormals and -0 pass.
 */
#include <float.h>
#include <math.h>

#include "net/server_int.h"
#include "testutil.h"

int main(void)
{
	float v[37];
	const float bad[] = { NAN, -NAN, INFINITY, -INFINITY };
	const uint32_t lens[] = { 1, 4, 16, 33, 37 };
	for (uint32_t i = 0; i < 37; i++)
		v[i] = (i % 3 ? 1.0f : -1.0f) * (float)i * 0.25f;
	v[5] = FLT_MAX;
	v[6] = -FLT_MAX;
	v[7] = FLT_MIN / 4; /* subnormal */
	v[8] = -0.0f;
	CHECK(all_finite(v, 37), "finite values refused");
	CHECK(all_finite(v, 0), "an empty push refused");
	for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
		for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
			uint32_t n = lens[l];
			for (uint32_t at = 0; at < n; at++) {
				float keep = v[at];
				v[at] = bad[b];
				CHECK(!all_finite(v, n), "value %zu at %u of %u passed",
				      b, at, n);
				/* past the end: not looked at */
				CHECK(n == 37 || all_finite(v, at), "prefix of %u", at);
				v[at] = keep;
			}
		}
	}
	return 0;
}
