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
 *
 * Threads: a shard runs `threads` lanes, each an io_uring loop on its own
 * thread with its own connections; lane 0 accepts and deals connections
 * out in turn. A worker's frames all arrive on its one connection, so
 * they stay in order. The per-byte work (receive, tag check, decode,
 * apply, encode, send) runs on the lanes in parallel; the shard's shared
 * state (clocks, ranks, parked requests, counters) is under one mutex
 * taken per frame, and the weights under stripe locks (shard_w.h). Lock
 * order: s->mu, then the weights' gate, then a stripe. A parked request
 * is answered by its own lane: a lane that moves a clock wakes the
 * others (net_loop_wake) to look at theirs.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "net/checkpoint.h"
#include "net/loop.h"
#include "net/pushlog.h"
#include "net/server.h"
#include "net/shard_w.h"
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
	char name[64];     /* the peer's address, for other lanes' logs */
};

struct pend {
	uint32_t lane;
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

/* One thread of the shard: a loop and its connections. Only this lane's
 * thread touches msg, out and (outside s->mu) its conns' sessions. */
struct lane {
	struct ps_server *s;
	uint32_t idx;
	struct net_loop *loop;
	struct conn *conns;
	struct wire_msg msg;
	struct wire_out out;
	pthread_t thread;
	int started;
	int rc;
	boar_error err;
};

struct ps_server {
	struct ps_config cfg;
	uint8_t key[NET_KEY_LEN];
	int auth;
	struct lane *lanes;
	uint32_t n_lanes;
	unsigned n_conns;     /* per lane */
	uint32_t next_lane;   /* lane 0 deals connections out in turn */
	pthread_mutex_t mu;   /* everything below but the weights */
	atomic_int stopping;
	/* the shard */
	uint64_t dim, lo, hi;
	struct shard_w w;
	int have_workers;     /* the clock table is set up */
	uint32_t n_workers;
	struct ssp ssp;
	int64_t *worker_conn; /* rank -> lane * n_conns + slot, -1 if none */
	/* parked requests */
	struct pend *pend;
	size_t n_pend, cap_pend;
	struct wire_stats st;
	/* with a checkpoint directory: the push log (pushlog.h) and the last
	 * push seq applied per worker, so a push resent after a reconnect is
	 * applied once */
	struct pushlog log;
	int logging;
	uint64_t *last_seq;
	uint64_t dup_pushes;
	struct wire_msg replay_msg;
	double next_ckpt;
	int dirty;            /* pushes since the last checkpoint */
	int fatal;
	boar_error fatal_err;
};

#define LOCK(s) pthread_mutex_lock(&(s)->mu)
#define UNLOCK(s) pthread_mutex_unlock(&(s)->mu)

static int64_t gid(const struct lane *ln, uint32_t slot)
{
	return (int64_t)ln->idx * ln->s->n_conns + slot;
}

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

/* Sends the one frame built in ln->out to a peer of the lane, tagged if
 * the peer has a session. */
static void flush_to(struct lane *ln, uint32_t slot)
{
	struct net_session *ses = &ln->conns[slot].ses;
	if (!ln->out.failed && ln->out.len &&
	    (!ses->on || net_seal(ses, &ln->out) == 0))
		net_loop_send_out(ln->loop, slot, &ln->out); /* no copy */
	wire_out_reset(&ln->out);
}

static int refuse(struct lane *ln, uint32_t slot, int code, const char *why)
{
	wire_out_reset(&ln->out);
	wire_put_error(&ln->out, code, why);
	flush_to(ln, slot);
	logf_(ln->s, "dropping %s: %s", net_loop_peer_name(ln->loop, slot),
	      why);
	net_loop_close(ln->loop, slot, 1, why);
	return 0; /* already closing: the loop need not drop it again */
}

/* Every lane stops (from any lane's thread). */
static void stop_all(struct ps_server *s)
{
	atomic_store(&s->stopping, 1);
	for (uint32_t i = 0; i < s->n_lanes; i++)
		if (s->lanes[i].loop)
			net_loop_wake(s->lanes[i].loop);
}

/* ------------------------------------------------------------ the shard */

static int setup_shard(struct ps_server *s, uint64_t dim, uint32_t n_workers,
		       boar_error *err)
{
	ps_shard_range(dim, s->cfg.shard, s->cfg.n_shards, &s->lo, &s->hi);
	s->dim = dim;
	s->worker_conn = malloc(n_workers * sizeof *s->worker_conn);
	s->last_seq = calloc(n_workers, sizeof *s->last_seq);
	if (shard_w_init(&s->w, s->lo, s->hi) || !s->worker_conn ||
	    !s->last_seq ||
	    ssp_init(&s->ssp, n_workers, s->cfg.staleness,
		     s->cfg.heartbeat_timeout, net_now()))
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < n_workers; i++)
		s->worker_conn[i] = -1;
	s->n_workers = n_workers;
	s->have_workers = 1;
	return 0;
}

