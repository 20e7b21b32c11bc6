/* cache.c - writing and reading the binary cache of a parsed dataset.
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
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/atomic_file.h"
#include "cache.h"
#include "base/checksum.h"
#include "base/error.h"

#define CACHE_MAGIC "BOARDSET"
#define CACHE_VERSION 3
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
	uint64_t src_dev, src_ino, src_size;
	int64_t src_mtime_ns, src_ctime_ns;
	uint64_t options_key;
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
		     const struct src_id *src, uint64_t options_key,
		     int threads, boar_error *err)
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
	h.src_dev = src->dev;
	h.src_ino = src->ino;
	h.src_size = src->size;
	h.src_mtime_ns = src->mtime_ns;
	h.src_ctime_ns = src->ctime_ns;
	h.options_key = options_key;
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

static int corrupt(boar_error *err, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int corrupt(boar_error *err, const char *path, const char *fmt, ...)
{
	char why[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	return boar_fail_line(err, BOAR_ECORRUPT, path, 0,
			      "corrupt dataset cache: %s (delete it to rebuild)",
			      why);
}

/* Is row r of a linear dataset well formed? (row_ptr already checked to
 * ascend within nnz.) */
static int row_ok(const struct boar_dataset *d, uint64_t r)
{
	if (!isfinite(d->label[r]))
		return 0;
	for (uint64_t k = d->row_ptr[r]; k < d->row_ptr[r + 1]; k++)
		if (d->idx[k] >= d->dim || !isfinite(d->val[k]) ||
		    (k > d->row_ptr[r] && d->idx[k] <= d->idx[k - 1]))
			return 0;
	return 1;
}

static int rating_ok(const struct boar_dataset *d, uint64_t r)
{
	return d->user[r] < d->dim && d->item[r] < d->n_items &&
	       isfinite(d->label[r]);
}

/* The first row in [0, n) that ok() refuses, or n; checked on threads. */
static uint64_t first_bad(const struct boar_dataset *d, uint64_t n,
			  int (*ok)(const struct boar_dataset *, uint64_t),
			  int threads)
{
	uint64_t bad = n;
#pragma omp parallel for reduction(min : bad) schedule(static) num_threads(threads) if (n > 100000)
	for (uint64_t r = 0; r < n; r++)
		if (r < bad && !ok(d, r))
			bad = r;
	return bad;
}

/* Checks everything a dataset's users index by, with a message naming
 * the field of the first problem. */
static int check_arrays(const struct boar_dataset *d, const char *path,
			int threads, boar_error *err)
{
	if (d->task == BOAR_TASK_MF) {
		if (d->dim > (1ULL << 32) || d->n_items > (1ULL << 32))
			return corrupt(err, path,
				       "%llu users and %llu items: ids are 32-bit",
				       (unsigned long long)d->dim,
				       (unsigned long long)d->n_items);
		uint64_t r = first_bad(d, d->n_rows, rating_ok, threads);
		if (r == d->n_rows)
			return 0;
		if (!isfinite(d->label[r]))
			return corrupt(err, path, "rating %llu is not finite",
				       (unsigned long long)r);
		return corrupt(err, path,
			       "rating %llu: user %u / item %u not below the %llu users / %llu items of the header",
			       (unsigned long long)r, d->user[r], d->item[r],
			       (unsigned long long)d->dim,
			       (unsigned long long)d->n_items);
	}
	if (d->dim > (1ULL << 32) ||
	    (d->hash_bits && d->dim != (1ULL << d->hash_bits)))
		return corrupt(err, path,
			       "dimension %llu does not fit hash_bits %d",
			       (unsigned long long)d->dim, d->hash_bits);
	if (d->row_ptr[0] != 0 || d->row_ptr[d->n_rows] != d->nnz)
		return corrupt(err, path,
			       "row offsets run from %llu to %llu, not from 0 to nnz %llu",
			       (unsigned long long)d->row_ptr[0],
			       (unsigned long long)d->row_ptr[d->n_rows],
			       (unsigned long long)d->nnz);
	for (uint64_t r = 0; r < d->n_rows; r++)
		if (d->row_ptr[r + 1] < d->row_ptr[r] ||
		    d->row_ptr[r + 1] > d->nnz)
			return corrupt(err, path,
				       "row offset %llu of row %llu is out of order",
				       (unsigned long long)d->row_ptr[r + 1],
				       (unsigned long long)r);
	uint64_t r = first_bad(d, d->n_rows, row_ok, threads);
	if (r == d->n_rows)
		return 0;
	if (!isfinite(d->label[r]))
		return corrupt(err, path, "row %llu: label is not finite",
			       (unsigned long long)r);
	for (uint64_t k = d->row_ptr[r]; k < d->row_ptr[r + 1]; k++) {
		if (d->idx[k] >= d->dim)
			return corrupt(err, path,
				       "row %llu: feature id %u is not below the dimension %llu",
				       (unsigned long long)r, d->idx[k],
				       (unsigned long long)d->dim);
		if (!isfinite(d->val[k]))
			return corrupt(err, path,
				       "row %llu: value of feature %u is not finite",
				       (unsigned long long)r, d->idx[k]);
	}
	return corrupt(err, path,
		       "row %llu: feature ids are not strictly ascending",
		       (unsigned long long)r);
}

