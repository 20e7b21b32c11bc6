/* key_span.h - the ascending keys of one frame as a shard holds them: a
 * list, or the bitmap a PULL or PUSH marked WIRE_F_BITS carried (wire.h),
 * walked in place (library-internal).
 *
 * Why a bitmap stays one. A worker's clock asks a shard for a third to
 * nine tenths of its range; a list of those keys costs the shard 8 bytes
 * a key to write when it decodes the pull, to read when it gathers the
 * answer and again when the push that names the pull is applied, by then
 * out of cache (a connection keeps its last WIRE_PULLS_KEPT pulls). The
 * bitmap of the same keys is 64 times smaller, so it stays in cache from
 * the pull to its push, and nothing is decoded at all.
 */
#ifndef BOAR_NET_KEY_SPAN_H
#define BOAR_NET_KEY_SPAN_H

#include <stdint.h>

#include "net/wire.h"

struct key_span {
	uint64_t *a;      /* the n keys, or the bitmap's n_words words */
	uint64_t base;    /* a bitmap's: bit b of word w is key base + 64w + b */
	uint32_t n;       /* keys */
	uint32_t n_words; /* 0: a is a list */
};

static inline struct key_span key_span_list(const uint64_t *keys, uint32_t n)
{
	return (struct key_span){ (uint64_t *)keys, 0, n, 0 };
}

/* The keys of a decoded PUSH or PULL, in whichever form they came. */
static inline struct key_span key_span_of(const struct wire_msg *m)
{
	if ((m->type == WIRE_PULL || m->type == WIRE_PUSH) &&
	    (m->flags & WIRE_F_BITS))
		return (struct key_span){ m->bits, m->base, m->n_keys,
					  m->n_words };
	return key_span_list(m->keys, m->n_keys);
}

/* The smallest and largest key of a span of n >= 1 keys. */
static inline uint64_t key_span_first(const struct key_span *s)
{
	return s->n_words ? s->base : s->a[0];
}

static inline uint64_t key_span_last(const struct key_span *s)
{
	if (!s->n_words)
		return s->a[s->n - 1];
	uint64_t top = s->a[s->n_words - 1];
	return s->base + 64 * (uint64_t)(s->n_words - 1) + 63 -
	       (uint64_t)__builtin_clzll(top | 1);
}

/* The uint64 elements a span's array holds (keys or words). */
static inline uint32_t key_span_len(const struct key_span *s)
{
	return s->n_words ? s->n_words : s->n;
}

/* Word w of a bitmap with only its bits at positions [pa, pb) of the
 * whole map left: a walk of the keys in [base + pa, base + pb). */
static inline uint64_t key_span_word(const struct key_span *s, uint64_t w,
				     uint64_t pa, uint64_t pb)
{
	uint64_t x = s->a[w];
	if (w == pa >> 6)
		x &= ~0ull << (pa & 63);
	if (w == (pb - 1) >> 6 && (pb & 63))
		x &= ~0ull >> (64 - (pb & 63));
	return x;
}

#endif
