/* cache.h - the binary cache of a parsed dataset (library-internal).
 *
 * A cache is written after a text parse and read back by later loads. It
 * is tied to its source by the source's identity and to the options that
 * shape the arrays (task, hash_bits, the CSV options' hash): when those
 * differ the cache is stale and is rebuilt.
 *
 * The identity is (device, inode, size, mtime, ctime), times in ns, not
 * a hash of the content: hashing would read the whole source on every
 * load, the very work the cache is there to save, while ctime cannot be
 * set from user space: cp -p, rsync -a, tar x and touch -r copy an mtime,
 * never a ctime, and replacing a file by rename gives a new inode. What
 * remains is a same-size rewrite inside one tick of the file system's
 * clock after our read, which the reader's own check (the file must be
 * unchanged at the end of the read) narrows to a rewrite landing within
 * the same tick as the previous write.
 *
 * A cache is untrusted input even when its checksums pass: it is read
 * (not mapped, so that it cannot be cut under the reader) and every field
 * is checked before a dataset points into it: array sizes against the
 * counts, row offsets from 0 ascending to nnz, feature ids below the
 * dimension and ascending within a row, user and item ids below theirs,
 * values and labels finite, the header's kinds known. A cache that does
 * not check out is an error, BOAR_ECORRUPT naming the file and the field:
 * we do not silently reparse, so that a disk or copy problem is seen
 * rather than hidden; deleting the file rebuilds it.
 */
#ifndef BOAR_CACHE_H
#define BOAR_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"
#include "parse_chunks.h"

/* What the loader asks of a cache. */
struct cache_want {
	struct src_id src;
	uint64_t options_key; /* hash of the options that shape the arrays */
	int task;      /* BOAR_TASK_*; AUTO accepts either */
	int hash_bits; /* linear only */
	int threads;   /* for the checksum */
};

/* @return 0 and *out (the arrays in one private block of memory), 1 when
 *         there is no cache or it is stale (parse the text and write a new
 *         one), or BOAR_ECORRUPT with *err naming the cache file and what
 *         is wrong. */
int boar_cache_load(const char *cache_path, const struct cache_want *w,
		    struct boar_dataset **out, boar_error *err);

/* Writes d as a cache of the source src (with the options' key),
 * atomically.
 * @return 0 or BOAR_EIO / BOAR_ENOMEM. */
int boar_cache_write(const char *cache_path, const struct boar_dataset *d,
		     const struct src_id *src, uint64_t options_key,
		     int threads, boar_error *err);

#endif
