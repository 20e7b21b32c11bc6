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
#include "net/server_int.h"

void ps_send_out(struct lane *ln, uint32_t slot, struct wire_out *o)
{
	struct net_session *ses = &ln->conns[slot].ses;
	if (!o->failed && o->len && (!ses->on || net_seal(ses, o) == 0))
		net_loop_send_out(ln->loop, slot, o); /* no copy */
	wire_out_reset(o);
}

/* Sends the one frame built in ln->out to a peer of the lane, tagged if
 * the peer has a session, once a primary's backup holds what it
 * acknowledges (replica_shard.c). */
static void flush_to(struct lane *ln, uint32_t slot)
{
	if (!ps_replica_hold(ln, slot))
		ps_send_out(ln, slot, &ln->out);
}

/* An ERROR acknowledges nothing: it goes at once, the peer's kept
 * answers never. */
static int refuse(struct lane *ln, uint32_t slot, int code, const char *why)
{
	ps_replica_drop_held(ln, slot);
	wire_out_reset(&ln->out);
	wire_put_error(&ln->out, code, why);
	ps_send_out(ln, slot, &ln->out);
	ps_logf(ln->s, "dropping %s: %s", net_loop_peer_name(ln->loop, slot),
	      why);
	net_loop_close(ln->loop, slot, 1, why);
	return 0; /* already closing: the loop need not drop it again */
}

/* A peer whose model has another number of keys than the shard's: both
 * counts, and the usual cause (AdaGrad's sums shared beside the weights
 * double the keys: train_cluster.c) named. */
static int refuse_dim(struct lane *ln, uint32_t slot, uint64_t got,
		      uint64_t want)
{
	char why[200];
	snprintf(why, sizeof why,
		 "model dimension differs from the shard's: %llu keys, the "
		 "shard holds %llu (another model, or the other "
		 "--adagrad-sums layout: shared sums double the keys)",
		 (unsigned long long)got, (unsigned long long)want);
	return refuse(ln, slot, BOAR_EMISMATCH, why);
}

/* Counts a pull the SSP rule allows (with s->mu held). */
static void count_pull(struct ps_server *s, uint32_t n_keys, uint64_t gap)
{
	ssp_served(&s->ssp, gap);
	s->st.pulls++;
	s->st.keys_pulled += n_keys;
}

/* The answer to pull p into ln->out, its values as float16 or not. */
static void build_reply(struct lane *ln, const struct pend *p, uint64_t gap,
			int held, int f16)
{
	struct wire_out *o = &ln->out;
	wire_out_reset(o);
	wire_begin(o, WIRE_PULL_REPLY,
		   (f16 ? WIRE_F_F16 : 0) | (held ? WIRE_F_HELD : 0));
	wire_put_u32(o, p->req);
	wire_put_u32(o, gap > UINT32_MAX ? UINT32_MAX : (uint32_t)gap);
	wire_put_varint(o, p->ks.n);
	/* values straight from the shard, in the order asked */
	shard_w_put_keys(&ln->s->w, o, &p->ks, f16);
}

/* The values of a pull already counted (needs no s->mu): as float16
 * where the pull asks so and every one is a finite half, else (a weight
 * over 65504, or not finite) written again as float32. */
static void reply_pull(struct lane *ln, const struct pend *p, uint64_t gap,
		       int held)
{
	build_reply(ln, p, gap, held, p->f16);
	if (p->f16 && ln->out.f16_lost)
		build_reply(ln, p, gap, held, 0);
	wire_end(&ln->out);
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

/* The clock of the worker on this lane's connection slot (s->mu held). */
static uint64_t own_clock(const struct lane *ln, uint32_t slot)
{
	int rank = ln->conns[slot].rank;
	return rank < 0 ? 0 : ln->s->ssp.w[rank].clock;
}

/* Answers every request of this lane parked that the clocks now allow
 * (with s->mu held). A held pull also waits for its asker's own clock to
 * reach the pull's: a pull asked a clock ahead (client.h) is then
 * answered with the asker's pushes of the clock in between, all or none,
 * never some (WIRE_F_HELD says which). */
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
			   ssp_can_serve(&s->ssp, p->clock, &gap) &&
			   own_clock(ln, p->slot) >= p->clock) {
			count_pull(s, p->ks.n, gap);
			reply_pull(ln, p, gap, 1);
			free(p->ks.a);
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
			free(s->pend[i].ks.a);
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
		ps_logf(s, "stopping: %s", s->fatal_err.message);
	}
	ps_stop_all(s);
	UNLOCK(s);
	return 0;
}

