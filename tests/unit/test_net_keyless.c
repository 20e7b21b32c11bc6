/* test_net_keyless.c - pushes that name their pull instead of carrying
 * its keys (WIRE_F_PULLED).
 *
 * The frame: encoded and decoded (float32 and float16), every truncation,
 * a lying count, trailing bytes and the flag on another type refused. A
 * real shard: a push naming the clock's pull, after the next clock's pull
 * was asked, adds to that pull's keys (and counts them) as a keyed push
 * would; one naming a pull it never saw on this connection, one older
 * than the pulls it keeps, one of another count, and any to a shard that
 * logs pushes, are refused with an ERROR saying why and the peer
 * dropped. A client against a scripted shard: ps_client_push_pulled names
 * the pull collected last, ps_client_push_pulled_before the one before
 * it (the next clock's pull collected before this clock's push), and
 * either carries its keys where the keys differ,
 * after a reconnect (the new connection never saw the pull) and to a
 * durable shard; with BOAR_PS_CHECK_PULLED a push whose keys differ from
 * the pull's only in the middle is an error.
 */
#include <stdlib.h>

#include "net/client_int.h"
#include "net_testutil.h"
#include "testutil.h"

#define DIM 100

/* ------------------------------------------------------------ the frame */

static void put_keyless(struct wire_out *o, uint32_t req, const float *v,
			uint32_t n, int f16)
{
	wire_begin_push_pulled(o, 4, 17, req, n, f16);
	wire_put_vals(o, v, n, f16);
	wire_end(o);
}

static void test_frame(void)
{
	const float v[3] = { 0.5f, -2.0f, 3.25f };
	struct wire_out o;
	struct wire_msg m = { 0 };
	wire_out_init(&o);
	for (int f16 = 0; f16 <= 1; f16++) {
		wire_out_reset(&o);
		put_keyless(&o, 42, v, 3, f16);
		int rc = wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m);
		CHECK(rc == 0 && m.type == WIRE_PUSH &&
			      (m.flags & WIRE_F_PULLED) && m.req == 42 &&
			      m.clock == 4 && m.seq == 17 && m.n_keys == 0 &&
			      m.n_vals == 3 && m.vals[0] == 0.5f &&
			      m.vals[1] == -2.0f && m.vals[2] == 3.25f,
		      "f16 %d: rc %d req %u keys %u vals %u", f16, rc, m.req,
		      m.n_keys, m.n_vals);
		/* every shorter frame (its length patched to match) fails */
		for (size_t len = WIRE_HDR_LEN; len < o.len; len++) {
			uint8_t b[64];
			memcpy(b, o.buf, len);
			uint32_t pl = (uint32_t)(len - WIRE_HDR_LEN);
			memcpy(b + 8, &pl, 4);
			CHECK(wire_decode_frame(b, len, WIRE_MAX_PAYLOAD, &m) != 0,
			      "f16 %d: a frame cut to %zu bytes decoded", f16,
			      len);
		}
	}
	/* a count over the values present, a byte left over */
	wire_out_reset(&o);
	wire_begin_push_pulled(&o, 0, 1, 1, 4, 0);
	wire_put_vals(&o, v, 3, 0);
	wire_end(&o);
	CHECK(wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m) != 0,
	      "a count of 4 with 3 values decoded");
	wire_out_reset(&o);
	wire_begin_push_pulled(&o, 0, 1, 1, 3, 0);
	wire_put_vals(&o, v, 3, 0);
	wire_put_u8(&o, 0);
	wire_end(&o);
	CHECK(wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m) != 0,
	      "a byte after the values decoded");
	/* the flag means something only on a PUSH */
	const int other[] = { WIRE_PULL, WIRE_PULL_REPLY, WIRE_CLOCK };
	for (int i = 0; i < 3; i++) {
		wire_out_reset(&o);
		wire_begin(&o, other[i], WIRE_F_PULLED);
		wire_put_u32(&o, 1);
		wire_put_u64(&o, 0);
		wire_put_varint(&o, 0);
		wire_end(&o);
		CHECK(wire_decode_frame(o.buf, o.len, WIRE_MAX_PAYLOAD, &m) != 0,
		      "type %d with WIRE_F_PULLED decoded", other[i]);
	}
	wire_out_free(&o);
	wire_msg_free(&m);
}

