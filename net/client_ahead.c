/* client_ahead.c - a pull asked a clock ahead, so that the shards answer
 * while the worker sweeps the current clock (client.h).
 *
 * The request goes out before this clock's pushes (with a background
 * thread, also before the pushes and clocks it still has queued: they
 * were the longest part of the wait with short clocks), labelled with the
 * next clock. A shard that may answer it at once does, before those
 * pushes reach it; one that must hold it (the SSP rule) holds it also
 * until the asker's own CLOCK arrives, so the answer then counts them
 * (WIRE_F_HELD). The client records its pushes sent after the request
 * and adds them to answers given at once, so either way the values are
 * those of a pull made after the pushes: read-my-writes and the bound of
 * the next clock both hold.
 */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/window_add.h"
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

/* Room for one more run. */
static struct own_run *new_run(struct pull_ahead *a)
{
	if (grow((void **)&a->runs, a->n_runs + 1, &a->runs_cap,
		 sizeof *a->runs))
		return NULL;
	return &a->runs[a->n_runs];
}

int client_ahead_record(struct ps_client *c, const uint64_t *keys,
			const float *deltas, uint32_t n)
{
	struct pull_ahead *a = &c->ahead;
	uint32_t cap = a->cap;
	struct own_run *r = new_run(a);
	if (!r || grow((void **)&a->pk, a->np + n, &cap, sizeof *a->pk) ||
	    grow((void **)&a->pv, a->np + n, &a->cap, sizeof *a->pv))
		return -1;
	memcpy(a->pk + a->np, keys, n * sizeof *keys);
	memcpy(a->pv + a->np, deltas, n * sizeof *deltas);
	*r = (struct own_run){ .k = NULL, .v = NULL, .n = n, .at = a->np };
	a->np += n;
	a->n_runs++;
	return 0;
}

int client_ahead_record_ref(struct ps_client *c, const uint64_t *keys,
			    const float *deltas, uint32_t n)
{
	struct pull_ahead *a = &c->ahead;
	struct own_run *r = new_run(a);
	if (!r)
		return -1;
	*r = (struct own_run){ .k = keys, .v = deltas, .n = n };
	a->n_runs++;
	return 0;
}

