/* parse_source.c - reading a data file in blocks of whole lines, through
 * gzip when it is compressed. See parse_chunks.h for why it reads rather
 * than maps, and why blocks.
 *
 * A regular file is read with pread(2), in slices on threads when the
 * block is large (page-cache copies run at memory speed per core); other
 * inputs with read(2). At the end a regular file must still be what was
 * opened (same size, mtime and ctime): a file truncated, grown or
 * rewritten while it was read is an error, not a silently mixed dataset.
 */
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/huge_pages.h"
#include "base/error.h"
#include "parse_chunks.h"

#define ZIN_SIZE ((size_t)1 << 20) /* compressed bytes per read */
#define SLICE ((size_t)8 << 20)    /* a thread's share of a large read */
#define ZLIB_MAX ((size_t)1 << 30) /* zlib counts in uInt */

static void id_of(const struct stat *st, struct src_id *id)
{
	id->dev = (uint64_t)st->st_dev;
	id->ino = (uint64_t)st->st_ino;
	id->size = (uint64_t)st->st_size;
	id->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 +
		       st->st_mtim.tv_nsec;
	id->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 +
		       st->st_ctim.tv_nsec;
}

/* Refuses what is not data: a directory, and devices, which never end
 * (/dev/zero, /dev/urandom) or are not text (a disk). */
static int kind_error(const char *path, const struct stat *st,
		      boar_error *err)
{
	if (S_ISDIR(st->st_mode))
		return boar_fail_line(err, BOAR_EIO, path, 0,
				      "is a directory, not a data file");
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		return boar_fail_line(err, BOAR_EIO, path, 0,
				      "is a device, not a data file (give a regular file, a pipe or redirected stdin)");
	return 0;
}

int text_file_stat(const char *path, struct src_id *id, int *regular,
		   boar_error *err)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return boar_fail_line(err, BOAR_EIO, path, 0, "cannot open: %s",
				      strerror(errno));
	int ret = kind_error(path, &st, err);
	if (ret)
		return ret;
	id_of(&st, id);
	*regular = S_ISREG(st.st_mode);
	return 0;
}

int text_source_open(const char *path, int threads, struct text_source *s,
		     boar_error *err)
{
	memset(s, 0, sizeof *s);
	s->path = path;
	s->threads = threads > 0 ? threads : 1;
	s->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0)
		return boar_fail_line(err, BOAR_EIO, path, 0, "cannot open: %s",
				      strerror(errno));
	struct stat st;
	int ret = fstat(s->fd, &st) < 0
			  ? boar_fail_line(err, BOAR_EIO, path, 0,
					   "cannot stat: %s", strerror(errno))
			  : kind_error(path, &st, err);
	if (ret) {
		close(s->fd);
		s->fd = -1;
		return ret;
	}
	id_of(&st, &s->id);
	s->regular = S_ISREG(st.st_mode);
	return 0;
}

void text_source_close(struct text_source *s)
{
	if (s->gz) {
		inflateEnd(s->gz);
		free(s->gz);
	}
	free(s->zin);
	free(s->buf);
	if (s->fd >= 0)
		close(s->fd);
	memset(s, 0, sizeof *s);
	s->fd = -1;
}

/* ------------------------------------------------------- raw bytes */