/* Called with s->mu held (or before the lanes run). */
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
		.seqs = s->last_seq,
		.pushes = s->st.pushes,
		.w = s->w.w,
	};
	uint64_t clocks[1024], *cl = clocks;
	if (s->n_workers > 1024 &&
	    !(cl = malloc(s->n_workers * sizeof *cl)))
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < s->n_workers; i++)
		cl[i] = s->ssp.w[i].clock |
			(s->ssp.w[i].state >= SSP_DEAD ? CKPT_FINISHED : 0);
	c.clocks = cl;
	shard_w_freeze(&s->w);
	int rc = ckpt_save(s->cfg.checkpoint_dir, &c, err);
	/* what the log held is in the checkpoint now */
	if (!rc && s->logging && pushlog_reset(&s->log))
		rc = boar_fail(err, BOAR_EIO, "%s: %s", s->log.path,
			       strerror(errno));
	shard_w_thaw(&s->w);
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

/* Counts a pull the SSP rule allows (with s->mu held). */
static void count_pull(struct ps_server *s, uint32_t n_keys, uint64_t gap)
{
	ssp_served(&s->ssp, gap);
	s->st.pulls++;
	s->st.keys_pulled += n_keys;
}

/* The values of a pull already counted (needs no s->mu). */
static void reply_pull(struct lane *ln, const struct pend *p, uint64_t gap)
{
	struct wire_out *o = &ln->out;
	wire_out_reset(o);
	wire_begin(o, WIRE_PULL_REPLY, p->f16 ? WIRE_F_F16 : 0);
	wire_put_u32(o, p->req);
	wire_put_u32(o, gap > UINT32_MAX ? UINT32_MAX : (uint32_t)gap);
	wire_put_varint(o, p->n_keys);
	/* values straight from the shard, in the order asked */
	shard_w_put_keys(&ln->s->w, o, p->keys, p->n_keys, p->f16);
	wire_end(o);
	flush_to(ln, p->slot);
}

static void reply_gather(struct lane *ln, const struct pend *p)
{
	struct wire_out *o = &ln->out;
	wire_out_reset(o);
	wire_begin(o, WIRE_GATHER_REPLY, 0);
	wire_put_u32(o, p->req);
	wire_put_u64(o, p->lo);
	wire_put_varint(o, p->count);
	shard_w_put_range(&ln->s->w, o, p->lo, p->count);
	wire_end(o);
	flush_to(ln, p->slot);
}

/* Answers every request of this lane parked that the clocks now allow
 * (with s->mu held). */
static void serve_parked(struct lane *ln)
{
	struct ps_server *s = ln->s;
	size_t keep = 0;
	int finished = ssp_finished(&s->ssp);
	for (size_t i = 0; i < s->n_pend; i++) {
		struct pend *p = &s->pend[i];
		uint64_t gap;
		if (p->lane != ln->idx) {
			s->pend[keep++] = *p;
		} else if (p->type == WIRE_PULL &&
			   ssp_can_serve(&s->ssp, p->clock, &gap)) {
			count_pull(s, p->n_keys, gap);
			reply_pull(ln, p, gap);
			free(p->keys);
		} else if (p->type == WIRE_GATHER && finished) {
			reply_gather(ln, p);
		} else {
			s->pend[keep++] = *p;
		}
	}
	s->n_pend = keep;
}

/* A clock moved (with s->mu held): this lane answers its parked
 * requests, and wakes the lanes that have some to do the same. */
