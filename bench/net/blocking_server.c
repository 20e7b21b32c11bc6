/* blocking_server.c - a thread-per-connection shard for the benchmark.
 *
 * What a first version without io_uring would look like: accept() in a
 * loop, one thread per peer, read() the header, read() the payload, decode
 * with the same bounds-checked decoder, apply or answer, write() the reply.
 * No SSP waiting (every pull is answered at once, as the io_uring shard
 * does with --staleness inf, which the benchmark uses), no auth.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench/net/blocking_server.h"
#include "net/wire.h"

struct blocking_server {
	int fd;
	uint64_t dim;
	float *w;
	pthread_t acceptor;
	volatile int stop;
};

struct peer {
	struct blocking_server *s;
	int fd;
};

static int read_full(int fd, void *buf, size_t n)
{
	uint8_t *p = buf;
	while (n) {
		ssize_t k = read(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* A bitmap push's values (WIRE_F_BITS) added, key by key as the bits say
 * (a key past the model is skipped, as in a list). */
static void add_bits(struct blocking_server *s, const struct wire_msg *m)
{
	for (uint32_t w = 0, i = 0; w < m->n_words; w++)
		for (uint64_t x = m->bits[w]; x; x &= x - 1, i++) {
			uint64_t k = m->base + 64 * (uint64_t)w +
				     (uint64_t)__builtin_ctzll(x);
			if (k < s->dim)
				s->w[k] += m->vals[i];
		}
}

/* A bitmap pull's values (WIRE_F_BITS), key by key as the bits say (a
 * key past the model reads key 0, as in a list). */
static void put_bits(struct wire_out *o, const struct blocking_server *s,
		     const struct wire_msg *m)
{
	uint8_t *p = wire_put_space(o, (size_t)m->n_keys * 4);
	if (!p)
		return;
	for (uint32_t w = 0, i = 0; w < m->n_words; w++)
		for (uint64_t x = m->bits[w]; x; x &= x - 1) {
			uint64_t k = m->base + 64 * (uint64_t)w +
				     (uint64_t)__builtin_ctzll(x);
			wire_f32_at(p + 4 * (size_t)i++, s->w[k < s->dim ? k : 0]);
		}
}

static void *serve_peer(void *arg)
{
	struct peer *p = arg;
	struct blocking_server *s = p->s;
	struct wire_msg m = { 0 };
	struct wire_out o;
	uint8_t hdr[WIRE_HDR_LEN], *payload = NULL;
	size_t cap = 0;
	wire_out_init(&o);
	for (;;) {
		struct wire_hdr h;
		if (read_full(p->fd, hdr, sizeof hdr) ||
		    wire_parse_header(hdr, WIRE_MAX_PAYLOAD, &h))
			break;
		if (h.length > cap) {
			uint8_t *b = realloc(payload, h.length);
			if (!b)
				break;
			payload = b;
			cap = h.length;
		}
		if (read_full(p->fd, payload, h.length) ||
		    wire_decode(&h, payload, &m))
			break;
		wire_out_reset(&o);
		switch (m.type) {
		case WIRE_HELLO:
			wire_begin(&o, WIRE_WELCOME, 0);
			wire_put_u32(&o, 0);
			wire_put_u32(&o, 1);
			wire_put_u64(&o, 0);
			wire_put_u64(&o, s->dim);
			wire_put_u64(&o, m.clock);
			wire_put_u8(&o, 0);
			for (int i = 0; i < WIRE_NONCE_LEN + WIRE_MAC_LEN; i++)
				wire_put_u8(&o, 0);
			wire_end(&o);
			wire_put_ready(&o, m.clock, 0, 0); /* joined */
			break;
		case WIRE_PUSH:
			if (m.flags & WIRE_F_BITS) { /* walked as it came */
				add_bits(s, &m);
				break;
			}
			for (uint32_t i = 0; i < m.n_keys; i++)
				if (m.keys[i] < s->dim)
					s->w[m.keys[i]] += m.vals[i];
			break;
		case WIRE_PULL:
			wire_begin(&o, WIRE_PULL_REPLY, 0);
			wire_put_u32(&o, m.req);
			wire_put_u32(&o, 0);
			wire_put_varint(&o, m.n_keys);
			if (m.flags & WIRE_F_BITS) { /* walked as it came */
				put_bits(&o, s, &m);
				wire_end(&o);
				break;
			}
			for (uint32_t i = 0; i < m.n_keys; i++)
				if (m.keys[i] >= s->dim)
					m.keys[i] = 0;
			wire_put_vals_at(&o, s->w, m.keys, m.n_keys, 0, 0);
			wire_end(&o);
			break;
		case WIRE_STATS: {
			struct wire_stats st = { 0 };
			wire_put_stats(&o, m.req, &st);
			break;
		}
		default:
			break;
		}
		if (o.len && write_full(p->fd, o.buf, o.len))
			break;
	}
	close(p->fd);
	free(payload);
	wire_out_free(&o);
	wire_msg_free(&m);
	free(p);
	return NULL;
}

static void *accept_loop(void *arg)
{
	struct blocking_server *s = arg;
	while (!s->stop) {
		int fd = accept(s->fd, NULL, NULL);
		if (fd < 0)
			continue;
		struct peer *p = malloc(sizeof *p);
		pthread_t t;
		if (!p) {
			close(fd);
			continue;
		}
		p->s = s;
		p->fd = fd;
		if (pthread_create(&t, NULL, serve_peer, p)) {
			close(fd);
			free(p);
			continue;
		}
		pthread_detach(t);
	}
	return NULL;
}

struct blocking_server *blocking_server_start(int fd, uint64_t dim)
{
	struct blocking_server *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->fd = fd;
	s->dim = dim;
	s->w = calloc(dim, sizeof *s->w);
	if (!s->w || pthread_create(&s->acceptor, NULL, accept_loop, s)) {
		free(s->w);
		free(s);
		return NULL;
	}
	return s;
}

void blocking_server_stop(struct blocking_server *s)
{
	s->stop = 1;
	shutdown(s->fd, SHUT_RDWR); /* wakes accept() */
	pthread_join(s->acceptor, NULL);
	/* peer threads end when their clients close; the weights stay
	 * allocated until then, so they are not freed here (process exit) */
}