/* pread until n bytes or the end of the file: the count, or -errno. */
static ssize_t pread_full(int fd, char *dst, size_t n, uint64_t at)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, dst + got, n - got, (off_t)(at + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

ssize_t boar_pread_all(int fd, void *buf, size_t n, uint64_t at, int threads)
{
	char *dst = buf;
	if (n < 2 * SLICE || threads < 2)
		return pread_full(fd, dst, n, at);
	/* slices in parallel; the bytes count up to the first short slice
	 * (the file ended there, or is being cut) */
	int k = (int)(n / SLICE) < threads ? (int)(n / SLICE) : threads;
	size_t per = n / (size_t)k;
	ssize_t res[k];
#pragma omp parallel for num_threads(k)
	for (int i = 0; i < k; i++) {
		size_t a = per * (size_t)i;
		size_t len = i == k - 1 ? n - a : per;
		res[i] = pread_full(fd, dst + a, len, at + a);
	}
	ssize_t got = 0;
	for (int i = 0; i < k; i++) {
		size_t len = i == k - 1 ? n - per * (size_t)i : per;
		if (res[i] < 0)
			return res[i];
		got += res[i];
		if ((size_t)res[i] < len)
			break;
	}
	return got;
}

/* Up to n raw bytes at the current position: the count (0 at the end),
 * or a BOAR_E* code with err set. */
static ssize_t raw_read(struct text_source *s, char *dst, size_t n,
			boar_error *err)
{
	ssize_t got;
	if (!s->regular) {
		do
			got = read(s->fd, dst, n);
		while (got < 0 && errno == EINTR);
		if (got < 0)
			got = -errno;
	} else {
		got = boar_pread_all(s->fd, dst, n, s->pos, s->threads);
	}
	if (got < 0)
		return boar_fail_line(err, BOAR_EIO, s->path, 0,
				      "read failed: %s", strerror((int)-got));
	s->pos += (uint64_t)got;
	return got;
}

/* ------------------------------------------------------------ gzip */

/* At least `need` unread compressed bytes in zin, unless the input ends
 * first. */
static int zin_fill(struct text_source *s, size_t need, boar_error *err)
{
	size_t have = s->zlen - s->zpos;
	if (have >= need || s->raw_eof)
		return 0;
	memmove(s->zin, s->zin + s->zpos, have);
	s->zlen = have;
	s->zpos = 0;
	while (s->zlen < need && !s->raw_eof) {
		ssize_t r = raw_read(s, (char *)s->zin + s->zlen,
				     ZIN_SIZE - s->zlen, err);
		if (r < 0)
			return (int)r;
		if (r == 0)
			s->raw_eof = 1;
		s->zlen += (size_t)r;
	}
	return 0;
}

static int is_gzip(const unsigned char *b, size_t n)
{
	return n >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

/* Up to n inflated bytes: the count (0 when the last member has ended),
 * or a BOAR_E* code. Members follow one another; bytes after the last
 * one that do not start another are ignored, as gzip -d does. */
static ssize_t inflate_some(struct text_source *s, char *dst, size_t n,
			    boar_error *err)
{
	z_stream *z = s->gz;
	size_t out = 0;
	if (n > ZLIB_MAX)
		n = ZLIB_MAX;
	while (out < n) {
		int ret = zin_fill(s, 1, err);
		if (ret)
			return ret;
		z->next_in = s->zin + s->zpos;
		z->avail_in = (uInt)(s->zlen - s->zpos);
		z->next_out = (unsigned char *)dst + out;
		z->avail_out = (uInt)(n - out);
		uInt gave_out = z->avail_out;
		int r = inflate(z, Z_NO_FLUSH);
		s->zpos = s->zlen - z->avail_in;
		out += gave_out - z->avail_out;
		if (r == Z_STREAM_END) {
			if ((ret = zin_fill(s, 2, err)))
				return ret;
			if (!is_gzip(s->zin + s->zpos, s->zlen - s->zpos)) {
				s->eof = 1; /* done; trailing bytes ignored */
				break;
			}
			inflateReset(z);
			continue;
		}
		if (r == Z_OK)
			continue;
		if (r == Z_BUF_ERROR && s->zpos == s->zlen && !s->raw_eof)
			continue; /* wants input: zin_fill reads it */
		if (r == Z_BUF_ERROR && s->zpos == s->zlen)
			return boar_fail_line(err, BOAR_ECORRUPT, s->path, 0,
					      "gzip data is truncated");
		if (r == Z_MEM_ERROR)
			return boar_fail_line(err, BOAR_ENOMEM, s->path, 0,
					      "out of memory inflating gzip data");
		return boar_fail_line(err, BOAR_ECORRUPT, s->path, 0,
				      "gzip data is corrupt: %s",
				      z->msg ? z->msg : "bad stream");
	}
	return (ssize_t)out;
}

/* Looks at the first bytes: gzip input gets its inflater. */
static int start(struct text_source *s, boar_error *err)
{
	s->started = 1;
	if (!(s->zin = malloc(ZIN_SIZE)))
		return boar_fail_line(err, BOAR_ENOMEM, s->path, 0,
				      "out of memory");
	int ret = zin_fill(s, 2, err);
	if (ret)
		return ret;
	if (!is_gzip(s->zin, s->zlen))
		return 0; /* plain text: zin's bytes are the first of it */
	z_stream *z = calloc(1, sizeof *z);
	if (!z || inflateInit2(z, 15 + 16) != Z_OK) {
		free(z);
		return boar_fail_line(err, BOAR_ENOMEM, s->path, 0,
				      "out of memory inflating gzip data");
	}
	s->gz = z;
	return 0;
}

/* Up to n bytes of text: the count, 0 at its end, or a BOAR_E* code. */
static ssize_t produce(struct text_source *s, char *dst, size_t n,
		       boar_error *err)
{
	if (s->gz)
		return s->eof ? 0 : inflate_some(s, dst, n, err);
	size_t have = s->zlen - s->zpos; /* plain bytes start() looked at */
	if (have) {
		size_t k = have < n ? have : n;
		memcpy(dst, s->zin + s->zpos, k);
		s->zpos += k;
		return (ssize_t)k;
	}
	return raw_read(s, dst, n, err);
}

int text_file_unchanged(int fd, const char *path, const struct src_id *id,
			uint64_t read, boar_error *err)
{
	struct stat st;
	struct src_id now;
	if (fstat(fd, &st) < 0)
		return boar_fail_line(err, BOAR_EIO, path, 0, "cannot stat: %s",
				      strerror(errno));
	id_of(&st, &now);
	if (read != id->size || now.size != id->size ||
	    now.mtime_ns != id->mtime_ns || now.ctime_ns != id->ctime_ns)
		return boar_fail_line(err, BOAR_EIO, path, 0,
				      "the file changed while it was read (%llu bytes when opened, %llu read, %llu now): nothing loaded",
				      (unsigned long long)id->size,
				      (unsigned long long)read,
				      (unsigned long long)now.size);
	return 0;
}

/* At the end of a regular file: is it still the file that was opened?
 * (Of gzip input the compressed bytes are not counted: only the file's
 * identity is compared.) */
static int check_unchanged(struct text_source *s, boar_error *err)
{
	if (!s->regular)
		return 0;
	return text_file_unchanged(s->fd, s->path, &s->id,
				   s->gz ? s->id.size : s->pos, err);
}

static int grow(struct text_source *s, size_t want, boar_error *err)
{
	if (want <= s->cap)
		return 0;
	char *b = realloc(s->buf, want);
	if (!b)
		return boar_fail_line(err, BOAR_ENOMEM, s->path, 0,
				      "out of memory for a %zu MiB block of text",
				      want >> 20);
	s->buf = b;
	s->cap = want;
	/* The block is written once through and read once: in 2 MiB pages
	 * the kernel takes one fault where it would take 512 (a read-in
	 * file costs a fault per 4 KiB page otherwise, which a mapped one
	 * did not). */
	boar_advise_huge(b, want);
	return 0;
}

int text_source_next(struct text_source *s, size_t block, uint64_t line,
		     const char **text, size_t *len, boar_error *err)
{
	int ret;
	if (s->taken) {
		memmove(s->buf, s->buf + s->taken, s->len - s->taken);
		s->len -= s->taken;
		s->taken = 0;
	}
	if (!s->started && (ret = start(s, err)))
		return ret;
	size_t want = block < 4 ? 4 : block;
	for (;;) {
		/* a plain regular file needs no more room than it has bytes */
		if (s->regular && !s->gz && s->id.size >= s->pos) {
			uint64_t rest = s->id.size - s->pos + (s->zlen - s->zpos);
			if (s->len + rest + 1 < want)
				want = (size_t)(s->len + rest + 1);
		}
		if ((ret = grow(s, want, err)))
			return ret;
		while (s->len < want && !s->eof) {
			ssize_t r = produce(s, s->buf + s->len, want - s->len,
					    err);
			if (r < 0)
				return (int)r;
			if (r == 0)
				s->eof = 1;
			s->len += (size_t)r;
		}
		if (s->eof && (ret = check_unchanged(s, err)))
			return ret;
		if (!s->bom_checked && (s->len >= 3 || s->eof)) {
			/* a UTF-8 byte order mark is not data */
			s->bom_checked = 1;
			if (s->len >= 3 && !memcmp(s->buf, "\xEF\xBB\xBF", 3)) {
				memmove(s->buf, s->buf + 3, s->len - 3);
				s->len -= 3;
				continue; /* fill the 3 bytes again */
			}
		}
		if (s->eof) {
			s->taken = s->len;
			break;
		}
		const char *nl = memrchr(s->buf, '\n', s->len);
		if (nl) {
			s->taken = (size_t)(nl - s->buf) + 1;
			break;
		}
		if (s->len >= BOAR_MAX_LINE)
			return boar_fail_line(err, BOAR_EPARSE, s->path,
					      line + 1,
					      "line longer than %zu MiB: not a text data file?",
					      BOAR_MAX_LINE >> 20);
		want = s->len * 2 < BOAR_MAX_LINE + 1 ? s->len * 2
						       : BOAR_MAX_LINE + 1;
	}
	*text = s->buf;
	*len = s->taken;
	return 0;
}

/* ------------------------------------------------------- windows */

int text_window_open(struct text_window *w, int fd, size_t size)
{
	memset(w, 0, sizeof *w);
	w->fd = fd;
	w->cap = size < 64 ? 64 : size;
	w->buf = malloc(w->cap);
	return w->buf ? 0 : BOAR_ENOMEM;
}

void text_window_seek(struct text_window *w, uint64_t beg, uint64_t end)
{
	w->pos = beg;
	w->end = end;
	w->len = w->taken = 0;
}

void text_window_close(struct text_window *w)
{
	free(w->buf);
	memset(w, 0, sizeof *w);
}

int text_window_next(struct text_window *w, const char **text, size_t *len,
		     char *msg, size_t msg_size)
{
	if (w->taken) { /* the part line left over goes to the front */
		memmove(w->buf, w->buf + w->taken, w->len - w->taken);
		w->len -= w->taken;
		w->taken = 0;
	}
	for (;;) {
		uint64_t left = w->end - w->pos;
		size_t want = w->cap - w->len;
		if (left < want)
			want = (size_t)left;
		if (want) {
			ssize_t r = pread_full(w->fd, w->buf + w->len, want,
					       w->pos);
			if (r < 0) {
				snprintf(msg, msg_size, "read failed: %s",
					 strerror((int)-r));
				return BOAR_EIO;
			}
			if ((size_t)r < want) {
				snprintf(msg, msg_size,
					 "the file changed while it was read (it ended at byte %llu): nothing loaded",
					 (unsigned long long)(w->pos + (uint64_t)r));
				return BOAR_EIO;
			}
			w->len += want;
			w->pos += want;
		}
		if (w->pos == w->end) { /* the range ends at a line's end */
			w->taken = w->len;
			break;
		}
		const char *nl = memrchr(w->buf, '\n', w->len);
		if (nl) {
			w->taken = (size_t)(nl - w->buf) + 1;
			break;
		}
		/* one line fills the window: a larger one */
		if (w->cap > BOAR_MAX_LINE) {
			snprintf(msg, msg_size,
				 "line longer than %zu MiB: not a text data file?",
				 BOAR_MAX_LINE >> 20);
			return BOAR_EPARSE;
		}
		size_t cap = w->cap * 2 < BOAR_MAX_LINE + 1 ? w->cap * 2
							    : BOAR_MAX_LINE + 1;
		char *b = realloc(w->buf, cap);
		if (!b) {
			snprintf(msg, msg_size, "out of memory for a %zu MiB line",
				 cap >> 20);
			return BOAR_ENOMEM;
		}
		w->buf = b;
		w->cap = cap;
	}
	*text = w->buf;
	*len = w->taken;
	return 0;
}

/* The offset just after the first '\n' at or after `at` in the file
 * (ctx points at its descriptor), or end when there is none before it
 * (or a negative -errno). */
static int64_t file_line_start(void *ctx, uint64_t at, uint64_t end)
{
	int fd = *(const int *)ctx;
	char b[16384];
	while (at < end) {
		size_t n = end - at < sizeof b ? (size_t)(end - at) : sizeof b;
		ssize_t r = pread_full(fd, b, n, at);
		if (r < 0)
			return r;
		if (r == 0)
			break; /* cut: the reading says so */
		const char *nl = memchr(b, '\n', (size_t)r);
		if (nl)
			return (int64_t)(at + (uint64_t)(nl - b) + 1);
		at += (uint64_t)r;
	}
	return (int64_t)end;
}

long file_split_lines(int fd, uint64_t beg, uint64_t end, size_t max_pieces,
		      size_t min_piece, uint64_t *starts)
{
	return split_at_lines(beg, end, max_pieces, min_piece,
			      file_line_start, &fd, starts);
}
