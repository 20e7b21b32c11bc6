/* test_net_loop_later.c - frames the owner takes later (net_loop_ops.later)
 * wait behind the other peers' ready frames, and each peer's frames are
 * still taken in the order sent, each once.
 *
 * A real loop on its own thread, two scripted peers on loopback. Before
 * the loop runs, peer A has sent 64 small PUSH frames (taken later) and a
 * CLOCK, all in one receive's reach, and peer B one PULL. Without the
 * hold, A's receive would hand all 65 frames over at once, before or after
 * B's; with it, at most one of A's pushes is taken a round, so B's pull
 * is taken before most of them. Then a peer that closes with a frame held
 * is dropped cleanly and the loop serves a third peer after it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "net/loop.h"
#include "net/wire.h"
#include "net_testutil.h"
#include "testutil.h"

#define PUSHES 64
#define MAX_LOG 256

/* What the loop handed over, in order: the frame's type and the u32 tag
 * at the start of its payload (a peer's frame number). */
struct seen {
	uint8_t type;
	uint32_t tag;
};

struct ctx {
	pthread_mutex_t mu;
	struct seen log[MAX_LOG];
	int n;
	int closed;
	int stop_fd;
};

static int on_open(void *c, uint32_t id)
{
	(void)c;
	(void)id;
	return 0;
}

static int on_frame(void *c, uint32_t id, const struct wire_hdr *h,
		    const uint8_t *payload)
{
	(void)id;
	struct ctx *x = c;
	uint32_t tag = 0;
	if (h->length >= 4)
		tag = (uint32_t)payload[0] | (uint32_t)payload[1] << 8 |
		      (uint32_t)payload[2] << 16 | (uint32_t)payload[3] << 24;
	pthread_mutex_lock(&x->mu);
	if (x->n < MAX_LOG)
		x->log[x->n++] = (struct seen){ h->type, tag };
	pthread_mutex_unlock(&x->mu);
	return 0;
}

static void on_close(void *c, uint32_t id, const char *why)
{
	(void)id;
	(void)why;
	struct ctx *x = c;
	pthread_mutex_lock(&x->mu);
	x->closed++;
	pthread_mutex_unlock(&x->mu);
}

static void on_tick(void *c, double now)
{
	(void)c;
	(void)now;
}

static uint32_t max_payload(void *c, uint32_t id)
{
	(void)c;
	(void)id;
	return 1u << 20;
}

static int later(void *c, uint32_t id, const struct wire_hdr *h)
{
	(void)c;
	(void)id;
	return h->type == WIRE_PUSH;
}

static void *run(void *arg)
{
	struct net_loop *l = arg;
	boar_error err;
	if (net_loop_run(l, &err))
		fprintf(stderr, "loop: %s\n", err.message);
	return NULL;
}

/* A frame of the type whose payload is the u32 tag and some padding. */
static void put_frame(struct wire_out *o, int type, uint32_t tag)
{
	wire_begin(o, type, 0);
	wire_put_u32(o, tag);
	for (int i = 0; i < 60; i++)
		wire_put_u8(o, (uint8_t)i);
	wire_end(o);
}

static int send_all(int fd, const struct wire_out *o)
{
	size_t off = 0;
	while (off < o->len) {
		ssize_t k = write(fd, o->buf + off, o->len - off);
		if (k <= 0)
			return -1;
		off += (size_t)k;
	}
	return 0;
}

static int connect_to(unsigned port)
{
	int fd;
	boar_error err;
	return net_connect("127.0.0.1", port, &fd, &err) ? -1 : fd;
}

/* Waits (5 s at most) until the log holds n frames and closes happened. */
static int wait_for(struct ctx *x, int n, int closed)
{
	for (int i = 0; i < 500; i++) {
		pthread_mutex_lock(&x->mu);
		int ok = x->n >= n && x->closed >= closed;
		pthread_mutex_unlock(&x->mu);
		if (ok)
			return 0;
		usleep(10000);
	}
	return -1;
}

