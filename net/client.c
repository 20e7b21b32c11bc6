/* client.c - a worker's connections to the shards: handshake, pull, clock,
 * gather; reconnect with backoff (pushes: client_push.c).
 *
 * Every request is built into one frame buffer and written with blocking
 * send()s; replies are read with poll() so that a worker waiting on an SSP
 * pull sends a heartbeat every second and the shard never takes it for
 * dead. Any socket failure while talking to a shard means "reconnect and
 * repeat" (see client.h for what is repeated); an ERROR frame from a shard
 * is final.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/lower_bound.h"
#include "net/auth.h"
#include "net/client_int.h"
#include "net/loop.h"
#include "net/server.h"

/* ------------------------------------------------------------- plumbing */

void client_drop_fd(struct shard *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->gen++; /* the next connection never saw this one's pulls */
	if (s->ahead_pending) { /* its request went with the socket */
		s->ahead_pending = 0;
		s->ahead_lost = 1;
	}
	net_session_end(&s->ses); /* a session lives as long as its socket */
}

static int send_all(struct ps_client *c, struct shard *s, const uint8_t *p,
		    size_t n)
{
	if (s->fd < 0)
		return RETRY;
	while (n) {
		ssize_t k = send(s->fd, p, n, MSG_NOSIGNAL);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			client_drop_fd(s);
			return RETRY;
		}
		p += k;
		n -= (size_t)k;
		c->n.bytes_sent += (uint64_t)k;
	}
	return 0;
}

/* Sends the one frame built in c->out (tagged under the shard's session,
 * which also counts it: build, then send, once per frame). */
int client_send_out(struct ps_client *c, struct shard *s)
{
	if (c->out.failed)
		return BOAR_ENOMEM;
	if (s->fd < 0)
		return RETRY;
	if (s->ses.on && net_seal(&s->ses, &c->out))
		return BOAR_ENOMEM;
	return send_all(c, s, c->out.buf, c->out.len);
}

/* While we wait on one shard, every shard must hear from us, or the
 * others would drop us from their clocks. A failed heartbeat just closes
 * that connection; the next request to it reconnects. */
static void heartbeat_all(struct ps_client *c)
{
	uint8_t hb[WIRE_HDR_LEN + NET_TAG_LEN];
	for (uint32_t i = 0; i < c->cfg.n_shards; i++) {
		struct wire_out o = { .buf = hb, .cap = sizeof hb };
		wire_begin(&o, WIRE_HEARTBEAT, 0);
		wire_end(&o);
		if (c->sh[i].fd >= 0 &&
		    (!c->sh[i].ses.on || !net_seal(&c->sh[i].ses, &o)))
			send_all(c, &c->sh[i], hb, o.len);
	}
}

/* A shard with a backup silent this long while we wait for an answer
 * may be hung, not slow: its backup is asked whether it took over. */
#define PROBE_AFTER 2.0

/* Reads exactly n bytes; heartbeats while waiting (timeout_s < 0: wait
 * forever). With probe, while nothing has come yet, a shard's backup is
 * asked every PROBE_AFTER seconds whether it took over: a hung primary
 * (stopped, its host gone silent) has no links to its backup any more
 * once the backup's heartbeat timeout closed them, and a healthy one,
 * however slow (holding a pull for a straggler), has, so the backup
 * answers "not yet" to it. @return 0, RETRY, or BOAR_ETIMEOUT. */
static int recv_all(struct ps_client *c, struct shard *s, uint8_t *p,
		    size_t n, double timeout_s, int probe)
{
	double deadline = timeout_s < 0 ? 0 : net_now() + timeout_s;
	double next_probe = net_now() + PROBE_AFTER;
	size_t total = n;
	while (n) {
		if (s->fd < 0)
			return RETRY;
		/* before a frame's first byte, the background thread's
		 * queue may call it away (client_bg.c) */
		struct pollfd pfd[2] = { { .fd = s->fd, .events = POLLIN },
					 { .fd = c->wake_fd, .events = POLLIN } };
		int wake = probe && n == total && c->wake_fd >= 0;
		int r = poll(pfd, wake ? 2 : 1, 1000);
		if (r < 0 && errno != EINTR) {
			client_drop_fd(s);
			return RETRY;
		}
		if (r > 0 && wake && !pfd[0].revents)
			return INTERRUPTED;
		if (r <= 0) {
			if (deadline && net_now() > deadline)
				return BOAR_ETIMEOUT;
			heartbeat_all(c);
			if (probe && n == total && s->has_alt && !c->link &&
			    net_now() >= next_probe) {
				if (client_backup_took_over(c, s)) {
					client_drop_fd(s);
					client_switch_address(s);
					return RETRY;
				}
				next_probe = net_now() + PROBE_AFTER;
			}
			continue;
		}
		ssize_t k = recv(s->fd, p, n, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			client_drop_fd(s);
			return RETRY;
		}
		p += k;
		n -= (size_t)k;
		c->n.bytes_recv += (uint64_t)k;
	}
	return 0;
}

