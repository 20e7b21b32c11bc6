/* parse_chunks.c - mapping a text file and cutting it into line-aligned
 * pieces for the parser threads. See parse_chunks.h. */
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "error.h"
#include "parse_chunks.h"

/* 32 bytes per step with GCC vector extensions (any target), counted in
 * unsigned 8-bit lanes (a true compare is all ones, so subtracting it adds
 * one) that are summed before they can wrap. */
typedef unsigned char v32u8 __attribute__((vector_size(32)));

void count_lines(const char *p, const char *end, uint64_t *newlines,
		 uint64_t *colons)
{
	uint64_t a = 0, b = 0;
	v32u8 vnl, vco;
	memset(&vnl, '\n', sizeof vnl);
	memset(&vco, ':', sizeof vco);
	while (end - p >= 32) {
		v32u8 x = { 0 }, y = { 0 };
		for (int i = 0; i < 255 && end - p >= 32; i++, p += 32) {
			v32u8 w;
			memcpy(&w, p, 32);
			x -= (v32u8)(w == vnl);
			y -= (v32u8)(w == vco);
		}
		for (int i = 0; i < 32; i++) {
			a += x[i];
			b += y[i];
		}
	}
	for (; p < end; p++) {
		a += *p == '\n';
		b += *p == ':';
	}
	*newlines = a;
	*colons = b;
}

int parse_threads(int requested)
{
	/* The parsers keep a few piece boundaries per thread on the stack. */
	if (requested > 1024)
		return 1024;
	if (requested > 0)
		return requested;
	int n = omp_get_max_threads();
	return n > 0 ? (n < 1024 ? n : 1024) : 1;
}

static int64_t mtime_ns_of(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

int text_file_stat(const char *path, uint64_t *size, int64_t *mtime_ns,
		   int *regular, boar_error *err)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return boar_fail_line(err, BOAR_EIO, path, 0, "cannot open: %s",
				      strerror(errno));
	if (S_ISDIR(st.st_mode))
		return boar_fail_line(err, BOAR_EIO, path, 0,
				      "is a directory, not a data file");
	*size = (uint64_t)st.st_size;
	*mtime_ns = mtime_ns_of(&st);
	*regular = S_ISREG(st.st_mode);
	return 0;
}

