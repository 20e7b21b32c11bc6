/* test_net_ahead.c - a pull asked a clock ahead (ps_client_pull_ahead)
 * gives the values of a pull made after the clock's pushes, each push
 * counted once, whether the shard answered at once (the client adds its
 * own pushes) or held the answer for the SSP rule (the shard then counts
 * them: it also waits for the asker's own clock); and no other request
 * may come while one waits.
 */
#include <time.h>

#include "net_testutil.h"
#include "testutil.h"

#define DIM 16

static struct ps_client *worker(unsigned port, uint32_t rank, uint32_t n)
{
	boar_error err;
	struct ps_client *c = net_test_client(port, rank, n, DIM, NULL, 2,
					      &err);
	CHECK(c != NULL, "connect: %s", err.message);
	return c;
}

/* Staleness inf: the shard answers as the request comes, before the
 * pushes that follow it; the client adds them. */
static void answered_at_once(void)
{
	struct net_test_shard sh;
	struct ps_config pc = { .shard = 0, .n_shards = 1,
				.staleness = SSP_INF, .heartbeat_timeout = 5 };
	if (net_test_shard_start(&sh, pc)) {
		test_failures++;
		return;
	}
	struct ps_client *c = worker(sh.port, 0, 1);
	boar_error err;
	uint64_t k1 = 1, ahead[3] = { 1, 2, 3 }, pk[3] = { 2, 3, 4 };
	uint64_t all[4] = { 1, 2, 3, 4 };
	float one = 1, d[3] = { 2, 3, 4 }, v[4], st[1];
	CHECK(c && ps_client_push(c, &k1, &one, 1, &err) == 0, "push");
	CHECK(c && ps_client_pull_ahead(c, ahead, 3, &err) == 0, "ahead: %s",
	      err.message);
	/* nothing else while it waits */
	CHECK(c && ps_client_pull(c, &k1, 1, st, &err) == BOAR_EINVAL,
	      "a pull went out while one asked ahead waited");
	CHECK(c && ps_client_push(c, pk, d, 3, &err) == 0, "push 2");
	CHECK(c && ps_client_clock(c, &err) == 0, "clock");
	CHECK(c && ps_client_pull_collect(c, ahead, 3, v, &err) == 0,
	      "collect: %s", err.message);
	CHECK(v[0] == 1 && v[1] == 2 && v[2] == 3,
	      "collected %g %g %g, want 1 2 3", v[0], v[1], v[2]);
	CHECK(c && ps_client_pull(c, all, 4, v, &err) == 0, "pull");
	CHECK(v[0] == 1 && v[1] == 2 && v[2] == 3 && v[3] == 4,
	      "the shard holds %g %g %g %g, want 1 2 3 4", v[0], v[1], v[2],
	      v[3]);
	ps_client_free(c);
	net_test_shard_stop(&sh);
}

/* A shard of staleness s and its two workers. @return 0 or -1. */
static int two_workers(struct net_test_shard *sh, uint64_t s,
		       struct ps_client **w0, struct ps_client **w1)
{
	struct ps_config pc = { .shard = 0, .n_shards = 1, .staleness = s,
				.heartbeat_timeout = 5 };
	if (net_test_shard_start(sh, pc)) {
		test_failures++;
		return -1;
	}
	*w0 = worker(sh->port, 0, 2);
	*w1 = worker(sh->port, 1, 2);
	return 0;
}

static void stop_all(struct net_test_shard *sh, struct ps_client *w0,
		     struct ps_client *w1)
{
	ps_client_free(w0);
	ps_client_free(w1);
	net_test_shard_stop(sh);
}

/* Staleness 0, two workers: worker 0's pull of clock 1 asked ahead waits
 * for worker 1's clock and for its own, so the answer holds worker 0's
 * push of clock 0 (once: the client adds nothing to a held answer). */
static void held(void)
{
	struct net_test_shard sh;
	struct ps_client *w0, *w1;
	if (two_workers(&sh, 0, &w0, &w1))
		return;
	boar_error err;
	uint64_t k[2] = { 5, 6 };
	float d[2] = { 5, 6 }, v[2] = { -1, -1 };
	CHECK(w0 && ps_client_pull_ahead(w0, k, 2, &err) == 0, "ahead");
	CHECK(w0 && ps_client_push(w0, k, d, 2, &err) == 0, "push");
	CHECK(w0 && ps_client_clock(w0, &err) == 0, "clock 0");
	CHECK(w1 && ps_client_clock(w1, &err) == 0, "clock 1");
	CHECK(w0 && ps_client_pull_collect(w0, k, 2, v, &err) == 0,
	      "collect: %s", err.message);
	CHECK(v[0] == 5 && v[1] == 6, "collected %g %g, want 5 6", v[0],
	      v[1]);
	stop_all(&sh, w0, w1);
}

/* Staleness 1: worker 0 one clock ahead asks for clock 2, which worker
 * 1's tick to clock 1 would allow; the shard still holds the answer until
 * worker 0's own clock 2 comes, after its push, or the answer would miss
 * that push while saying it holds it. */
static void held_for_own_clock(void)
{
	struct net_test_shard sh;
	struct ps_client *w0, *w1;
	if (two_workers(&sh, 1, &w0, &w1))
		return;
	boar_error err;
	uint64_t k[2] = { 7, 8 };
	float d[2] = { 7, 8 }, v[2] = { -1, -1 };
	struct timespec ms50 = { 0, 50000000 };
	CHECK(w0 && ps_client_clock(w0, &err) == 0, "w0 clock 1");
	CHECK(w0 && ps_client_pull_ahead(w0, k, 2, &err) == 0, "ahead");
	CHECK(w1 && ps_client_clock(w1, &err) == 0, "w1 clock 1");
	nanosleep(&ms50, NULL); /* the shard sees w1's tick first */
	CHECK(w0 && ps_client_push(w0, k, d, 2, &err) == 0, "push");
	CHECK(w0 && ps_client_clock(w0, &err) == 0, "w0 clock 2");
	CHECK(w0 && ps_client_pull_collect(w0, k, 2, v, &err) == 0,
	      "collect: %s", err.message);
	CHECK(v[0] == 7 && v[1] == 8, "collected %g %g, want 7 8", v[0],
	      v[1]);
	stop_all(&sh, w0, w1);
}

int main(void)
{
	if (!net_test_loopback())
		TEST_SKIP("no loopback networking");
	answered_at_once();
	held();
	held_for_own_clock();
	return TEST_RESULT();
}
