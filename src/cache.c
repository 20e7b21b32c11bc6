/* cache.c - writing and mapping the binary cache of a parsed dataset.
 *
 * Layout (native byte order; a cache is a local speed-up, not an exchange
 * format, and a foreign byte order just reads as stale):
 *
 *   0     struct cache_header, zero-padded to HEADER_SPACE bytes
 *   ...   the arrays, each starting on a 64-byte boundary:
 *         linear: row_ptr (n_rows+1 x u64), idx (nnz x u32), val (nnz x f32),
 *                 label (n_rows x f32)
 *         MF:     user, item (n_rows x u32), rating (n_rows x f32)
 *
 * header_crc (zlib crc32) covers the header up to itself; payload_sum is
 * the block checksum of checksum.h over each array's bytes (padding
 * excluded), the four chained; crc32 at ~1 GB/s would make verifying a
 * cache cost a large part of the parse it saves.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "atomic_file.h"
#include "cache.h"
#include "checksum.h"
#include "error.h"

#define CACHE_MAGIC "BOARDSET"
#define CACHE_VERSION 2
#define BYTE_ORDER_MARK 0x01020304u
#define HEADER_SPACE 256
#define ALIGN 64
#define N_ARRAYS 4

struct cache_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;
	uint32_t byte_order;
	int32_t task;
	int32_t label_kind;
	int32_t hash_bits;
	int32_t all_ones;
	uint32_t n_arrays;
	uint64_t src_size;
	int64_t src_mtime_ns;
	uint64_t n_rows, nnz, dim, n_items;
	uint64_t file_size;
	uint64_t off[N_ARRAYS], len[N_ARRAYS];
	uint64_t payload_sum;
	uint32_t reserved;
	uint32_t header_crc;
};

_Static_assert(sizeof(struct cache_header) <= HEADER_SPACE,
	       "cache header outgrew its space");
_Static_assert(offsetof(struct cache_header, header_crc) + 4 ==
		       sizeof(struct cache_header),
	       "header_crc must be the last field");

/* ------------------------------------------------------- checksums */

static uint32_t header_crc(const struct cache_header *h)
{
	return (uint32_t)crc32(0, (const unsigned char *)h,
			       offsetof(struct cache_header, header_crc));
}

/* fwrite that names the file on failure */
static int put(boar_atomic_file *f, const void *buf, size_t len,
	       boar_error *err)
{
	if (len && fwrite(buf, 1, len, f->fp) != len)
		return boar_fail_line(err, BOAR_EIO, f->path, 0,
				      "write failed: %s", strerror(errno));
	return 0;
}

/* ------------------------------------------------------------ write */

/* The arrays of d in file order, with their byte lengths. */
static void arrays_of(const struct boar_dataset *d, const void *ptr[N_ARRAYS],
		      uint64_t len[N_ARRAYS])
{
	if (d->task == BOAR_TASK_LINEAR) {
		ptr[0] = d->row_ptr;
		len[0] = (d->n_rows + 1) * 8;
		ptr[1] = d->idx;
		len[1] = d->nnz * 4;
		ptr[2] = d->val;
		len[2] = d->nnz * 4;
		ptr[3] = d->label;
		len[3] = d->n_rows * 4;
	} else {
		ptr[0] = d->user;
		len[0] = d->n_rows * 4;
		ptr[1] = d->item;
		len[1] = d->n_rows * 4;
		ptr[2] = d->label;
		len[2] = d->n_rows * 4;
		ptr[3] = NULL;
		len[3] = 0;
	}
}

static uint64_t align_up(uint64_t x)
{
	return (x + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);
}

int boar_cache_write(const char *cache_path, const struct boar_dataset *d,
		     uint64_t src_size, int64_t src_mtime_ns, int threads,
		     boar_error *err)
{
	static const char zeros[HEADER_SPACE];
	const void *ptr[N_ARRAYS];
	unsigned char space[HEADER_SPACE] = { 0 };
	struct cache_header h;
	memset(&h, 0, sizeof h);
	memcpy(h.magic, CACHE_MAGIC, 8);
	h.version = CACHE_VERSION;
	h.header_size = HEADER_SPACE;
	h.byte_order = BYTE_ORDER_MARK;
	h.task = d->task;
	h.label_kind = d->label_kind;
	h.hash_bits = d->hash_bits;
	h.all_ones = d->all_ones;
	h.n_arrays = N_ARRAYS;
	h.src_size = src_size;
	h.src_mtime_ns = src_mtime_ns;
	h.n_rows = d->n_rows;
	h.nnz = d->nnz;
	h.dim = d->dim;
	h.n_items = d->n_items;
	arrays_of(d, ptr, h.len);
	uint64_t pos = HEADER_SPACE;
	uint64_t sum = 0;
	for (int k = 0; k < N_ARRAYS; k++) {
		h.off[k] = pos;
		pos = align_up(pos + h.len[k]);
		uint64_t x = boar_checksum(ptr[k], h.len[k], threads);
		sum = boar_hash64(&x, 8, sum);
	}
	h.file_size = pos;
	h.payload_sum = sum;
	h.header_crc = header_crc(&h);
	memcpy(space, &h, sizeof h);

	boar_atomic_file f;
	int ret = boar_atomic_open(&f, cache_path, err);
	if (ret)
		return ret;
	ret = put(&f, space, HEADER_SPACE, err);
	pos = HEADER_SPACE;
	for (int k = 0; k < N_ARRAYS && !ret; k++) {
		ret = put(&f, ptr[k], h.len[k], err);
		uint64_t end = pos + h.len[k];
		if (!ret)
			ret = put(&f, zeros, align_up(end) - end, err);
		pos = align_up(end);
	}
	if (ret) {
		boar_atomic_abort(&f);
		return ret;
	}
	return boar_atomic_commit(&f, err);
}

