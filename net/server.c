/* server.c - a parameter-server shard: pushes, SSP pulls, faults, handshake.
 *
 * The loop (loop.c) hands us whole frames; on_frame() checks the peer's
 * handshake state, then dispatches per frame type. A pull that the SSP rule
 * does not allow yet is parked (with its keys) and retried whenever a clock
 * moves: a CLOCK or DONE frame, a worker dropped by the heartbeat timeout.
 * A GATHER (the final model) is parked until no worker can push any more.
 *
 * A peer gets WIRE_MAX_PAYLOAD_PREAUTH bytes per frame until it has passed
 * the handshake, and HANDSHAKE_TIMEOUT seconds to pass it, so garbage,
 * impostors and idle sockets cost us little and are dropped. With a secret,
 * every frame after the AUTH carries a tag under the connection's session
 * (auth.h); one that fails it drops the peer. The handshake ends with READY
 * (or an ERROR: a rank another live connection holds, a shape mismatch).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "net/checkpoint.h"
#include "net/loop.h"
#include "net/server.h"
#include "net/ssp.h"

#define HANDSHAKE_TIMEOUT 5.0

enum conn_state { C_NONE = 0, C_NEW, C_CHALLENGED, C_READY };

struct conn {
	int state;
	int rank;          /* worker rank once HELLO came, else -1 */
	double opened;
	uint64_t dim;         /* from its HELLO */
	uint32_t n_workers;
	uint64_t join_clock;
	uint8_t nonce_c[WIRE_NONCE_LEN], nonce_s[WIRE_NONCE_LEN];
	struct net_session ses; /* on from a good AUTH: frames carry tags */
};

struct pend {
	uint32_t slot;
	uint8_t type;      /* WIRE_PULL or WIRE_GATHER */
	uint8_t f16;
	uint32_t req;
	uint64_t clock;    /* PULL */
	uint64_t lo;       /* GATHER */
	uint32_t count;    /* GATHER */
	uint32_t n_keys;
	uint64_t *keys;
};

struct ps_server {
	struct ps_config cfg;
	uint8_t key[NET_KEY_LEN];
	int auth;
	struct net_loop *loop;
	struct conn *conns;
	unsigned n_conns;
	/* the shard */
	uint64_t dim, lo, hi;
	float *w;
	int have_workers;     /* the clock table is set up */
	uint32_t n_workers;
	struct ssp ssp;
	int *worker_conn;     /* rank -> slot, -1 if none */
	/* parked requests */
	struct pend *pend;
	size_t n_pend, cap_pend;
	struct wire_msg msg;
	struct wire_out out;
	struct wire_stats st;
	double next_ckpt;
	int dirty;            /* pushes since the last checkpoint */
	int fatal;
	boar_error fatal_err;
};

static void logf_(struct ps_server *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void logf_(struct ps_server *s, const char *fmt, ...)
{
	if (!s->cfg.log)
		return;
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	s->cfg.log(s->cfg.log_ctx, line);
}

/* Sends the one frame built in s->out to a peer, tagged if the peer has
 * a session. */
static void flush_to(struct ps_server *s, uint32_t slot)
{
	struct net_session *ses = &s->conns[slot].ses;
	if (!s->out.failed && s->out.len &&
	    (!ses->on || net_seal(ses, &s->out) == 0))
		net_loop_send(s->loop, slot, s->out.buf, s->out.len);
	wire_out_reset(&s->out);
}

static int refuse(struct ps_server *s, uint32_t slot, int code,
		  const char *why)
{
	wire_out_reset(&s->out);
	wire_put_error(&s->out, code, why);
	flush_to(s, slot);
	logf_(s, "dropping %s: %s", net_loop_peer_name(s->loop, slot), why);
	net_loop_close(s->loop, slot, 1, why);
	return 0; /* already closing: the loop need not drop it again */
}

/* ------------------------------------------------------------ the shard */

static int setup_shard(struct ps_server *s, uint64_t dim, uint32_t n_workers,
		       boar_error *err)
{
	ps_shard_range(dim, s->cfg.shard, s->cfg.n_shards, &s->lo, &s->hi);
	s->dim = dim;
	s->w = calloc(s->hi - s->lo ? s->hi - s->lo : 1, sizeof *s->w);
	s->worker_conn = malloc(n_workers * sizeof *s->worker_conn);
	if (!s->w || !s->worker_conn ||
	    ssp_init(&s->ssp, n_workers, s->cfg.staleness,
		     s->cfg.heartbeat_timeout, net_now()))
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < n_workers; i++)
		s->worker_conn[i] = -1;
	s->n_workers = n_workers;
	s->have_workers = 1;
	return 0;
}

