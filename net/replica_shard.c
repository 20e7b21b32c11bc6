/* replica_shard.c - chain replication's part in a shard's protocol: a
 * primary opens links to its backup and forwards its workers' frames
 * (replica.h), and keeps each answer to a worker (unsealed, in order
 * behind the ones kept before it) until the backup holds the pushes the
 * answer acknowledges, its lane serving other frames meanwhile; a backup
 * takes only those links until they have all closed, then takes over
 * and serves the workers.
 *
 * A backup refuses workers while its primary lives (WIRE_ERR_STANDBY:
 * they retry, on the primary too), so the two never both take pushes.
 * "The primary is gone" is: every link it had opened has closed (a killed
 * process's sockets close at once; a host that vanished lets the backup's
 * heartbeat timeout close them). A link's worker rank is held by the link
 * until then, and its clock, pushes and sequence numbers are the
 * primary's, so a worker that comes over continues where it was.
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/error.h"
#include "net/replica.h"
#include "net/server_int.h"

/* An answer kept until the backup acknowledged `ticket` (replica.h). */
struct held_answer {
	uint64_t ticket;
	struct wire_out out; /* the frame, not sealed yet: a session tags
				frames in the order they are sent */
};

/* The backup holds more of worker `rank`'s pushes (replica.h): the lane
 * serving it sends what it kept (a link's thread; takes s->mu, which no
 * lane holds while it waits on a link). */
static void backup_acked(void *ctx, uint32_t rank)
{
	struct ps_server *s = ctx;
	LOCK(s);
	for (uint32_t i = 0; s->have_workers && i < s->n_workers; i++) {
		int64_t g = s->worker_conn[i];
		if ((rank == UINT32_MAX || rank == i) && g >= 0)
			net_loop_wake(s->lanes[g / s->n_conns].loop);
	}
	UNLOCK(s);
}

int ps_replica_create(struct ps_server *s, boar_error *err)
{
	if (!s->cfg.backup)
		return 0;
	if (s->cfg.replica_of)
		return boar_fail(err, BOAR_EINVAL,
				 "a backup cannot have a backup of its own "
				 "(a chain of two)");
	struct replica_config rc = {
		.addr = s->cfg.backup,
		.key = s->auth ? s->key : NULL,
		.shard = s->cfg.shard,
		.n_shards = s->cfg.n_shards,
		.log = s->cfg.log,
		.log_ctx = s->cfg.log_ctx,
		.acked = backup_acked,
		.ctx = s,
	};
	return replica_create(&rc, &s->rep, err);
}

int ps_replica_admit(struct ps_server *s, struct conn *c,
		     const struct wire_msg *m, const char **why)
{
	int link = (m->flags & WIRE_F_REPLICA) != 0;
	c->replica = link;
	if (link && !s->cfg.replica_of) {
		*why = "a replica link to a shard that is not a backup (start "
		       "the backup with --replica-of)";
		return BOAR_EPROTO;
	}
	if (link && s->promoted) {
		*why = "this backup took over from its primary: it takes no "
		       "replica link any more";
		return BOAR_EPROTO;
	}
	if (!link && s->cfg.replica_of && !s->promoted) {
		*why = "a backup serves workers only once its primary is gone "
		       "(try the primary)";
		return WIRE_ERR_STANDBY;
	}
	return 0;
}

void ps_replica_joined(struct ps_server *s, const struct conn *c)
{
	if (c->replica) {
		s->links++;
		s->had_links = 1;
	} else if (s->rep) {
		replica_join(s->rep, (uint32_t)c->rank, s->n_workers, s->dim,
			     c->join_clock);
	}
}

void ps_replica_closed(struct ps_server *s, const struct conn *c)
{
	if (!c->replica || c->state != C_READY || !s->links)
		return;
	if (--s->links || !s->had_links)
		return;
	s->promoted = 1;
	s->gone_at = net_now();
	ps_logf(s, "the primary %s is gone (its links closed): taking over, "
		   "workers may join",
		s->cfg.replica_of);
}

