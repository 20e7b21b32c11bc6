/* test_net_async.c - a client with a background thread
 * (ps_client_start_async) gives what the client gives without one: a pull
 * asked ahead counts this worker's pushes once whether the shard answered
 * at once or held the answer for the worker's own clock (which the thread
 * must send while it waits for that answer); an answer lost with its
 * connection is asked again after the queued pushes and clock went; a
 * peer that dies or lies gives an error naming it, never a hang. The
 * first two also where the answer is decoded into the caller's array
 * (ps_client_pull_ahead_into).
 */
#include <stdlib.h>

#include "net_testutil.h"
#include "testutil.h"

#define DIM 16

static struct ps_client *async_worker(unsigned port, uint32_t rank,
				      uint32_t n, double reconnect)
{
	boar_error err;
	struct ps_client *c = net_test_client(port, rank, n, DIM, NULL,
					      reconnect, &err);
	CHECK(c != NULL, "connect: %s", err.message);
	if (c)
		CHECK(ps_client_start_async(c, &err) == 0, "async: %s",
		      err.message);
	return c;
}

/* A pull asked ahead into v (ps_client_pull_ahead_into: the thread
 * decodes the answer there) where `into`, else into the thread's buffer. */
static int ask_ahead(struct ps_client *c, const uint64_t *keys, uint32_t n,
		     float *v, int into, boar_error *err)
{
	return into ? ps_client_pull_ahead_into(c, keys, n, v, err)
		    : ps_client_pull_ahead(c, keys, n, err);
}

/* Staleness inf: the shard answers at once, before the pushes queued
 * after the request; the client adds them (to the answer where it was
 * decoded in the caller's array too). */
static void answered_at_once(int into)
{
	struct net_test_shard sh;
	struct ps_config pc = { .shard = 0, .n_shards = 1,
				.staleness = SSP_INF, .heartbeat_timeout = 5 };
	if (net_test_shard_start(&sh, pc)) {
		test_failures++;
		return;
	}
	struct ps_client *c = async_worker(sh.port, 0, 1, 2);
	boar_error err;
	uint64_t k1 = 1, ahead[3] = { 1, 2, 3 }, pk[3] = { 2, 3, 4 };
	uint64_t all[4] = { 1, 2, 3, 4 };
	float one = 1, d[3] = { 2, 3, 4 }, v[4], st[1];
	for (int clock = 0; c && clock < 3; clock++) {
		CHECK(ps_client_push(c, &k1, &one, 1, &err) == 0, "push");
		CHECK(ask_ahead(c, ahead, 3, v, into, &err) == 0, "ahead: %s",
		      err.message);
		CHECK(ps_client_pull(c, &k1, 1, st, &err) == BOAR_EINVAL,
		      "a pull went out while one asked ahead waited");
		CHECK(ps_client_push(c, pk, d, 3, &err) == 0, "push 2");
		d[0] = d[1] = d[2] = -1; /* the client copied them */
		CHECK(ps_client_clock(c, &err) == 0, "clock");
		CHECK(ps_client_pull_collect(c, ahead, 3, v, &err) == 0,
		      "collect: %s", err.message);
		float w = (float)clock + 1;
		CHECK(v[0] == w && v[1] == 2 * w && v[2] == 3 * w,
		      "into %d, clock %d: collected %g %g %g, want %g %g %g",
		      into, clock, v[0], v[1], v[2], w, 2 * w, 3 * w);
		d[0] = 2, d[1] = 3, d[2] = 4;
	}
	CHECK(c && ps_client_pull(c, all, 4, v, &err) == 0, "pull");
	CHECK(v[0] == 3 && v[1] == 6 && v[2] == 9 && v[3] == 12,
	      "the shard holds %g %g %g %g, want 3 6 9 12", v[0], v[1], v[2],
	      v[3]);
	CHECK(c && ps_client_current_clock(c) == 3, "clock %llu, want 3",
	      (unsigned long long)(c ? ps_client_current_clock(c) : 0));
	ps_client_free(c);
	net_test_shard_stop(&sh);
}

/* Staleness 0, two workers: worker 0's answer is held until its own
 * clock comes, which its thread sends while it waits for the answer. */
static void held(int into)
{
	struct net_test_shard sh;
	struct ps_config pc = { .shard = 0, .n_shards = 1, .staleness = 0,
				.heartbeat_timeout = 5 };
	if (net_test_shard_start(&sh, pc)) {
		test_failures++;
		return;
	}
	struct ps_client *w0 = async_worker(sh.port, 0, 2, 2);
	struct ps_client *w1 = async_worker(sh.port, 1, 2, 2);
	boar_error err;
	uint64_t k[2] = { 5, 6 };
	float d[2] = { 5, 6 }, v[2] = { -1, -1 };
	CHECK(w0 && ask_ahead(w0, k, 2, v, into, &err) == 0, "ahead");
	CHECK(w0 && ps_client_push(w0, k, d, 2, &err) == 0, "push");
	CHECK(w0 && ps_client_clock(w0, &err) == 0, "clock 0");
	CHECK(w1 && ps_client_clock(w1, &err) == 0, "clock 1");
	CHECK(w0 && ps_client_pull_collect(w0, k, 2, v, &err) == 0,
	      "collect: %s", err.message);
	CHECK(v[0] == 5 && v[1] == 6, "collected %g %g, want 5 6", v[0],
	      v[1]);
	ps_client_free(w0);
	ps_client_free(w1);
	net_test_shard_stop(&sh);
}

/* A scripted shard: greets, reads frames until a PULL, then as `mode`
 * says. */
enum mode { LIE, DIE, DROP };