static int checkpoint(struct ps_server *s, boar_error *err)
{
	if (!s->cfg.checkpoint_dir || !s->have_workers)
		return 0;
	struct ckpt c = {
		.shard = s->cfg.shard,
		.n_shards = s->cfg.n_shards,
		.dim = s->dim,
		.lo = s->lo,
		.hi = s->hi,
		.n_workers = s->n_workers,
		.max_staleness = s->ssp.max_served,
		.w = s->w,
	};
	uint64_t clocks[1024], *cl = clocks;
	if (s->n_workers > 1024 &&
	    !(cl = malloc(s->n_workers * sizeof *cl)))
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < s->n_workers; i++)
		cl[i] = s->ssp.w[i].clock |
			(s->ssp.w[i].state >= SSP_DEAD ? CKPT_FINISHED : 0);
	c.clocks = cl;
	int rc = ckpt_save(s->cfg.checkpoint_dir, &c, err);
	if (cl != clocks)
		free(cl);
	if (!rc)
		s->dirty = 0;
	return rc;
}

static int in_range(struct ps_server *s, const uint64_t *keys, uint32_t n)
{
	/* keys are ascending: checking the ends checks them all */
	return !n || (keys[0] >= s->lo && keys[n - 1] < s->hi);
}

static void reply_pull(struct ps_server *s, const struct pend *p,
		       uint64_t gap)
{
	wire_out_reset(&s->out);
	wire_begin(&s->out, WIRE_PULL_REPLY, p->f16 ? WIRE_F_F16 : 0);
	wire_put_u32(&s->out, p->req);
	wire_put_u32(&s->out, gap > UINT32_MAX ? UINT32_MAX : (uint32_t)gap);
	wire_put_varint(&s->out, p->n_keys);
	/* values straight from the shard, in the order asked */
	wire_put_vals_at(&s->out, s->w, p->keys, p->n_keys, s->lo, p->f16);
	wire_end(&s->out);
	flush_to(s, p->slot);
	ssp_served(&s->ssp, gap);
	s->st.pulls++;
	s->st.keys_pulled += p->n_keys;
}

static void reply_gather(struct ps_server *s, const struct pend *p)
{
	wire_out_reset(&s->out);
	wire_begin(&s->out, WIRE_GATHER_REPLY, 0);
	wire_put_u32(&s->out, p->req);
	wire_put_u64(&s->out, p->lo);
	wire_put_varint(&s->out, p->count);
	wire_put_vals(&s->out, s->w + (p->lo - s->lo), p->count, 0);
	wire_end(&s->out);
	flush_to(s, p->slot);
}

/* Answers every parked request the clocks now allow. */
static void serve_parked(struct ps_server *s)
{
	size_t keep = 0;
	int finished = ssp_finished(&s->ssp);
	for (size_t i = 0; i < s->n_pend; i++) {
		struct pend *p = &s->pend[i];
		uint64_t gap;
		if (p->type == WIRE_PULL && ssp_can_serve(&s->ssp, p->clock, &gap)) {
			reply_pull(s, p, gap);
			free(p->keys);
		} else if (p->type == WIRE_GATHER && finished) {
			reply_gather(s, p);
		} else {
			s->pend[keep++] = *p;
		}
	}
	s->n_pend = keep;
}

