/* client_push.c - a worker's pushes: split by shard, numbered, float16
 * where it fits, held back by the significance filter, and kept for a
 * shard that logs them until it answers something after them (client.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "net/client_int.h"
#include "net/f16.h"

static int grow_bufs(struct ps_client *c, uint32_t n)
{
	if (n <= c->buf_cap)
		return 0;
	uint64_t *k = realloc(c->kbuf, n * sizeof *k);
	if (!k)
		return -1;
	c->kbuf = k;
	float *v = realloc(c->vbuf, n * sizeof *v);
	if (!v)
		return -1;
	c->vbuf = v;
	c->buf_cap = n;
	return 0;
}

/* Keeps a copy of a push frame (before its tag) until the shard answers
 * something after it. @return 0 or -1 out of memory. */
static int keep(struct shard *s, const struct wire_out *o)
{
	if (s->kept_cap - s->kept_len < o->len) {
		size_t cap = s->kept_cap ? s->kept_cap : 1u << 16;
		while (cap - s->kept_len < o->len)
			cap *= 2;
		uint8_t *b = realloc(s->kept, cap);
		if (!b)
			return -1;
		s->kept = b;
		s->kept_cap = cap;
	}
	memcpy(s->kept + s->kept_len, o->buf, o->len);
	s->kept_len += o->len;
	return 0;
}

/* The frame of a push numbered seq into c->out: with its keys, or
 * (pulled) naming the pull whose keys they are instead. @return whether
 * its keys went as a bitmap. */
static int build_push(struct ps_client *c, uint64_t seq, const uint64_t *keys,
		      const float *vals, uint32_t n, int f16,
		      const struct pulled_ref *pulled)
{
	int bits = 0;
	wire_out_reset(&c->out);
	if (pulled) {
		wire_begin_push_pulled(&c->out, c->clock, seq, pulled->req, n,
				       f16);
	} else {
		bits = client_keys_as_bits(c, keys, n);
		wire_begin(&c->out, WIRE_PUSH,
			   (f16 ? WIRE_F_F16 : 0) | (bits ? WIRE_F_BITS : 0));
		wire_put_u64(&c->out, c->clock);
		wire_put_u64(&c->out, seq);
		wire_put_keys_as(&c->out, keys, n, bits);
	}
	wire_put_vals(&c->out, vals, n, f16);
	return bits;
}

/* A push frame to shard i: with its keys, or (pulled) naming the pull
 * whose keys they are instead; as float16 where f16 and every value is a
 * finite half, else (a delta over 65504) as float32. */
static int push_frame(struct ps_client *c, uint32_t i, const uint64_t *keys,
		      const float *vals, uint32_t n, int f16,
		      const struct pulled_ref *pulled, boar_error *err)
{
	if (!n)
		return 0;
	struct shard *s = &c->sh[i];
	uint64_t seq = ++s->seq;
	int bits = build_push(c, seq, keys, vals, n, f16, pulled);
	if (f16 && c->out.f16_lost)
		bits = build_push(c, seq, keys, vals, n, 0, pulled);
	if (pulled)
		c->n.keys_keyless += n;
	if (bits)
		c->n.keys_pushed_bits += n;
	if (wire_end(&c->out))
		return boar_fail(err, BOAR_ENOMEM, "push frame too large");
	c->n.push_bytes += c->out.len;
	if (s->durable && keep(s, &c->out))
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	int rc = client_send_out(c, s);
	if (rc == RETRY) /* lost with the connection, unless kept */
		rc = client_reconnect(c, i, err);
	c->n.keys_pushed += n;
	return rc;
}

/* A push (pulled: of the keys of the pull collected last, n_shards). */
static int push(struct ps_client *c, const uint64_t *keys,
		const float *deltas, uint32_t n,
		const struct pulled_ref *pulled, boar_error *err)
{
	c->n.keys_offered += n;
	if (c->bg) /* copies the push once, a record for the pull ahead too */
		return client_bg_push(c, keys, deltas, n, pulled, err);
	if (c->ahead.on && client_ahead_record(c, keys, deltas, n))
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	return client_push_send(c, keys, deltas, n, pulled, err);
}

