/* test_net_mac.c - an on-path relay without the secret between a worker
 * and a shard that has one. The relay forwards the handshake untouched
 * (it cannot forge it) and then tampers with the worker's frames: it
 * injects a PUSH of its own, replays the worker's first PUSH, or swaps the
 * worker's first two PUSHes. Each frame after the handshake carries a tag
 * under the connection's session key and counter (auth.h), so in every
 * case the shard drops the connection at the first frame that is not the
 * worker's next one, logs which peer failed authentication, and applies
 * nothing from it: the model holds exactly the pushes that came before.
 * (Before tags, all three were applied and everyone exited 0.)
 */
#include <stdlib.h>

#include "net/auth.h"
#include "net_testutil.h"
#include "testutil.h"

#define DIM 64

enum tamper { INJECT, REPLAY, REORDER };

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* ---------------------------------------------------------------- shard */

static char shard_log[8192];

static void log_line(void *ctx, const char *line)
{
	(void)ctx;
	strncat(shard_log, line, sizeof shard_log - strlen(shard_log) - 2);
	strcat(shard_log, "\n");
}

/* A shard with the secret key, logging into shard_log. */
static int start_shard(struct net_test_shard *sh, const uint8_t *key)
{
	struct ps_config c = {.shard = 0, .n_shards = 1, .dim = DIM,
			      .staleness = SSP_INF, .heartbeat_timeout = 5,
			      .key = key, .log = log_line};
	return net_test_shard_start(sh, c);
}

/* ---------------------------------------------------------------- relay */

struct relay {
	enum tamper how;
	int lfd, to_shard, to_worker;
	unsigned port, shard_port;
	pthread_t up, down;
};

/* Shard -> worker: bytes as they come. */
static void *pump_down(void *arg)
{
	struct relay *r = arg;
	uint8_t b[4096];
	ssize_t k;
	while ((k = read(r->to_shard, b, sizeof b)) > 0)
		if (write_all(r->to_worker, b, (size_t)k))
			break;
	shutdown(r->to_worker, SHUT_RDWR);
	return NULL;
}

/* One frame of the worker's into f (header + payload). */
static long read_worker_frame(struct relay *r, uint8_t *f, size_t cap)
{
	struct wire_hdr h;
	if (net_test_read_exactly(r->to_worker, f, WIRE_HDR_LEN) ||
	    wire_parse_header(f, (uint32_t)(cap - WIRE_HDR_LEN), &h) ||
	    net_test_read_exactly(r->to_worker, f + WIRE_HDR_LEN, h.length))
		return -1;
	return WIRE_HDR_LEN + (long)h.length;
}

/* A PUSH of +1000 to key 5 as the relay can make it: a well-formed frame
 * (it has no key to make a tag: the shard reads its last 16 bytes as one,
 * and a made-up tag fares no better). */
static void forge_push(struct wire_out *o)
{
	uint64_t k = 5;
	float v = 1000;
	wire_begin(o, WIRE_PUSH, 0);
	wire_put_u64(o, 0);
	wire_put_u64(o, 1); /* seq */
	wire_put_keys(o, &k, 1);
	wire_put_vals(o, &v, 1, 0);
	wire_end(o);
}

/* Worker -> shard, frame by frame: the handshake and whatever is not a
 * PUSH pass (HELLO, AUTH, the first CLOCK); the worker's first two PUSHes
 * (types are in the clear) are tampered with. */
static void *pump_up(void *arg)
{
	struct relay *r = arg;
	static uint8_t f[2][4096];
	long len[2];
	int pushes = 0;
	while (pushes < 2) {
		uint8_t *g = f[pushes];
		long n = read_worker_frame(r, g, sizeof f[0]);
		if (n < 0)
			goto out;
		if (g[5] != WIRE_PUSH) {
			write_all(r->to_shard, g, (size_t)n);
			continue;
		}
		len[pushes] = n;
		int i = pushes++;
		if (i == 0 && r->how == REORDER)
			continue; /* held back, sent after the second */
		write_all(r->to_shard, g, (size_t)n);
		if (i == 0 && r->how == REPLAY)
			write_all(r->to_shard, f[0], (size_t)len[0]);
		if (i == 0 && r->how == INJECT) {
			struct wire_out o;
			wire_out_init(&o);
			forge_push(&o);
			write_all(r->to_shard, o.buf, o.len);
			wire_out_free(&o);
		}
		if (i == 1 && r->how == REORDER)
			write_all(r->to_shard, f[0], (size_t)len[0]);
	}
	/* then plain forwarding */
	uint8_t b[4096];
	ssize_t k;
	while ((k = read(r->to_worker, b, sizeof b)) > 0)
		if (write_all(r->to_shard, b, (size_t)k))
			break;
out:
	shutdown(r->to_shard, SHUT_RDWR);
	return NULL;
}

