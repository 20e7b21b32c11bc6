/* pushlog.c - append, replay and cut a shard's push log (see pushlog.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>

#include "base/error.h"
#include "net/pushlog.h"
#include "net/wire.h"

#define HDR 24
static const uint8_t MAGIC[4] = { 'P', 'L', 'O', 'G' };

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* crc32 of a record: kind .. end of payload */
static uint32_t record_crc(const uint8_t *hdr, const uint8_t *payload,
			   uint32_t len)
{
	uLong c = crc32(0, hdr + 8, HDR - 8);
	/* never a null buffer: zlib answers that with its initial value */
	return len ? (uint32_t)crc32(c, payload, len) : (uint32_t)c;
}

int pushlog_append(struct pushlog *pl, int kind, uint16_t flags,
		   uint32_t rank, uint64_t a, const uint8_t *payload,
		   uint32_t len)
{
	uint8_t h[HDR], t[4];
	memcpy(h, MAGIC, 4);
	put32(h + 4, len);
	h[8] = (uint8_t)kind;
	h[9] = 0;
	h[10] = (uint8_t)flags;
	h[11] = (uint8_t)(flags >> 8);
	put32(h + 12, rank);
	put32(h + 16, (uint32_t)a);
	put32(h + 20, (uint32_t)(a >> 32));
	put32(t, record_crc(h, payload, len));
	struct iovec iov[3] = { { h, HDR }, { (void *)payload, len }, { t, 4 } };
	size_t want = HDR + (size_t)len + 4;
	ssize_t k = writev(pl->fd, iov, 3);
	if (k == (ssize_t)want)
		return 0;
	if (k >= 0)
		errno = ENOSPC; /* a short append: the disk is full */
	return -1;
}

/* Reads exactly n bytes. @return 1 whole, 0 not (end of file, torn). */
static int read_n(FILE *f, uint8_t *p, size_t n)
{
	return fread(p, 1, n, f) == n;
}

/* Replays the records; *good: the offset after the last whole one. */
static int replay(FILE *f, const char *path, pushlog_fn fn, void *ctx,
		  uint64_t *n, off_t *good, boar_error *err)
{
	uint8_t h[HDR], t[4];
	uint8_t *buf = NULL;
	size_t cap = 0;
	int rc = 0;
	*good = 0;
	while (read_n(f, h, HDR)) {
		uint32_t len = get32(h + 4);
		if (memcmp(h, MAGIC, 4) || len > WIRE_MAX_PAYLOAD)
			break;
		if (len > cap) {
			uint8_t *b = realloc(buf, len);
			if (!b) {
				rc = boar_fail(err, BOAR_ENOMEM,
					       "out of memory");
				break;
			}
			buf = b;
			cap = len;
		}
		if (!read_n(f, buf, len) || !read_n(f, t, 4) ||
		    get32(t) != record_crc(h, buf, len))
			break;
		uint64_t a = get32(h + 16) | (uint64_t)get32(h + 20) << 32;
		if (fn(ctx, h[8], (uint16_t)(h[10] | h[11] << 8), get32(h + 12),
		       a, buf, len)) {
			rc = boar_fail(err, BOAR_ECORRUPT,
				       "%s: record %llu at byte %lld does not "
				       "fit this shard",
				       path, (unsigned long long)*n,
				       (long long)*good);
			break;
		}
		(*n)++;
		*good += HDR + (off_t)len + 4;
	}
	free(buf);
	return rc;
}

int pushlog_open(struct pushlog *pl, const char *dir, uint32_t shard,
		 uint32_t n_shards, pushlog_fn fn, void *ctx, uint64_t *n,
		 boar_error *err)
{
	*n = 0;
	pl->fd = -1;
	pl->cut = 0;
	snprintf(pl->path, sizeof pl->path, "%s/shard-%u-of-%u.log", dir,
		 shard, n_shards);
	FILE *f = fopen(pl->path, "rb");
	if (f) {
		off_t good;
		int rc = replay(f, pl->path, fn, ctx, n, &good, err);
		fclose(f);
		if (rc)
			return rc;
		/* a torn or damaged tail was never applied: cut it */
		struct stat st;
		if (!stat(pl->path, &st) && st.st_size > good)
			pl->cut = (uint64_t)(st.st_size - good);
		if (truncate(pl->path, good))
			return boar_fail(err, BOAR_EIO, "%s: %s", pl->path,
					 strerror(errno));
	} else if (errno != ENOENT) {
		return boar_fail(err, BOAR_EIO, "%s: %s", pl->path,
				 strerror(errno));
	}
	mkdir(dir, 0755); /* may exist; open() reports real trouble */
	pl->fd = open(pl->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
		      0644);
	if (pl->fd < 0)
		return boar_fail(err, BOAR_EIO, "%s: %s", pl->path,
				 strerror(errno));
	return 0;
}

int pushlog_reset(struct pushlog *pl)
{
	return ftruncate(pl->fd, 0);
}

void pushlog_close(struct pushlog *pl)
{
	if (pl->fd >= 0)
		close(pl->fd);
	pl->fd = -1;
}
