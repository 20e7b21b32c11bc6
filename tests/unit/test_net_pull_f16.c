/* test_net_pull_f16.c - pulls asked ahead with pull_f16 are answered as
 * float16 by a real shard: each value what a trip through a half makes
 * of it, counted in keys_pulled_f16, in half the bytes; an answer holding
 * a weight a half cannot hold (over 65504) comes whole as float32, exact;
 * a plain pull stays float32 either way.
 */
#include "net_testutil.h"
#include "testutil.h"

#define N 1000
#define DIM (N + 8)

/* Asks keys[0..n) ahead and collects them into v; *bytes: what the
 * client received meanwhile. @return 0 or the error. */
static int ahead(struct ps_client *c, const uint64_t *keys, uint32_t n,
		 float *v, uint64_t *bytes)
{
	boar_error err;
	struct ps_client_counters a, b;
	ps_client_get_counters(c, &a);
	int rc = ps_client_pull_ahead_into(c, keys, n, v, &err);
	if (!rc)
		rc = ps_client_pull_collect(c, keys, n, v, &err);
	if (rc)
		fprintf(stderr, "pull ahead: %s\n", err.message);
	ps_client_get_counters(c, &b);
	*bytes = b.bytes_recv - a.bytes_recv;
	return rc;
}

int main(void)
{
	struct net_test_shard sh;
	struct ps_config pc = { .shard = 0, .n_shards = 1, .dim = DIM,
				.staleness = SSP_INF, .heartbeat_timeout = 5 };
	if (net_test_shard_start(&sh, pc))
		TEST_SKIP("no loopback listener");
	boar_error err;
	struct ps_client_config cc = { .rank = 0, .n_workers = 1, .dim = DIM,
				       .pull_f16 = 1 };
	struct ps_client *c = net_test_client_with(sh.port, cc, &err);
	CHECK(c != NULL, "connect: %s", err.message);
	if (!c) {
		net_test_shard_stop(&sh);
		return TEST_RESULT();
	}
	static uint64_t k[N];
	static float d[N], v[N], exact[N];
	/* values a half cannot hold exactly, of both signs, some subnormal
	 * as halves */
	for (uint32_t i = 0; i < N; i++) {
		k[i] = i;
		d[i] = (i % 2 ? -1.0f : 1.0f) * 0.1f * (float)(i + 1) / 7.0f;
		if (i % 10 == 3)
			d[i] = 3e-7f * (float)i;
	}
	CHECK(ps_client_push(c, k, d, N, &err) == 0, "push: %s", err.message);
	CHECK(ps_client_pull(c, k, N, exact, &err) == 0, "pull: %s",
	      err.message);
	int same = 1;
	for (uint32_t i = 0; i < N; i++)
		same &= exact[i] == d[i];
	CHECK(same, "a plain pull is not exact float32");

	uint64_t half_bytes, full_bytes;
	struct ps_client_counters n0, n1;
	ps_client_get_counters(c, &n0);
	CHECK(ahead(c, k, N, v, &half_bytes) == 0, "ahead");
	ps_client_get_counters(c, &n1);
	int rounded = 1, differs = 0;
	for (uint32_t i = 0; i < N; i++) {
		rounded &= v[i] == net_test_halved(d[i]);
		differs |= v[i] != d[i];
	}
	CHECK(rounded && differs,
	      "answered ahead: not each value rounded through a half");
	CHECK(n1.keys_pulled_f16 - n0.keys_pulled_f16 == N,
	      "%llu keys counted as float16, want %u",
	      (unsigned long long)(n1.keys_pulled_f16 - n0.keys_pulled_f16),
	      N);

	/* one weight past half precision: the whole answer as float32 */
	uint64_t big = 7;
	float up = 1e5f;
	CHECK(ps_client_push(c, &big, &up, 1, &err) == 0, "push: %s",
	      err.message);
	exact[7] += 1e5f;
	ps_client_get_counters(c, &n0);
	CHECK(ahead(c, k, N, v, &full_bytes) == 0, "ahead");
	ps_client_get_counters(c, &n1);
	same = 1;
	for (uint32_t i = 0; i < N; i++)
		same &= v[i] == exact[i];
	CHECK(same && v[7] == exact[7],
	      "with a weight over 65504: not float32 (v[7] = %g, want %g)",
	      v[7], exact[7]);
	CHECK(n1.keys_pulled_f16 == n0.keys_pulled_f16,
	      "an answer with a weight over 65504 counted as float16");
	CHECK(half_bytes * 10 < full_bytes * 6,
	      "float16 answer %llu bytes, float32 %llu",
	      (unsigned long long)half_bytes, (unsigned long long)full_bytes);
	ps_client_free(c);
	net_test_shard_stop(&sh);
	return TEST_RESULT();
}