/* One whole frame into c->msg. An ERROR frame becomes its code. */
int client_recv_msg(struct ps_client *c, struct shard *s, double timeout_s,
		    boar_error *err)
{
	uint8_t hb[WIRE_HDR_LEN];
	struct wire_hdr h;
	int rc = recv_all(c, s, hb, sizeof hb, timeout_s, 1);
	if (rc == BOAR_ETIMEOUT)
		return boar_fail(err, rc, "%s:%u: no answer", s->host, s->port);
	if (rc)
		return rc;
	if (wire_parse_header(hb, WIRE_MAX_PAYLOAD + NET_TAG_LEN, &h)) {
		client_drop_fd(s);
		return boar_fail(err, BOAR_EPROTO, "%s:%u: bad frame header",
				 s->host, s->port);
	}
	/* The header is kept in front of the payload: the tag covers both
	 * as one run of bytes. */
	if (WIRE_HDR_LEN + (size_t)h.length > c->in_cap) {
		uint8_t *b = realloc(c->in, WIRE_HDR_LEN + (size_t)h.length);
		if (!b)
			return boar_fail(err, BOAR_ENOMEM, "out of memory");
		c->in = b;
		c->in_cap = WIRE_HDR_LEN + (size_t)h.length;
	}
	memcpy(c->in, hb, WIRE_HDR_LEN);
	uint8_t *payload = c->in + WIRE_HDR_LEN;
	rc = recv_all(c, s, payload, h.length, timeout_s, 0);
	if (rc == BOAR_ETIMEOUT)
		return boar_fail(err, rc, "%s:%u: no answer", s->host, s->port);
	if (rc)
		return rc;
	if (s->ses.on) {
		uint64_t n = s->ses.received;
		long len = net_unseal(&s->ses, c->in, payload, h.length);
		if (len < 0) {
			client_drop_fd(s);
			return boar_fail(err, BOAR_EAUTH,
					 "shard %s:%u: frame %llu after the "
					 "handshake failed authentication "
					 "(injected, replayed or reordered on "
					 "the way?)",
					 s->host, s->port,
					 (unsigned long long)n);
		}
		h.length = (uint32_t)len;
	}
	rc = wire_decode(&h, payload, &c->msg);
	if (rc) {
		client_drop_fd(s);
		return boar_fail(err, rc == -2 ? BOAR_ENOMEM : BOAR_EPROTO,
				 "%s:%u: malformed frame", s->host, s->port);
	}
	/* An answer to a request comes after every push sent before it:
	 * the shard holds them (logged, if it is durable). An answer to a
	 * pull ahead given as it arrived holds only those before it. */
	if (c->msg.type == WIRE_PULL_REPLY && s->ahead_pending &&
	    !(c->msg.flags & WIRE_F_HELD) && s->kept_ahead <= s->kept_len) {
		memmove(s->kept, s->kept + s->kept_ahead,
			s->kept_len - s->kept_ahead);
		s->kept_len -= s->kept_ahead;
	} else if (c->msg.type == WIRE_PULL_REPLY ||
		   c->msg.type == WIRE_STATS_REPLY ||
		   c->msg.type == WIRE_GATHER_REPLY) {
		s->kept_len = 0;
	}
	if (c->msg.type == WIRE_PULL_REPLY)
		s->ahead_pending = 0;
	if (c->msg.type == WIRE_ERROR) {
		client_drop_fd(s);
		int code = c->msg.code < 0 && c->msg.code >= BOAR_ETIMEOUT
				   ? c->msg.code
			   : c->msg.code == WIRE_ERR_RANK_TAKEN ? BOAR_EMISMATCH
								: BOAR_EPROTO;
		return boar_fail(err, code, "shard %s:%u: %s", s->host,
				 s->port, c->msg.text);
	}
	return 0;
}

/* ------------------------------------------------------------ handshake */

/* After READY: the shard holds our pushes up to seq. Those kept after it
 * go again, in order (a restarted shard lost them with its socket); a
 * shard ahead of us (we are a restarted worker) sets where we go on. */