static void clocks_moved(struct lane *ln)
{
	struct ps_server *s = ln->s;
	serve_parked(ln);
	uint64_t woken = 0;
	for (size_t i = 0; i < s->n_pend; i++) {
		uint32_t l = s->pend[i].lane;
		if (l < 64 && (woken >> l & 1))
			continue;
		if (l < 64)
			woken |= 1ull << l;
		net_loop_wake(s->lanes[l].loop);
	}
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

static void drop_parked_of(struct ps_server *s, uint32_t lane, uint32_t slot)
{
	size_t keep = 0;
	for (size_t i = 0; i < s->n_pend; i++) {
		if (s->pend[i].lane == lane && s->pend[i].slot == slot)
			free(s->pend[i].keys);
		else
			s->pend[keep++] = s->pend[i];
	}
	s->n_pend = keep;
}

/* The push log cannot be written (disk full?): applying pushes it does
 * not hold would lose them to a crash, so the shard stops. */
static int log_failed(struct ps_server *s)
{
	LOCK(s);
	if (!s->fatal) {
		s->fatal = 1;
		boar_fail(&s->fatal_err, BOAR_EIO, "%s: %s", s->log.path,
			  strerror(errno));
		logf_(s, "stopping: %s", s->fatal_err.message);
	}
	stop_all(s);
	UNLOCK(s);
	return 0;
}

/* ------------------------------------------------------------ handshake */

/* Refuses the peer on `slot` if another live connection holds `rank`.
 * Not "newest wins": two processes started with the same rank would evict
 * each other at every reconnect and lose each other's pushes. A worker
 * that really died is gone from worker_conn as soon as its socket closes,
 * or after the heartbeat timeout if its host vanished; its successor is
 * refused until then and retries (client.c). @return 1 if refused. */
static int rank_taken(struct lane *ln, uint32_t slot, uint32_t rank)
{
	struct ps_server *s = ln->s;
	if (!s->have_workers || rank >= s->n_workers)
		return 0;
	int64_t old = s->worker_conn[rank];
	if (old < 0 || old == gid(ln, slot))
		return 0;
	char why[200];
	snprintf(why, sizeof why, "worker rank %u is already held by a live "
		 "connection from %s (two processes with the same rank?)",
		 rank, s->lanes[old / s->n_conns].conns[old % s->n_conns].name);
	refuse(ln, slot, WIRE_ERR_RANK_TAKEN, why);
	return 1;
}

/* The peer passed the handshake: it becomes worker c->rank. The shard
 * itself is sized only now, by an authenticated peer, so that nobody can
 * make it allocate by lying in a HELLO. @return 0, or the refusal. */
static int join(struct lane *ln, uint32_t slot)
{
	struct ps_server *s = ln->s;
	struct conn *c = &ln->conns[slot];
	boar_error e;
	if (!s->have_workers &&
	    (setup_shard(s, c->dim, c->n_workers, &e) ||
	     checkpoint(s, &e))) /* the base the push log builds on */
		return refuse(ln, slot, e.code, e.message);
	if (c->dim != s->dim)
		return refuse(ln, slot, BOAR_EMISMATCH,
			      "model dimension differs from the shard's");
	if (c->n_workers != s->n_workers)
		return refuse(ln, slot, BOAR_EMISMATCH,
			      "number of workers differs from the shard's");
	if (rank_taken(ln, slot, (uint32_t)c->rank))
		return 0;
	s->worker_conn[c->rank] = gid(ln, slot);
	c->join_clock = ssp_join(&s->ssp, (uint32_t)c->rank, c->join_clock,
				 net_now());
	c->state = C_READY;
	/* Tell it it is in (the first tagged frame, with an authenticated
	 * session): only now may it push. */
	wire_out_reset(&ln->out);
	wire_put_ready(&ln->out, c->join_clock, s->last_seq[c->rank],
		       s->logging);
	flush_to(ln, slot);
	logf_(s, "worker %d joined from %s at clock %llu", c->rank, c->name,
	      (unsigned long long)c->join_clock);
	return 0;
}

static int on_hello(struct lane *ln, uint32_t slot, const struct wire_msg *m)
{
	struct ps_server *s = ln->s;
	struct conn *c = &ln->conns[slot];
	uint64_t lo, hi;
	uint64_t dim = s->have_workers ? s->dim : s->cfg.dim;
	if (dim && m->dim != dim)
		return refuse(ln, slot, BOAR_EMISMATCH,
			      "model dimension differs from the shard's");
	if (s->have_workers && m->n_workers != s->n_workers)
		return refuse(ln, slot, BOAR_EMISMATCH,
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
			return refuse(ln, slot, BOAR_EAUTH, "no randomness");
		net_auth_proof(s->key, 'S', c->nonce_c, c->nonce_s, proof);
	}
	struct wire_out *o = &ln->out;
	wire_out_reset(o);
	wire_begin(o, WIRE_WELCOME, 0);
	wire_put_u32(o, s->cfg.shard);
	wire_put_u32(o, s->cfg.n_shards);
	wire_put_u64(o, lo);
	wire_put_u64(o, hi);
	wire_put_u64(o, c->join_clock);
	wire_put_u8(o, (uint8_t)s->auth);
	wire_put_bytes(o, c->nonce_s, WIRE_NONCE_LEN);
	wire_put_bytes(o, proof, WIRE_MAC_LEN);
	wire_end(o);
	flush_to(ln, slot);
	if (s->auth) {
		c->state = C_CHALLENGED;
		return 0;
	}
	if (join(ln, slot) || c->state != C_READY)
		return 0;
	/* Its clock may be what parked pulls were waiting for. */
	clocks_moved(ln);
	return 0;
}

/* --------------------------------------------------------------- frames */

/* With s->mu held: if the heartbeat timeout declared this peer's worker
 * dead, its socket closes now, so that a late frame cannot move the
 * clocks or the weights. @return 1 if so. */
static int expired(struct lane *ln, uint32_t slot)
{
	struct ps_server *s = ln->s;
	int rank = ln->conns[slot].rank;
	if (s->ssp.w[rank].state != SSP_DEAD ||
	    s->worker_conn[rank] != gid(ln, slot))
		return 0;
	net_loop_close(ln->loop, slot, 0, "heartbeat timeout");
	return 1;
}

/* With s->mu held: closes this lane's connections of dead workers. */
static void close_expired(struct lane *ln)
{
	struct ps_server *s = ln->s;
	if (!s->have_workers)
		return;
	for (uint32_t r = 0; r < s->n_workers; r++) {
		int64_t g = s->worker_conn[r];
		if (s->ssp.w[r].state == SSP_DEAD && g >= 0 &&
		    g / s->n_conns == ln->idx)
			expired(ln, (uint32_t)(g % s->n_conns));
	}
}

/* A push: checked, logged, then applied outside s->mu (under the locks
 * of the stripes it touches), so lanes apply in parallel. One whose seq
 * the shard holds already (resent after a reconnect) is skipped. */
static int on_push(struct lane *ln, uint32_t slot, const struct wire_msg *m,
		   const uint8_t *payload, uint32_t len)
{
	struct ps_server *s = ln->s;
	if (!in_range(s, m->keys, m->n_keys))
		return refuse(ln, slot, BOAR_EPROTO,
			      "pushed a key outside the shard");
	for (uint32_t i = 0; i < m->n_keys; i++)
		if (!isfinite(m->vals[i]))
			return refuse(ln, slot, BOAR_EPROTO,
				      "pushed a non-finite value");
	LOCK(s);
	if (expired(ln, slot)) {
		UNLOCK(s);
		return 0;
	}
	uint32_t rank = (uint32_t)ln->conns[slot].rank;
	ssp_seen(&s->ssp, rank, net_now());
	if (m->seq <= s->last_seq[rank]) {
		s->dup_pushes++;
		UNLOCK(s);
		return 0;
	}
	s->last_seq[rank] = m->seq;
	s->st.pushes++;
	s->st.keys_pushed += m->n_keys;
	s->dirty = 1;
	/* into the gate before leaving s->mu: a checkpoint that clears
	 * dirty (and the log) waits for this push */
	shard_w_enter(&s->w);
	UNLOCK(s);
	int bad = s->logging && pushlog_append(&s->log, PUSHLOG_PUSH, m->flags,
					       rank, m->seq, payload, len);
	if (!bad)
		shard_w_add(&s->w, m->keys, m->vals, m->n_keys);
	shard_w_leave(&s->w);
	if (bad)
		return log_failed(s);
	return 0;
}

/* A pull: answered now (values read outside s->mu) or parked until the
 * clocks allow it. */
static int on_pull(struct lane *ln, uint32_t slot, const struct wire_msg *m)
{
	struct ps_server *s = ln->s;
	if (!in_range(s, m->keys, m->n_keys))
		return refuse(ln, slot, BOAR_EPROTO,
			      "pulled a key outside the shard");
	struct pend p = {
		.lane = ln->idx,
		.slot = slot,
		.type = WIRE_PULL,
		.f16 = (m->flags & WIRE_F_F16) != 0,
		.req = m->req,
		.clock = m->clock,
		.n_keys = m->n_keys,
		.keys = (uint64_t *)m->keys,
	};
	uint64_t gap;
	LOCK(s);
	if (expired(ln, slot)) {
		UNLOCK(s);
		return 0;
	}
	ssp_seen(&s->ssp, (uint32_t)ln->conns[slot].rank, net_now());
	int now = ssp_can_serve(&s->ssp, m->clock, &gap);
	int oom = 0;
	if (now) {
		count_pull(s, m->n_keys, gap);
	} else {
		p.keys = malloc((m->n_keys ? m->n_keys : 1) * sizeof *p.keys);
		if (p.keys)
			memcpy(p.keys, m->keys, m->n_keys * sizeof *p.keys);
		if (!p.keys || park(s, &p)) {
			free(p.keys);
			oom = 1;
		}
	}
	UNLOCK(s);
	if (oom)
		return refuse(ln, slot, BOAR_ENOMEM, "out of memory");
	if (now)
		reply_pull(ln, &p, gap);
	return 0;
}

/* Every other frame of a worker, with s->mu held. */
static int on_control(struct lane *ln, uint32_t slot, const struct wire_msg *m)
{
	struct ps_server *s = ln->s;
	struct conn *c = &ln->conns[slot];
	uint32_t rank = (uint32_t)c->rank;
	double now = net_now();
	if (expired(ln, slot))
		return 0;
	ssp_seen(&s->ssp, rank, now);

	switch (m->type) {
	case WIRE_CLOCK:
		if (s->logging && pushlog_append(&s->log, PUSHLOG_CLOCK, 0, rank,
						 m->clock, NULL, 0))
			return log_failed(s);
		ssp_clock(&s->ssp, rank, m->clock, now);
		clocks_moved(ln);
		return 0;
	case WIRE_HEARTBEAT:
		return 0;
	case WIRE_DONE:
		if (s->logging && pushlog_append(&s->log, PUSHLOG_DONE, 0, rank,
						 m->clock, NULL, 0))
			return log_failed(s);
		ssp_clock(&s->ssp, rank, m->clock, now);
		ssp_done(&s->ssp, rank);
		logf_(s, "worker %u done at clock %llu", rank,
		      (unsigned long long)m->clock);
		clocks_moved(ln);
		return 0;
	case WIRE_GATHER: {
		if (m->lo < s->lo || m->lo > s->hi || m->count > s->hi - m->lo)
			return refuse(ln, slot, BOAR_EPROTO,
				      "gather outside the shard");
		struct pend p = { .lane = ln->idx, .slot = slot,
				  .type = WIRE_GATHER, .req = m->req,
				  .lo = m->lo, .count = m->count };
		if (ssp_finished(&s->ssp))
			reply_gather(ln, &p);
		else if (park(s, &p))
			return refuse(ln, slot, BOAR_ENOMEM, "out of memory");
		return 0;
	}
	case WIRE_STATS: {
		struct wire_stats st;
		ps_server_stats(s, &st);
		wire_out_reset(&ln->out);
		wire_put_stats(&ln->out, m->req, &st);
		flush_to(ln, slot);
		return 0;
	}
	case WIRE_SHUTDOWN:
		logf_(s, "shutdown asked by worker %u", rank);
		stop_all(s);
		return 0;
	default:
		return refuse(ln, slot, BOAR_EPROTO, "unexpected frame type");
	}
}

/* The handshake and control frames, with s->mu held. */
static int on_locked_frame(struct lane *ln, uint32_t slot,
			   const struct wire_msg *m)
{
	struct ps_server *s = ln->s;
	struct conn *c = &ln->conns[slot];
	switch (c->state) {
	case C_NEW:
		if (m->type != WIRE_HELLO)
			return refuse(ln, slot, BOAR_EPROTO, "expected HELLO");
		return on_hello(ln, slot, m);
	case C_CHALLENGED:
		if (m->type != WIRE_AUTH)
			return refuse(ln, slot, BOAR_EAUTH, "expected AUTH");
		if (!net_auth_check(s->key, 'C', c->nonce_s, c->nonce_c, m->mac))
			return refuse(ln, slot, BOAR_EAUTH,
				      "authentication failed");
		net_session_start(&c->ses, s->key, 1, c->nonce_c, c->nonce_s);
		if (join(ln, slot) || c->state != C_READY)
			return 0;
		clocks_moved(ln);
		return 0;
	case C_READY:
		return on_control(ln, slot, m);
	}
	return -1;
}

static int on_frame(void *ctx, uint32_t slot, const struct wire_hdr *h,
		    const uint8_t *payload)
{
	struct lane *ln = ctx;
	struct conn *c = &ln->conns[slot];
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
			return refuse(ln, slot, BOAR_EAUTH, why);
		}
		plain.length = (uint32_t)len;
	}
	/* the per-byte work (tag, decode) is the lane's alone */
	int rc = wire_decode(&plain, payload, &ln->msg);
	if (rc == -2)
		return refuse(ln, slot, BOAR_ENOMEM, "out of memory");
	if (rc)
		return refuse(ln, slot, BOAR_EPROTO, "malformed frame");
	const struct wire_msg *m = &ln->msg;
	if (c->state == C_READY && m->type == WIRE_PUSH)
		return on_push(ln, slot, m, payload, plain.length);
	if (c->state == C_READY && m->type == WIRE_PULL)
		return on_pull(ln, slot, m);
	LOCK(ln->s);
	rc = on_locked_frame(ln, slot, m);
	UNLOCK(ln->s);
	return rc;
}