/* Reads the whole cache into a private anonymous mapping (the dataset's
 * arrays point into it; boar_dataset_free unmaps it). */
static int read_whole(int fd, uint64_t size, int threads, void **out,
		      const char *path, boar_error *err)
{
	void *m = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return boar_fail_line(err, BOAR_ENOMEM, path, 0,
				      "out of memory for the dataset cache: %s",
				      strerror(errno));
	ssize_t got = boar_pread_all(fd, m, (size_t)size, 0, threads);
	if (got != (ssize_t)size) {
		munmap(m, (size_t)size);
		if (got < 0)
			return boar_fail_line(err, BOAR_EIO, path, 0,
					      "cannot read the dataset cache: %s",
					      strerror((int)-got));
		return corrupt(err, path,
			       "%lld bytes read of %llu (cut while read?)",
			       (long long)got, (unsigned long long)size);
	}
	*out = m;
	return 0;
}

/* Reads and checks the header of the cache open at fd (of st_size bytes)
 * into *h. @return 0 when it is a cache of w's data, 1 when it is not (of
 * another version, source or options: rebuild it), or a BOAR_E* code for a
 * corrupt one. */
static int read_header(int fd, uint64_t st_size, const struct cache_want *w,
		       const char *cache_path, struct cache_header *h,
		       boar_error *err)
{
	if (st_size < HEADER_SPACE ||
	    pread(fd, h, sizeof *h, 0) != (ssize_t)sizeof *h)
		return corrupt(err, cache_path,
			       "truncated before the end of its header");
	if (memcmp(h->magic, CACHE_MAGIC, 8))
		return corrupt(err, cache_path, "not a boar dataset cache (bad magic)");
	if (h->header_crc != header_crc(h))
		return corrupt(err, cache_path, "header checksum mismatch");
	/* A cache of another version or byte order is not wrong, only
	 * unusable by this build: rebuild it. So is a stale one: the source
	 * changed, or the options shape the data another way. */
	if (h->version != CACHE_VERSION || h->byte_order != BYTE_ORDER_MARK ||
	    h->header_size != HEADER_SPACE || h->n_arrays != N_ARRAYS ||
	    h->src_dev != w->src.dev || h->src_ino != w->src.ino ||
	    h->src_size != w->src.size || h->src_mtime_ns != w->src.mtime_ns ||
	    h->src_ctime_ns != w->src.ctime_ns ||
	    h->options_key != w->options_key ||
	    (w->task != BOAR_TASK_AUTO && h->task != w->task) ||
	    (h->task == BOAR_TASK_LINEAR && h->hash_bits != w->hash_bits))
		return 1;
	if (h->file_size != st_size)
		return corrupt(err, cache_path,
			       "%llu bytes where its header says %llu (truncated?)",
			       (unsigned long long)st_size,
			       (unsigned long long)h->file_size);
	/* From here the header is trusted by checksum, and still checked:
	 * a header from a buggy writer (or a forger) must not send anyone
	 * out of the arrays. */
	if (h->task != BOAR_TASK_LINEAR && h->task != BOAR_TASK_MF)
		return corrupt(err, cache_path, "unknown task %d", h->task);
	if (h->n_rows > (1ULL << 40) || h->nnz > (1ULL << 40) ||
	    (h->task == BOAR_TASK_MF && h->nnz != h->n_rows) ||
	    (h->label_kind != BOAR_LABELS_BINARY &&
	     h->label_kind != BOAR_LABELS_REAL) ||
	    (h->all_ones != 0 && h->all_ones != 1) || h->hash_bits < 0 ||
	    h->hash_bits > 32)
		return corrupt(err, cache_path,
			       "impossible header values (rows, nnz, label kind or hash_bits)");
	return 0;
}

