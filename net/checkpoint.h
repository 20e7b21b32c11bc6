/* checkpoint.h - a shard's state on disk (library-internal).
 *
 * One file per shard, DIR/shard-I-of-S.ckpt, replaced atomically: written
 * to a temporary file in DIR, fsync'ed, renamed over the old one, and the
 * directory fsync'ed, so a crash at any point leaves either the old or the
 * new checkpoint, never a torn one. Layout (little-endian):
 *
 *   "BOARCKP2", u32 shard, u32 n_shards, u64 dim, u64 lo, u64 hi,
 *   u32 n_workers, u32 0, u64 max_staleness, u64 clock[n_workers] (bit
 *   63 set: that worker had finished or was dropped), u64
 *   seq[n_workers] (the last push of each worker applied), u64 pushes
 *   (pushes applied in the shard's life), f32 w[hi - lo], u32 crc32 of
 *   everything before it.
 *
 * "BOARCKP3" (a sparse store, shard_w.h) has, in place of w, u64 n and n
 * pairs (u64 key, f32 value), keys ascending in [lo, hi): the non-zero
 * weights; every other key is 0.
 *
 * "BOARCKP1" files (no seq, no pushes: read as zeros) still load.
 */
#ifndef BOAR_NET_CHECKPOINT_H
#define BOAR_NET_CHECKPOINT_H

#include <stdint.h>

#include "boar.h"

#define CKPT_FINISHED (1ull << 63)

struct ckpt {
	uint32_t shard, n_shards;
	uint64_t dim, lo, hi;
	uint32_t n_workers;
	uint64_t max_staleness;
	uint64_t *clocks; /* n_workers */
	uint64_t *seqs;   /* n_workers; NULL: zeros (saving) */
	uint64_t pushes;
	float *w;         /* hi - lo values, or n_pairs with keys */
	uint64_t *keys;   /* NULL (dense), or n_pairs ascending keys */
	uint64_t n_pairs;
};

int ckpt_save(const char *dir, const struct ckpt *c, boar_error *err);
/* @return 0 and *c (arrays malloc'ed), 1 if there is no checkpoint yet,
 *         or BOAR_EIO / BOAR_ECORRUPT / BOAR_EMISMATCH with *err. */
int ckpt_load(const char *dir, uint32_t shard, uint32_t n_shards,
	      struct ckpt *c, boar_error *err);
void ckpt_free(struct ckpt *c);

#endif
