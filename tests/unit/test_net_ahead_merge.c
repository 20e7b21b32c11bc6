/* test_net_ahead_merge.c - the worker's own pushes added to a pull
 * answered ahead (client_ahead_add_own, client_ahead_finish_vals) give,
 * bit for bit, what a plain merge of the sorted lists gives: each value
 * whose key a push holds gets that push's delta added once, per push in
 * order, and every other value keeps its bits (-0 and NaN included).
 *
 * The lists are drawn at the densities a worker meets (a clock's keys
 * over the model, 5% to full, pushes as dense as the pull, far sparser or
 * far denser), sliced as the worker's threads slice them, with pushes
 * copied (client_ahead_record) and pinned (client_ahead_record_ref), so
 * both the merge by 64-key windows and the plain merge (lists of unlike
 * density) are checked, and lists so sparse that every window holds one
 * key.
 */
#include <string.h>

#include "net/client_int.h"
#include "testutil.h"

static uint64_t seed = 777;

static uint64_t rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

/* Keys of [base, base + span) each kept with probability num/1024,
 * ascending; @return how many (at most cap). */
static uint32_t draw(uint64_t *k, uint32_t cap, uint64_t base, uint64_t span,
		     unsigned num)
{
	uint32_t n = 0;
	for (uint64_t x = 0; x < span && n < cap; x++)
		if (rnd() % 1024 < num)
			k[n++] = base + x;
	return n;
}

static float val(void)
{
	static const uint32_t odd[] = { 0x80000000, 0x7fc00001, 0x00000001 };
	uint64_t r = rnd() % 64;
	float f;
	if (r < 3) {
		memcpy(&f, &odd[r], 4);
		return f;
	}
	return (float)((int64_t)(rnd() % 2001) - 1000) / 256.0f;
}

/* The reference: for each push in order, a plain merge. */
static void ref_add(const uint64_t *pk, const float *pv, uint32_t pn,
		    const uint64_t *keys, uint32_t lo, uint32_t hi,
		    float *vals)
{
	uint32_t i = lo, j = 0;
	while (i < hi && j < pn) {
		if (pk[j] == keys[i])
			vals[i++] += pv[j++];
		else if (pk[j] < keys[i])
			j++;
		else
			i++;
	}
}

#define MAXK 200000
static uint64_t keys[MAXK], pk[3][MAXK];
static float pv[3][MAXK], vals[MAXK], want[MAXK], from[MAXK];

static void one_case(uint64_t span, unsigned pull_num, unsigned push_num,
		     int runs, int pinned, int threads)
{
	struct ps_client c;
	memset(&c, 0, sizeof c);
	uint64_t base = rnd() % 1000;
	uint32_t n = draw(keys, MAXK, base, span, pull_num), pn[3];
	for (int r = 0; r < runs; r++) {
		/* a push may start before the pull's keys and end past them */
		pn[r] = draw(pk[r], MAXK, base - base / 2, span + 50, push_num);
		for (uint32_t j = 0; j < pn[r]; j++)
			pv[r][j] = val();
		int rc = pinned ? client_ahead_record_ref(&c, pk[r], pv[r], pn[r])
				: client_ahead_record(&c, pk[r], pv[r], pn[r]);
		CHECK(rc == 0, "record");
	}
	for (uint32_t i = 0; i < n; i++)
		from[i] = val();
	/* slices as a worker's threads cut them, and a few odd ones */
	uint32_t cuts[6] = { 0, n / 3, n / 2, 2 * n / 3, n, n };
	if (n > 10)
		cuts[4] = n - 1 - (uint32_t)(rnd() % 10);
	for (int s = 0; s < 5; s++) {
		uint32_t lo = cuts[s], hi = cuts[s + 1] < lo ? lo : cuts[s + 1];
		if (s == 4)
			lo = 0, hi = n;
		memcpy(vals, from, n * sizeof *vals);
		memcpy(want, from, n * sizeof *want);
		client_ahead_add_own(&c.ahead, keys, lo, hi, vals);
		for (int r = 0; r < runs; r++)
			ref_add(pk[r], pv[r], pn[r], keys, lo, hi, want);
		CHECK(!memcmp(vals, want, n * sizeof *vals),
		      "span %llu pull %u/1024 push %u/1024 runs %d pinned %d: "
		      "slice %u..%u differs",
		      (unsigned long long)span, pull_num, push_num, runs,
		      pinned, lo, hi);
	}
	/* the threads' slices together, copying from the answer */
	memset(vals, 0, n * sizeof *vals);
	memcpy(want, from, n * sizeof *want);
	client_ahead_finish_vals(&c.ahead, keys, 0, n, from, vals, 1, threads);
	for (int r = 0; r < runs; r++)
		ref_add(pk[r], pv[r], pn[r], keys, 0, n, want);
	CHECK(!memcmp(vals, want, n * sizeof *vals),
	      "finish_vals at %d threads differs", threads);
	free(c.ahead.pk);
	free(c.ahead.pv);
	free(c.ahead.runs);
}

int main(void)
{
	static const unsigned dens[] = { 50, 460, 900, 1024 };
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 4; b++)
			one_case(150000, dens[a], dens[b], 1 + (a + b) % 3,
				 (a + b) & 1, 3);
	/* pushes far sparser, far denser, a tiny slice, an empty pull */
	one_case(150000, 460, 4, 1, 0, 3);
	one_case(150000, 4, 900, 2, 1, 3);
	one_case(3000, 460, 460, 1, 0, 1);
	one_case(1, 0, 1024, 1, 0, 3);
	/* a span so sparse the bitmap would be larger than the lists */
	{
		struct ps_client c;
		memset(&c, 0, sizeof c);
		uint32_t n = 5000;
		for (uint32_t i = 0; i < n; i++) {
			keys[i] = (uint64_t)i * 100000 + (rnd() % 1000);
			pk[0][i] = keys[i] + (rnd() % 2) * (rnd() % 1000 + 1);
			pv[0][i] = val();
			from[i] = val();
		}
		CHECK(client_ahead_record_ref(&c, pk[0], pv[0], n) == 0, "rec");
		memcpy(vals, from, n * sizeof *vals);
		memcpy(want, from, n * sizeof *want);
		client_ahead_add_own(&c.ahead, keys, 0, n, vals);
		ref_add(pk[0], pv[0], n, keys, 0, n, want);
		CHECK(!memcmp(vals, want, n * sizeof *vals), "sparse span");
		free(c.ahead.runs);
	}
	return TEST_RESULT();
}