static int park(struct ps_server *s, const struct pend *p)
{
	if (s->n_pend == s->cap_pend) {
		size_t cap = s->cap_pend ? 2 * s->cap_pend : 16;
		struct pend *q = realloc(s->pend, cap * sizeof *q);
		if (!q)
			return -1;
		s->pend = q;
		s->cap_pend = cap;
	}
	s->pend[s->n_pend++] = *p;
	return 0;
}

static void drop_parked_of(struct ps_server *s, uint32_t slot)
{
	size_t keep = 0;
	for (size_t i = 0; i < s->n_pend; i++) {
		if (s->pend[i].slot == slot)
			free(s->pend[i].keys);
		else
			s->pend[keep++] = s->pend[i];
	}
	s->n_pend = keep;
}

/* ------------------------------------------------------------ handshake */

/* Refuses the peer on `slot` if another live connection holds `rank`.
 * Not "newest wins": two processes started with the same rank would evict
 * each other at every reconnect and lose each other's pushes. A worker
 * that really died is gone from worker_conn as soon as its socket closes,
 * or after the heartbeat timeout if its host vanished; its successor is
 * refused until then and retries (client.c). @return 1 if refused. */
static int rank_taken(struct ps_server *s, uint32_t slot, uint32_t rank)
{
	if (!s->have_workers || rank >= s->n_workers)
		return 0;
	int old = s->worker_conn[rank];
	if (old < 0 || (uint32_t)old == slot)
		return 0;
	char why[200];
	snprintf(why, sizeof why, "worker rank %u is already held by a live "
		 "connection from %s (two processes with the same rank?)",
		 rank, net_loop_peer_name(s->loop, (uint32_t)old));
	refuse(s, slot, WIRE_ERR_RANK_TAKEN, why);
	return 1;
}

/* The peer passed the handshake: it becomes worker c->rank. The shard
 * itself is sized only now, by an authenticated peer, so that nobody can
 * make it allocate by lying in a HELLO. @return 0, or the refusal. */
static int join(struct ps_server *s, uint32_t slot)
{
	struct conn *c = &s->conns[slot];
	boar_error e;
	if (!s->have_workers && setup_shard(s, c->dim, c->n_workers, &e))
		return refuse(s, slot, e.code, e.message);
	if (c->dim != s->dim)
		return refuse(s, slot, BOAR_EMISMATCH,
			      "model dimension differs from the shard's");
	if (c->n_workers != s->n_workers)
		return refuse(s, slot, BOAR_EMISMATCH,
			      "number of workers differs from the shard's");
	if (rank_taken(s, slot, (uint32_t)c->rank))
		return 0;
	s->worker_conn[c->rank] = (int)slot;
	c->join_clock = ssp_join(&s->ssp, (uint32_t)c->rank, c->join_clock,
				 net_now());
	c->state = C_READY;
	/* Tell it it is in (the first tagged frame, with an authenticated
	 * session): only now may it push. */
	wire_out_reset(&s->out);
	wire_begin(&s->out, WIRE_READY, 0);
	wire_put_u64(&s->out, c->join_clock);
	wire_end(&s->out);
	flush_to(s, slot);
	logf_(s, "worker %d joined from %s at clock %llu", c->rank,
	      net_loop_peer_name(s->loop, slot),
	      (unsigned long long)c->join_clock);
	return 0;
}