static int on_open(void *ctx, uint32_t slot)
{
	struct lane *ln = ctx;
	if (slot >= ln->s->n_conns)
		return -1;
	LOCK(ln->s);
	struct conn *c = &ln->conns[slot];
	memset(c, 0, sizeof *c);
	c->state = C_NEW;
	c->rank = -1;
	c->opened = net_now();
	snprintf(c->name, sizeof c->name, "%s",
		 net_loop_peer_name(ln->loop, slot));
	UNLOCK(ln->s);
	return 0;
}

static void on_close(void *ctx, uint32_t slot, const char *why)
{
	struct lane *ln = ctx;
	struct ps_server *s = ln->s;
	struct conn *c = &ln->conns[slot];
	LOCK(s);
	drop_parked_of(s, ln->idx, slot);
	if (c->state == C_READY && s->worker_conn[c->rank] == gid(ln, slot)) {
		s->worker_conn[c->rank] = -1;
		ssp_away(&s->ssp, (uint32_t)c->rank, net_now());
		if (s->ssp.w[c->rank].state == SSP_AWAY)
			logf_(s, "worker %d disconnected (%s)", c->rank, why);
	}
	net_session_end(&c->ses);
	c->state = C_NONE;
	UNLOCK(s);
}

static uint32_t max_payload(void *ctx, uint32_t slot)
{
	struct lane *ln = ctx;
	return ln->conns[slot].state == C_READY
		       ? WIRE_MAX_PAYLOAD + NET_TAG_LEN
		       : WIRE_MAX_PAYLOAD_PREAUTH;
}

