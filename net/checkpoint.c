/* checkpoint.c - atomic save and checked load of a shard's state.
 *
 * The file is small relative to the model (one float per key of the
 * shard), so it is built in memory and written with one write(); the crc
 * catches a file damaged after the rename. See checkpoint.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/error.h"
#include "net/checkpoint.h"
#include "net/server.h"
#include "net/wire.h"

static const char MAGIC[8] = "BOARCKP2", MAGIC1[8] = "BOARCKP1",
		  MAGIC3[8] = "BOARCKP3";

static void path_of(char *out, size_t n, const char *dir, uint32_t shard,
		    uint32_t n_shards)
{
	snprintf(out, n, "%s/shard-%u-of-%u.ckpt", dir, shard, n_shards);
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int ckpt_save(const char *dir, const struct ckpt *c, boar_error *err)
{
	char path[PATH_MAX], tmp[PATH_MAX + 32];
	struct wire_out o;
	uint64_t n = c->hi - c->lo;
	int fd = -1, rc;

	path_of(path, sizeof path, dir, c->shard, c->n_shards);
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
	wire_out_init(&o);
	wire_put_bytes(&o, c->keys ? MAGIC3 : MAGIC, 8);
	wire_put_u32(&o, c->shard);
	wire_put_u32(&o, c->n_shards);
	wire_put_u64(&o, c->dim);
	wire_put_u64(&o, c->lo);
	wire_put_u64(&o, c->hi);
	wire_put_u32(&o, c->n_workers);
	wire_put_u32(&o, 0);
	wire_put_u64(&o, c->max_staleness);
	for (uint32_t i = 0; i < c->n_workers; i++)
		wire_put_u64(&o, c->clocks[i]);
	for (uint32_t i = 0; i < c->n_workers; i++)
		wire_put_u64(&o, c->seqs ? c->seqs[i] : 0);
	wire_put_u64(&o, c->pushes);
	if (c->keys) {
		wire_put_u64(&o, c->n_pairs);
		for (uint64_t i = 0; i < c->n_pairs; i++) {
			wire_put_u64(&o, c->keys[i]);
			wire_put_vals(&o, &c->w[i], 1, 0);
		}
	} else {
		wire_put_vals(&o, c->w, (uint32_t)n, 0);
	}
	if (o.failed) {
		rc = boar_fail(err, BOAR_ENOMEM, "out of memory");
		goto out;
	}
	wire_put_u32(&o, (uint32_t)crc32(0, o.buf, (uInt)o.len));

	mkdir(dir, 0755); /* may exist; open() below reports real trouble */
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write_all(fd, o.buf, o.len) || fsync(fd)) {
		rc = boar_fail(err, BOAR_EIO, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	close(fd);
	fd = -1;
	if (rename(tmp, path)) {
		rc = boar_fail(err, BOAR_EIO, "rename to %s: %s", path,
			       strerror(errno));
		goto out;
	}
	/* The rename itself is durable only once the directory is. */
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rc)
		unlink(tmp);
	wire_out_free(&o);
	return rc;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

static int bad_field(boar_error *err, int code, const char *path,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* "PATH: corrupt checkpoint: field ..." */
static int bad_field(boar_error *err, int code, const char *path,
		     const char *fmt, ...)
{
	char why[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	return boar_fail(err, code, "%s: corrupt checkpoint: field %s", path,
			 why);
}

/* A checksum proves the bytes are the ones written, not that the writer
 * was this shard: every field that sizes or places a copy is checked
 * against what shard `shard` of `n_shards` would have written (a range
 * claiming the whole model once made the resume memcpy past the shard's
 * buffer). */
static int check_header(const struct ckpt *c, size_t len, int v1, int v3,
			const uint8_t *buf, const char *path, uint32_t shard,
			uint32_t n_shards, boar_error *err)
{
	if (c->shard != shard || c->n_shards != n_shards)
		return boar_fail(err, BOAR_EMISMATCH,
				 "%s: checkpoint of shard %u/%u, not %u/%u",
				 path, c->shard, c->n_shards, shard, n_shards);
	if (c->dim == 0 || c->dim > WIRE_MAX_KEY)
		return bad_field(err, BOAR_ECORRUPT, path,
				 "dim %llu is not in 1..2^40",
				 (unsigned long long)c->dim);
	uint64_t lo, hi;
	ps_shard_range(c->dim, shard, n_shards, &lo, &hi);
	if (c->lo != lo || c->hi != hi)
		return bad_field(err, BOAR_ECORRUPT, path,
				 "range [%llu, %llu) is not shard %u/%u's "
				 "[%llu, %llu) of dim %llu",
				 (unsigned long long)c->lo,
				 (unsigned long long)c->hi, shard, n_shards,
				 (unsigned long long)lo, (unsigned long long)hi,
				 (unsigned long long)c->dim);
	if (c->n_workers == 0 || c->n_workers > 65536)
		return bad_field(err, BOAR_ECORRUPT, path,
				 "n_workers %u is not in 1..65536",
				 c->n_workers);
	if (c->max_staleness >= 1ull << 48)
		return bad_field(err, BOAR_ECORRUPT, path,
				 "max_staleness %llu is out of range",
				 (unsigned long long)c->max_staleness);
	/* v2 adds a seq per worker and the push count; v3 has pairs */
	uint64_t head = 56 + 8ull * c->n_workers +
			(v1 ? 0 : 8ull * c->n_workers + 8);
	uint64_t want = head + 4 * (hi - lo) + 4;
	if (v3) { /* the pair count follows the head */
		if (len < head + 12)
			return bad_field(err, BOAR_ECORRUPT, path,
					 "n_workers: the file has %zu bytes, "
					 "too few for them",
					 len);
		uint64_t n = le64(buf + head);
		if (n > hi - lo)
			return bad_field(err, BOAR_ECORRUPT, path,
					 "n %llu is more keys than the range "
					 "has",
					 (unsigned long long)n);
		want = head + 8 + 12 * n + 4;
	}
	if (len != want)
		return bad_field(err, BOAR_ECORRUPT, path,
				 "n_workers/range: the file has %zu bytes, "
				 "they imply %llu",
				 len, (unsigned long long)want);
	return 0;
}

/* Clocks count sweeps of rows (far below 2^48), weights are finite. */
static int check_values(const struct ckpt *c, const char *path,
			boar_error *err)
{
	for (uint32_t i = 0; i < c->n_workers; i++)
		if ((c->clocks[i] & ~CKPT_FINISHED) >= 1ull << 48)
			return bad_field(err, BOAR_ECORRUPT, path,
					 "clock[%u] %llu is out of range", i,
					 (unsigned long long)(c->clocks[i] &
							      ~CKPT_FINISHED));
	uint64_t n = c->keys ? c->n_pairs : c->hi - c->lo;
	for (uint64_t i = 0; c->keys && i < n; i++)
		if (c->keys[i] < c->lo || c->keys[i] >= c->hi ||
		    (i && c->keys[i] <= c->keys[i - 1]))
			return bad_field(err, BOAR_ECORRUPT, path,
					 "key[%llu] %llu is not ascending in "
					 "[%llu, %llu)",
					 (unsigned long long)i,
					 (unsigned long long)c->keys[i],
					 (unsigned long long)c->lo,
					 (unsigned long long)c->hi);
	for (uint64_t i = 0; i < n; i++)
		if (!isfinite(c->w[i]))
			return bad_field(err, BOAR_ECORRUPT, path,
					 "w[%llu] is %g (weights must be "
					 "finite)", (unsigned long long)i,
					 (double)c->w[i]);
	return 0;
}

int ckpt_load(const char *dir, uint32_t shard, uint32_t n_shards,
	      struct ckpt *c, boar_error *err)
{
	char path[PATH_MAX];
	uint8_t *buf = NULL;
	int rc;
	path_of(path, sizeof path, dir, shard, n_shards);
	FILE *f = fopen(path, "rb");
	if (!f) {
		if (errno == ENOENT)
			return 1;
		return boar_fail(err, BOAR_EIO, "%s: %s", path, strerror(errno));
	}
	struct stat st;
	if (fstat(fileno(f), &st) || st.st_size < 64 ||
	    st.st_size > (off_t)1 << 40) {
		rc = boar_fail(err, BOAR_ECORRUPT, "%s: truncated", path);
		goto out;
	}
	size_t len = (size_t)st.st_size;
	buf = malloc(len);
	if (!buf) {
		rc = boar_fail(err, BOAR_ENOMEM, "out of memory");
		goto out;
	}
	if (fread(buf, 1, len, f) != len) {
		rc = boar_fail(err, BOAR_EIO, "%s: read error", path);
		goto out;
	}
	int v1 = !memcmp(buf, MAGIC1, 8), v3 = !memcmp(buf, MAGIC3, 8);
	if (!v1 && !v3 && memcmp(buf, MAGIC, 8)) {
		rc = boar_fail(err, BOAR_EFORMAT, "%s: not a boar checkpoint",
			       path);
		goto out;
	}
	if (le32(buf + len - 4) != (uint32_t)crc32(0, buf, (uInt)(len - 4))) {
		rc = boar_fail(err, BOAR_ECORRUPT, "%s: checksum mismatch",
			       path);
		goto out;
	}
	memset(c, 0, sizeof *c);
	c->shard = le32(buf + 8);
	c->n_shards = le32(buf + 12);
	c->dim = le64(buf + 16);
	c->lo = le64(buf + 24);
	c->hi = le64(buf + 32);
	c->n_workers = le32(buf + 40);
	c->max_staleness = le64(buf + 48);
	rc = check_header(c, len, v1, v3, buf, path, shard, n_shards, err);
	if (rc)
		goto out;
	uint64_t n = c->hi - c->lo;
	if (v3)
		n = c->n_pairs = le64(buf + 56 + 16ull * c->n_workers + 8);
	c->clocks = malloc((c->n_workers ? c->n_workers : 1) * 8);
	c->seqs = calloc(c->n_workers ? c->n_workers : 1, 8);
	c->w = malloc((n ? n : 1) * 4);
	if (v3)
		c->keys = malloc((n ? n : 1) * 8);
	if (!c->clocks || !c->seqs || !c->w || (v3 && !c->keys)) {
		ckpt_free(c);
		rc = boar_fail(err, BOAR_ENOMEM, "out of memory");
		goto out;
	}
	const uint8_t *p = buf + 56;
	for (uint32_t i = 0; i < c->n_workers; i++, p += 8)
		c->clocks[i] = le64(p);
	if (!v1) {
		for (uint32_t i = 0; i < c->n_workers; i++, p += 8)
			c->seqs[i] = le64(p);
		c->pushes = le64(p);
		p += 8;
	}
	if (v3)
		p += 8; /* n, read above */
	for (uint64_t i = 0; i < n; i++, p += 4) {
		if (v3) {
			c->keys[i] = le64(p);
			p += 8;
		}
		uint32_t b = le32(p);
		memcpy(&c->w[i], &b, 4);
	}
	rc = check_values(c, path, err);
	if (rc)
		ckpt_free(c);
out:
	fclose(f);
	free(buf);
	return rc;
}

void ckpt_free(struct ckpt *c)
{
	free(c->clocks);
	free(c->seqs);
	free(c->w);
	free(c->keys);
	c->clocks = NULL;
	c->seqs = NULL;
	c->w = NULL;
	c->keys = NULL;
}