static int on_hello(struct ps_server *s, uint32_t slot,
		    const struct wire_msg *m)
{
	struct conn *c = &s->conns[slot];
	uint64_t lo, hi;
	uint64_t dim = s->have_workers ? s->dim : s->cfg.dim;
	if (dim && m->dim != dim)
		return refuse(s, slot, BOAR_EMISMATCH,
			      "model dimension differs from the shard's");
	if (s->have_workers && m->n_workers != s->n_workers)
		return refuse(s, slot, BOAR_EMISMATCH,
			      "number of workers differs from the shard's");
	c->rank = (int)m->rank;
	c->dim = m->dim;
	c->n_workers = m->n_workers;
	memcpy(c->nonce_c, m->nonce, WIRE_NONCE_LEN);
	ps_shard_range(m->dim, s->cfg.shard, s->cfg.n_shards, &lo, &hi);
	/* The clock it will continue from: what it says, or the slowest
	 * counted clock if it rejoins after being dropped. */
	c->join_clock = s->have_workers
				? ssp_join_clock(&s->ssp, m->rank, m->clock)
				: m->clock;

	uint8_t proof[WIRE_MAC_LEN] = { 0 };
	if (s->auth) {
		if (net_random(c->nonce_s, WIRE_NONCE_LEN))
			return refuse(s, slot, BOAR_EAUTH, "no randomness");
		net_auth_proof(s->key, 'S', c->nonce_c, c->nonce_s, proof);
	}
	wire_out_reset(&s->out);
	wire_begin(&s->out, WIRE_WELCOME, 0);
	wire_put_u32(&s->out, s->cfg.shard);
	wire_put_u32(&s->out, s->cfg.n_shards);
	wire_put_u64(&s->out, lo);
	wire_put_u64(&s->out, hi);
	wire_put_u64(&s->out, c->join_clock);
	wire_put_u8(&s->out, (uint8_t)s->auth);
	wire_put_bytes(&s->out, c->nonce_s, WIRE_NONCE_LEN);
	wire_put_bytes(&s->out, proof, WIRE_MAC_LEN);
	wire_end(&s->out);
	flush_to(s, slot);
	if (s->auth) {
		c->state = C_CHALLENGED;
		return 0;
	}
	if (join(s, slot) || c->state != C_READY)
		return 0;
	/* Its clock may be what parked pulls were waiting for. */
	serve_parked(s);
	return 0;
}

/* --------------------------------------------------------------- frames */

static int on_ready_frame(struct ps_server *s, uint32_t slot,
			  const struct wire_msg *m)
{
	struct conn *c = &s->conns[slot];
	uint32_t rank = (uint32_t)c->rank;
	double now = net_now();
	ssp_seen(&s->ssp, rank, now);

	switch (m->type) {
	case WIRE_PUSH:
		if (!in_range(s, m->keys, m->n_keys))
			return refuse(s, slot, BOAR_EPROTO,
				      "pushed a key outside the shard");
		for (uint32_t i = 0; i < m->n_keys; i++)
			if (!isfinite(m->vals[i]))
				return refuse(s, slot, BOAR_EPROTO,
					      "pushed a non-finite value");
		for (uint32_t i = 0; i < m->n_keys; i++)
			s->w[m->keys[i] - s->lo] += m->vals[i];
		s->st.pushes++;
		s->st.keys_pushed += m->n_keys;
		s->dirty = 1;
		return 0;
	case WIRE_PULL: {
		if (!in_range(s, m->keys, m->n_keys))
			return refuse(s, slot, BOAR_EPROTO,
				      "pulled a key outside the shard");
		struct pend p = {
			.slot = slot,
			.type = WIRE_PULL,
			.f16 = (m->flags & WIRE_F_F16) != 0,
			.req = m->req,
			.clock = m->clock,
			.n_keys = m->n_keys,
			.keys = (uint64_t *)m->keys,
		};
		uint64_t gap;
		if (ssp_can_serve(&s->ssp, m->clock, &gap)) {
			reply_pull(s, &p, gap);
			return 0;
		}
		p.keys = malloc((m->n_keys ? m->n_keys : 1) * sizeof *p.keys);
		if (!p.keys || park(s, &p)) {
			free(p.keys);
			return refuse(s, slot, BOAR_ENOMEM, "out of memory");
		}
		memcpy(p.keys, m->keys, m->n_keys * sizeof *p.keys);
		return 0;
	}
	case WIRE_CLOCK:
		ssp_clock(&s->ssp, rank, m->clock, now);
		serve_parked(s);
		return 0;
	case WIRE_HEARTBEAT:
		return 0;
	case WIRE_DONE:
		ssp_clock(&s->ssp, rank, m->clock, now);
		ssp_done(&s->ssp, rank);
		logf_(s, "worker %u done at clock %llu", rank,
		      (unsigned long long)m->clock);
		serve_parked(s);
		return 0;
	case WIRE_GATHER: {
		if (m->lo < s->lo || m->lo > s->hi || m->count > s->hi - m->lo)
			return refuse(s, slot, BOAR_EPROTO,
				      "gather outside the shard");
		struct pend p = { .slot = slot, .type = WIRE_GATHER,
				  .req = m->req, .lo = m->lo,
				  .count = m->count };
		if (ssp_finished(&s->ssp))
			reply_gather(s, &p);
		else if (park(s, &p))
			return refuse(s, slot, BOAR_ENOMEM, "out of memory");
		return 0;
	}
	case WIRE_STATS: {
		struct wire_stats st;
		ps_server_stats(s, &st);
		wire_out_reset(&s->out);
		wire_put_stats(&s->out, m->req, &st);
		flush_to(s, slot);
		return 0;
	}
	case WIRE_SHUTDOWN:
		logf_(s, "shutdown asked by worker %u", rank);
		net_loop_stop(s->loop);
		return 0;
	default:
		return refuse(s, slot, BOAR_EPROTO, "unexpected frame type");
	}
}