/* Lane 0's share of a tick: the heartbeat timeout and checkpoints. */
static void tick_shard(struct lane *ln, double now)
{
	struct ps_server *s = ln->s;
	if (s->have_workers) {
		uint32_t before = s->ssp.dropped;
		if (ssp_expire(&s->ssp, now)) {
			logf_(s, "%u worker(s) dropped from the clock after "
				 "%.1f s without a heartbeat",
			      s->ssp.dropped - before, s->ssp.timeout);
			/* every lane closes its dead workers' sockets and
			 * answers what they held back */
			for (uint32_t i = 1; i < s->n_lanes; i++)
				net_loop_wake(s->lanes[i].loop);
		}
	}
	if (s->cfg.checkpoint_every > 0 && now >= s->next_ckpt) {
		s->next_ckpt = now + s->cfg.checkpoint_every;
		if (s->dirty && checkpoint(s, &s->fatal_err)) {
			s->fatal = 1;
			stop_all(s);
		}
	}
}

static void on_tick(void *ctx, double now)
{
	struct lane *ln = ctx;
	struct ps_server *s = ln->s;
	LOCK(s);
	for (unsigned i = 0; i < s->n_conns; i++) {
		struct conn *c = &ln->conns[i];
		if ((c->state == C_NEW || c->state == C_CHALLENGED) &&
		    now - c->opened > HANDSHAKE_TIMEOUT)
			refuse(ln, i, BOAR_ETIMEOUT, "handshake timed out");
	}
	if (ln->idx == 0)
		tick_shard(ln, now);
	close_expired(ln);
	/* Belt and braces: every event that moves a clock serves the parked
	 * pulls, and so does every tick. */
	if (s->n_pend)
		serve_parked(ln);
	UNLOCK(s);
}

