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
 * The gate makes a frame's whole apply atomic for a reader of the whole
 * range: appliers hold it shared for a frame, a checkpoint holds it
 * exclusively, so a checkpoint never holds half a frame.
 */
#ifndef BOAR_NET_SHARD_W_H
#define BOAR_NET_SHARD_W_H

#include <pthread.h>
#include <stdint.h>

#include "net/wire.h"

#define SHARD_W_STRIPES 256

struct shard_w {
	float *w;
	uint64_t lo, hi;
	unsigned shift;     /* stripe of key k: (k - lo) >> shift */
	unsigned n_stripes;
	pthread_mutex_t *stripe;
	pthread_rwlock_t gate;
	int ready;
};

/* @return 0, or -1 when out of memory. */
int shard_w_init(struct shard_w *sw, uint64_t lo, uint64_t hi);
void shard_w_free(struct shard_w *sw);

/* Adds vals to the weights of n ascending keys in [lo, hi). The caller
 * holds the gate shared (shard_w_enter). */
void shard_w_add(struct shard_w *sw, const uint64_t *keys,
		 const float *vals, uint32_t n);
static inline void shard_w_enter(struct shard_w *sw)
{
	pthread_rwlock_rdlock(&sw->gate);
}
static inline void shard_w_leave(struct shard_w *sw)
{
	pthread_rwlock_unlock(&sw->gate);
}

/* Appends the values of n ascending keys to a frame being built. */
void shard_w_put_keys(struct shard_w *sw, struct wire_out *o,
		      const uint64_t *keys, uint32_t n, int f16);
/* Appends the values of keys [a, a + count) (float32). */
void shard_w_put_range(struct shard_w *sw, struct wire_out *o, uint64_t a,
		       uint64_t count);

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