static int on_frame(void *ctx, uint32_t slot, const struct wire_hdr *h,
		    const uint8_t *payload)
{
	struct ps_server *s = ctx;
	struct conn *c = &s->conns[slot];
	struct wire_hdr plain = *h;
	if (c->ses.on) {
		/* The loop keeps the header bytes just before the payload. */
		uint64_t n = c->ses.received;
		long len = net_unseal(&c->ses, payload - WIRE_HDR_LEN, payload,
				      h->length);
		if (len < 0) {
			char why[160];
			snprintf(why, sizeof why, "frame %llu after the "
				 "handshake failed authentication (injected, "
				 "replayed or reordered on the way?)",
				 (unsigned long long)n);
			return refuse(s, slot, BOAR_EAUTH, why);
		}
		plain.length = (uint32_t)len;
	}
	int rc = wire_decode(&plain, payload, &s->msg);
	if (rc == -2)
		return refuse(s, slot, BOAR_ENOMEM, "out of memory");
	if (rc)
		return refuse(s, slot, BOAR_EPROTO, "malformed frame");
	const struct wire_msg *m = &s->msg;

	switch (c->state) {
	case C_NEW:
		if (m->type != WIRE_HELLO)
			return refuse(s, slot, BOAR_EPROTO, "expected HELLO");
		return on_hello(s, slot, m);
	case C_CHALLENGED:
		if (m->type != WIRE_AUTH)
			return refuse(s, slot, BOAR_EAUTH, "expected AUTH");
		if (!net_auth_check(s->key, 'C', c->nonce_s, c->nonce_c, m->mac))
			return refuse(s, slot, BOAR_EAUTH,
				      "authentication failed");
		net_session_start(&c->ses, s->key, 1, c->nonce_c, c->nonce_s);
		if (join(s, slot) || c->state != C_READY)
			return 0;
		serve_parked(s);
		return 0;
	case C_READY:
		return on_ready_frame(s, slot, m);
	}
	return -1;
}

