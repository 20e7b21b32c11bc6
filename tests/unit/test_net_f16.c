/* test_net_f16.c - float16 pushes of deltas too large for half precision
 * travel as float32 at once (they were held back in the residual until
 * the final flush, so the shard trained without them), while small ones
 * still travel as float16 with the rounding error kept for later.
 */
#include "net_testutil.h"
#include "testutil.h"

#define DIM 16

int main(void)
{
	struct net_test_shard sh;
	struct ps_config pc = {.shard = 0, .n_shards = 1, .dim = DIM,
			       .staleness = SSP_INF, .heartbeat_timeout = 5};
	if (net_test_shard_start(&sh, pc))
		TEST_SKIP("no loopback listener");
	char a[64];
	snprintf(a, sizeof a, "127.0.0.1:%u", sh.port);
	const char *addrs[1] = {a};
	struct ps_client_config cc = {.addrs = addrs, .n_shards = 1, .rank = 0,
				      .n_workers = 1, .dim = DIM, .f16 = 1};
	struct ps_client *c;
	boar_error err;
	if (ps_client_connect(&cc, &c, &err)) {
		fprintf(stderr, "connect: %s\n", err.message);
		return 1;
	}
	uint64_t k[3] = {1, 2, 3};
	float d[3] = {1e5f, -3e6f, 0.1f}, v[3];
	CHECK(ps_client_push(c, k, d, 3, &err) == 0, "push: %s", err.message);
	CHECK(ps_client_pull(c, k, 3, v, &err) == 0, "pull: %s", err.message);
	/* The frame went as float32: every value exact, nothing held back. */
	CHECK(v[0] == 1e5f && v[1] == -3e6f && v[2] == 0.1f,
	      "before any flush: %g %g %.9g, want 1e5 -3e6 0.1", v[0], v[1],
	      v[2]);
	struct ps_client_counters n;
	ps_client_get_counters(c, &n);
	uint64_t f32_bytes = n.push_bytes;

	/* Small deltas alone still travel as float16 (2 bytes a value) and
	 * what rounding loses arrives with the flush. */
	float s[3] = {0.1f, 0.2f, 0.3f};
	CHECK(ps_client_push(c, k, s, 3, &err) == 0, "push: %s", err.message);
	ps_client_get_counters(c, &n);
	CHECK(n.push_bytes - f32_bytes < f32_bytes,
	      "small deltas took %llu bytes, the float32 frame %llu",
	      (unsigned long long)(n.push_bytes - f32_bytes),
	      (unsigned long long)f32_bytes);
	CHECK(ps_client_flush(c, &err) == 0, "flush: %s", err.message);
	CHECK(ps_client_pull(c, k, 3, v, &err) == 0, "pull: %s", err.message);
	CHECK_NEAR(v[0], 1e5 + 0.1, 0.01);
	CHECK_NEAR(v[2], 0.1 + 0.3, 1e-6);
	ps_client_free(c);
	net_test_shard_stop(&sh);
	return TEST_RESULT();
}