static int resend_kept(struct ps_client *c, struct shard *s, uint64_t seq)
{
	if (seq > s->seq)
		s->seq = seq;
	size_t off = 0;
	while (off + WIRE_HDR_LEN + 16 <= s->kept_len) {
		const uint8_t *f = s->kept + off;
		size_t len = WIRE_HDR_LEN + ((size_t)f[8] | (size_t)f[9] << 8 |
					     (size_t)f[10] << 16 |
					     (size_t)f[11] << 24);
		uint64_t fs = 0; /* PUSH payload: u64 clock, u64 seq, ... */
		for (int b = 7; b >= 0; b--)
			fs = fs << 8 | f[WIRE_HDR_LEN + 8 + b];
		if (fs > seq) {
			wire_out_reset(&c->out);
			wire_put_bytes(&c->out, f, len);
			int rc = client_send_out(c, s);
			if (rc)
				return rc;
			c->n.resent++;
		}
		off += len;
	}
	return 0;
}

static int handshake(struct ps_client *c, uint32_t i, boar_error *err)
{
	struct shard *s = &c->sh[i];
	uint8_t nonce[WIRE_NONCE_LEN];
	if (client_put_hello(c, nonce))
		return boar_fail(err, BOAR_EAUTH, "no randomness");
	int rc = client_send_out(c, s);
	if (!rc)
		rc = client_recv_msg(c, s, 10, err);
	if (rc)
		return rc;
	struct wire_msg *m = &c->msg;
	if (m->type != WIRE_WELCOME)
		return boar_fail(err, BOAR_EPROTO, "%s:%u: expected WELCOME",
				 s->host, s->port);
	if (m->shard != i || m->n_shards != c->cfg.n_shards) {
		client_drop_fd(s);
		return boar_fail(err, BOAR_EMISMATCH,
				 "%s:%u serves shard %u/%u, expected %u/%u",
				 s->host, s->port, m->shard, m->n_shards, i,
				 c->cfg.n_shards);
	}
	if (m->auth != c->auth) {
		client_drop_fd(s);
		return boar_fail(err, BOAR_EAUTH,
				 m->auth ? "%s:%u requires a secret (ps_client_config.key)"
					 : "%s:%u did not prove it knows the "
					   "secret",
				 s->host, s->port);
	}
	if (c->auth) {
		if (!net_auth_check(c->key, 'S', nonce, m->nonce, m->mac)) {
			client_drop_fd(s);
			return boar_fail(err, BOAR_EAUTH,
					 "%s:%u: wrong proof: the shard has "
					 "another secret",
					 s->host, s->port);
		}
		uint8_t proof[WIRE_MAC_LEN];
		uint8_t snonce[WIRE_NONCE_LEN];
		memcpy(snonce, m->nonce, sizeof snonce);
		net_auth_proof(c->key, 'C', snonce, nonce, proof);
		wire_out_reset(&c->out);
		wire_begin(&c->out, WIRE_AUTH, 0);
		wire_put_bytes(&c->out, proof, sizeof proof);
		wire_end(&c->out);
		if ((rc = client_send_out(c, s)))
			return rc;
		net_session_start(&s->ses, c->key, 0, nonce, snonce);
	}
	s->lo = m->lo;
	s->hi = m->hi;
	/* READY says we are in (tagged, with a secret); an ERROR here is a
	 * refusal: a rank held by another live connection, a mismatch. */
	if ((rc = client_recv_msg(c, s, 10, err)))
		return rc;
	if (m->type != WIRE_READY) {
		client_drop_fd(s);
		return boar_fail(err, BOAR_EPROTO, "%s:%u: expected READY",
				 s->host, s->port);
	}
	if (m->clock > c->clock)
		c->clock = m->clock;
	/* a link keeps what it forwards whatever the backup does with it:
	 * acknowledged pushes must live in two processes */
	s->durable = m->durable || c->link;
	return resend_kept(c, s, m->seq);
}

/* The last frame was a refusal worth retrying: "your rank is held by a
 * live connection" (that connection may be our own previous life, which
 * the shard drops on its heartbeat timeout), or a backup's "my primary is
 * alive" (we may be the first to see it die; else the primary is the
 * address to use). */
static int refused_for_now(const struct ps_client *c)
{
	return c->msg.type == WIRE_ERROR &&
	       (c->msg.code == WIRE_ERR_RANK_TAKEN ||
		c->msg.code == WIRE_ERR_STANDBY);
}