static int on_open(void *ctx, uint32_t slot)
{
	struct ps_server *s = ctx;
	if (slot >= s->n_conns)
		return -1;
	struct conn *c = &s->conns[slot];
	memset(c, 0, sizeof *c);
	c->state = C_NEW;
	c->rank = -1;
	c->opened = net_now();
	return 0;
}

static void on_close(void *ctx, uint32_t slot, const char *why)
{
	struct ps_server *s = ctx;
	struct conn *c = &s->conns[slot];
	drop_parked_of(s, slot);
	if (c->state == C_READY && s->worker_conn[c->rank] == (int)slot) {
		s->worker_conn[c->rank] = -1;
		ssp_away(&s->ssp, (uint32_t)c->rank, net_now());
		if (s->ssp.w[c->rank].state == SSP_AWAY)
			logf_(s, "worker %d disconnected (%s)", c->rank, why);
	}
	net_session_end(&c->ses);
	c->state = C_NONE;
}

static uint32_t max_payload(void *ctx, uint32_t slot)
{
	struct ps_server *s = ctx;
	return s->conns[slot].state == C_READY ? WIRE_MAX_PAYLOAD + NET_TAG_LEN
					       : WIRE_MAX_PAYLOAD_PREAUTH;
}

static void on_tick(void *ctx, double now)
{
	struct ps_server *s = ctx;
	for (unsigned i = 0; i < s->n_conns; i++) {
		struct conn *c = &s->conns[i];
		if ((c->state == C_NEW || c->state == C_CHALLENGED) &&
		    now - c->opened > HANDSHAKE_TIMEOUT)
			refuse(s, i, BOAR_ETIMEOUT, "handshake timed out");
	}
	if (s->have_workers) {
		uint32_t before = s->ssp.dropped;
		if (ssp_expire(&s->ssp, now)) {
			/* A live worker that went silent: close its socket
			 * too, so a late frame cannot move the clocks. */
			for (uint32_t r = 0; r < s->n_workers; r++)
				if (s->ssp.w[r].state == SSP_DEAD &&
				    s->worker_conn[r] >= 0)
					net_loop_close(
						s->loop,
						(uint32_t)s->worker_conn[r], 0,
						"heartbeat timeout");
			logf_(s, "%u worker(s) dropped from the clock after "
				 "%.1f s without a heartbeat",
			      s->ssp.dropped - before, s->ssp.timeout);
			serve_parked(s);
		}
	}
	/* Belt and braces: every event that moves a clock serves the parked
	 * pulls, and so does every tick. */
	if (s->n_pend)
		serve_parked(s);
	if (s->cfg.checkpoint_every > 0 && now >= s->next_ckpt) {
		s->next_ckpt = now + s->cfg.checkpoint_every;
		if (s->dirty && checkpoint(s, &s->fatal_err)) {
			s->fatal = 1;
			net_loop_stop(s->loop);
		}
	}
}

/* ------------------------------------------------------------ lifecycle */