int main(void)
{
	if (!net_test_loopback())
		TEST_SKIP("no loopback sockets here");
	unsigned port;
	int lfd = net_test_listen(&port);
	struct ctx x = { .stop_fd = eventfd(0, EFD_CLOEXEC) };
	pthread_mutex_init(&x.mu, NULL);
	CHECK(lfd >= 0 && x.stop_fd >= 0, "listen/eventfd");

	/* The peers connect and send everything before the loop runs. */
	int a = connect_to(port), b = connect_to(port);
	CHECK(a >= 0 && b >= 0, "connect");
	struct wire_out o;
	wire_out_init(&o);
	for (uint32_t i = 0; i < PUSHES; i++)
		put_frame(&o, WIRE_PUSH, i);
	put_frame(&o, WIRE_CLOCK, PUSHES);
	CHECK(send_all(a, &o) == 0, "peer A's frames");
	wire_out_reset(&o);
	put_frame(&o, WIRE_PULL, 1000);
	CHECK(send_all(b, &o) == 0, "peer B's frame");

	struct net_loop_config cfg = { .listen_fd = lfd,
				       .stop_fd = x.stop_fd,
				       .max_peers = 8 };
	struct net_loop_ops ops = {
		.on_open = on_open,
		.on_frame = on_frame,
		.on_close = on_close,
		.on_tick = on_tick,
		.max_payload = max_payload,
		.later = later,
	};
	struct net_loop *l = NULL;
	boar_error err;
	CHECK(net_loop_create(&cfg, &ops, &x, &l, &err) == 0, "create");
	pthread_t t;
	if (!l || pthread_create(&t, NULL, run, l)) {
		fprintf(stderr, "no loop\n");
		return 1;
	}

	CHECK(wait_for(&x, PUSHES + 2, 0) == 0, "got %d of %d frames", x.n,
	      PUSHES + 2);
	pthread_mutex_lock(&x.mu);
	int pull_at = -1, next_push = 0, clock_at = -1;
	for (int i = 0; i < x.n; i++) {
		struct seen s = x.log[i];
		if (s.type == WIRE_PULL) {
			CHECK(pull_at < 0 && s.tag == 1000, "B's pull twice");
			pull_at = i;
		} else if (s.type == WIRE_PUSH) {
			/* A's frames in the order sent, each once */
			CHECK(s.tag == (uint32_t)next_push,
			      "push %u where push %d was due", s.tag, next_push);
			next_push++;
		} else if (s.type == WIRE_CLOCK) {
			CHECK(next_push == PUSHES, "A's CLOCK before its pushes");
			clock_at = i;
		}
	}
	CHECK(x.n == PUSHES + 2 && next_push == PUSHES && clock_at >= 0,
	      "%d frames, %d pushes", x.n, next_push);
	/* B's pull went before most of A's held pushes */
	CHECK(pull_at >= 0 && pull_at < PUSHES / 2,
	      "B's pull taken at %d of %d frames", pull_at, x.n);
	pthread_mutex_unlock(&x.mu);

	/* A peer that sends held frames and hangs up: dropped cleanly
	 * after its frames, and the loop goes on serving. */
	int c = connect_to(port);
	wire_out_reset(&o);
	for (uint32_t i = 0; i < 4; i++)
		put_frame(&o, WIRE_PUSH, 2000 + i);
	CHECK(c >= 0 && send_all(c, &o) == 0, "peer C's frames");
	close(c);
	CHECK(wait_for(&x, PUSHES + 6, 1) == 0, "peer C: %d frames, %d closed",
	      x.n, x.closed);
	int d = connect_to(port);
	wire_out_reset(&o);
	put_frame(&o, WIRE_PULL, 3000);
	CHECK(d >= 0 && send_all(d, &o) == 0, "peer D's frame");
	CHECK(wait_for(&x, PUSHES + 7, 1) == 0, "peer D: %d frames", x.n);
	pthread_mutex_lock(&x.mu);
	CHECK(x.log[PUSHES + 6].type == WIRE_PULL &&
		      x.log[PUSHES + 6].tag == 3000,
	      "the frame after C's is not D's pull");
	pthread_mutex_unlock(&x.mu);

	uint64_t one = 1;
	CHECK(write(x.stop_fd, &one, sizeof one) == sizeof one, "stop");
	pthread_join(t, NULL);
	net_loop_free(l);
	close(a);
	close(b);
	close(d);
	close(lfd);
	close(x.stop_fd);
	wire_out_free(&o);
	return TEST_RESULT();
}
