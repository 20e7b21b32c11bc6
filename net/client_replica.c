/* client_replica.c - the client's part in chain replication (replica.h):
 * a primary's link to its backup is a client of one shard; a worker goes
 * over to a shard's backup (client.h: backups): the two addresses, the
 * probe of a silent primary's backup, the failovers counted and timed. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "net/client_int.h"
#include "net/loop.h"

/* Our HELLO, with a fresh nonce, into c->out. @return 0 or -1. */
int client_put_hello(struct ps_client *c, uint8_t nonce[WIRE_NONCE_LEN])
{
	if (net_random(nonce, WIRE_NONCE_LEN))
		return -1;
	wire_out_reset(&c->out);
	wire_begin(&c->out, WIRE_HELLO, c->link ? WIRE_F_REPLICA : 0);
	wire_put_u32(&c->out, c->cfg.rank);
	wire_put_u32(&c->out, c->cfg.n_workers);
	wire_put_u64(&c->out, c->cfg.dim);
	wire_put_u64(&c->out, c->clock);
	wire_put_bytes(&c->out, nonce, WIRE_NONCE_LEN);
	wire_end(&c->out);
	return 0;
}

/* Whether shard s's backup answers a HELLO with WELCOME (it took over)
 * rather than "my primary is alive" (WIRE_ERR_STANDBY). The probe's
 * connection is closed either way; the caller reconnects. */
int client_backup_took_over(struct ps_client *c, const struct shard *s)
{
	struct shard *b = calloc(1, sizeof *b);
	uint8_t nonce[WIRE_NONCE_LEN];
	boar_error e;
	int took = 0;
	if (!b)
		return 0;
	b->fd = -1;
	memcpy(b->host, s->alt_host, sizeof b->host);
	b->port = s->alt_port;
	if (!net_connect(b->host, b->port, &b->fd, &e) && !client_put_hello(c, nonce))
		took = !client_send_out(c, b) && !client_recv_msg(c, b, 2, &e) &&
		       c->msg.type == WIRE_WELCOME;
	client_drop_fd(b);
	free(b);
	return took;
}

/* A shard with a backup: the other address becomes the one in use. */
void client_switch_address(struct shard *s)
{
	char h[sizeof s->host];
	unsigned p = s->port;
	memcpy(h, s->host, sizeof h);
	memcpy(s->host, s->alt_host, sizeof h);
	memcpy(s->alt_host, h, sizeof h);
	s->port = s->alt_port;
	s->alt_port = p;
	s->on_alt = !s->on_alt;
}

/* READY came: through the other address than the last time, it is a
 * failover, timed from the start of the reconnect. */
void client_count_failover(struct ps_client *c, struct shard *s,
			   double started)
{
	double t = net_now() - started;
	int moved = s->on_alt != s->ready_on_alt;
	s->ready_on_alt = s->on_alt;
	if (!moved)
		return;
	c->n.failovers++;
	if (t > c->n.failover_s)
		c->n.failover_s = t;
}


int ps_client_link(const struct ps_client_config *cfg, uint32_t shard,
		   uint64_t clock, struct ps_client **out, boar_error *err)
{
	struct ps_client *c;
	int rc = client_new(cfg, &c, err);
	if (rc)
		return rc;
	if (shard >= cfg->n_shards) {
		rc = boar_fail(err, BOAR_EINVAL, "no shard %u", shard);
		goto err;
	}
	c->link = 1;
	c->only = shard;
	c->clock = clock;
	if ((rc = client_connect_shard(c, shard, err)))
		goto err;
	*out = c;
	return 0;
err:
	ps_client_free(c);
	return rc;
}

/* One SHUTDOWN on a link's connection as it is: no reconnect, no wait,
 * errors ignored (replica.c: a backup dropped from the chain stops). */
void ps_client_stop_link(struct ps_client *c)
{
	if (!c || !c->link || c->sh[c->only].fd < 0)
		return;
	wire_out_reset(&c->out);
	wire_begin(&c->out, WIRE_SHUTDOWN, 0);
	wire_end(&c->out);
	client_send_out(c, &c->sh[c->only]);
}