int ps_server_create(const struct ps_config *cfg, struct ps_server **out,
		     boar_error *err)
{
	struct ps_server *s = calloc(1, sizeof *s);
	int rc;
	if (!s)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	s->cfg = *cfg;
	if (s->cfg.heartbeat_timeout <= 0)
		s->cfg.heartbeat_timeout = 10;
	if (!s->cfg.n_shards || s->cfg.shard >= s->cfg.n_shards) {
		rc = boar_fail(err, BOAR_EINVAL, "shard %u of %u", cfg->shard,
			       cfg->n_shards);
		goto err;
	}
	if (cfg->key) {
		memcpy(s->key, cfg->key, NET_KEY_LEN);
		s->auth = 1;
	}
	wire_out_init(&s->out);
	s->n_conns = 1024;
	s->conns = calloc(s->n_conns, sizeof *s->conns);
	if (!s->conns) {
		rc = boar_fail(err, BOAR_ENOMEM, "out of memory");
		goto err;
	}
	if (cfg->checkpoint_dir) {
		struct ckpt c;
		rc = ckpt_load(cfg->checkpoint_dir, cfg->shard, cfg->n_shards,
			       &c, err);
		if (rc < 0)
			goto err;
		if (rc == 0) {
			if (cfg->dim && cfg->dim != c.dim) {
				ckpt_free(&c);
				rc = boar_fail(err, BOAR_EMISMATCH,
					       "checkpoint has %llu keys, "
					       "ps_config.dim says %llu",
					       (unsigned long long)c.dim,
					       (unsigned long long)cfg->dim);
				goto err;
			}
			rc = setup_shard(s, c.dim, c.n_workers, err);
			if (!rc) {
				memcpy(s->w, c.w, (c.hi - c.lo) * sizeof *s->w);
				/* Everyone is away until they reconnect:
				 * they keep their clocks and have a
				 * heartbeat timeout to come back. */
				double now = net_now();
				for (uint32_t i = 0; i < c.n_workers; i++) {
					uint64_t k = c.clocks[i];
					s->ssp.w[i].state = k & CKPT_FINISHED
								    ? SSP_DONE
								    : SSP_AWAY;
					s->ssp.w[i].clock = k & ~CKPT_FINISHED;
					s->ssp.w[i].since = now;
				}
				s->ssp.max_served = c.max_staleness;
				logf_(s, "resumed from checkpoint: %llu keys "
					 "[%llu, %llu), %u workers",
				      (unsigned long long)c.dim,
				      (unsigned long long)c.lo,
				      (unsigned long long)c.hi, c.n_workers);
			}
			ckpt_free(&c);
			if (rc)
				goto err;
		}
	}
	if (!s->have_workers && cfg->dim)
		ps_shard_range(cfg->dim, cfg->shard, cfg->n_shards, &s->lo,
			       &s->hi);

	struct net_loop_config lc = {
		.listen_fd = cfg->listen_fd,
		.stop_fd = cfg->stop_fd,
		.max_peers = s->n_conns,
		.tick_ms = 100,
		.frame_timeout = 10,
	};
	struct net_loop_ops ops = {
		.on_open = on_open,
		.on_frame = on_frame,
		.on_close = on_close,
		.on_tick = on_tick,
		.max_payload = max_payload,
	};
	rc = net_loop_create(&lc, &ops, s, &s->loop, err);
	if (rc)
		goto err;
	s->next_ckpt = net_now() + s->cfg.checkpoint_every;
	*out = s;
	return 0;
err:
	ps_server_free(s);
	return rc;
}

int ps_server_run(struct ps_server *s, boar_error *err)
{
	int rc = net_loop_run(s->loop, err);
	if (!rc && s->fatal) {
		if (err)
			*err = s->fatal_err;
		rc = s->fatal_err.code;
	}
	/* Always try to leave a checkpoint behind, even after an error. */
	boar_error e2;
	int crc = checkpoint(s, rc ? &e2 : err);
	return rc ? rc : crc;
}

void ps_server_stats(const struct ps_server *s, struct wire_stats *out)
{
	*out = s->st;
	out->max_staleness = s->ssp.max_served;
	if (s->loop)
		net_loop_bytes(s->loop, &out->bytes_in, &out->bytes_out);
	if (s->have_workers) {
		uint64_t m = ssp_min_clock(&s->ssp);
		out->min_clock = m;
		out->live_workers = ssp_live(&s->ssp);
		out->dropped_workers = s->ssp.dropped;
	}
}

void ps_server_free(struct ps_server *s)
{
	if (!s)
		return;
	net_loop_free(s->loop);
	for (size_t i = 0; i < s->n_pend; i++)
		free(s->pend[i].keys);
	free(s->pend);
	free(s->conns);
	free(s->w);
	free(s->worker_conn);
	if (s->have_workers)
		ssp_free(&s->ssp);
	wire_msg_free(&s->msg);
	wire_out_free(&s->out);
	free(s);
}