int ps_client_push(struct ps_client *c, const uint64_t *keys,
		   const float *deltas, uint32_t n, boar_error *err)
{
	return push(c, keys, deltas, n, NULL, err);
}

/* A push of the keys of the pull collected last (before: the one
 * before it). */
static int push_pulled(struct ps_client *c, const uint64_t *keys,
		       const float *deltas, uint32_t n, int before,
		       boar_error *err)
{
	/* a filter drops keys (and a link never pulls): keyed */
	int may = !c->keyed_only && !c->res && !c->link;
	const struct pulled_ref *r = c->pulled + (before ? c->cfg.n_shards : 0);
	return push(c, keys, deltas, n, may ? r : NULL, err);
}

int ps_client_push_pulled(struct ps_client *c, const uint64_t *keys,
			  const float *deltas, uint32_t n, boar_error *err)
{
	return push_pulled(c, keys, deltas, n, 0, err);
}

int ps_client_push_pulled_before(struct ps_client *c, const uint64_t *keys,
				 const float *deltas, uint32_t n,
				 boar_error *err)
{
	return push_pulled(c, keys, deltas, n, 1, err);
}

/* A fingerprint of keys[a..b) (order-dependent), for the full check. */
static uint64_t keys_fp(const uint64_t *keys, uint32_t a, uint32_t b)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	for (uint32_t i = a; i < b; i++)
		h = (h ^ keys[i]) * 0x100000001b3ull + (h >> 29);
	return h;
}

void client_note_pulled(struct ps_client *c, const struct pull_arg *arg)
{
	uint32_t S = c->cfg.n_shards;
	memcpy(c->pulled + S, c->pulled, S * sizeof *c->pulled);
	for (uint32_t i = 0; i < S; i++) {
		const struct pull_arg *p = &arg[i];
		struct pulled_ref *r = &c->pulled[i];
		r->ok = 1;
		r->n = p->b - p->a;
		if (!r->n)
			continue; /* nothing asked of shard i */
		r->req = p->req;
		r->gen = p->gen;
		r->nth = p->nth;
		r->first = p->keys[p->a];
		r->last = p->keys[p->b - 1];
		r->fp = c->check_pulled ? keys_fp(p->keys, p->a, p->b) : 0;
	}
}

void client_forget_pulled(struct ps_client *c)
{
	for (uint32_t i = 0; i < 2 * c->cfg.n_shards; i++)
		c->pulled[i].ok = 0;
}

/* Whether shard i's part keys[a..b) of a push of the pulled keys may
 * name the pull r instead of carrying them: the shard still keeps its
 * keys (the connection that carried it, fewer than WIRE_PULLS_KEPT pulls
 * since), keeps no pushes for a resend, and they are its keys (the count
 * and ends; in full where checked: a mismatch is the caller's bug,
 * *bad). */
static int may_name(const struct ps_client *c, const struct shard *s,
		    const struct pulled_ref *r, const uint64_t *keys,
		    uint32_t a, uint32_t b, int *bad)
{
	if (!r->ok) /* no pull noted (the first clock's, answered here) */
		return 0;
	if (b - a != r->n ||
	    (r->n && (keys[a] != r->first || keys[b - 1] != r->last)) ||
	    (c->check_pulled && r->n && keys_fp(keys, a, b) != r->fp)) {
		*bad = 1;
		return 0;
	}
	return r->n && !s->durable && s->fd >= 0 && r->gen == s->gen &&
	       s->n_pulls - r->nth < WIRE_PULLS_KEPT;
}

