/* test_net_pull_local.c - what a worker's client does for a pull without
 * the shards: a linear model's first clock answered with zeros
 * (ps_client_config.zero_start) only while the SSP bound and
 * read-my-writes allow it, and a dense pull asked ahead (before the
 * pushes and clock the client's thread still has queued) whose answer
 * gets the worker's own pushes added on several threads (the push
 * buffers of the client's thread doubling as their record).
 */
#include <stdlib.h>

#include "net_testutil.h"
#include "testutil.h"

/* A client as worker rank of n over keys [0, dim), started async where
 * asked. @return it, or NULL (*err). */
static struct ps_client *try_client(unsigned port, uint32_t rank, uint32_t n,
				    uint64_t dim, int zero_start, int threads,
				    int async, boar_error *err)
{
	struct ps_client_config cfg = {
		.rank = rank,
		.n_workers = n,
		.dim = dim,
		.reconnect_timeout = 2,
		.threads = threads,
		.zero_start = zero_start,
	};
	struct ps_client *c = net_test_client_with(port, cfg, err);
	if (!c)
		return NULL;
	if (async && ps_client_start_async(c, err)) {
		ps_client_free(c);
		return NULL;
	}
	return c;
}

static struct ps_client *client(unsigned port, uint32_t rank, uint32_t n,
				uint64_t dim, int zero_start, int threads,
				int async)
{
	boar_error err;
	struct ps_client *c = try_client(port, rank, n, dim, zero_start,
					 threads, async, &err);
	CHECK(c != NULL, "connect: %s", err.message);
	return c;
}

static uint64_t shard_pulls(const struct net_test_shard *sh)
{
	struct wire_stats st;
	ps_server_stats(sh->s, &st);
	return st.pulls;
}

/* Worker 1 pushed before worker 0's first pull: zeros at clock 0 (the
 * bound asks for nobody's pushes yet) without a request; after its own
 * push and clock the shard's values; a restarted worker 0 (READY says
 * the shard holds pushes of its rank) asks the shard. */
static void zero_start(void)
{
	struct net_test_shard sh;
	struct ps_config pc = { .shard = 0, .n_shards = 1, .staleness = 3,
				.heartbeat_timeout = 5 };
	if (net_test_shard_start(&sh, pc)) {
		test_failures++;
		return;
	}
	boar_error err;
	uint64_t k[2] = { 1, 2 };
	float five[2] = { 5, 5 }, one[2] = { 1, 1 }, v[2] = { -1, -1 };
	struct ps_client *w1 = client(sh.port, 1, 2, 16, 0, 1, 0);
	CHECK(w1 && ps_client_push(w1, k, five, 2, &err) == 0, "push 1");
	CHECK(w1 && ps_client_pull(w1, k, 2, v, &err) == 0 && v[0] == 5,
	      "worker 1 (no zero_start) read %g, want 5", v[0]);
	uint64_t pulls = shard_pulls(&sh);
	struct ps_client *w0 = client(sh.port, 0, 2, 16, 1, 1, 1);
	CHECK(w0 && ps_client_pull(w0, k, 2, v, &err) == 0, "pull: %s",
	      err.message);
	CHECK(v[0] == 0 && v[1] == 0, "clock 0 read %g %g, want 0 0", v[0],
	      v[1]);
	CHECK(shard_pulls(&sh) == pulls, "the first pull went to the shard");
	CHECK(w0 && ps_client_push(w0, k, one, 2, &err) == 0, "push 0");
	CHECK(w0 && ps_client_pull(w0, k, 2, v, &err) == 0 && v[0] == 6 &&
		      v[1] == 6,
	      "after its push worker 0 read %g %g, want 6 6", v[0], v[1]);
	ps_client_free(w0); /* dies: its rank's push stays in the shard */
	struct ps_client *again = NULL;
	for (int i = 0; i < 50 && !again; i++) /* till the old one is gone */
		if (!(again = try_client(sh.port, 0, 2, 16, 1, 1, 1, &err)))
			usleep(100000);
	CHECK(again != NULL, "reconnect: %s", err.message);
	CHECK(again && ps_client_pull(again, k, 2, v, &err) == 0 &&
		      v[0] == 6 && v[1] == 6,
	      "a restarted worker read %g %g at clock 0, want 6 6", v[0],
	      v[1]);
	ps_client_free(again);
	ps_client_free(w1);
	net_test_shard_stop(&sh);
}

