/* cache.h - the binary cache of a parsed dataset, and atomic file writes
 * (library-internal).
 *
 * A cache is written after a text parse and mapped read-only by later loads,
 * whose datasets then point straight into the mapping. It is tied to its
 * source by the source's size and mtime (ns) and to the options that shape
 * the arrays (task, hash_bits): when those differ the cache is stale and is
 * rebuilt. A cache whose bytes do not check out (truncated, header or
 * payload checksum wrong, not a cache at all) is an error, BOAR_ECORRUPT
 * naming the file: we do not silently reparse, so that a disk or copy
 * problem is seen rather than hidden; deleting the file rebuilds it.
 */
#ifndef BOAR_CACHE_H
#define BOAR_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"

/* What the loader asks of a cache. */
struct cache_want {
	uint64_t src_size;
	int64_t src_mtime_ns;
	int task;      /* BOAR_TASK_*; AUTO accepts either */
	int hash_bits; /* linear only */
	int threads;   /* for the checksum */
};

/* @return 0 and *out (mapping the cache), 1 when there is no cache or it is
 *         stale (parse the text and write a new one), or BOAR_ECORRUPT with
 *         *err naming the cache file. */
int boar_cache_load(const char *cache_path, const struct cache_want *w,
		    struct boar_dataset **out, boar_error *err);

/* Writes d as a cache of a source of that size and mtime, atomically.
 * @return 0 or BOAR_EIO / BOAR_ENOMEM. */
int boar_cache_write(const char *cache_path, const struct boar_dataset *d,
		     uint64_t src_size, int64_t src_mtime_ns, int threads,
		     boar_error *err);

#endif
