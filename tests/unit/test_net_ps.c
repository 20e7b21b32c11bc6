/* test_net_ps.c - a real shard on loopback against real clients.
 *
 * Starts two shards (each its own io_uring loop on a thread) and drives
 * them with ps_client: pushes sum up, pulls return them, the SSP rule holds
 * a pull back until the slow worker ticks (and not longer), s = 0 gives
 * bulk-synchronous reads, a wrong secret is refused, garbage and oversized
 * frames are dropped without disturbing a working client, a checkpoint is
 * written on stop and read back by a new shard, and gather returns the
 * whole model once every worker is done. The SSP and dead-worker tests run
 * again on shards of three threads (lanes: the workers' connections on
 * different lanes, so held pulls are answered through cross-lane wakes),
 * and many clients pushing the same keys at once into a four-lane shard
 * lose no update.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "net/auth.h"
#include "net_testutil.h"
#include "testutil.h"

#define DIM 1000

/* Threads (lanes) of the shards start_shard starts. */
static unsigned shard_threads = 1;

static int start_shard(struct net_test_shard *st, uint32_t shard, uint32_t n,
		       uint64_t s, const uint8_t *key, const char *ckpt)
{
	struct ps_config c = {
		.shard = shard,
		.n_shards = n,
		.staleness = s,
		.heartbeat_timeout = 2,
		.key = key,
		.checkpoint_dir = ckpt,
		.threads = shard_threads,
	};
	return net_test_shard_start(st, c);
}

static void stop_shard(struct net_test_shard *st)
{
	int rc = net_test_shard_stop(st);
	CHECK(rc == 0, "shard run: %d %s", rc, st->err.message);
}

static struct ps_client *client(struct net_test_shard *sh, int n_shards,
				uint32_t rank, uint32_t n_workers,
				const uint8_t *key, int *rc, boar_error *err)
{
	char a[4][64];
	const char *addrs[4];
	for (int i = 0; i < n_shards; i++) {
		snprintf(a[i], sizeof a[i], "127.0.0.1:%u", sh[i].port);
		addrs[i] = a[i];
	}
	struct ps_client_config c = {
		.addrs = addrs,
		.n_shards = (uint32_t)n_shards,
		.rank = rank,
		.n_workers = n_workers,
		.dim = DIM,
		.key = key,
		.reconnect_timeout = 2,
	};
	struct ps_client *cl = NULL;
	*rc = ps_client_connect(&c, &cl, err);
	return cl;
}

struct pull_job {
	struct ps_client *c;
	uint64_t keys[3];
	float vals[3];
	int rc;
	double done_at;
};