/* The arrays of d (its task and counts set from the checked header h) from
 * the file at fd: places checked against the counts, read whole, checksum
 * compared, then the values checked. @return 0 or a BOAR_E* code. */
static int read_arrays(int fd, const struct cache_header *h,
		       const struct cache_want *w, struct boar_dataset *d,
		       const char *cache_path, boar_error *err)
{
	const void *unused[N_ARRAYS];
	uint64_t want_len[N_ARRAYS];
	arrays_of(d, unused, want_len);
	for (int k = 0; k < N_ARRAYS; k++)
		if (h->len[k] != want_len[k] || h->off[k] % ALIGN ||
		    h->off[k] < HEADER_SPACE || h->off[k] > h->file_size ||
		    h->len[k] > h->file_size - h->off[k])
			return corrupt(err, cache_path,
				       "array %d: size or place does not match the counts",
				       k);
	void *m = NULL;
	int ret = read_whole(fd, h->file_size, w->threads, &m, cache_path, err);
	if (ret)
		return ret;
	d->map = m;
	d->map_len = (size_t)h->file_size;
	uint64_t sum = 0;
	for (int k = 0; k < N_ARRAYS; k++) {
		uint64_t x = boar_checksum((char *)m + h->off[k], h->len[k],
					   w->threads);
		sum = boar_hash64(&x, 8, sum);
	}
	if (sum != h->payload_sum)
		return corrupt(err, cache_path, "data checksum mismatch");
	char *base = m;
	d->label_kind = h->label_kind;
	d->hash_bits = h->hash_bits;
	d->all_ones = h->all_ones;
	d->dim = h->dim;
	d->n_items = h->n_items;
	if (h->task == BOAR_TASK_LINEAR) {
		d->row_ptr = (uint64_t *)(base + h->off[0]);
		d->idx = (uint32_t *)(base + h->off[1]);
		d->val = (float *)(base + h->off[2]);
		d->label = (float *)(base + h->off[3]);
	} else {
		d->user = (uint32_t *)(base + h->off[0]);
		d->item = (uint32_t *)(base + h->off[1]);
		d->label = (float *)(base + h->off[2]);
	}
	return check_arrays(d, cache_path, w->threads, err);
}

int boar_cache_load(const char *cache_path, const struct cache_want *w,
		    struct boar_dataset **out, boar_error *err)
{
	int fd = open(cache_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1; /* no cache (or unreadable): build one */
	struct stat st;
	struct cache_header h;
	struct boar_dataset *d = NULL;
	int ret = 1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		goto fail;
	if ((ret = read_header(fd, (uint64_t)st.st_size, w, cache_path, &h,
			       err)))
		goto fail;
	if (!(d = boar_dataset_alloc(h.task))) {
		ret = boar_fail(err, BOAR_ENOMEM, "out of memory");
		goto fail;
	}
	d->n_rows = h.n_rows;
	d->nnz = h.nnz;
	if ((ret = read_arrays(fd, &h, w, d, cache_path, err)))
		goto fail;
	boar_dataset_classify(d); /* label kind, all ones: from the data */
	close(fd);
	*out = d;
	return 0;
fail:
	close(fd);
	boar_dataset_free(d);
	return ret;
}
