/* radix.c - see radix.h. */
#include "radix.h"

uint64_t *boar_radix_sort_u64(uint64_t *s, uint64_t *t, size_t n,
			      int from_bit)
{
	uint64_t any = 0, all = ~0ULL;
	for (size_t k = 0; k < n; k++) {
		any |= s[k];
		all &= s[k];
	}
	uint64_t vary = any ^ all;
	for (int sh = from_bit; sh < 64; sh += 8) {
		if (!(vary >> sh & 0xff))
			continue;
		size_t at[256] = { 0 };
		for (size_t k = 0; k < n; k++)
			at[s[k] >> sh & 0xff]++;
		for (size_t d = 0, sum = 0; d < 256; d++) {
			size_t c = at[d];
			at[d] = sum;
			sum += c;
		}
		for (size_t k = 0; k < n; k++)
			t[at[s[k] >> sh & 0xff]++] = s[k];
		uint64_t *x = s;
		s = t;
		t = x;
	}
	return s;
}