static void on_wake(void *ctx)
{
	struct lane *ln = ctx;
	struct ps_server *s = ln->s;
	if (atomic_load(&s->stopping)) {
		net_loop_stop(ln->loop);
		return;
	}
	LOCK(s);
	close_expired(ln);
	if (s->n_pend)
		serve_parked(ln);
	UNLOCK(s);
}

/* Lane 0 deals accepted connections out to the lanes in turn. */
static int route(void *ctx, int fd)
{
	struct lane *ln = ctx;
	struct ps_server *s = ln->s;
	uint32_t to = s->next_lane++ % s->n_lanes;
	return to && net_loop_adopt(s->lanes[to].loop, fd) == 0;
}

/* ------------------------------------------------------------ lifecycle */

static int create_lanes(struct ps_server *s, boar_error *err)
{
	s->lanes = calloc(s->n_lanes, sizeof *s->lanes);
	if (!s->lanes)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < s->n_lanes; i++) {
		struct lane *ln = &s->lanes[i];
		ln->s = s;
		ln->idx = i;
		wire_out_init(&ln->out);
		ln->conns = calloc(s->n_conns, sizeof *ln->conns);
		if (!ln->conns)
			return boar_fail(err, BOAR_ENOMEM, "out of memory");
		struct net_loop_config lc = {
			.listen_fd = i ? -1 : s->cfg.listen_fd,
			.stop_fd = i ? -1 : s->cfg.stop_fd,
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
			.on_wake = on_wake,
			.route = i || s->n_lanes == 1 ? NULL : route,
		};
		int rc = net_loop_create(&lc, &ops, ln, &ln->loop, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* Resumes from the checkpoint in cfg->checkpoint_dir, if there is one. */
static int resume(struct ps_server *s, boar_error *err)
{
	const struct ps_config *cfg = &s->cfg;
	struct ckpt c;
	int rc = ckpt_load(cfg->checkpoint_dir, cfg->shard, cfg->n_shards, &c,
			   err);
	if (rc)
		return rc < 0 ? rc : 0; /* an error, or no checkpoint yet */
	if (cfg->dim && cfg->dim != c.dim) {
		ckpt_free(&c);
		return boar_fail(err, BOAR_EMISMATCH,
				 "checkpoint has %llu keys, ps_config.dim "
				 "says %llu",
				 (unsigned long long)c.dim,
				 (unsigned long long)cfg->dim);
	}
	rc = setup_shard(s, c.dim, c.n_workers, err);
	if (!rc) {
		memcpy(s->w.w, c.w, (c.hi - c.lo) * sizeof *s->w.w);
		/* Everyone is away until they reconnect: they keep their
		 * clocks and have a heartbeat timeout to come back. */
		double now = net_now();
		for (uint32_t i = 0; i < c.n_workers; i++) {
			uint64_t k = c.clocks[i];
			s->ssp.w[i].state =
				k & CKPT_FINISHED ? SSP_DONE : SSP_AWAY;
			s->ssp.w[i].clock = k & ~CKPT_FINISHED;
			s->ssp.w[i].since = now;
		}
		s->ssp.max_served = c.max_staleness;
		memcpy(s->last_seq, c.seqs, c.n_workers * sizeof *s->last_seq);
		s->st.pushes = c.pushes;
		logf_(s, "resumed from checkpoint: %llu keys [%llu, %llu), "
			 "%u workers",
		      (unsigned long long)c.dim, (unsigned long long)c.lo,
		      (unsigned long long)c.hi, c.n_workers);
	}
	ckpt_free(&c);
	return rc;
}

/* One record of the push log, replayed onto the checkpoint it follows
 * (checked like a frame from a peer: the file is not trusted either). */
static int replay_record(void *ctx, int kind, uint16_t flags, uint32_t rank,
			 uint64_t a, const uint8_t *payload, uint32_t len)
{
	struct ps_server *s = ctx;
	if (!s->have_workers || rank >= s->n_workers)
		return -1;
	struct ssp_worker *w = &s->ssp.w[rank];
	if (kind == PUSHLOG_CLOCK || kind == PUSHLOG_DONE) {
		if (a >= 1ull << 48)
			return -1;
		if (a > w->clock)
			w->clock = a;
		if (kind == PUSHLOG_DONE)
			w->state = SSP_DONE;
		return 0;
	}
	struct wire_hdr h = { WIRE_VERSION, WIRE_PUSH, flags, len };
	struct wire_msg *m = &s->replay_msg;
	if (kind != PUSHLOG_PUSH || (flags & ~WIRE_F_ALL) ||
	    wire_decode(&h, payload, m) || m->seq != a ||
	    !in_range(s, m->keys, m->n_keys))
		return -1;
	for (uint32_t i = 0; i < m->n_keys; i++)
		if (!isfinite(m->vals[i]))
			return -1;
	shard_w_add(&s->w, m->keys, m->vals, m->n_keys);
	if (a > s->last_seq[rank])
		s->last_seq[rank] = a;
	s->st.pushes++;
	s->st.keys_pushed += m->n_keys;
	s->dirty = 1;
	return 0;
}

/* Replays the push log onto the checkpoint and keeps it open. */
static int open_log(struct ps_server *s, boar_error *err)
{
	uint64_t n;
	int rc = pushlog_open(&s->log, s->cfg.checkpoint_dir, s->cfg.shard,
			      s->cfg.n_shards, replay_record, s, &n, err);
	if (rc)
		return rc;
	s->logging = 1;
	if (s->log.cut)
		logf_(s, "%s: cut %llu bytes of a torn or damaged last record",
		      s->log.path, (unsigned long long)s->log.cut);
	if (n)
		logf_(s, "replayed %llu records of the push log (%llu pushes "
			 "in all)",
		      (unsigned long long)n, (unsigned long long)s->st.pushes);
	return 0;
}

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
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	/* recursive: closing a peer under s->mu calls on_close */
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&s->mu, &ma);
	pthread_mutexattr_destroy(&ma);
	if (!s->cfg.n_shards || s->cfg.shard >= s->cfg.n_shards) {
		rc = boar_fail(err, BOAR_EINVAL, "shard %u of %u", cfg->shard,
			       cfg->n_shards);
		goto err;
	}
	if (cfg->threads > PS_MAX_THREADS) {
		rc = boar_fail(err, BOAR_EINVAL, "%u threads (at most %u)",
			       cfg->threads, PS_MAX_THREADS);
		goto err;
	}
	if (cfg->key) {
		memcpy(s->key, cfg->key, NET_KEY_LEN);
		s->auth = 1;
	}
	s->n_conns = 1024;
	s->n_lanes = cfg->threads ? cfg->threads : 1;
	if (cfg->checkpoint_dir &&
	    ((rc = resume(s, err)) < 0 || (rc = open_log(s, err))))
		goto err;
	if (!s->have_workers && cfg->dim)
		ps_shard_range(cfg->dim, cfg->shard, cfg->n_shards, &s->lo,
			       &s->hi);
	if ((rc = create_lanes(s, err)))
		goto err;
	s->next_ckpt = net_now() + s->cfg.checkpoint_every;
	*out = s;
	return 0;
err:
	ps_server_free(s);
	return rc;
}