/* A sparse store could not grow: the shard stops rather than lose the
 * push (its log, if any, holds it for a restart with more memory). */
static int store_failed(struct ps_server *s)
{
	LOCK(s);
	if (!s->fatal) {
		s->fatal = 1;
		boar_fail(&s->fatal_err, BOAR_ENOMEM,
			  "out of memory for the weights (%llu keys held)",
			  (unsigned long long)shard_w_stored(&s->w));
		ps_logf(s, "stopping: %s", s->fatal_err.message);
	}
	ps_stop_all(s);
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
	    (ps_setup_shard(s, c->dim, c->n_workers, &e) ||
	     ps_checkpoint(s, &e))) /* the base the push log builds on */
		return refuse(ln, slot, e.code, e.message);
	if (c->dim != s->dim)
		return refuse_dim(ln, slot, c->dim, s->dim);
	if (c->n_workers != s->n_workers)
		return refuse(ln, slot, BOAR_EMISMATCH,
			      "number of workers differs from the shard's");
	if (rank_taken(ln, slot, (uint32_t)c->rank))
		return 0;
	s->worker_conn[c->rank] = gid(ln, slot);
	c->join_clock = ssp_join(&s->ssp, (uint32_t)c->rank, c->join_clock,
				 net_now());
	c->state = C_READY;
	ps_replica_joined(s, c);
	/* Tell it it is in (the first tagged frame, with an authenticated
	 * session): only now may it push. */
	wire_out_reset(&ln->out);
	wire_put_ready(&ln->out, c->join_clock, s->last_seq[c->rank],
		       s->logging || s->rep); /* rep: resend to the backup */
	flush_to(ln, slot);
	ps_logf(s, "worker %d joined from %s at clock %llu", c->rank, c->name,
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
		return refuse_dim(ln, slot, m->dim, dim);
	if (s->have_workers && m->n_workers != s->n_workers)
		return refuse(ln, slot, BOAR_EMISMATCH,
			      "number of workers differs from the shard's");
	const char *why;
	int code = ps_replica_admit(s, c, m, &why);
	if (code)
		return refuse(ln, slot, code, why);
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

/* The keys of a push that names its pull (WIRE_F_PULLED) instead of
 * carrying them: that pull's, kept (kept_pulls.h), in range already.
 * @return 0 and *keys, or 1: the peer was refused. */
static int keys_of_pull(struct lane *ln, uint32_t slot,
			const struct wire_msg *m, struct key_span *keys)
{
	char why[200];
	const struct kept_pull *p =
		kept_pulls_find(&ln->conns[slot].pulls, m->req);
	if (keeps_pushes(ln->s))
		snprintf(why, sizeof why, "pushed values without their keys "
			 "to a shard that keeps pushes for a resend (a push "
			 "log or a backup)");
	else if (!p)
		snprintf(why, sizeof why, "pushed values for the keys of pull "
			 "request %u, which this connection did not make or "
			 "was more than %u pulls ago",
			 m->req, WIRE_PULLS_KEPT);
	else if (p->ks.n != m->n_vals)
		snprintf(why, sizeof why, "pushed %u values for the %u keys of "
			 "pull request %u", m->n_vals, p->ks.n, m->req);
	else {
		*keys = p->ks;
		return 0;
	}
	refuse(ln, slot, BOAR_EPROTO, why);
	return 1;
}

/* A push: checked, logged, then applied outside s->mu (under the locks
 * of the stripes it touches), so lanes apply in parallel. One whose seq
 * the shard holds already (resent after a reconnect) is skipped. A push
 * naming its pull is applied to that pull's keys, exactly as if it had
 * carried them. */
static int on_push(struct lane *ln, uint32_t slot, const struct wire_msg *m,
		   const uint8_t *payload, uint32_t len)
{
	struct ps_server *s = ln->s;
	struct key_span keys = key_span_of(m);
	uint32_t n = m->n_vals;
	if (m->flags & WIRE_F_PULLED) {
		if (keys_of_pull(ln, slot, m, &keys))
			return 0;
	} else if (!in_range(s, &keys)) {
		return refuse(ln, slot, BOAR_EPROTO,
			      "pushed a key outside the shard");
	}
	if (!all_finite(m->push_vals, n))
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
	s->st.keys_pushed += n;
	s->dirty = 1;
	/* into the gate before leaving s->mu: a checkpoint that clears
	 * dirty (and the log) waits for this push */
	shard_w_enter(&s->w);
	UNLOCK(s);
	int bad = s->logging && pushlog_append(&s->log, PUSHLOG_PUSH, m->flags,
					       rank, m->seq, payload, len);
	int full = !bad && shard_w_add(&s->w, &keys, m->push_vals);
	shard_w_leave(&s->w);
	if (bad)
		return log_failed(s);
	if (full)
		return store_failed(s);
	return 0;
}

/* A pull: answered now (values read outside s->mu) or parked until the
 * clocks allow it. */
static int on_pull(struct lane *ln, uint32_t slot, const struct wire_msg *m)
{
	struct ps_server *s = ln->s;
	struct key_span ks = key_span_of(m);
	if (!in_range(s, &ks))
		return refuse(ln, slot, BOAR_EPROTO,
			      "pulled a key outside the shard");
	struct pend p = {
		.lane = ln->idx,
		.slot = slot,
		.type = WIRE_PULL,
		.f16 = (m->flags & WIRE_F_F16) != 0,
		.req = m->req,
		.clock = m->clock,
		.ks = ks,
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
		count_pull(s, ks.n, gap);
	} else {
		size_t len = key_span_len(&ks);
		p.ks.a = malloc((len ? len : 1) * sizeof *p.ks.a);
		if (p.ks.a && len)
			memcpy(p.ks.a, ks.a, len * sizeof *p.ks.a);
		if (!p.ks.a || park(s, &p)) {
			free(p.ks.a);
			oom = 1;
		}
	}
	UNLOCK(s);
	if (oom)
		return refuse(ln, slot, BOAR_ENOMEM, "out of memory");
	if (now)
		reply_pull(ln, &p, gap, 0);
	/* done with the keys: kept for a push that names this pull (m is
	 * this lane's ln->msg, whose key array is taken) */
	if (!keeps_pushes(s))
		kept_pulls_take(&ln->conns[slot].pulls, &ln->msg);
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
		ps_logf(s, "worker %u done at clock %llu", rank,
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
		ps_logf(s, "shutdown asked by worker %u", rank);
		ps_stop_all(s);
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
	if (c->state == C_READY && m->type == WIRE_PUSH) {
		rc = on_push(ln, slot, m, payload, plain.length);
	} else if (c->state == C_READY && m->type == WIRE_PULL) {
		rc = on_pull(ln, slot, m);
	} else {
		LOCK(ln->s);
		rc = on_locked_frame(ln, slot, m);
		UNLOCK(ln->s);
	}
	if (!rc) /* taken (a refused peer is no longer READY) */
		ps_replica_forward(ln->s, c, &plain, payload);
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
	ps_replica_drop_held(ln, slot);
	LOCK(s);
	drop_parked_of(s, ln->idx, slot);
	ps_replica_closed(s, c);
	if (c->state == C_READY && s->worker_conn[c->rank] == gid(ln, slot)) {
		s->worker_conn[c->rank] = -1;
		ssp_away(&s->ssp, (uint32_t)c->rank, net_now());
		if (s->ssp.w[c->rank].state == SSP_AWAY)
			ps_logf(s, "worker %d disconnected (%s)", c->rank, why);
	}
	net_session_end(&c->ses);
	kept_pulls_free(&c->pulls);
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
			ps_logf(s, "%u worker(s) dropped from the clock after "
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
		if (s->dirty && ps_checkpoint(s, &s->fatal_err)) {
			s->fatal = 1;
			ps_stop_all(s);
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
	 * pulls, and so does every tick (and sends what the backup
	 * acknowledged). */
	if (s->n_pend)
		serve_parked(ln);
	UNLOCK(s);
	ps_replica_release(ln);
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
	ps_replica_release(ln);
}

/* Lane 0 deals accepted connections out to the lanes in turn. */
int ps_lane_route(void *ctx, int fd)
{
	struct lane *ln = ctx;
	struct ps_server *s = ln->s;
	uint32_t to = s->next_lane++ % s->n_lanes;
	return to && net_loop_adopt(s->lanes[to].loop, fd) == 0;
}

/* A worker's push waits while the frames of other connections ready now
 * go first: their pulls, which workers wait for, are answered before the
 * pushes that came in the same moment are applied. The SSP rule is
 * unchanged: the pusher's CLOCK is behind its push on its connection, so
 * no clock counts a push not yet applied. */
static int later(void *ctx, uint32_t slot, const struct wire_hdr *h)
{
	struct lane *ln = ctx;
	return ln->conns[slot].state == C_READY && h->type == WIRE_PUSH;
}

const struct net_loop_ops ps_lane_ops = {
	.on_open = on_open,
	.on_frame = on_frame,
	.on_close = on_close,
	.on_tick = on_tick,
	.max_payload = max_payload,
	.on_wake = on_wake,
	.route = ps_lane_route,
	.later = later,
};