struct peer {
	int lfd;
	enum mode mode;
	uint64_t asked_again_at; /* DROP: the clock of the second PULL */
	char addr[64];
};

static void send_out(int fd, struct wire_out *o)
{
	if (write(fd, o->buf, o->len) != (ssize_t)o->len)
		perror("write");
	wire_out_reset(o);
}

static int greet(int fd, struct wire_out *o, struct wire_msg *m)
{
	if (net_test_read_frame(fd, m) || m->type != WIRE_HELLO)
		return -1;
	uint8_t zero[WIRE_NONCE_LEN + WIRE_MAC_LEN] = { 0 };
	wire_begin(o, WIRE_WELCOME, 0);
	wire_put_u32(o, 0);
	wire_put_u32(o, 1);
	wire_put_u64(o, 0);
	wire_put_u64(o, DIM);
	wire_put_u64(o, 0);
	wire_put_u8(o, 0);
	wire_put_bytes(o, zero, sizeof zero);
	wire_end(o);
	wire_put_ready(o, 0, 0, 0);
	send_out(fd, o);
	return 0;
}

static void reply(int fd, struct wire_out *o, uint32_t req, uint32_t n)
{
	float v[4] = { 10, 20, 30, 40 };
	wire_begin(o, WIRE_PULL_REPLY, 0);
	wire_put_u32(o, req);
	wire_put_u32(o, 0);
	wire_put_varint(o, n);
	wire_put_vals(o, v, n, 0);
	wire_end(o);
	send_out(fd, o);
}

/* Reads frames until a PULL (its req and key count out). @return 0, or -1 at the connection's end. */
static int until_pull(int fd, struct wire_msg *m, uint32_t *req,
		      uint32_t *n)
{
	for (;;) {
		if (net_test_read_frame(fd, m))
			return -1;
		if (m->type == WIRE_PULL) {
			*req = m->req;
			*n = m->n_keys;
			return 0;
		}
	}
}

static void *scripted(void *arg)
{
	struct peer *p = arg;
	struct wire_msg m = { 0 };
	struct wire_out o;
	uint32_t req, n;
	wire_out_init(&o);
	int fd = accept(p->lfd, NULL, NULL);
	if (fd < 0 || greet(fd, &o, &m) || until_pull(fd, &m, &req, &n))
		goto out;
	if (p->mode == LIE) {
		reply(fd, &o, req + 7, n); /* another request's number */
	} else if (p->mode == DIE) { /* and no restart: refused */
		close(p->lfd);
		p->lfd = -1;
		goto out;
	} else { /* DROP: dies without answering, comes back at once */
		close(fd);
		fd = accept(p->lfd, NULL, NULL);
		if (fd < 0 || greet(fd, &o, &m) ||
		    until_pull(fd, &m, &req, &n))
			goto out;
		p->asked_again_at = m.clock;
		reply(fd, &o, req, n);
	}
	while (!net_test_read_frame(fd, &m)) /* until the client goes */
		;
out:
	if (fd >= 0)
		close(fd);
	wire_out_free(&o);
	wire_msg_free(&m);
	return NULL;
}

/* One clock against a scripted peer: ask ahead, push, clock, collect.
 * @return what collect returned (*err: why). */
static int one_clock(enum mode mode, struct peer *p, float *v,
		     boar_error *err)
{
	unsigned port;
	pthread_t t;
	p->mode = mode;
	p->lfd = net_test_listen(&port);
	CHECK(p->lfd >= 0, "listen");
	pthread_create(&t, NULL, scripted, p);
	struct ps_client *c = async_worker(port, 0, 1, 0.5);
	uint64_t k[2] = { 3, 4 };
	float d[2] = { 1, 1 };
	/* the thread's error comes with whichever call is next */
	int rc = c ? ps_client_pull_ahead(c, k, 2, err) : -1;
	if (!rc)
		rc = ps_client_push(c, k, d, 2, err);
	if (!rc)
		rc = ps_client_clock(c, err);
	if (!rc)
		rc = ps_client_pull_collect(c, k, 2, v, err);
	ps_client_free(c);
	pthread_join(t, NULL);
	if (p->lfd >= 0)
		close(p->lfd);
	snprintf(p->addr, sizeof p->addr, "127.0.0.1:%u", port);
	return rc;
}

int main(void)
{
	if (!net_test_loopback())
		TEST_SKIP("no loopback networking");
	for (int into = 0; into < 2; into++) {
		answered_at_once(into);
		held(into);
	}

	boar_error err = { 0 };
	float v[2] = { -1, -1 };
	struct peer p = { 0 };
	/* an answer lost with its connection: asked again at clock 1, once
	 * the push and clock queued went; its values are the shard's as
	 * they come (nothing added) */
	int rc = one_clock(DROP, &p, v, &err);
	CHECK(rc == 0, "dropped answer: %s", err.message);
	CHECK(p.asked_again_at == 1, "asked again at clock %llu, want 1",
	      (unsigned long long)p.asked_again_at);
	CHECK(v[0] == 10 && v[1] == 20, "collected %g %g, want 10 20", v[0],
	      v[1]);

	rc = one_clock(LIE, &p, v, &err);
	CHECK(rc == BOAR_EPROTO && strstr(err.message, p.addr) &&
		      strstr(err.message, "does not match"),
	      "a lying peer gave %d: %s", rc, err.message);

	rc = one_clock(DIE, &p, v, &err);
	CHECK(rc == BOAR_ENET && strstr(err.message, p.addr),
	      "a dead peer gave %d: %s", rc, err.message);
	return TEST_RESULT();
}