/* ------------------------------------------------------------- load */

static int corrupt(boar_error *err, const char *path, const char *why)
{
	return boar_fail_line(err, BOAR_ECORRUPT, path, 0,
			      "corrupt dataset cache: %s (delete it to rebuild)",
			      why);
}

int boar_cache_load(const char *cache_path, const struct cache_want *w,
		    struct boar_dataset **out, boar_error *err)
{
	int fd = open(cache_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1; /* no cache (or unreadable): build one */
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 1;
	}
	if ((uint64_t)st.st_size < HEADER_SPACE) {
		close(fd);
		return corrupt(err, cache_path, "truncated before the end of its header");
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ,
		       MAP_PRIVATE | MAP_POPULATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return boar_fail_line(err, BOAR_EIO, cache_path, 0,
				      "cannot map the dataset cache: %s",
				      strerror(errno));
	size_t map_len = (size_t)st.st_size;
	struct cache_header h;
	memcpy(&h, m, sizeof h);
	int ret = 1;
	struct boar_dataset *d = NULL;

	if (memcmp(h.magic, CACHE_MAGIC, 8)) {
		ret = corrupt(err, cache_path, "not a boar dataset cache (bad magic)");
		goto fail;
	}
	if (h.header_crc != header_crc(&h)) {
		ret = corrupt(err, cache_path, "header checksum mismatch");
		goto fail;
	}
	/* A cache of another version or byte order is not wrong, only
	 * unusable by this build: rebuild it. */
	if (h.version != CACHE_VERSION || h.byte_order != BYTE_ORDER_MARK ||
	    h.header_size != HEADER_SPACE || h.n_arrays != N_ARRAYS)
		goto fail;
	if (h.file_size != (uint64_t)st.st_size) {
		char why[128];
		snprintf(why, sizeof why,
			 "%llu bytes where its header says %llu (truncated?)",
			 (unsigned long long)st.st_size,
			 (unsigned long long)h.file_size);
		ret = corrupt(err, cache_path, why);
		goto fail;
	}
	/* Stale: the source changed, or the options shape the data another
	 * way. */
	if (h.src_size != w->src_size || h.src_mtime_ns != w->src_mtime_ns)
		goto fail;
	if (w->task != BOAR_TASK_AUTO && h.task != w->task)
		goto fail;
	if (h.task == BOAR_TASK_LINEAR && h.hash_bits != w->hash_bits)
		goto fail;

	/* From here the header is trusted by checksum; still check that the
	 * arrays it describes fit the file and the counts, so that a header
	 * from a buggy writer cannot send anyone out of the mapping. */
	if ((h.task != BOAR_TASK_LINEAR && h.task != BOAR_TASK_MF) ||
	    h.n_rows > (1ULL << 60) || h.nnz > (1ULL << 60)) {
		ret = corrupt(err, cache_path, "impossible header values");
		goto fail;
	}
	d = boar_dataset_alloc(h.task);
	if (!d) {
		ret = boar_fail(err, BOAR_ENOMEM, "out of memory");
		goto fail;
	}
	d->n_rows = h.n_rows;
	d->nnz = h.nnz;
	const void *unused[N_ARRAYS];
	uint64_t want_len[N_ARRAYS];
	arrays_of(d, unused, want_len);
	uint64_t sum = 0;
	for (int k = 0; k < N_ARRAYS; k++) {
		if (h.len[k] != want_len[k] || h.off[k] % ALIGN ||
		    h.off[k] < HEADER_SPACE || h.off[k] > h.file_size ||
		    h.len[k] > h.file_size - h.off[k]) {
			ret = corrupt(err, cache_path,
				      "array sizes do not match the counts");
			goto fail;
		}
		uint64_t x = boar_checksum((char *)m + h.off[k], h.len[k],
					   w->threads);
		sum = boar_hash64(&x, 8, sum);
	}
	if (sum != h.payload_sum) {
		ret = corrupt(err, cache_path, "data checksum mismatch");
		goto fail;
	}
	char *base = m;
	d->label_kind = h.label_kind;
	d->hash_bits = h.hash_bits;
	d->all_ones = h.all_ones;
	d->dim = h.dim;
	d->n_items = h.n_items;
	if (h.task == BOAR_TASK_LINEAR) {
		d->row_ptr = (uint64_t *)(base + h.off[0]);
		d->idx = (uint32_t *)(base + h.off[1]);
		d->val = (float *)(base + h.off[2]);
		d->label = (float *)(base + h.off[3]);
		if (d->row_ptr[0] != 0 || d->row_ptr[d->n_rows] != d->nnz) {
			ret = corrupt(err, cache_path,
				      "row offsets do not match the counts");
			goto fail;
		}
	} else {
		d->user = (uint32_t *)(base + h.off[0]);
		d->item = (uint32_t *)(base + h.off[1]);
		d->label = (float *)(base + h.off[2]);
	}
	d->map = m;
	d->map_len = map_len;
	*out = d;
	return 0;
fail:
	boar_dataset_free(d);
	munmap(m, map_len);
	return ret;
}