/* Connects shard i, retrying with exponential backoff until the deadline.
 * With a backup, a failed attempt is followed at once by one on the other
 * address; the backoff comes after both failed. */
int client_connect_shard(struct ps_client *c, uint32_t i, boar_error *err)
{
	struct shard *s = &c->sh[i];
	double started = net_now();
	double deadline = started + c->cfg.reconnect_timeout;
	double wait = 0.05;
	int other_tried = 0;
	boar_error e;
	for (;;) {
		client_drop_fd(s);
		int rc = net_connect(s->host, s->port, &s->fd, &e);
		if (!rc) {
			rc = handshake(c, i, &e);
			if (!rc) {
				client_count_failover(c, s, started);
				return 0;
			}
			if (rc != RETRY && rc != BOAR_ETIMEOUT &&
			    !refused_for_now(c)) {
				if (err)
					*err = e;
				return rc;
			}
			if (rc == RETRY)
				boar_fail(&e, BOAR_ENET,
					  "%s:%u closed the connection",
					  s->host, s->port);
		}
		if (s->has_alt) {
			client_switch_address(s);
			if ((other_tried = !other_tried))
				continue;
		}
		if (net_now() + wait > deadline) {
			if (err)
				*err = e;
			return e.code ? e.code : BOAR_ENET;
		}
		struct timespec ts = { (time_t)wait,
				       (long)((wait - (time_t)wait) * 1e9) };
		nanosleep(&ts, NULL);
		wait = wait * 2 > 1.0 ? 1.0 : wait * 2;
	}
}

/* After a reconnect the shard may hold a newer clock for us than we do
 * (or the other way round): tell every shard where we are. */
static int sync_clock(struct ps_client *c, boar_error *err);

int client_reconnect(struct ps_client *c, uint32_t i, boar_error *err)
{
	uint64_t before = c->clock;
	c->n.reconnects++;
	int rc = client_connect_shard(c, i, err);
	if (rc)
		return rc;
	if (c->clock != before)
		return sync_clock(c, err);
	return 0;
}

static int send_clock_to(struct ps_client *c, uint32_t i, int type)
{
	wire_out_reset(&c->out);
	wire_begin(&c->out, type, 0);
	wire_put_u64(&c->out, c->clock);
	wire_end(&c->out);
	return client_send_out(c, &c->sh[i]);
}

static int sync_clock(struct ps_client *c, boar_error *err)
{
	for (uint32_t i = 0; i < c->cfg.n_shards; i++) {
		int rc;
		if (c->link && i != c->only)
			continue;
		while ((rc = send_clock_to(c, i, WIRE_CLOCK)) == RETRY)
			if ((rc = client_connect_shard(c, i, err)))
				return rc;
		if (rc)
			return boar_fail(err, rc, "out of memory");
	}
	return 0;
}

int client_transact(struct ps_client *c, uint32_t i, int expect,
		    void (*build)(struct ps_client *, uint32_t, void *),
		    void *arg, boar_error *err)
{
	for (;;) {
		build(c, i, arg);
		int rc = client_send_out(c, &c->sh[i]);
		/* a backup answers its primary's link at once (replica.h);
		 * one that does not is hung */
		if (!rc)
			rc = client_recv_msg(c, &c->sh[i], c->link ? 10 : -1, err);
		if (!rc) {
			if (c->msg.type != expect)
				return boar_fail(err, BOAR_EPROTO,
						 "%s:%u: unexpected reply %d",
						 c->sh[i].host, c->sh[i].port,
						 c->msg.type);
			return 0;
		}
		if (rc != RETRY)
			return rc;
		if ((rc = client_reconnect(c, i, err)))
			return rc;
	}
}

/* Index of the first key >= bound in keys[lo..n). */
uint32_t client_lower_bound(const uint64_t *keys, uint32_t lo, uint32_t n,
			    uint64_t bound)
{
	return (uint32_t)boar_lower_bound_u64(keys, lo, n, bound);
}

/* ------------------------------------------------------------------ API */