/* ----------------------------------------------------- a real shard */

/* PULL req of keys at clock; its answer into m. @return 0 or -1. */
static int pull(int fd, struct wire_out *o, struct wire_msg *m, uint32_t req,
		uint64_t clock, const uint64_t *keys, uint32_t n)
{
	wire_begin(o, WIRE_PULL, 0);
	wire_put_u32(o, req);
	wire_put_u64(o, clock);
	wire_put_keys(o, keys, n);
	wire_end(o);
	net_test_send(fd, o);
	return net_test_read_frame(fd, m) || m->type != WIRE_PULL_REPLY ||
			       m->req != req || m->n_vals != n
		       ? -1
		       : 0;
}

/* A push of n values naming pull req must be refused: the ERROR's text
 * holds `why`, and the connection ends. */
static void refused(int fd, struct wire_out *o, struct wire_msg *m,
		    uint32_t req, uint32_t n, const char *why)
{
	const float v[4] = { 1, 1, 1, 1 };
	put_keyless(o, req, v, n, 0);
	net_test_send(fd, o);
	int rc = net_test_refused(fd, m, why);
	CHECK(!(rc & 1),
	      "push naming pull %u (%u values): type %d, want an ERROR with "
	      "'%s'", req, n, m->type, why);
	CHECK(!(rc & 2), "the peer was not dropped");
}

static void test_shard(void)
{
	struct net_test_shard sh;
	struct ps_config pc = { .shard = 0, .n_shards = 1, .staleness = 1 };
	if (net_test_shard_start(&sh, pc)) {
		CHECK(0, "shard did not start");
		return;
	}
	struct wire_out o;
	struct wire_msg m = { 0 };
	wire_out_init(&o);
	int durable = -1;
	int fd = net_test_join(sh.port, DIM, &o, &m, &durable);
	CHECK(fd >= 0 && durable == 0, "join: fd %d durable %d", fd, durable);
	const uint64_t k1[3] = { 3, 5, 9 }, k2[2] = { 1, 2 };
	const uint64_t all[4] = { 1, 3, 5, 9 };
	const float d[3] = { 1, 2, 3 };
	/* clock 0's pull, clock 1's asked ahead, then clock 0's push */
	CHECK(pull(fd, &o, &m, 1, 0, k1, 3) == 0, "pull 1");
	CHECK(pull(fd, &o, &m, 2, 1, k2, 2) == 0, "pull 2 (ahead)");
	put_keyless(&o, 1, d, 3, 0);
	net_test_send(fd, &o);
	CHECK(pull(fd, &o, &m, 3, 0, all, 4) == 0 && m.vals[0] == 0 &&
		      m.vals[1] == 1 && m.vals[2] == 2 && m.vals[3] == 3,
	      "after the push naming pull 1: %g %g %g %g (want 0 1 2 3)",
	      m.vals[0], m.vals[1], m.vals[2], m.vals[3]);
	struct wire_stats st;
	ps_server_stats(sh.s, &st);
	CHECK(st.pushes == 1 && st.keys_pushed == 3,
	      "counted %llu pushes of %llu keys (want 1, 3)",
	      (unsigned long long)st.pushes,
	      (unsigned long long)st.keys_pushed);
	/* pulls 2..5 kept: pull 1 is gone */
	CHECK(pull(fd, &o, &m, 4, 0, k2, 2) == 0, "pull 4");
	CHECK(pull(fd, &o, &m, 5, 0, k2, 2) == 0, "pull 5");
	refused(fd, &o, &m, 1, 3, "pull request 1,");

	/* a new connection never saw pull 5 */
	fd = net_test_join(sh.port, DIM, &o, &m, &durable);
	CHECK(fd >= 0, "rejoin");
	refused(fd, &o, &m, 5, 2, "did not make");
	/* nor a count other than the pull's */
	fd = net_test_join(sh.port, DIM, &o, &m, &durable);
	CHECK(fd >= 0 && pull(fd, &o, &m, 6, 0, k1, 3) == 0, "pull 6");
	refused(fd, &o, &m, 6, 2, "pushed 2 values for the 3 keys");
	/* nor a float16 value that is infinite (1e6 is past 65504) */
	fd = net_test_join(sh.port, DIM, &o, &m, &durable);
	CHECK(fd >= 0 && pull(fd, &o, &m, 7, 0, k1, 3) == 0, "pull 7");
	const float big[3] = { 1, 1e6f, 1 };
	put_keyless(&o, 7, big, 3, 1);
	net_test_send(fd, &o);
	int rc = net_test_refused(fd, &m, "non-finite");
	CHECK(rc == 0, "a float16 push holding infinity: type %d, rc %d",
	      m.type, rc);
	ps_server_stats(sh.s, &st);
	CHECK(st.pushes == 1 && st.keys_pushed == 3,
	      "refused pushes were counted: %llu pushes",
	      (unsigned long long)st.pushes);
	net_test_shard_stop(&sh);

	/* a shard that logs pushes takes none without keys */
	char dir[] = "/tmp/boar-keyless-XXXXXX";
	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	pc.checkpoint_dir = dir;
	if (net_test_shard_start(&sh, pc)) {
		CHECK(0, "durable shard did not start");
	} else {
		fd = net_test_join(sh.port, DIM, &o, &m, &durable);
		CHECK(fd >= 0 && durable == 1, "durable join: %d", durable);
		CHECK(pull(fd, &o, &m, 1, 0, k1, 3) == 0, "durable pull");
		refused(fd, &o, &m, 1, 3, "keeps pushes");
		net_test_shard_stop(&sh);
	}
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	wire_out_free(&o);
	wire_msg_free(&m);
}

