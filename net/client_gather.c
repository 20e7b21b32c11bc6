/* client_gather.c - the whole model out of the shards at the end of
 * training (ps_client_gather, client.h). */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "net/client_int.h"

struct gather_arg {
	uint64_t lo;
	uint32_t count;
};

static void build_gather(struct ps_client *c, uint32_t i, void *arg)
{
	struct gather_arg *g = arg;
	wire_out_reset(&c->out);
	wire_begin(&c->out, WIRE_GATHER, 0);
	wire_put_u32(&c->out, ++c->req);
	wire_put_u64(&c->out, g->lo);
	wire_put_u32(&c->out, g->count);
	wire_end(&c->out);
}

/* The next slice of shard i's range from lo that fits a frame. */
static struct gather_arg gather_slice(const struct shard *s, uint64_t lo)
{
	uint64_t left = s->hi - lo;
	return (struct gather_arg){ lo, left > (4u << 20) ? (4u << 20)
						       : (uint32_t)left };
}

/* Shard i's answer to g, decoded straight into w: read now where the
 * request went (sent), else (or where the connection broke meanwhile)
 * asked again. */
static int gather_reply(struct ps_client *c, uint32_t i,
			struct gather_arg *g, int sent, float *w,
			boar_error *err)
{
	struct shard *s = &c->sh[i];
	c->msg.into = w + g->lo;
	c->msg.n_into = g->count;
	int rc = sent ? client_recv_msg(c, s, -1, err) : RETRY;
	if (rc == RETRY && !(s->fd < 0 && (rc = client_reconnect(c, i, err))))
		rc = client_transact(c, i, WIRE_GATHER_REPLY, build_gather, g, err);
	if (!rc && (c->msg.type != WIRE_GATHER_REPLY || c->msg.lo != g->lo ||
		    c->msg.n_vals != g->count))
		rc = boar_fail(err, BOAR_EPROTO,
			       "%s:%u: gather reply does not match", s->host,
			       s->port);
	if (!rc && !c->msg.in_place)
		memcpy(w + g->lo, c->msg.vals, g->count * sizeof *w);
	c->msg.into = NULL;
	c->msg.n_into = 0;
	return rc;
}

int ps_client_gather(struct ps_client *c, float *w, boar_error *err)
{
	int rc = client_ahead_busy(c, err);
	if (rc || (rc = client_bg_drain(c, err)))
		return rc;
	uint32_t S = c->cfg.n_shards;
	/* each shard's slice in flight, and whether its request went */
	struct asked {
		struct gather_arg g;
		int sent;
	} *a = malloc(S * sizeof *a);
	if (!a)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < S; i++)
		a[i].g = (struct gather_arg){ c->sh[i].lo, 0 };
	/* Every shard's next slice asked before any answer is read: the
	 * shards answer at once, their links in parallel (asked shard by
	 * shard, a 2^22 model's took 5x the link's time), and each answer
	 * is decoded where it goes. */
	for (int more = 1; !rc && more;) {
		more = 0;
		for (uint32_t i = 0; !rc && i < S; i++) {
			a[i].g = gather_slice(&c->sh[i], a[i].g.lo + a[i].g.count);
			if (!a[i].g.count)
				continue;
			more = 1;
			build_gather(c, i, &a[i].g);
			int r = client_send_out(c, &c->sh[i]);
			a[i].sent = !r;
			if (r && r != RETRY)
				rc = boar_fail(err, r, "out of memory");
		}
		for (uint32_t i = 0; !rc && i < S; i++)
			if (a[i].g.count)
				rc = gather_reply(c, i, &a[i].g, a[i].sent, w,
						  err);
	}
	free(a);
	return rc;
}