int client_ahead_ask(struct ps_client *c, const uint64_t *keys, uint32_t n,
		     uint64_t clock, boar_error *err)
{
	struct pull_ahead *a = &c->ahead;
	int rc = client_pull_send(c, keys, n, clock, a->bits, a->bits_base,
				  a->f16, a->arg, err);
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
 * or, with a background thread, by it in the order queued. dest: where
 * the thread decodes the answers (NULL: its own buffer), and bits: the
 * keys' bits the requests' bitmaps are shifted out of (NULL: set from
 * the keys), both set before the request is queued. */
static int ask_ahead(struct ps_client *c, const uint64_t *keys, uint32_t n,
		     const uint64_t *bits, uint64_t bits_base, float *dest,
		     boar_error *err)
{
	struct pull_ahead *a = &c->ahead;
	uint32_t S = c->cfg.n_shards;
	if (a->on)
		return boar_fail(err, BOAR_EINVAL,
				 "a pull asked ahead is not collected");
	if (!a->arg && !(a->arg = malloc(S * sizeof *a->arg)))
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	a->np = 0; /* the thread's queue may add pushes it jumps over */
	a->n_runs = 0;
	a->dest = dest;
	a->bits = bits;
	a->bits_base = bits_base;
	a->f16 = c->cfg.pull_f16;
	int rc = c->bg ? client_bg_ahead(c, keys, n, err)
		       : client_ahead_ask(c, keys, n, c->clock + 1, err);
	if (rc)
		return rc;
	a->on = 1;
	a->keys = keys;
	a->n = n;
	return 0;
}

int ps_client_pull_ahead(struct ps_client *c, const uint64_t *keys,
			 uint32_t n, boar_error *err)
{
	return ask_ahead(c, keys, n, NULL, 0, NULL, err);
}

int ps_client_pull_ahead_into(struct ps_client *c, const uint64_t *keys,
			      uint32_t n, float *vals, boar_error *err)
{
	return ask_ahead(c, keys, n, NULL, 0, vals, err);
}

int ps_client_pull_ahead_bits(struct ps_client *c, const uint64_t *keys,
			      uint32_t n, const uint64_t *bits,
			      uint64_t bits_base, float *vals,
			      boar_error *err)
{
	return ask_ahead(c, keys, n, bits, bits_base, vals, err);
}

/* The merge: adds pv[j] to vals[i] where pk[j] == keys[i], for the run's
 * keys pk[j..rn) and keys[lo..hi), both ascending. */
static void merge_run(const uint64_t *pk, const float *pv, uint32_t j,
		      uint32_t rn, const uint64_t *keys, uint32_t lo,
		      uint32_t hi, float *vals)
{
	for (uint32_t i = lo; i < hi && j < rn;) {
		if (pk[j] < keys[i])
			j++;
		else if (pk[j] > keys[i])
			i++;
		else
			vals[i++] += pv[j++];
	}
}

/* The merge a window of 64 keys at a time (base/window_add.h), for lists
 * of like density (a clock's pushes and the next clock's pull share the
 * power-law head). The loops branch on the data once per window (where
 * the list leaves it), not once per key as the merge's compare does, and
 * write only the values that get a delta. The sums are the merge's: one
 * add per key both lists hold. */
static void merge_windows(const uint64_t *pk, const float *pv, uint32_t j,
			  uint32_t rn, const uint64_t *keys, uint32_t i,
			  uint32_t hi, float *vals)
{
	while (i < hi && j < rn) {
		uint64_t wa = keys[i] >> 6, wb = pk[j] >> 6;
		if (wa < wb) {
			while (i < hi && keys[i] >> 6 < wb)
				i++;
			continue;
		}
		if (wb < wa) {
			while (j < rn && pk[j] >> 6 < wa)
				j++;
			continue;
		}
		uint64_t a = 0, b = 0;
		uint32_t i0 = i, j0 = j;
		do
			a |= 1ull << (keys[i] & 63);
		while (++i < hi && keys[i] >> 6 == wa);
		do
			b |= 1ull << (pk[j] & 63);
		while (++j < rn && pk[j] >> 6 == wa);
		boar_window_add(vals + i0, a, pv + j0, b);
	}
}

/* Adds one run's deltas to the values of keys[lo..hi) (both sorted),
 * from where the run reaches keys[lo]: by windows where the run's keys in
 * the slice's range are neither 8 times fewer nor 8 times more than the
 * slice's (else the merge mostly steps over one list, which predicts
 * well). */
static void add_run(const struct pull_ahead *a, const struct own_run *r,
		    const uint64_t *keys, uint32_t lo, uint32_t hi,
		    float *vals)
{
	const uint64_t *pk = r->k ? r->k : a->pk + r->at;
	const float *pv = r->k ? r->v : a->pv + r->at;
	if (lo >= hi)
		return;
	uint32_t j0 = client_lower_bound(pk, 0, r->n, keys[lo]);
	uint32_t j1 = client_lower_bound(pk, j0, r->n, keys[hi - 1] + 1);
	uint64_t n = hi - lo, m = j1 - j0;
	if (m * 8 >= n && n * 8 >= m)
		merge_windows(pk, pv, j0, j1, keys, lo, hi, vals);
	else
		merge_run(pk, pv, j0, r->n, keys, lo, hi, vals);
}

uint64_t client_ahead_own_keys(const struct pull_ahead *a)
{
	uint64_t n = 0;
	for (uint32_t r = 0; r < a->n_runs; r++)
		n += a->runs[r].n;
	return n;
}

void client_ahead_add_own(const struct pull_ahead *a, const uint64_t *keys,
			  uint32_t lo, uint32_t hi, float *vals)
{
	for (uint32_t r = 0; r < a->n_runs; r++)
		add_run(a, &a->runs[r], keys, lo, hi, vals);
}

/* The copy out of the answer and the merge of the worker's own pushes
 * (each as long as the clock's keys: most of a clock's pull wait once
 * the answer is read ahead) on the worker's threads, a slice of keys
 * each. */
void client_ahead_finish_vals(const struct pull_ahead *a,
			      const uint64_t *keys, uint32_t lo, uint32_t hi,
			      const float *from, float *vals, int add_own,
			      int threads)
{
	uint32_t n = hi - lo;
	int parts = threads > 1 && n >= 65536 ? threads : 1;
#pragma omp parallel for num_threads(parts) schedule(static) if (parts > 1)
	for (int t = 0; t < parts; t++) {
		uint32_t b = lo + (uint32_t)((uint64_t)n * t / parts);
		uint32_t e = lo + (uint32_t)((uint64_t)n * (t + 1) / parts);
		if (from != vals)
			memcpy(vals + b, from + b, (size_t)(e - b) * sizeof *vals);
		if (add_own)
			client_ahead_add_own(a, keys, b, e, vals);
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
	int rc = 0, added = 0;
	for (uint32_t i = 0; !rc && i < c->cfg.n_shards; i++) {
		struct pull_arg *p = &a->arg[i];
		int redone = 0;
		if (p->a == p->b)
			continue;
		rc = client_pull_reply(c, i, p, vals, &redone, err);
		if (!rc && !redone && !(c->msg.flags & WIRE_F_HELD)) {
			client_ahead_finish_vals(a, keys, p->a, p->b, vals,
						 vals, 1, c->cfg.threads);
			added = 1;
		}
	}
	if (added)
		c->n.keys_added += client_ahead_own_keys(a);
	for (uint32_t i = 0; i < c->cfg.n_shards; i++)
		c->sh[i].ahead_pending = c->sh[i].ahead_lost = 0;
	a->on = 0;
	if (!rc) {
		c->n.keys_pulled += n;
		client_note_pulled(c, a->arg);
	} else {
		client_forget_pulled(c);
	}
	return rc;
}

int ps_client_ahead_pending(const struct ps_client *c)
{
	return c->ahead.on;
}

int ps_client_ahead_ready(const struct ps_client *c)
{
	return c->ahead.on && c->bg && client_bg_ahead_ready(c);
}