int ps_client_connect(const struct ps_client_config *cfg,
		      struct ps_client **out, boar_error *err)
{
	struct ps_client *c;
	int rc = client_new(cfg, &c, err);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < cfg->n_shards; i++)
		if ((rc = client_connect_shard(c, i, err)))
			goto err;
	/* Check the shards tile [0, dim) as the client expects. */
	for (uint32_t i = 0; i < cfg->n_shards; i++) {
		uint64_t lo, hi;
		ps_shard_range(cfg->dim, i, cfg->n_shards, &lo, &hi);
		if (c->sh[i].lo != lo || c->sh[i].hi != hi) {
			rc = boar_fail(err, BOAR_EMISMATCH,
				       "shard %u holds [%llu, %llu), expected "
				       "[%llu, %llu)",
				       i, (unsigned long long)c->sh[i].lo,
				       (unsigned long long)c->sh[i].hi,
				       (unsigned long long)lo,
				       (unsigned long long)hi);
			goto err;
		}
	}
	if ((rc = sync_clock(c, err)))
		goto err;
	*out = c;
	return 0;
err:
	ps_client_free(c);
	return rc;
}

static void build_pull(struct ps_client *c, uint32_t i, void *arg)
{
	struct pull_arg *p = arg;
	p->gen = c->sh[i].gen;
	p->nth = ++c->sh[i].n_pulls;
	const uint64_t *keys = p->keys + p->a;
	uint32_t n = p->b - p->a;
	/* a clock's keys are most of the shard's range: a bitmap then */
	int bits = client_keys_as_bits(c, keys, n);
	if (bits)
		c->n.keys_pulled_bits += n;
	wire_out_reset(&c->out);
	wire_begin(&c->out, WIRE_PULL,
		   (bits ? WIRE_F_BITS : 0) | (p->f16 ? WIRE_F_F16 : 0));
	wire_put_u32(&c->out, p->req);
	wire_put_u64(&c->out, p->clock);
	if (bits && p->bits) { /* the caller's words: no bit set a key */
		wire_put_key_bits_from(&c->out, keys, n, p->bits,
				       p->bits_base);
		c->n.keys_bits_given += n;
	} else {
		wire_put_keys_as(&c->out, keys, n, bits);
	}
	wire_end(&c->out);
}

int client_ahead_busy(const struct ps_client *c, boar_error *err)
{
	return c->ahead.on ? boar_fail(err, BOAR_EINVAL,
				       "a pull asked ahead is not collected")
			   : 0;
}

int client_pull_send(struct ps_client *c, const uint64_t *keys, uint32_t n,
		     uint64_t clock, const uint64_t *bits, uint64_t bits_base,
		     int f16, struct pull_arg *arg, boar_error *err)
{
	uint32_t a = 0;
	/* Ask every shard first, then collect: the shards work in parallel. */
	for (uint32_t i = 0; i < c->cfg.n_shards; i++) {
		uint32_t b = client_lower_bound(keys, a, n, c->sh[i].hi);
		arg[i] = (struct pull_arg){ keys, a, b, ++c->req, clock, 0, 0,
					    bits, bits_base, f16 };
		a = b;
		if (arg[i].a == arg[i].b)
			continue;
		build_pull(c, i, &arg[i]);
		int rc = client_send_out(c, &c->sh[i]);
		if (rc && rc != RETRY)
			return boar_fail(err, rc, "out of memory");
	}
	return 0;
}

int client_pull_reply(struct ps_client *c, uint32_t i, struct pull_arg *p,
		      float *vals, int *redone, boar_error *err)
{
	struct shard *s = &c->sh[i];
	int rc = s->fd >= 0 && !s->ahead_lost ? client_recv_msg(c, s, -1, err)
					       : RETRY;
	*redone = rc == RETRY;
	if (rc == RETRY) {
		if (s->fd < 0 && (rc = client_reconnect(c, i, err)))
			return rc;
		s->ahead_lost = 0;
		p->clock = c->clock;
		if ((rc = client_transact(c, i, WIRE_PULL_REPLY, build_pull, p,
					  err)))
			return rc;
	} else if (rc) {
		return rc;
	}
	return client_take_pull_reply(c, i, p, vals, err);
}

int client_take_pull_reply(struct ps_client *c, uint32_t i,
			   const struct pull_arg *p, float *vals,
			   boar_error *err)
{
	const struct wire_msg *m = &c->msg;
	if (m->type != WIRE_PULL_REPLY || m->req != p->req ||
	    m->n_vals != p->b - p->a)
		return boar_fail(err, BOAR_EPROTO,
				 "%s:%u: pull reply does not match the request",
				 c->sh[i].host, c->sh[i].port);
	if (!m->in_place || m->into != vals + p->a) /* else decoded there */
		memcpy(vals + p->a, m->vals, m->n_vals * sizeof *vals);
	if (m->staleness > c->n.max_staleness)
		c->n.max_staleness = m->staleness;
	if (m->flags & WIRE_F_F16)
		c->n.keys_pulled_f16 += m->n_vals;
	return 0;
}

