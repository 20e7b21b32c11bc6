/* replica_shard.c - chain replication's part in a shard's protocol: a
 * primary opens links to its backup and forwards its workers' frames
 * (replica.h); a backup takes only those links until they have all
 * closed, then takes over and serves the workers.
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

#include "base/error.h"
#include "net/replica.h"
#include "net/server_int.h"

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

void ps_replica_answer(struct ps_server *s, const struct conn *c,
		       const struct wire_out *o)
{
	if (c->state != C_READY || c->replica || c->rank < 0)
		return;
	if (s->rep) {
		replica_sync(s->rep, (uint32_t)c->rank);
		return;
	}
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
