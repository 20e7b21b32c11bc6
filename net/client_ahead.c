/* client_ahead.c - a pull asked a clock ahead, so that the shards answer
 * while the worker sweeps the current clock (client.h).
 *
 * The request goes out before this clock's pushes, labelled with the next
 * clock. A shard that may answer it at once does, before those pushes
 * reach it; one that must hold it (the SSP rule) holds it also until the
 * asker's own CLOCK arrives, so the answer then counts them (WIRE_F_HELD).
 * The client records its pushes in between and adds them to answers given
 * at once, so either way the values are those of a pull made after the
 * pushes: read-my-writes and the bound of the next clock both hold.
 */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "net/client_int.h"

static int grow(void **p, uint32_t need, uint32_t *cap, size_t size)
{
	if (need <= *cap)
		return 0;
	uint32_t c = *cap ? *cap : 4096;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, (size_t)c * size);
	if (!q)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

int client_ahead_record(struct ps_client *c, const uint64_t *keys,
			const float *deltas, uint32_t n)
{
	struct pull_ahead *a = &c->ahead;
	uint32_t cap = a->cap, rcap = a->runs_cap;
	if (grow((void **)&a->pk, a->np + n, &cap, sizeof *a->pk) ||
	    grow((void **)&a->pv, a->np + n, &a->cap, sizeof *a->pv) ||
	    grow((void **)&a->run_end, a->n_runs + 1, &rcap,
		 sizeof *a->run_end))
		return -1;
	a->runs_cap = rcap;
	memcpy(a->pk + a->np, keys, n * sizeof *keys);
	memcpy(a->pv + a->np, deltas, n * sizeof *deltas);
	a->np += n;
	a->run_end[a->n_runs++] = a->np;
	return 0;
}

int client_ahead_ask(struct ps_client *c, const uint64_t *keys, uint32_t n,
		     boar_error *err)
{
	struct pull_ahead *a = &c->ahead;
	int rc = client_pull_send(c, keys, n, c->clock + 1, a->arg, err);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < c->cfg.n_shards; i++) {
		struct shard *s = &c->sh[i];
		int asked = a->arg[i].a < a->arg[i].b;
		s->ahead_pending = asked && s->fd >= 0;
		s->ahead_lost = asked && s->fd < 0;
		s->kept_ahead = s->kept_len;
	}
	return 0;
}

/* The caller's part (recording starts) here; the requests are sent here
 * or, with a background thread, by it in the order queued. */
int ps_client_pull_ahead(struct ps_client *c, const uint64_t *keys,
			 uint32_t n, boar_error *err)
{
	struct pull_ahead *a = &c->ahead;
	uint32_t S = c->cfg.n_shards;
	if (a->on)
		return boar_fail(err, BOAR_EINVAL,
				 "a pull asked ahead is not collected");
	if (!a->arg && !(a->arg = malloc(S * sizeof *a->arg)))
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	int rc = c->bg ? client_bg_ahead(c, keys, n, err)
		       : client_ahead_ask(c, keys, n, err);
	if (rc)
		return rc;
	a->on = 1;
	a->keys = keys;
	a->n = n;
	a->np = 0;
	a->n_runs = 0;
	return 0;
}

/* Adds the recorded pushes to the values of keys[lo..hi) (both sorted:
 * one merge per push). */
void client_ahead_add_own(const struct pull_ahead *a, const uint64_t *keys,
			  uint32_t lo, uint32_t hi, float *vals)
{
	uint32_t start = 0;
	for (uint32_t r = 0; r < a->n_runs; r++) {
		uint32_t j = start, end = a->run_end[r];
		for (uint32_t i = lo; i < hi && j < end;) {
			if (a->pk[j] < keys[i])
				j++;
			else if (a->pk[j] > keys[i])
				i++;
			else
				vals[i++] += a->pv[j++];
		}
		start = end;
	}
}

int ps_client_pull_collect(struct ps_client *c, const uint64_t *keys,
			   uint32_t n, float *vals, boar_error *err)
{
	struct pull_ahead *a = &c->ahead;
	if (!a->on || a->keys != keys || a->n != n)
		return boar_fail(err, BOAR_EINVAL,
				 "collecting a pull that was not asked ahead");
	if (c->bg)
		return client_bg_collect(c, keys, n, vals, err);
	int rc = 0;
	for (uint32_t i = 0; !rc && i < c->cfg.n_shards; i++) {
		struct pull_arg *p = &a->arg[i];
		int redone = 0;
		if (p->a == p->b)
			continue;
		rc = client_pull_reply(c, i, p, vals, &redone, err);
		if (!rc && !redone && !(c->msg.flags & WIRE_F_HELD))
			client_ahead_add_own(a, keys, p->a, p->b, vals);
	}
	for (uint32_t i = 0; i < c->cfg.n_shards; i++)
		c->sh[i].ahead_pending = c->sh[i].ahead_lost = 0;
	a->on = 0;
	if (!rc)
		c->n.keys_pulled += n;
	return rc;
}

int ps_client_ahead_pending(const struct ps_client *c)
{
	return c->ahead.on;
}