/* ------------------------------------------- a client, a scripted shard */

struct seen_push {
	int pulled;   /* WIRE_F_PULLED */
	uint32_t req; /* with it: the pull named */
	uint32_t n_keys, n_vals;
};

struct script {
	int lfd;
	uint32_t pull_req[8]; /* the reqs of the pulls, in order */
	int n_pulls;
	struct seen_push push[8];
	int n_push;
	int ok;
};

/* Answers pulls with zeros, records pushes; each STATS closes the
 * connection unanswered and takes the reconnect (the second one's READY
 * says durable), then answers the STATS sent again. */
static void *scripted_shard(void *arg)
{
	struct script *sc = arg;
	struct net_test_peer p;
	net_test_peer_init(&p);
	int lives = 0;
	if (net_test_peer_accept(&p, sc->lfd, DIM, 0, 0))
		goto out;
	while (!net_test_peer_read(&p)) {
		struct wire_msg *m = &p.m;
		if (m->type == WIRE_PULL && sc->n_pulls < 8) {
			sc->pull_req[sc->n_pulls++] = m->req;
			wire_begin(&p.o, WIRE_PULL_REPLY, 0);
			wire_put_u32(&p.o, m->req);
			wire_put_u32(&p.o, 0);
			wire_put_varint(&p.o, m->n_keys);
			for (uint32_t i = 0; i < m->n_keys; i++)
				wire_put_u32(&p.o, 0);
			wire_end(&p.o);
			net_test_send(p.fd, &p.o);
		} else if (m->type == WIRE_PUSH && sc->n_push < 8) {
			sc->push[sc->n_push++] = (struct seen_push){
				(m->flags & WIRE_F_PULLED) != 0, m->req,
				m->n_keys, m->n_vals };
		} else if (m->type == WIRE_STATS) {
			if (net_test_peer_accept(&p, sc->lfd, DIM,
						 sc->n_push + 10, lives++))
				goto out;
			if (net_test_peer_read(&p) || p.m.type != WIRE_STATS)
				goto out;
			net_test_peer_answer_stats(&p);
		}
	}
	sc->ok = 1;
out:
	net_test_peer_free(&p);
	return NULL;
}