static void *lane_main(void *arg)
{
	struct lane *ln = arg;
	ln->rc = net_loop_run(ln->loop, &ln->err);
	if (ln->rc)
		stop_all(ln->s);
	return NULL;
}

int ps_server_run(struct ps_server *s, boar_error *err)
{
	int rc = 0;
	for (uint32_t i = 1; i < s->n_lanes && !rc; i++) {
		if (pthread_create(&s->lanes[i].thread, NULL, lane_main,
				   &s->lanes[i]))
			rc = boar_fail(err, BOAR_ENOMEM,
				       "cannot start shard thread %u", i);
		else
			s->lanes[i].started = 1;
	}
	if (!rc)
		rc = net_loop_run(s->lanes[0].loop, err);
	stop_all(s);
	for (uint32_t i = 1; i < s->n_lanes; i++) {
		struct lane *ln = &s->lanes[i];
		if (!ln->started)
			continue;
		pthread_join(ln->thread, NULL);
		ln->started = 0;
		if (!rc && ln->rc) {
			rc = ln->rc;
			if (err)
				*err = ln->err;
		}
	}
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

void ps_server_stats(const struct ps_server *cs, struct wire_stats *out)
{
	struct ps_server *s = (struct ps_server *)cs; /* for the mutex */
	LOCK(s);
	*out = s->st;
	out->max_staleness = s->ssp.max_served;
	out->bytes_in = out->bytes_out = 0;
	for (uint32_t i = 0; s->lanes && i < s->n_lanes; i++) {
		uint64_t in, o;
		if (!s->lanes[i].loop)
			continue;
		net_loop_bytes(s->lanes[i].loop, &in, &o);
		out->bytes_in += in;
		out->bytes_out += o;
	}
	if (s->have_workers) {
		uint64_t m = ssp_min_clock(&s->ssp);
		out->min_clock = m;
		out->live_workers = ssp_live(&s->ssp);
		out->dropped_workers = s->ssp.dropped;
	}
	UNLOCK(s);
}

void ps_server_free(struct ps_server *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; s->lanes && i < s->n_lanes; i++) {
		struct lane *ln = &s->lanes[i];
		net_loop_free(ln->loop);
		if (ln->conns)
			for (unsigned k = 0; k < s->n_conns; k++)
				net_session_end(&ln->conns[k].ses);
		free(ln->conns);
		wire_msg_free(&ln->msg);
		wire_out_free(&ln->out);
	}
	free(s->lanes);
	for (size_t i = 0; i < s->n_pend; i++)
		free(s->pend[i].keys);
	free(s->pend);
	shard_w_free(&s->w);
	free(s->worker_conn);
	free(s->last_seq);
	if (s->logging)
		pushlog_close(&s->log);
	wire_msg_free(&s->replay_msg);
	if (s->have_workers)
		ssp_free(&s->ssp);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
