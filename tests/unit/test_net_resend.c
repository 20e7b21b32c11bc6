/* test_net_resend.c - pushes to a durable shard survive its death.
 *
 * A scripted shard on a raw socket says it logs pushes (READY durable),
 * reads three numbered pushes, then dies without answering the request
 * that follows them; its "restart" says it holds only the first. The
 * client must reconnect, send pushes 2 and 3 again, byte for byte the
 * same, then the request, then go on numbering from 4. And a real shard
 * with a checkpoint directory (so durable) applies a push it already
 * holds (same seq, sent twice) once.
 */
#include <stdlib.h>

#include "net_testutil.h"
#include "testutil.h"

#define DIM 100

struct script {
	int lfd;
	uint64_t seqs[8]; /* of the pushes seen on the second connection */
	float first[8];   /* their first value */
	int n, stats_after, ok;
};

static void *scripted_shard(void *arg)
{
	struct script *sc = arg;
	struct net_test_peer p;
	net_test_peer_init(&p);
	/* READY durable: the client keeps pushes until they are logged */
	if (net_test_peer_accept(&p, sc->lfd, DIM, 0, 1))
		goto out;
	/* three pushes, seq 1..3 (a CLOCK may come first), then STATS */
	for (uint64_t want = 1;;) {
		if (net_test_peer_read(&p))
			goto out;
		if (p.m.type == WIRE_STATS && want == 4)
			break;
		if (p.m.type == WIRE_PUSH && p.m.seq != want++) {
			fprintf(stderr, "first life: push seq %llu\n",
				(unsigned long long)p.m.seq);
			goto out;
		}
	}
	/* dies before answering, and comes back holding push 1 alone */
	if (net_test_peer_accept(&p, sc->lfd, DIM, 1, 1))
		goto out;
	while (!net_test_peer_read(&p)) {
		if (p.m.type == WIRE_STATS) {
			net_test_peer_answer_stats(&p);
			sc->stats_after = sc->n;
		} else if (p.m.type == WIRE_PUSH && sc->n < 8) {
			sc->seqs[sc->n] = p.m.seq;
			sc->first[sc->n++] = p.m.n_vals ? p.m.vals[0] : 0;
		}
	}
	sc->ok = 1;
out:
	net_test_peer_free(&p);
	return NULL;
}

static void test_resend(void)
{
	unsigned port;
	struct script sc = { .lfd = net_test_listen(&port) };
	pthread_t t;
	boar_error err;
	struct ps_client *c = net_test_scripted_client(
		sc.lfd, port, DIM, scripted_shard, &sc, &t, &err);
	CHECK(c != NULL, "connect: %s", err.message);
	if (!c)
		return;
	uint64_t k = 7;
	for (int i = 1; i <= 3; i++) {
		float v = (float)i;
		CHECK(ps_client_push(c, &k, &v, 1, &err) == 0, "push %d", i);
	}
	struct wire_stats st;
	CHECK(ps_client_stats(c, 0, &st, &err) == 0, "stats across the "
	      "restart: %s", err.message);
	float v = 4;
	CHECK(ps_client_push(c, &k, &v, 1, &err) == 0, "push 4");
	struct ps_client_counters n;
	ps_client_get_counters(c, &n);
	ps_client_free(c); /* the scripted shard sees the end */
	pthread_join(t, NULL);
	close(sc.lfd);
	CHECK(sc.ok, "the scripted shard's exchange broke off");
	CHECK(sc.n == 3 && sc.seqs[0] == 2 && sc.seqs[1] == 3 &&
	      sc.seqs[2] == 4, "after the restart: %d pushes, seqs %llu "
	      "%llu %llu (want 2 3 4)", sc.n,
	      (unsigned long long)sc.seqs[0], (unsigned long long)sc.seqs[1],
	      (unsigned long long)sc.seqs[2]);
	CHECK(sc.first[0] == 2 && sc.first[1] == 3 && sc.first[2] == 4,
	      "resent values %g %g, then %g", sc.first[0], sc.first[1],
	      sc.first[2]);
	CHECK(sc.stats_after == 2, "the request went before the resent "
	      "pushes (%d)", sc.stats_after);
	CHECK(n.resent == 2, "resent counter %llu, want 2",
	      (unsigned long long)n.resent);
}

/* Sends one frame: PUSH seq 1 of key 3, value 1. */
static void raw_push(int fd, struct wire_out *o)
{
	uint64_t k = 3;
	float v = 1;
	wire_begin(o, WIRE_PUSH, 0);
	wire_put_u64(o, 0);
	wire_put_u64(o, 1);
	wire_put_keys(o, &k, 1);
	wire_put_vals(o, &v, 1, 0);
	wire_end(o);
	net_test_send(fd, o);
}

/* The same numbered push twice into a real shard that logs pushes (it
 * has a checkpoint directory): READY says durable, the push is applied
 * once, the shard counts one push and says it holds seq 1. */
static void test_dedup(void)
{
	char dir[] = "/tmp/boar-resend-XXXXXX";
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	struct net_test_shard sh;
	struct ps_config pc = { .shard = 0, .n_shards = 1,
				.staleness = SSP_INF, .checkpoint_dir = dir };
	boar_error err;
	if (net_test_shard_start(&sh, pc)) {
		CHECK(0, "shard did not start");
		return;
	}
	int fd = -1;
	struct wire_out o;
	struct wire_msg m = { 0 };
	wire_out_init(&o);
	CHECK(net_connect("127.0.0.1", sh.port, &fd, &err) == 0, "connect");
	net_test_put_hello(&o, DIM, 1);
	net_test_send(fd, &o);
	CHECK(net_test_read_frame(fd, &m) == 0 && m.type == WIRE_WELCOME,
	      "WELCOME");
	CHECK(net_test_read_frame(fd, &m) == 0 && m.type == WIRE_READY &&
	      m.durable && m.seq == 0, "READY: durable %d seq %llu", m.durable,
	      (unsigned long long)m.seq);
	raw_push(fd, &o);
	raw_push(fd, &o); /* resent: the shard holds it already */
	uint64_t k = 3;
	wire_begin(&o, WIRE_PULL, 0);
	wire_put_u32(&o, 9);
	wire_put_u64(&o, 0);
	wire_put_keys(&o, &k, 1);
	wire_end(&o);
	net_test_send(fd, &o);
	CHECK(net_test_read_frame(fd, &m) == 0 && m.type == WIRE_PULL_REPLY &&
	      m.n_vals == 1 && m.vals[0] == 1.0f,
	      "pulled %g after the same push twice (want 1)",
	      m.n_vals ? m.vals[0] : -1.0);
	close(fd);
	struct wire_stats st;
	ps_server_stats(sh.s, &st);
	CHECK(st.pushes == 1, "the shard counted %llu pushes, want 1",
	      (unsigned long long)st.pushes);
	net_test_shard_stop(&sh);
	wire_out_free(&o);
	wire_msg_free(&m);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
}

int main(void)
{
	if (!net_test_loopback())
		TEST_SKIP("no loopback networking");
	test_resend();
	test_dedup();
	return TEST_RESULT();
}