int client_push_send(struct ps_client *c, const uint64_t *keys,
		     const float *deltas, uint32_t n,
		     const struct pulled_ref *pulled, boar_error *err)
{
	if (!c->res) {
		uint32_t a = 0;
		for (uint32_t i = 0; i < c->cfg.n_shards; i++) {
			uint32_t b = client_lower_bound(keys, a, n, c->sh[i].hi);
			int bad = 0;
			const struct pulled_ref *r =
				pulled && may_name(c, &c->sh[i], &pulled[i],
						   keys, a, b, &bad)
					? &pulled[i]
					: NULL;
			if (bad && c->check_pulled)
				return boar_fail(err, BOAR_EINVAL,
						 "a push of the pulled keys "
						 "(ps_client_push_pulled) with "
						 "other keys than the pull's");
			int rc = push_frame(c, i, keys + a, deltas + a, b - a,
					    c->cfg.f16, r, err);
			if (rc)
				return rc;
			a = b;
		}
		return 0;
	}
	if (grow_bufs(c, n))
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	float thr = c->cfg.threshold;
	uint32_t a = 0;
	for (uint32_t i = 0; i < c->cfg.n_shards; i++) {
		uint32_t b = client_lower_bound(keys, a, n, c->sh[i].hi), m = 0;
		for (uint32_t j = a; j < b; j++) {
			float *r = &c->res[keys[j]];
			*r += deltas[j];
			if (!(fabsf(*r) > thr) || *r == 0 || !isfinite(*r))
				continue;
			c->kbuf[m] = keys[j];
			c->vbuf[m++] = *r;
		}
		/* What travels is what the shard will add. As float16: the
		 * values rounded once here, as the shard will read them (the
		 * encode then is exact), and the rounding error left in the
		 * residual to travel later (subnormals included). A frame
		 * holding any value that does not survive the rounding as a
		 * finite value (|v| > 65504, but for what rounds down to it)
		 * goes as float32, unrounded: held back instead, a delta over
		 * 65504 waited in the residual until the final flush, and the
		 * shard trained without it all along (weights of 2e7 instead
		 * of 2e5). */
		int f16 = c->cfg.f16 && m;
		if (f16 && !f16_round(c->vbuf, m)) {
			f16 = 0;
			for (uint32_t j = 0; j < m; j++)
				c->vbuf[j] = c->res[c->kbuf[j]];
		}
		for (uint32_t j = 0; j < m; j++)
			c->res[c->kbuf[j]] -= c->vbuf[j];
		int rc = push_frame(c, i, c->kbuf, c->vbuf, m, f16, NULL, err);
		if (rc)
			return rc;
		a = b;
	}
	return 0;
}

int ps_client_flush(struct ps_client *c, boar_error *err)
{
	int rc = client_bg_drain(c, err);
	if (rc || !c->res)
		return rc;
	for (uint32_t i = 0; i < c->cfg.n_shards; i++) {
		uint64_t lo = c->sh[i].lo, hi = c->sh[i].hi;
		for (uint64_t k = lo; k < hi;) {
			uint32_t m = 0;
			if (grow_bufs(c, 4096))
				return boar_fail(err, BOAR_ENOMEM,
						 "out of memory");
			for (; k < hi && m < 4096; k++) {
				if (c->res[k] == 0)
					continue;
				c->kbuf[m] = k;
				c->vbuf[m++] = c->res[k];
				c->res[k] = 0;
			}
			if ((rc = push_frame(c, i, c->kbuf, c->vbuf, m, 0, NULL,
					     err)))
				return rc;
		}
	}
	return 0;
}

/* A link (replica.c) forwards its worker's frames as they came: a push
 * keeps its worker's sequence number, so the backup skips one it holds
 * after a reconnect, exactly as a shard skips a worker's resent push. */
int ps_client_forward(struct ps_client *c, uint32_t shard, int type,
		      uint16_t flags, const uint8_t *payload, uint32_t len,
		      boar_error *err)
{
	struct shard *s = &c->sh[shard];
	if ((type == WIRE_CLOCK || type == WIRE_DONE) && len >= 8) {
		uint64_t k = 0; /* u64 clock: a reconnect's HELLO says it */
		for (int b = 7; b >= 0; b--)
			k = k << 8 | payload[b];
		if (k > c->clock)
			c->clock = k;
	}
	for (;;) {
		wire_out_reset(&c->out);
		wire_begin(&c->out, type, flags);
		wire_put_bytes(&c->out, payload, len);
		if (wire_end(&c->out))
			return boar_fail(err, BOAR_ENOMEM, "frame too large");
		if (type == WIRE_PUSH && keep(s, &c->out))
			return boar_fail(err, BOAR_ENOMEM, "out of memory");
		int rc = client_send_out(c, s);
		if (rc != RETRY)
			return rc ? boar_fail(err, rc, "out of memory") : 0;
		/* a kept push goes again with the reconnect's resend */
		if ((rc = client_reconnect(c, shard, err)) || type == WIRE_PUSH)
			return rc;
	}
}
