/* test_net_f16.c - float16 pushes: a frame holding a delta too large for
 * half precision travels as float32 at once (held back in a residual, it
 * once waited for the final flush and the shard trained without it);
 * small deltas travel as float16, each rounded to nearest as the shard
 * adds it, in fewer bytes; with a threshold (the residual filter) what
 * the rounding drops is kept and arrives with the flush.
 */
#include "net_testutil.h"
#include "testutil.h"

#define DIM 16

/* A shard of DIM keys and its client (f16 pushes, the given threshold).
 * @return the client, or NULL (the shard not started: *started 0). */
static struct ps_client *start(struct net_test_shard *sh, float threshold,
			       int *started)
{
	struct ps_config pc = { .shard = 0, .n_shards = 1, .dim = DIM,
				.staleness = SSP_INF, .heartbeat_timeout = 5 };
	*started = !net_test_shard_start(sh, pc);
	if (!*started)
		return NULL;
	struct ps_client_config cc = { .rank = 0, .n_workers = 1, .dim = DIM,
				       .f16 = 1, .threshold = threshold };
	boar_error err;
	struct ps_client *c = net_test_client_with(sh->port, cc, &err);
	CHECK(c != NULL, "connect: %s", err.message);
	return c;
}

int main(void)
{
	struct net_test_shard sh;
	int started;
	struct ps_client *c = start(&sh, 0, &started);
	if (!started)
		TEST_SKIP("no loopback listener");
	if (!c) {
		net_test_shard_stop(&sh);
		return TEST_RESULT();
	}
	boar_error err;
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

	/* Small deltas alone travel as float16 (2 bytes a value), each as
	 * the half nearest to it: nothing kept back without a threshold. */
	float s[3] = {0.1f, 0.2f, 0.3f};
	CHECK(ps_client_push(c, k, s, 3, &err) == 0, "push: %s", err.message);
	ps_client_get_counters(c, &n);
	CHECK(n.push_bytes - f32_bytes < f32_bytes,
	      "small deltas took %llu bytes, the float32 frame %llu",
	      (unsigned long long)(n.push_bytes - f32_bytes),
	      (unsigned long long)f32_bytes);
	CHECK(ps_client_flush(c, &err) == 0, "flush: %s", err.message);
	CHECK(ps_client_pull(c, k, 3, v, &err) == 0, "pull: %s", err.message);
	CHECK(v[0] == 1e5f + net_test_halved(0.1f) &&
		      v[1] == -3e6f + net_test_halved(0.2f) &&
		      v[2] == 0.1f + net_test_halved(0.3f),
	      "after float16 deltas: %.9g %.9g %.9g", v[0], v[1], v[2]);
	ps_client_free(c);
	net_test_shard_stop(&sh);

	/* With the residual filter, the rounding error travels later. */
	c = start(&sh, 1e-30f, &started);
	if (c) {
		CHECK(ps_client_push(c, k, s, 3, &err) == 0, "push: %s",
		      err.message);
		CHECK(ps_client_pull(c, k, 3, v, &err) == 0, "pull: %s",
		      err.message);
		CHECK(v[2] == net_test_halved(0.3f), "before the flush: %.9g",
		      v[2]);
		CHECK(ps_client_flush(c, &err) == 0, "flush: %s", err.message);
		CHECK(ps_client_pull(c, k, 3, v, &err) == 0, "pull: %s",
		      err.message);
		CHECK_NEAR(v[0], 0.1, 1e-7);
		CHECK_NEAR(v[2], 0.3, 1e-7);
		ps_client_free(c);
	}
	if (started)
		net_test_shard_stop(&sh);
	return TEST_RESULT();
}