static void test_client(void)
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
	/* other keys: another last key; mid: only a middle one differs,
	 * which only the full check (BOAR_PS_CHECK_PULLED) sees */
	const uint64_t k[3] = { 3, 5, 9 }, other[3] = { 3, 5, 10 };
	const uint64_t mid[3] = { 3, 6, 9 }, next[3] = { 4, 5, 8 };
	const float d[3] = { 1, 2, 3 };
	float v[3];
	struct wire_stats st;
	int rc = ps_client_pull(c, k, 3, v, &err);
	rc |= ps_client_push_pulled(c, k, d, 3, &err);      /* names it */
	rc |= ps_client_push_pulled(c, other, d, 3, &err);  /* keyed */
	rc |= ps_client_stats(c, 0, &st, &err);             /* reconnects */
	rc |= ps_client_push_pulled(c, k, d, 3, &err);      /* keyed */
	rc |= ps_client_pull(c, k, 3, v, &err);
	rc |= ps_client_push_pulled(c, k, d, 3, &err);      /* names it */
	rc |= ps_client_pull(c, next, 3, v, &err);          /* the next */
	rc |= ps_client_push_pulled_before(c, k, d, 3, &err); /* k's */
	rc |= ps_client_push_pulled(c, next, d, 3, &err);   /* next's */
	rc |= ps_client_push_pulled_before(c, other, d, 3, &err); /* keyed */
	rc |= ps_client_stats(c, 0, &st, &err);             /* durable now */
	rc |= ps_client_pull(c, k, 3, v, &err);
	rc |= ps_client_push_pulled(c, k, d, 3, &err);      /* keyed */
	CHECK(rc == 0, "client calls: %s", err.message);
	c->check_pulled = 1; /* BOAR_PS_CHECK_PULLED=1 as it was made */
	rc = ps_client_pull(c, k, 3, v, &err);
	CHECK(rc == 0, "pull: %s", err.message);
	rc = ps_client_push_pulled(c, mid, d, 3, &err);
	CHECK(rc == BOAR_EINVAL && strstr(err.message, "other keys"),
	      "a push of other keys than the pull's, checked in full: rc %d "
	      "(%s)", rc, rc ? err.message : "");
	struct ps_client_counters n;
	ps_client_get_counters(c, &n);
	ps_client_free(c);
	pthread_join(t, NULL);
	close(sc.lfd);
	CHECK(sc.ok && sc.n_pulls == 5 && sc.n_push == 8,
	      "the scripted shard saw %d pulls, %d pushes (ok %d)",
	      sc.n_pulls, sc.n_push, sc.ok);
	const int want[8] = { 1, 0, 0, 1, 1, 1, 0, 0 };
	const int named[8] = { 0, -1, -1, 1, 1, 2, -1, -1 };
	for (int i = 0; i < 8 && i < sc.n_push; i++) {
		const struct seen_push *p = &sc.push[i];
		CHECK(p->pulled == want[i] && p->n_vals == 3 &&
			      p->n_keys == (p->pulled ? 0u : 3u),
		      "push %d: pulled %d, %u keys, %u values (want pulled "
		      "%d)", i, p->pulled, p->n_keys, p->n_vals, want[i]);
		if (want[i] && named[i] < sc.n_pulls)
			CHECK(p->req == sc.pull_req[named[i]],
			      "push %d names pull %u, want %u", i, p->req,
			      sc.pull_req[named[i]]);
	}
	CHECK(n.keys_keyless == 12 && n.keys_pushed == 24,
	      "counters: %llu keys without their list of %llu (want 12, 24)",
	      (unsigned long long)n.keys_keyless,
	      (unsigned long long)n.keys_pushed);
}

int main(void)
{
	test_frame();
	if (!net_test_loopback())
		TEST_SKIP("no loopback networking");
	test_shard();
	test_client();
	return TEST_RESULT();
}
