/* shuffle_ratings.c - ratings into a uniformly random order in two
 * streaming passes.
 *
 * Gathering ratings through a shuffled index costs a cache miss per field
 * per rating. Instead every rating draws a bucket from a counter-based
 * generator (a hash of seed and position, so the draw does not depend on
 * the thread count); a counting pass sizes the buckets, a scatter pass
 * reads the dataset in order and appends each rating to its bucket (a few
 * thousand buckets: every bucket's write position stays in cache), and each
 * bucket, small enough for the cache, is then shuffled in place. Random
 * buckets with uniformly shuffled contents make a uniform permutation.
 */
#include <omp.h>
#include <stdlib.h>

#include "data/dataset.h"
#include "engine.h"
#include "base/rng.h"

#define MAX_BUCKETS 4096
#define MIN_BUCKET_SIZE 256

static inline uint32_t bucket_of(uint64_t seed, uint64_t i, uint32_t nb)
{
	uint64_t s = seed ^ (i * 0xD6E8FEB86659FD93ULL);
	return (uint32_t)(((boar_splitmix64(&s) >> 32) * nb) >> 32);
}

int boar_shuffle_ratings(const struct boar_dataset *d, const uint32_t *rows,
			 uint64_t n, uint64_t seed, int threads,
			 struct boar_triplet *out)
{
	uint32_t nb = n / MIN_BUCKET_SIZE > MAX_BUCKETS
			      ? MAX_BUCKETS
			      : (uint32_t)(n / MIN_BUCKET_SIZE) + 1;
	uint64_t *count = calloc((size_t)threads * nb, sizeof *count);
	uint64_t *start = malloc(((size_t)nb + 1) * sizeof *start);
	if (!count || !start) {
		free(count);
		free(start);
		return BOAR_ENOMEM;
	}
	uint64_t bseed = boar_rng_make(seed, 0, 3).s;
#pragma omp parallel num_threads(threads)
	{
		int t = omp_get_thread_num(), nt = omp_get_num_threads();
		uint64_t lo = n * t / nt, hi = n * (t + 1) / nt;
		uint64_t *c = &count[(size_t)t * nb];
		for (uint64_t i = lo; i < hi; i++)
			c[bucket_of(bseed, i, nb)]++;
#pragma omp barrier
#pragma omp single
		{
			/* Bucket b's slice, thread by thread in position order,
			 * so a bucket holds its ratings by increasing position
			 * at any thread count. */
			uint64_t at = 0;
			for (uint32_t b = 0; b < nb; b++) {
				start[b] = at;
				for (int k = 0; k < nt; k++) {
					uint64_t v = count[(size_t)k * nb + b];
					count[(size_t)k * nb + b] = at;
					at += v;
				}
			}
			start[nb] = at;
		}
		for (uint64_t i = lo; i < hi; i++) {
			uint64_t r = rows ? rows[i] : i;
			uint64_t at = c[bucket_of(bseed, i, nb)]++;
			out[at] = (struct boar_triplet){d->user[r], d->item[r],
							d->label[r]};
		}
#pragma omp barrier
#pragma omp for schedule(dynamic, 16)
		for (uint32_t b = 0; b < nb; b++) {
			struct boar_triplet *a = &out[start[b]];
			uint64_t len = start[b + 1] - start[b];
			boar_rng r = boar_rng_make(seed, 4, b);
			for (uint64_t i = len; i > 1; i--) {
				uint64_t j = boar_rng_below(&r, (uint32_t)i);
				struct boar_triplet tmp = a[i - 1];
				a[i - 1] = a[j];
				a[j] = tmp;
			}
		}
	}
	free(count);
	free(start);
	return 0;
}