void ps_replica_forward(struct ps_server *s, const struct conn *c,
			const struct wire_hdr *h, const uint8_t *payload)
{
	if (!s->rep || c->state != C_READY || c->replica)
		return;
	switch (h->type) {
	case WIRE_PUSH:
	case WIRE_CLOCK:
	case WIRE_DONE:
	case WIRE_HEARTBEAT:
	case WIRE_SHUTDOWN:
		replica_forward(s->rep, (uint32_t)c->rank, h->type, h->flags,
				payload, h->length);
	}
}

/* A backup that took over: the time to its first worker back and its
 * first pull answered, said once each. */
static void time_take_over(struct ps_server *s, const struct conn *c,
			   const struct wire_out *o)
{
	if (!s->promoted || (s->said_back && s->said_pull) || o->len < 6)
		return;
	LOCK(s);
	/* the take-over, timed from the primary's links closing (at once
	 * after a kill -9) to the first worker back and the first pull
	 * answered */
	double t = net_now() - s->gone_at;
	int type = o->buf[5];
	if (!s->said_back) {
		s->said_back = 1;
		ps_logf(s, "took over: worker %d back %.3f s after the "
			   "primary's links closed",
			c->rank, t);
	}
	if (type == WIRE_PULL_REPLY && !s->said_pull) {
		s->said_pull = 1;
		ps_logf(s, "took over: first pull answered %.3f s after the "
			   "primary's links closed (take-over time)",
			t);
	}
	UNLOCK(s);
}

/* Sends the peer's kept answers that the backup acknowledged, in order. */
static void release_conn(struct lane *ln, uint32_t slot)
{
	struct conn *c = &ln->conns[slot];
	uint64_t acked = replica_acked(ln->s->rep, (uint32_t)c->rank);
	uint32_t k = 0;
	for (; k < c->n_held && c->held[k].ticket <= acked; k++) {
		ps_send_out(ln, slot, &c->held[k].out);
		wire_out_free(&c->held[k].out);
	}
	if (!k)
		return;
	c->n_held -= k;
	memmove(c->held, c->held + k, c->n_held * sizeof *c->held);
	if (!c->n_held)
		ln->n_holding--;
}

int ps_replica_hold(struct lane *ln, uint32_t slot)
{
	struct ps_server *s = ln->s;
	struct conn *c = &ln->conns[slot];
	if (c->state != C_READY || c->replica || c->rank < 0)
		return 0;
	if (!s->rep) {
		time_take_over(s, c, &ln->out);
		return 0;
	}
	uint64_t t = replica_ticket(s->rep, (uint32_t)c->rank);
	if (!t && !c->n_held)
		return 0; /* nothing to wait for, nothing to go after */
	if (c->n_held == c->cap_held) {
		uint32_t cap = c->cap_held ? 2 * c->cap_held : 4;
		struct held_answer *h = realloc(c->held, cap * sizeof *h);
		if (!h) {
			/* it may not have the answer yet: it reconnects and
			 * asks again (nothing it sent is acknowledged) */
			ps_replica_drop_held(ln, slot);
			wire_out_reset(&ln->out);
			net_loop_close(ln->loop, slot, 0, "out of memory");
			return 1;
		}
		c->held = h;
		c->cap_held = cap;
	}
	if (!c->n_held)
		ln->n_holding++;
	c->held[c->n_held].ticket = t;
	c->held[c->n_held++].out = ln->out;
	wire_out_init(&ln->out);
	return 1;
}

void ps_replica_release(struct lane *ln)
{
	for (uint32_t i = 0; ln->n_holding && i < ln->s->n_conns; i++)
		if (ln->conns[i].n_held)
			release_conn(ln, i);
}

void ps_replica_drop_held(struct lane *ln, uint32_t slot)
{
	struct conn *c = &ln->conns[slot];
	if (c->n_held)
		ln->n_holding--;
	for (uint32_t k = 0; k < c->n_held; k++)
		wire_out_free(&c->held[k].out);
	free(c->held);
	c->held = NULL;
	c->n_held = c->cap_held = 0;
}
