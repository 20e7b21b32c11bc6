/* kept_pulls.h - the keys of a connection's last pulls, kept by a
 * shard for the pushes that name them instead of carrying their keys
 * (WIRE_F_PULLED, wire.h) (library-internal).
 *
 * A worker pushes, per clock, the deltas of exactly the keys it pulled
 * for that clock, so the shard has the key list already: keeping it
 * saves the worker encoding it and the shard decoding it again. The last
 * WIRE_PULLS_KEPT lists are kept per connection (the pull of the next
 * clock is asked before this clock's push goes, so at least two are
 * needed), taken from the decoder without a copy (kept_pulls_take swaps
 * arrays with it). Memory: at most WIRE_PULLS_KEPT lists of the largest
 * pull's size per connection, freed when the connection closes. Only the
 * lane that owns the connection touches them: no lock.
 */
#ifndef BOAR_NET_KEPT_PULLS_H
#define BOAR_NET_KEPT_PULLS_H

#include <stdint.h>

#include "net/key_span.h"
#include "net/wire.h"

struct kept_pull {
	uint32_t req;
	uint32_t cap; /* of ks.a */
	int used;
	struct key_span ks; /* a list or a bitmap, as the pull came */
};

struct kept_pulls {
	struct kept_pull p[WIRE_PULLS_KEPT];
	uint32_t next; /* the slot the next pull replaces (the oldest) */
};

/* Keeps the keys of the PULL just decoded into m (m->req; m->keys and
 * m->n_keys, or its bitmap): m's array of them is taken, and the oldest
 * kept one's array given to m in its place (no copy; the caller is done
 * with m's keys). */
void kept_pulls_take(struct kept_pulls *k, struct wire_msg *m);
/* The kept list of pull req (the newest, should a peer reuse a number),
 * or NULL. */
const struct kept_pull *kept_pulls_find(const struct kept_pulls *k,
					uint32_t req);
/* Frees every list (the connection closed). */
void kept_pulls_free(struct kept_pulls *k);

#endif