/* Reads a non-seekable input (pipe, character device) to its end. */
static int read_all(int fd, const char *path, struct text_file *f,
		    boar_error *err)
{
	size_t cap = 1 << 20, len = 0;
	char *b = malloc(cap);
	if (!b)
		return boar_fail_line(err, BOAR_ENOMEM, path, 0,
				      "out of memory reading the file");
	for (;;) {
		if (len == cap) {
			char *nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				return boar_fail_line(err, BOAR_ENOMEM, path, 0,
						      "out of memory reading the file");
			}
			b = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, b + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(b);
			return boar_fail_line(err, BOAR_EIO, path, 0,
					      "read failed: %s", strerror(e));
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	f->buf = b;
	f->heap = b;
	f->len = len;
	return 0;
}

static int is_gzip(const char *b, size_t n)
{
	return n >= 2 && (unsigned char)b[0] == 0x1f &&
	       (unsigned char)b[1] == 0x8b;
}

/* Replaces f's text by its gzip-inflated form (a heap buffer). Members
 * follow one another until the input ends; bytes after the last member
 * that do not start another are ignored, as gzip -d does. */
static int gunzip(struct text_file *f, const char *path, boar_error *err)
{
	const unsigned char *in = (const unsigned char *)f->buf;
	size_t in_len = f->len, used = 0, cap = in_len * 4 + (1 << 20), len = 0;
	char *out = malloc(cap);
	z_stream z;
	memset(&z, 0, sizeof z);
	if (!out || inflateInit2(&z, 15 + 16) != Z_OK) {
		free(out);
		return boar_fail_line(err, BOAR_ENOMEM, path, 0,
				      "out of memory inflating gzip data");
	}
	int ret = 0;
	for (;;) {
		if (len == cap) {
			char *nb = cap * 2 > cap ? realloc(out, cap * 2) : NULL;
			if (!nb) {
				ret = boar_fail_line(err, BOAR_ENOMEM, path, 0,
						     "out of memory inflating gzip data");
				break;
			}
			out = nb;
			cap *= 2;
		}
		/* zlib counts in uInt: feed and drain at most 1 GiB a call */
		size_t ain = in_len - used, aout = cap - len;
		z.next_in = (unsigned char *)in + used;
		z.avail_in = (uInt)(ain < (1u << 30) ? ain : (1u << 30));
		z.next_out = (unsigned char *)out + len;
		z.avail_out = (uInt)(aout < (1u << 30) ? aout : (1u << 30));
		uInt gave_in = z.avail_in, gave_out = z.avail_out;
		int r = inflate(&z, Z_NO_FLUSH);
		used += gave_in - z.avail_in;
		len += gave_out - z.avail_out;
		if (r == Z_STREAM_END) {
			if (!is_gzip((const char *)in + used, in_len - used))
				break; /* done (trailing bytes ignored) */
			inflateReset(&z);
			continue;
		}
		if (r == Z_OK)
			continue;
		/* no progress: for want of room (grown above) or of input
		 * (more of it, or the stream ends early) */
		if (r == Z_BUF_ERROR && (z.avail_out == 0 || used < in_len))
			continue;
		if (r == Z_BUF_ERROR)
			ret = boar_fail_line(err, BOAR_ECORRUPT, path, 0,
					     "gzip data is truncated");
		else if (r == Z_MEM_ERROR)
			ret = boar_fail_line(err, BOAR_ENOMEM, path, 0,
					     "out of memory inflating gzip data");
		else
			ret = boar_fail_line(err, BOAR_ECORRUPT, path, 0,
					     "gzip data is corrupt: %s",
					     z.msg ? z.msg : "bad stream");
		break;
	}
	inflateEnd(&z);
	if (ret) {
		free(out);
		return ret;
	}
	/* the text replaces the compressed bytes */
	if (f->map)
		munmap(f->map, f->map_len);
	free(f->heap);
	f->map = NULL;
	f->map_len = 0;
	f->heap = out;
	f->buf = out;
	f->len = len;
	return 0;
}

int text_file_open(const char *path, struct text_file *f, boar_error *err)
{
	memset(f, 0, sizeof *f);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return boar_fail_line(err, BOAR_EIO, path, 0, "cannot open: %s",
				      strerror(errno));
	struct stat st;
	int ret = 0;
	if (fstat(fd, &st) < 0) {
		ret = boar_fail_line(err, BOAR_EIO, path, 0, "cannot stat: %s",
				     strerror(errno));
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		ret = boar_fail_line(err, BOAR_EIO, path, 0,
				     "is a directory, not a data file");
		goto out;
	}
	f->mtime_ns = mtime_ns_of(&st);
	if (!S_ISREG(st.st_mode)) {
		ret = read_all(fd, path, f, err);
		goto out;
	}
	f->size = (uint64_t)st.st_size;
	f->regular = 1;
	if (st.st_size == 0) {
		f->buf = "";
		goto out;
	}
	/* No MAP_POPULATE: measured no faster on a 560 MB file, and lazy
	 * faults (16 pages each, by fault-around) are taken by the parser
	 * threads in parallel. */
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ,
		       MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		ret = boar_fail_line(err, BOAR_EIO, path, 0, "cannot map: %s",
				     strerror(errno));
		goto out;
	}
	f->map = m;
	f->map_len = (size_t)st.st_size;
	f->buf = m;
	f->len = (size_t)st.st_size;
out:
	close(fd);
	if (!ret && is_gzip(f->buf, f->len)) {
		ret = gunzip(f, path, err);
		if (ret)
			text_file_close(f);
	}
	return ret;
}

void text_file_close(struct text_file *f)
{
	if (f->map)
		munmap(f->map, f->map_len);
	free(f->heap);
	memset(f, 0, sizeof *f);
}

size_t split_lines(const char *buf, size_t len, size_t max_pieces,
		   size_t min_piece, size_t *starts)
{
	if (len == 0)
		return 0;
	if (max_pieces < 1)
		max_pieces = 1;
	if (min_piece < 1)
		min_piece = 1;
	size_t want = len / min_piece;
	if (want < max_pieces)
		max_pieces = want ? want : 1;
	size_t n = 0, pos = 0;
	starts[0] = 0;
	while (pos < len && n + 1 < max_pieces) {
		size_t target = (size_t)((unsigned __int128)len * (n + 1) /
					 max_pieces);
		if (target <= pos)
			target = pos + 1;
		if (target >= len)
			break;
		/* The piece ends after the first '\n' at or after target - 1,
		 * so a line that straddles target stays whole. */
		const char *nl = memchr(buf + target - 1, '\n',
					len - (target - 1));
		if (!nl)
			break;
		size_t next = (size_t)(nl - buf) + 1;
		if (next >= len)
			break;
		starts[++n] = next;
		pos = next;
	}
	starts[++n] = len;
	return n;
}