/* Whether a pull now may be answered with the model as it started
 * (ps_client_config.zero_start): at clock 0 the SSP bound asks for no
 * one's pushes, and this worker has made none, nor (READY's seq) had a
 * life before that made some. */
static int at_zero(const struct ps_client *c)
{
	if (!c->cfg.zero_start || c->clock || c->n.keys_offered)
		return 0;
	for (uint32_t i = 0; i < c->cfg.n_shards; i++)
		if (c->sh[i].seq)
			return 0;
	return 1;
}

int ps_client_pull(struct ps_client *c, const uint64_t *keys, uint32_t n,
		   float *vals, boar_error *err)
{
	uint32_t S = c->cfg.n_shards;
	struct pull_arg args[64], *arg = args;
	int rc = client_ahead_busy(c, err);
	if (rc || (rc = client_bg_drain(c, err)))
		return rc;
	if (at_zero(c) && (!n || keys[n - 1] < c->cfg.dim)) {
		/* the first clock's pull: no round trip */
		memset(vals, 0, (size_t)n * sizeof *vals);
		c->n.keys_pulled += n;
		client_forget_pulled(c); /* no shard saw it */
		return 0;
	}
	if (S > 64 && !(arg = malloc(S * sizeof *arg)))
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	rc = client_pull_send(c, keys, n, c->clock, NULL, 0, 0, arg, err);
	for (uint32_t i = 0; !rc && i < S; i++) {
		int redone;
		if (arg[i].a < arg[i].b)
			rc = client_pull_reply(c, i, &arg[i], vals, &redone,
					       err);
	}
	if (!rc) {
		c->n.keys_pulled += n;
		client_note_pulled(c, arg);
	} else {
		client_forget_pulled(c);
	}
	if (arg != args)
		free(arg);
	return rc;
}

int ps_client_clock(struct ps_client *c, boar_error *err)
{
	return c->bg ? client_bg_clock(c, err) : client_clock_send(c, err);
}

int client_clock_send(struct ps_client *c, boar_error *err)
{
	c->clock++;
	for (uint32_t i = 0; i < c->cfg.n_shards; i++) {
		int rc = send_clock_to(c, i, WIRE_CLOCK);
		if (rc == RETRY)
			rc = client_reconnect(c, i, err);
		if (rc)
			return rc;
	}
	return 0;
}

uint64_t ps_client_current_clock(const struct ps_client *c)
{
	client_bg_drain(c, NULL); /* the thread may owe a tick */
	return c->clock;
}

int ps_client_done(struct ps_client *c, boar_error *err)
{
	int rc = client_bg_drain(c, err);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < c->cfg.n_shards; i++) {
		while ((rc = send_clock_to(c, i, WIRE_DONE)) == RETRY)
			if ((rc = client_reconnect(c, i, err)))
				return rc;
	}
	return 0;
}

static void build_stats(struct ps_client *c, uint32_t i, void *arg)
{
	wire_out_reset(&c->out);
	wire_begin(&c->out, WIRE_STATS, 0);
	wire_put_u32(&c->out, ++c->req);
	wire_end(&c->out);
}

int ps_client_stats(struct ps_client *c, uint32_t shard,
		    struct wire_stats *out, boar_error *err)
{
	int rc = client_ahead_busy(c, err);
	if (rc || (rc = client_bg_drain(c, err)))
		return rc;
	if (shard >= c->cfg.n_shards)
		return boar_fail(err, BOAR_EINVAL, "no shard %u", shard);
	rc = client_transact(c, shard, WIRE_STATS_REPLY, build_stats, NULL, err);
	if (!rc)
		*out = c->msg.stats;
	return rc;
}

int ps_client_shutdown(struct ps_client *c, boar_error *err)
{
	int first = client_bg_drain(c, err);
	if (first)
		return first;
	for (uint32_t i = 0; i < c->cfg.n_shards; i++) {
		wire_out_reset(&c->out);
		wire_begin(&c->out, WIRE_SHUTDOWN, 0);
		wire_end(&c->out);
		int rc = client_send_out(c, &c->sh[i]);
		if (rc && !first)
			first = boar_fail(err, BOAR_ENET,
					  "%s:%u: could not ask it to stop",
					  c->sh[i].host, c->sh[i].port);
	}
	return first;
}

void ps_client_get_counters(const struct ps_client *c,
			    struct ps_client_counters *out)
{
	client_bg_drain(c, NULL);
	*out = c->n;
}
