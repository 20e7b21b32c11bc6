/* net_testutil.h - what the tests of net/ share (header only, as
 * testutil.h): a real shard on its own thread behind a free loopback port,
 * a client of one shard, and blocking frame I/O and greetings for
 * scripted peers.
 */
#ifndef BOAR_NET_TESTUTIL_H
#define BOAR_NET_TESTUTIL_H

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/client.h"
#include "net/f16.h"
#include "net/loop.h"
#include "net/server.h"
#include "net/ssp.h"

/* x after a trip through a half, as a float16 frame carries it. */
static inline float net_test_halved(float x)
{
	return f16_to_f32(f16_from_f32(x));
}

/* A listening socket on a free loopback port. @return it, or -1. */
static inline int net_test_listen(unsigned *port)
{
	int fd;
	boar_error err;
	if (net_listen("127.0.0.1", 0, &fd, &err))
		return -1;
	*port = net_bound_port(fd);
	return fd;
}

/* Whether this machine lets a test listen on loopback (else: skip). */
static inline int net_test_loopback(void)
{
	unsigned port;
	int fd = net_test_listen(&port);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* Exactly n bytes from a blocking socket. @return 0, or -1 at its end. */
static inline int net_test_read_exactly(int fd, uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = read(fd, p, n);
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* One frame into m, and not a byte of the next (WELCOME and READY may
 * arrive in one segment). @return 0 or -1. */
static inline int net_test_read_frame(int fd, struct wire_msg *m)
{
	uint8_t buf[4096];
	struct wire_hdr h;
	if (net_test_read_exactly(fd, buf, WIRE_HDR_LEN) ||
	    wire_parse_header(buf, sizeof buf - WIRE_HDR_LEN, &h) ||
	    net_test_read_exactly(fd, buf + WIRE_HDR_LEN, h.length))
		return -1;
	return wire_decode_frame(buf, WIRE_HDR_LEN + h.length,
				 WIRE_MAX_PAYLOAD, m);
}

/* A scripted peer's refusal: the next frame an ERROR whose text holds
 * why (else bit 1 of the result), then the connection's end (else bit
 * 2); fd closed. @return 0 where both held; the frame read stays in m. */
static inline int net_test_refused(int fd, struct wire_msg *m,
				   const char *why)
{
	int rc = net_test_read_frame(fd, m) || m->type != WIRE_ERROR ||
		 !strstr(m->text, why);
	uint8_t c;
	if (read(fd, &c, 1) > 0)
		rc |= 2;
	close(fd);
	return rc;
}

/* Writes o's frames to a blocking socket and empties o. */
static inline void net_test_send(int fd, struct wire_out *o)
{
	if (write(fd, o->buf, o->len) != (ssize_t)o->len)
		perror("write");
	wire_out_reset(o);
}

/* A scripted shard's connection to one peer: its socket, the frame read
 * last, a frame being built. */
struct net_test_peer {
	int fd;
	struct wire_msg m;
	struct wire_out o;
};

static inline void net_test_peer_init(struct net_test_peer *p)
{
	memset(p, 0, sizeof *p);
	p->fd = -1;
	wire_out_init(&p->o);
}

/* The scripted shard's greeting (a connection it held is closed first):
 * accepts one connection on lfd, reads its HELLO (left in p->m) and
 * answers WELCOME (shard 0 of 1, keys [0, dim), no secret) and READY
 * (holding pushes up to seq; durable: it logs them). @return 0, or -1
 * (no connection, or a peer that did not say HELLO, closed). */
static inline int net_test_peer_accept(struct net_test_peer *p, int lfd,
				       uint64_t dim, uint64_t seq,
				       int durable)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = accept(lfd, NULL, NULL);
	if (p->fd < 0)
		return -1;
	if (net_test_read_frame(p->fd, &p->m) || p->m.type != WIRE_HELLO) {
		close(p->fd);
		p->fd = -1;
		return -1;
	}
	uint8_t zero[WIRE_NONCE_LEN] = { 0 };
	wire_begin(&p->o, WIRE_WELCOME, 0);
	wire_put_u32(&p->o, 0);
	wire_put_u32(&p->o, 1);
	wire_put_u64(&p->o, 0);
	wire_put_u64(&p->o, dim);
	wire_put_u64(&p->o, 0);
	wire_put_u8(&p->o, 0);
	wire_put_bytes(&p->o, zero, WIRE_NONCE_LEN);
	wire_put_bytes(&p->o, zero, WIRE_MAC_LEN);
	wire_end(&p->o);
	wire_put_ready(&p->o, 0, seq, durable);
	net_test_send(p->fd, &p->o);
	return 0;
}

/* The next frame into p->m. @return 0, or -1 at the connection's end. */
static inline int net_test_peer_read(struct net_test_peer *p)
{
	return net_test_read_frame(p->fd, &p->m);
}

/* Answers the STATS request in p->m with zero counts. */
static inline void net_test_peer_answer_stats(struct net_test_peer *p)
{
	struct wire_stats st = { 0 };
	wire_put_stats(&p->o, p->m.req, &st);
	net_test_send(p->fd, &p->o);
}

/* Closes the connection, frees the frames. */
static inline void net_test_peer_free(struct net_test_peer *p)
{
	if (p->fd >= 0)
		close(p->fd);
	wire_out_free(&p->o);
	wire_msg_free(&p->m);
	p->fd = -1;
}

/* A worker's HELLO into o (rank 0 of 1, keys [0, dim), clock 0), as a
 * scripted peer sends it; the nonce's bytes are all `nonce`. */
static inline void net_test_put_hello(struct wire_out *o, uint64_t dim,
				      uint8_t nonce)
{
	uint8_t n[WIRE_NONCE_LEN];
	memset(n, nonce, sizeof n);
	wire_begin(o, WIRE_HELLO, 0);
	wire_put_u32(o, 0);
	wire_put_u32(o, 1);
	wire_put_u64(o, dim);
	wire_put_u64(o, 0);
	wire_put_bytes(o, n, sizeof n);
	wire_end(o);
}

/* A raw worker 0 of 1 over keys [0, dim) joined to the shard at port
 * (HELLO, WELCOME, READY; *durable: the READY's flag). @return its
 * socket, or -1. */
static inline int net_test_join(unsigned port, uint64_t dim,
				struct wire_out *o, struct wire_msg *m,
				int *durable)
{
	int fd;
	boar_error err;
	if (net_connect("127.0.0.1", port, &fd, &err))
		return -1;
	wire_out_reset(o);
	net_test_put_hello(o, dim, 1);
	net_test_send(fd, o);
	if (net_test_read_frame(fd, m) || m->type != WIRE_WELCOME ||
	    net_test_read_frame(fd, m) || m->type != WIRE_READY) {
		close(fd);
		return -1;
	}
	*durable = m->durable;
	return fd;
}

/* A shard serving on its own thread. */
struct net_test_shard {
	pthread_t t;
	struct ps_server *s;
	int listen_fd, stop_fd;
	unsigned port;
	int rc;         /* what ps_server_run returned */
	boar_error err; /* and why */
};

static inline void *net_test_serve(void *arg)
{
	struct net_test_shard *sh = arg;
	sh->rc = ps_server_run(sh->s, &sh->err);
	if (sh->rc)
		fprintf(stderr, "shard: %s\n", sh->err.message);
	return NULL;
}

/* Starts a shard of config c on a free loopback port (c's listen_fd and
 * stop_fd are made here). @return 0, or -1 (said on stderr). */
static inline int net_test_shard_start(struct net_test_shard *sh,
				       struct ps_config c)
{
	boar_error err;
	memset(sh, 0, sizeof *sh);
	c.listen_fd = sh->listen_fd = net_test_listen(&sh->port);
	c.stop_fd = sh->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (c.listen_fd < 0 || sh->stop_fd < 0) {
		fprintf(stderr, "shard: no loopback listener\n");
		return -1;
	}
	if (ps_server_create(&c, &sh->s, &err)) {
		fprintf(stderr, "shard: %s\n", err.message);
		return -1;
	}
	pthread_create(&sh->t, NULL, net_test_serve, sh);
	return 0;
}

/* Stops the shard and frees it. @return what its run returned. */
static inline int net_test_shard_stop(struct net_test_shard *sh)
{
	uint64_t one = 1;
	if (write(sh->stop_fd, &one, sizeof one) != sizeof one)
		perror("write");
	pthread_join(sh->t, NULL);
	ps_server_free(sh->s);
	close(sh->stop_fd);
	close(sh->listen_fd);
	return sh->rc;
}

/* A client of the one shard at port, configured as c says (its addrs and
 * n_shards are filled in). @return it, or NULL (*err). */
static inline struct ps_client *net_test_client_with(unsigned port,
						     struct ps_client_config c,
						     boar_error *err)
{
	char a[64];
	snprintf(a, sizeof a, "127.0.0.1:%u", port);
	const char *addrs[1] = { a };
	c.addrs = addrs;
	c.n_shards = 1;
	struct ps_client *cl = NULL;
	return ps_client_connect(&c, &cl, err) ? NULL : cl;
}

/* A client of the one shard at port, as worker rank of n_workers over
 * keys [0, dim), with secret key (or NULL). @return it, or NULL (*err). */
static inline struct ps_client *net_test_client(unsigned port, uint32_t rank,
						uint32_t n_workers, uint64_t dim,
						const uint8_t *key,
						double reconnect_timeout,
						boar_error *err)
{
	struct ps_client_config c = {
		.rank = rank,
		.n_workers = n_workers,
		.dim = dim,
		.key = key,
		.reconnect_timeout = reconnect_timeout,
	};
	return net_test_client_with(port, c, err);
}

/* A client (worker 0 of 1, no secret) of a scripted shard: script(arg)
 * runs on thread *t, serving the listening socket lfd (on port). NULL,
 * with the thread joined and lfd closed, where it could not connect
 * (err says why). */
static inline struct ps_client *
net_test_scripted_client(int lfd, unsigned port, uint64_t dim,
			 void *(*script)(void *), void *arg, pthread_t *t,
			 boar_error *err)
{
	pthread_create(t, NULL, script, arg);
	struct ps_client *c = net_test_client(port, 0, 1, dim, NULL, 5, err);
	if (!c) {
		shutdown(lfd, SHUT_RDWR);
		pthread_join(*t, NULL);
		close(lfd);
	}
	return c;
}

#endif