static void *pull_thread(void *arg)
{
	struct pull_job *j = arg;
	boar_error err;
	j->rc = ps_client_pull(j->c, j->keys, 3, j->vals, &err);
	j->done_at = net_now();
	return NULL;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static void test_ssp(uint64_t s)
{
	struct net_test_shard sh[2];
	boar_error err;
	int rc;
	if (start_shard(&sh[0], 0, 2, s, NULL, NULL) ||
	    start_shard(&sh[1], 1, 2, s, NULL, NULL)) {
		test_failures++;
		return;
	}
	struct ps_client *w0 = client(sh, 2, 0, 2, NULL, &rc, &err);
	CHECK(rc == 0, "connect w0: %s", err.message);
	struct ps_client *w1 = client(sh, 2, 1, 2, NULL, &rc, &err);
	CHECK(rc == 0, "connect w1: %s", err.message);
	if (!w0 || !w1)
		return;

	uint64_t keys[3] = { 3, 500, 999 }; /* spans both shards */
	float d[3] = { 1.0f, 2.0f, -3.0f }, v[3];
	CHECK(ps_client_push(w0, keys, d, 3, &err) == 0, "push: %s",
	      err.message);
	CHECK(ps_client_push(w1, keys, d, 3, &err) == 0, "push: %s",
	      err.message);
	/* w0 runs s + 1 clocks ahead: its next pull must wait for w1 */
	for (uint64_t i = 0; i <= s; i++)
		CHECK(ps_client_clock(w0, &err) == 0, "clock");
	CHECK(ps_client_clock(w1, &err) == 0, "clock"); /* w1 at 1 */
	CHECK(ps_client_pull(w1, keys, 3, v, &err) == 0, "pull w1: %s",
	      err.message);
	if (s == 0) /* BSP: w0 finished clock 0, so its push is in */
		CHECK(v[0] == 2.0f && v[1] == 4.0f && v[2] == -6.0f,
		      "pushes summed: expected 2 4 -6, got %g %g %g", v[0],
		      v[1], v[2]);
	else /* SSP promises w1's own push (same connection); w0's may or
	      * may not have reached each shard yet */
		for (int i = 0; i < 3; i++)
			CHECK(v[i] == d[i] || v[i] == 2 * d[i],
			      "key %llu: expected %g or %g, got %g",
			      (unsigned long long)keys[i], d[i], 2 * d[i], v[i]);

	/* w0 is at clock s + 1, w1 at 1: with s = 0 the gap is 0 and it is
	 * served; push w0 one more ahead so that the gap is s + 1. */
	CHECK(ps_client_clock(w0, &err) == 0, "clock");
	struct pull_job j = { .c = w0, .keys = { 3, 500, 999 } };
	pthread_t t;
	double t0 = net_now();
	pthread_create(&t, NULL, pull_thread, &j);
	sleep_ms(300);
	CHECK(j.done_at == 0, "s=%llu: pull at gap s+1 answered early",
	      (unsigned long long)s);
	for (uint64_t i = 0; i < s + 1; i++)
		ps_client_clock(w1, &err);
	pthread_join(t, NULL);
	CHECK(j.rc == 0, "held pull failed");
	CHECK(j.done_at - t0 >= 0.3, "pull returned after %.3f s",
	      j.done_at - t0);

	struct wire_stats st;
	CHECK(ps_client_stats(w1, 0, &st, &err) == 0, "stats: %s",
	      err.message);
	CHECK(st.max_staleness <= s, "max staleness %llu > s %llu",
	      (unsigned long long)st.max_staleness, (unsigned long long)s);
	CHECK(st.pushes == 2, "pushes: expected 2 got %llu",
	      (unsigned long long)st.pushes);

	/* gather waits for both workers to be done */
	float *w = calloc(DIM, sizeof *w);
	ps_client_done(w0, &err);
	ps_client_done(w1, &err);
	CHECK(ps_client_gather(w0, w, &err) == 0, "gather: %s", err.message);
	CHECK(w[3] == 2.0f && w[500] == 4.0f && w[999] == -6.0f && w[4] == 0,
	      "gathered %g %g %g %g", w[3], w[500], w[999], w[4]);
	free(w);
	ps_client_free(w0);
	ps_client_free(w1);
	stop_shard(&sh[0]);
	stop_shard(&sh[1]);
}

static void test_dead_worker(void)
{
	struct net_test_shard sh;
	boar_error err;
	int rc;
	if (start_shard(&sh, 0, 1, 0, NULL, NULL)) {
		test_failures++;
		return;
	}
	struct ps_client *w0 = client(&sh, 1, 0, 2, NULL, &rc, &err);
	struct ps_client *w1 = client(&sh, 1, 1, 2, NULL, &rc, &err);
	uint64_t k[3] = { 1, 2, 3 };
	float v[3];
	ps_client_clock(w0, &err);
	ps_client_free(w1); /* dies at clock 0 */
	double t0 = net_now();
	rc = ps_client_pull(w0, k, 3, v, &err);
	double dt = net_now() - t0;
	CHECK(rc == 0, "pull after a worker died: %s", err.message);
	CHECK(dt > 1.5 && dt < 6, "served after %.2f s, expected about the "
				  "2 s heartbeat timeout", dt);
	struct wire_stats st;
	ps_client_stats(w0, 0, &st, &err);
	CHECK(st.dropped_workers == 1, "dropped %u", st.dropped_workers);
	/* the dead worker rejoins at the others' clock, not at 0 */
	w1 = client(&sh, 1, 1, 2, NULL, &rc, &err);
	CHECK(rc == 0 && ps_client_current_clock(w1) == 1,
	      "rejoined at clock %llu, expected 1",
	      (unsigned long long)(w1 ? ps_client_current_clock(w1) : 0));
	ps_client_free(w0);
	ps_client_free(w1);
	stop_shard(&sh);
}

static void test_auth_and_garbage(void)
{
	uint8_t key[NET_KEY_LEN], bad[NET_KEY_LEN];
	net_auth_key("correct horse battery staple", 28, key);
	net_auth_key("incorrect horse battery staple", 30, bad);
	struct net_test_shard sh;
	boar_error err;
	int rc;
	if (start_shard(&sh, 0, 1, SSP_INF, key, NULL)) {
		test_failures++;
		return;
	}
	/* An impostor's HELLO comes first, claiming a 2^39-key model and 5
	 * workers: without the AUTH it must not shape the shard. */
	uint8_t nonce[WIRE_NONCE_LEN] = { 1 };
	struct wire_out h;
	wire_out_init(&h);
	wire_begin(&h, WIRE_HELLO, 0);
	wire_put_u32(&h, 0);
	wire_put_u32(&h, 5);
	wire_put_u64(&h, 1ull << 39);
	wire_put_u64(&h, 0);
	wire_put_bytes(&h, nonce, sizeof nonce);
	wire_end(&h);
	int imp;
	net_connect("127.0.0.1", sh.port, &imp, &err);
	CHECK(write(imp, h.buf, h.len) == (ssize_t)h.len, "write");
	wire_out_free(&h);
	sleep_ms(100);
	struct ps_client *good = client(&sh, 1, 0, 1, key, &rc, &err);
	CHECK(rc == 0, "right secret refused: %s", err.message);
	struct ps_client *evil = client(&sh, 1, 0, 1, bad, &rc, &err);
	CHECK(rc == BOAR_EAUTH, "wrong secret: expected %d got %d (%s)",
	      BOAR_EAUTH, rc, err.message);
	ps_client_free(evil);
	struct ps_client *none = client(&sh, 1, 0, 1, NULL, &rc, &err);
	CHECK(rc == BOAR_EAUTH, "no secret: expected %d got %d", BOAR_EAUTH,
	      rc);
	ps_client_free(none);

	/* garbage, an oversized header, and a peer that stalls mid-frame */
	int g;
	net_connect("127.0.0.1", sh.port, &g, &err);
	const char junk[] = "GET / HTTP/1.1\r\nHost: boar\r\n\r\n";
	CHECK(write(g, junk, sizeof junk) == sizeof junk, "write");
	char c;
	struct timeval tv = { 3, 0 };
	setsockopt(g, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	ssize_t n;
	while ((n = read(g, &c, 1)) > 0)
		;
	CHECK(n == 0, "garbage peer not dropped (read %zd, errno %d)", n,
	      errno);
	close(g);

	struct wire_out o;
	wire_out_init(&o);
	wire_begin(&o, WIRE_HELLO, 0);
	for (int i = 0; i < 100; i++)
		wire_put_u64(&o, 0); /* 800 bytes > the pre-auth limit */
	wire_end(&o);
	net_connect("127.0.0.1", sh.port, &g, &err);
	setsockopt(g, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	CHECK(write(g, o.buf, o.len) == (ssize_t)o.len, "write");
	while ((n = read(g, &c, 1)) > 0)
		;
	CHECK(n == 0, "oversized pre-auth frame not dropped");
	close(g);
	wire_out_free(&o);

	/* the good client did not notice any of it */
	uint64_t k[2] = { 7, 8 };
	float d[2] = { 1, 1 }, v[2];
	CHECK(ps_client_push(good, k, d, 2, &err) == 0 &&
		      ps_client_pull(good, k, 2, v, &err) == 0 && v[0] == 1.0f,
	      "good client disturbed: %s", err.message);
	ps_client_free(good);
	close(imp);
	stop_shard(&sh);
}

static void test_checkpoint(void)
{
	char dir[] = "/tmp/boar-ckpt-XXXXXX";
	if (!mkdtemp(dir)) {
		test_failures++;
		return;
	}
	struct net_test_shard sh;
	boar_error err;
	int rc;
	start_shard(&sh, 0, 1, 0, NULL, dir);
	struct ps_client *w = client(&sh, 1, 0, 1, NULL, &rc, &err);
	uint64_t k[2] = { 10, 900 };
	float d[2] = { 0.25f, -4 }, v[2];
	ps_client_push(w, k, d, 2, &err);
	ps_client_clock(w, &err);
	ps_client_clock(w, &err);
	ps_client_pull(w, k, 2, v, &err); /* the push is applied by now */
	ps_client_free(w);
	stop_shard(&sh); /* checkpoints on the way out */

	start_shard(&sh, 0, 1, 0, NULL, dir);
	w = client(&sh, 1, 0, 1, NULL, &rc, &err);
	CHECK(rc == 0, "reconnect: %s", err.message);
	CHECK(w && ps_client_current_clock(w) == 2,
	      "clock after restart: expected 2");
	rc = w ? ps_client_pull(w, k, 2, v, &err) : -1;
	CHECK(rc == 0 && v[0] == 0.25f && v[1] == -4.0f,
	      "restored values: expected 0.25 -4 got %g %g", v[0], v[1]);
	ps_client_free(w);
	stop_shard(&sh);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
}

/* Frames cut at every byte, and two frames in one write, are reassembled. */
static void test_fragmented(void)
{
	struct net_test_shard sh;
	boar_error err;
	struct wire_out o;
	struct wire_msg m = { 0 };
	int fd;
	if (start_shard(&sh, 0, 1, SSP_INF, NULL, NULL) ||
	    net_connect("127.0.0.1", sh.port, &fd, &err)) {
		test_failures++;
		return;
	}
	wire_out_init(&o);
	net_test_put_hello(&o, DIM, 0);
	for (size_t i = 0; i < o.len; i++) { /* one byte per segment */
		CHECK(write(fd, o.buf + i, 1) == 1, "write");
		if (i % 16 == 0)
			sleep_ms(1);
	}
	CHECK(net_test_read_frame(fd, &m) == 0 && m.type == WIRE_WELCOME,
	      "welcome after a byte-by-byte HELLO");
	CHECK(net_test_read_frame(fd, &m) == 0 && m.type == WIRE_READY,
	      "ready after the welcome (no secret: joined at once)");

	uint64_t k[3] = { 0, 17, 999 };
	float d[3] = { 0.5f, -1.5f, 8.0f };
	wire_out_reset(&o);
	wire_begin(&o, WIRE_PUSH, 0);
	wire_put_u64(&o, 0);
	wire_put_u64(&o, 1); /* seq */
	wire_put_keys(&o, k, 3);
	wire_put_vals(&o, d, 3, 0);
	wire_end(&o);
	wire_begin(&o, WIRE_PULL, 0);
	wire_put_u32(&o, 5);
	wire_put_u64(&o, 0);
	wire_put_keys(&o, k, 3);
	wire_end(&o);
	/* the push in three pieces, the last carrying the whole pull too */
	size_t cut1 = 5, cut2 = 20;
	CHECK(write(fd, o.buf, cut1) == (ssize_t)cut1, "write");
	sleep_ms(20);
	CHECK(write(fd, o.buf + cut1, cut2 - cut1) == (ssize_t)(cut2 - cut1),
	      "write");
	sleep_ms(20);
	CHECK(write(fd, o.buf + cut2, o.len - cut2) == (ssize_t)(o.len - cut2),
	      "write");
	int rc = net_test_read_frame(fd, &m);
	CHECK(rc == 0 && m.type == WIRE_PULL_REPLY && m.req == 5 &&
		      m.n_vals == 3,
	      "pull reply after a fragmented push (rc %d type %d)", rc, m.type);
	for (uint32_t i = 0; i < 3 && i < m.n_vals; i++)
		CHECK(m.vals[i] == d[i], "key %llu: expected %g got %g",
		      (unsigned long long)k[i], d[i], m.vals[i]);
	close(fd);
	wire_out_free(&o);
	wire_msg_free(&m);
	stop_shard(&sh);
}

struct sum_job {
	struct net_test_shard *sh;
	uint32_t rank, n;
	int rc;
	float *w;            /* rank 0: the gathered model */
	struct wire_stats st; /* rank 0: the shard's counters after it */
};

/* Worker `rank` pushes 1 to every key ROUNDS times, then says done;
 * worker 0 then gathers (answered once all are done) and asks for the
 * counters. */
#define ROUNDS 100
static void *sum_thread(void *arg)
{
	struct sum_job *j = arg;
	boar_error err;
	int rc;
	struct ps_client *c = client(j->sh, 1, j->rank, j->n, NULL, &rc, &err);
	uint64_t *keys = malloc(DIM * sizeof *keys);
	float *d = malloc(DIM * sizeof *d);
	for (uint32_t k = 0; k < DIM; k++) {
		keys[k] = k;
		d[k] = 1.0f;
	}
	for (int r = 0; !rc && r < ROUNDS; r++)
		rc = ps_client_push(c, keys, d, DIM, &err);
	if (!rc)
		rc = ps_client_done(c, &err);
	if (!rc && j->rank == 0)
		rc = ps_client_gather(c, j->w, &err);
	if (!rc && j->rank == 0)
		rc = ps_client_stats(c, 0, &j->st, &err);
	j->rc = rc;
	if (rc)
		fprintf(stderr, "worker %u: %s\n", j->rank, err.message);
	free(keys);
	free(d);
	ps_client_free(c);
	return NULL;
}

/* Six workers push the same keys at once into a shard of four lanes:
 * every key ends at exactly 6 * ROUNDS (integers: any order sums alike),
 * and the shard counted every push. */
static void test_lanes_sum(void)
{
	enum { W = 6 };
	struct net_test_shard sh;
	shard_threads = 4;
	int bad = start_shard(&sh, 0, 1, SSP_INF, NULL, NULL);
	shard_threads = 1;
	if (bad) {
		test_failures++;
		return;
	}
	struct sum_job jobs[W];
	pthread_t t[W];
	float *w = calloc(DIM, sizeof *w);
	for (uint32_t i = 0; i < W; i++) {
		jobs[i] = (struct sum_job){ &sh, i, W, 0, w, { 0 } };
		pthread_create(&t[i], NULL, sum_thread, &jobs[i]);
	}
	for (int i = 0; i < W; i++) {
		pthread_join(t[i], NULL);
		CHECK(jobs[i].rc == 0, "worker %d failed", i);
	}
	int wrong = 0;
	for (int k = 0; k < DIM; k++)
		wrong += w[k] != (float)(W * ROUNDS);
	CHECK(!wrong, "%d keys lost updates (key 0: %g, want %d)", wrong,
	      w[0], W * ROUNDS);
	CHECK(jobs[0].st.pushes == W * ROUNDS, "pushes counted: %llu",
	      (unsigned long long)jobs[0].st.pushes);
	free(w);
	stop_shard(&sh);
}

int main(void)
{
	if (!net_test_loopback())
		TEST_SKIP("no loopback networking");
	test_ssp(0);
	test_ssp(2);
	test_dead_worker();
	test_auth_and_garbage();
	test_checkpoint();
	test_fragmented();
	shard_threads = 3;
	test_ssp(0);
	test_ssp(2);
	test_dead_worker();
	shard_threads = 1;
	test_lanes_sum();
	return TEST_RESULT();
}