#define DENSE 300000

/* Dense clocks, as the linear driver makes them: push the clock before's
 * deltas and clock (the client's thread still sending them or holding
 * them queued: the pull ahead goes before those queued), ask ahead for
 * every key, push this clock's (recorded by reference to the push
 * buffer), change the caller's arrays, clock, collect on 4 threads: the
 * shard's values before plus every push, exactly what a pull then reads,
 * whether the shard answered at once (staleness inf) or held the answer
 * for the worker's clock (staleness 0). */
static void dense_merge(uint64_t staleness)
{
	struct net_test_shard sh;
	struct ps_config pc = { .shard = 0, .n_shards = 1,
				.staleness = staleness,
				.heartbeat_timeout = 5 };
	if (net_test_shard_start(&sh, pc)) {
		test_failures++;
		return;
	}
	boar_error err;
	struct ps_client *c = client(sh.port, 0, 1, DENSE, 0, 4, 1);
	uint64_t *all = malloc(DENSE * sizeof *all);
	uint64_t *even = malloc(DENSE / 2 * sizeof *even);
	uint64_t *four = malloc(DENSE / 4 * sizeof *four);
	float *de = malloc(DENSE / 2 * sizeof *de);
	float *df = malloc(DENSE / 4 * sizeof *df);
	float *v = malloc(DENSE * sizeof *v), *p = malloc(DENSE * sizeof *p);
	if (!c || !all || !even || !four || !de || !df || !v || !p) {
		test_failures++;
		goto out;
	}
	for (uint64_t i = 0; i < DENSE; i++)
		all[i] = i;
	for (int clock = 0; clock < 4; clock++) {
		for (uint64_t i = 0; i < DENSE / 2; i++) {
			even[i] = 2 * i;
			de[i] = 1;
		}
		for (uint64_t i = 0; i < DENSE / 4; i++) {
			four[i] = 4 * i;
			df[i] = 2;
		}
		CHECK(ps_client_push(c, even, de, DENSE / 2, &err) == 0,
		      "push even");
		CHECK(ps_client_clock(c, &err) == 0, "clock");
		CHECK(ps_client_pull_ahead(c, all, DENSE, &err) == 0,
		      "ahead: %s", err.message);
		CHECK(ps_client_push(c, four, df, DENSE / 4, &err) == 0,
		      "push four");
		for (uint64_t i = 0; i < DENSE / 2; i++)
			even[i] = 1, de[i] = 100; /* copied by the client */
		CHECK(ps_client_clock(c, &err) == 0, "clock");
		CHECK(ps_client_pull_collect(c, all, DENSE, v, &err) == 0,
		      "collect: %s", err.message);
		CHECK(ps_client_pull(c, all, DENSE, p, &err) == 0, "pull");
		uint64_t bad = 0;
		float n = (float)clock + 1;
		for (uint64_t i = 0; i < DENSE; i++) {
			float want = i % 4 == 0 ? 3 * n : i % 2 == 0 ? n : 0;
			bad += v[i] != want || p[i] != want;
		}
		CHECK(bad == 0,
		      "staleness %llu, clock %d: %llu keys differ from the "
		      "pushes",
		      (unsigned long long)staleness, clock,
		      (unsigned long long)bad);
	}
	CHECK(c && ps_client_current_clock(c) == 8, "clock %llu, want 8",
	      (unsigned long long)(c ? ps_client_current_clock(c) : 0));
out:
	ps_client_free(c);
	free(all), free(even), free(four), free(de), free(df), free(v);
	free(p);
	net_test_shard_stop(&sh);
}

int main(void)
{
	if (!net_test_loopback())
		TEST_SKIP("no loopback networking");
	zero_start();
	dense_merge(SSP_INF);
	dense_merge(0);
	return TEST_RESULT();
}