static void *relay_accept(void *arg)
{
	struct relay *r = arg;
	boar_error err;
	r->to_worker = accept(r->lfd, NULL, NULL);
	/* One connection only: a reconnect finds nobody and gives up. */
	close(r->lfd);
	if (r->to_worker < 0 ||
	    net_connect("127.0.0.1", r->shard_port, &r->to_shard, &err))
		return NULL;
	pthread_create(&r->down, NULL, pump_down, r);
	pump_up(r);
	pthread_join(r->down, NULL);
	close(r->to_worker);
	close(r->to_shard);
	return NULL;
}

/* ---------------------------------------------------------------- tests */

static void run(enum tamper how, const char *name, float want5, float want6)
{
	uint8_t key[NET_KEY_LEN];
	net_auth_key("a shared secret, 16+ bytes", 26, key);
	struct net_test_shard sh;
	shard_log[0] = 0;
	if (start_shard(&sh, key)) {
		test_failures++;
		return;
	}
	struct relay r = {.how = how, .shard_port = sh.port};
	r.lfd = net_test_listen(&r.port);
	pthread_t acc;
	pthread_create(&acc, NULL, relay_accept, &r);

	boar_error err;
	struct ps_client *w = net_test_client(r.port, 0, 2, DIM, key, 1, &err);
	CHECK(w != NULL, "%s: the handshake through the relay failed: %s",
	      name, err.message);
	int rc = -1;
	if (w) {
		uint64_t k5 = 5, k6 = 6;
		float one = 1, two = 2;
		ps_client_push(w, &k5, &one, 1, &err);
		ps_client_push(w, &k6, &two, 1, &err);
		struct wire_stats st;
		rc = ps_client_stats(w, 0, &st, &err); /* a round trip */
		ps_client_free(w);
	}
	CHECK(rc != 0, "%s: the worker went on as if nothing happened", name);
	/* The worker reads the shard's tagged ERROR ("frame N failed
	 * authentication") unless its next send already found the socket
	 * closed; then its reconnect finds no relay. Either way it stops. */
	CHECK(rc == BOAR_EAUTH || rc == BOAR_ENET, "%s: the worker's error: %d %s",
	      name, rc, err.message);
	pthread_join(acc, NULL);

	/* What the shard holds, read by an honest worker. */
	struct ps_client *reader = net_test_client(sh.port, 1, 2, DIM, key, 1, &err);
	CHECK(reader != NULL, "%s: honest reader: %s", name, err.message);
	if (reader) {
		uint64_t k[2] = {5, 6};
		float v[2] = {-1, -1};
		CHECK(ps_client_pull(reader, k, 2, v, &err) == 0, "%s: pull: %s",
		      name, err.message);

		CHECK(v[0] == want5 && v[1] == want6,
		      "%s: key 5 = %g, key 6 = %g; want %g, %g", name, v[0],
		      v[1], want5, want6);
		ps_client_free(reader);
	}
	net_test_shard_stop(&sh);
	CHECK(strstr(shard_log, "failed authentication") &&
		      strstr(shard_log, "dropping 127.0.0.1:"),
	      "%s: the shard did not log which peer failed: %s", name,
	      shard_log);
}

int main(void)
{
	/* The relay's +1000 never lands; the first push, before it, does. */
	run(INJECT, "inject", 1, 0);
	/* The replayed +1 is refused: key 5 is 1, not 2. */
	run(REPLAY, "replay", 1, 0);
	/* The second push arriving first is refused, and so is all after. */
	run(REORDER, "reorder", 0, 0);
	return TEST_RESULT();
}
