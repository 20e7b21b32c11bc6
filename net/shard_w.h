/* shard_w.h - a shard's weights, shared by its threads (library-internal).
 *
 * The float weights of the key range [lo, hi), split into at most
 * SHARD_W_STRIPES stripes of 2^shift consecutive keys, each under its own
 * mutex: a push adds under the locks of the stripes its (ascending) keys
 * fall in, a pull reads under them, so two threads applying frames to the
 * same keys never lose an update (each sum is exact, as with one thread),
 * and threads on different stripes never wait for each other. A frame's
 * keys are ascending, so it takes each stripe's lock once.
 *
 * Two stores, chosen by the range's size: a dense array of hi - lo floats,
 * or, for a range too large for that (a 2^32-weight hashed model: 16 GiB,
 * of which the workers' data touch a few million keys), one hash table
 * per stripe holding only the keys pushed with a non-zero delta: a key it
 * does not hold is 0. Every stripe's table is under the stripe's lock, so
 * it grows without stopping the others.
 *
 * The gate makes a frame's whole apply atomic for a reader of the whole
 * range: appliers hold it shared for a frame, a checkpoint holds it
 * exclusively, so a checkpoint never holds half a frame.
 */
#ifndef BOAR_NET_SHARD_W_H
#define BOAR_NET_SHARD_W_H

#include <pthread.h>
#include <stdint.h>

#include "base/key_table.h"
#include "net/key_span.h"
#include "net/wire.h"

#define SHARD_W_STRIPES 256
/* Ranges of more keys than this (1 GiB of floats) are stored sparse; so
 * is one over a quarter of the address space ulimit -v leaves. */
#define SHARD_W_DENSE_MAX (1ull << 28)

struct shard_w {
	float *w;              /* dense: hi - lo floats; NULL: sparse */
	/* sparse: one table per stripe, from a key's offset in its stripe
	 * (< 2^31) to its weight (.f) */
	struct key_table *tab;
	uint64_t lo, hi;
	unsigned shift;     /* stripe of key k: (k - lo) >> shift */
	unsigned n_stripes;
	pthread_mutex_t *stripe;
	pthread_rwlock_t gate;
	int ready;
};

enum { SHARD_W_AUTO = -1, SHARD_W_DENSE = 0, SHARD_W_SPARSE = 1 };

/* store: SHARD_W_AUTO (by the range's size), _DENSE or _SPARSE.
 * @return 0, or -1 when out of memory. */
int shard_w_init_store(struct shard_w *sw, uint64_t lo, uint64_t hi,
		       int store);
static inline int shard_w_init(struct shard_w *sw, uint64_t lo, uint64_t hi)
{
	return shard_w_init_store(sw, lo, hi, SHARD_W_AUTO);
}
void shard_w_free(struct shard_w *sw);
static inline int shard_w_sparse(const struct shard_w *sw)
{
	return sw->w == NULL;
}

/* Adds vals[i] to the weight of the span's i-th key (all in [lo, hi));
 * vals: host floats at any alignment (a push's, where its frame left
 * them: wire_msg.push_vals). The caller holds the gate shared
 * (shard_w_enter). @return 0, or -1 when a sparse store could not grow
 * (out of memory; the keys before it were added). */
int shard_w_add(struct shard_w *sw, const struct key_span *ks,
		const void *vals);
static inline void shard_w_enter(struct shard_w *sw)
{
	pthread_rwlock_rdlock(&sw->gate);
}
static inline void shard_w_leave(struct shard_w *sw)
{
	pthread_rwlock_unlock(&sw->gate);
}

/* Appends the values of the span's keys (all in [lo, hi)) to a frame
 * being built. */
void shard_w_put_keys(struct shard_w *sw, struct wire_out *o,
		      const struct key_span *ks, int f16);
/* Appends the values of keys [a, a + count) (float32). */
void shard_w_put_range(struct shard_w *sw, struct wire_out *o, uint64_t a,
		       uint64_t count);

/* Keys a sparse store holds (hi - lo for a dense one). */
uint64_t shard_w_stored(struct shard_w *sw);

/* A sparse store's non-zero weights, keys ascending, into new arrays
 * (*keys, *vals, *n; the caller frees them), for a checkpoint: the caller
 * holds the gate exclusively (shard_w_freeze). @return 0 or -1 (out of
 * memory). */
int shard_w_export(struct shard_w *sw, uint64_t **keys, float **vals,
		   uint64_t *n);
/* Sets weights from a checkpoint, into a fresh store: keys NULL: vals
 * holds hi - lo floats (a dense checkpoint), else n (key, value) pairs of
 * ascending keys in [lo, hi). @return 0 or -1 (out of memory). */
int shard_w_load(struct shard_w *sw, const uint64_t *keys, const float *vals,
		 uint64_t n);

/* Every weight to itself alone (no frame half applied), for a checkpoint;
 * shard_w_thaw lets the appliers go on. */
static inline void shard_w_freeze(struct shard_w *sw)
{
	pthread_rwlock_wrlock(&sw->gate);
}
static inline void shard_w_thaw(struct shard_w *sw)
{
	pthread_rwlock_unlock(&sw->gate);
}

#endif
