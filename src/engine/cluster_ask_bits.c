/* cluster_ask_bits.c - the keys of a clock asked ahead also as a bitmap
 * over the model's keys, for a transport that sends its requests as
 * bitmaps (boar_ps_transport.pull_ahead_bits; train_cluster.h).
 *
 * Such a transport otherwise sets a bit a key on the thread that sends
 * the request: for a clock of 1.9M keys (a 4x weak-scaling worker's,
 * 15 MB of keys read on a host whose cores all work), milliseconds
 * before the request could leave, while the answer was wanted by the end
 * of the sweep that had just started. Here the worker's threads set them
 * as they find the keys (cluster_clock_keys), and the transport copies
 * words.
 */
#include <stdlib.h>
#include <string.h>

#include "train_cluster.h"

void cluster_ask_bits_start(struct cluster *c)
{
	if (!c->pull_ahead_bits || !c->ahead_gkeys || c->key_copies != 1 ||
	    c->sums)
		return;
	/* no larger than the clock's key arrays it goes beside (a hashed
	 * model of 2^32 keys would need 512 MiB) */
	uint64_t words = ((c->dim + 1) * c->width + 63) / 64;
	if (words > c->cap)
		return;
	c->gbits.w = calloc(words, sizeof *c->gbits.w);
	c->ahead_gbits.w = calloc(words, sizeof *c->ahead_gbits.w);
	if (!c->gbits.w || !c->ahead_gbits.w)
		cluster_ask_bits_free(c); /* asked as before */
}

void cluster_ask_bits_free(struct cluster *c)
{
	free(c->gbits.w);
	free(c->ahead_gbits.w);
	c->gbits = (struct cluster_bits){ 0 };
	c->ahead_gbits = (struct cluster_bits){ 0 };
}

void cluster_keys_as_bits(const uint64_t *keys, uint64_t n, uint64_t *bits,
			  int threads)
{
	if (!n)
		return;
	uint64_t w0 = keys[0] >> 6, w1 = keys[n - 1] >> 6;
	memset(bits + w0, 0, (w1 - w0 + 1) * sizeof *bits);
	int parts = n >= PARALLEL_MIN ? threads : 1;
#pragma omp parallel for num_threads(parts) schedule(static) if (parts > 1)
	for (int t = 0; t < parts; t++) {
		uint64_t i = n * (uint64_t)t / (uint64_t)parts;
		uint64_t e = n * (uint64_t)(t + 1) / (uint64_t)parts;
		struct bit_run run = { bits, 0, 0 };
		for (; i < e; i++)
			bit_run_add(&run, keys[i]);
		bit_run_end(&run);
	}
}

uint64_t *cluster_ask_bits_ready(struct cluster *c)
{
	struct cluster_bits *b = &c->ahead_gbits;
	if (!b->w || c->prep_with)
		return NULL;
	if (b->hi > b->lo)
		memset(b->w + b->lo, 0, (b->hi - b->lo) * sizeof *b->w);
	b->lo = b->hi = 0;
	return b->w;
}

void cluster_ask_bits_found(struct cluster *c, const uint64_t *bits)
{
	uint64_t n = c->ahead_nk;
	const uint64_t *g = c->ahead_gkeys;
	if (bits && n) {
		c->ahead_gbits.lo = g[0] >> 6;
		c->ahead_gbits.hi = (g[n - 1] >> 6) + 1;
	}
}
