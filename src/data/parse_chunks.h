/* parse_chunks.h - reading a text file in blocks of whole lines (or, a
 * regular file, in per-thread windows) and cutting it into per-thread
 * pieces at line boundaries (library-internal).
 *
 * A data file is read, never mapped: with read(2)/pread(2) a file that is
 * truncated or rewritten while it is parsed gives short reads, which are
 * reported as an error naming the file, where a mapping would kill the
 * process with SIGBUS. The text comes in blocks of whole lines (a few tens
 * of MiB; a regular file within a quarter of the memory limit in one), or
 * in windows of a few MiB per thread (see "a regular file in windows"), so
 * the memory the text takes is bounded whatever the file's size; gzip input (recognised by its magic bytes, whatever the file is
 * called; concatenated members too) is inflated block by block into the
 * same buffer, so a gzip bomb costs a block, not its inflated size. A
 * UTF-8 byte order mark at the start of the text is dropped here, once,
 * for every format. Regular files, pipes and sockets are read; character
 * and block devices (/dev/zero, a disk) are refused, and no line may be
 * longer than BOAR_MAX_LINE bytes, so no input can make the reader grow
 * without bound. Pieces always start at the beginning of a line and end
 * just after a '\n' (or at the end of the text), so a parser can work on
 * each one alone and the line numbers add up.
 */
#ifndef BOAR_PARSE_CHUNKS_H
#define BOAR_PARSE_CHUNKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "boar.h"

/* The longest line any parser accepts (a CSV row of 100k wide columns
 * fits many times over). */
#define BOAR_MAX_LINE ((size_t)256 << 20)

/* Who a source file is: what the binary cache is keyed on (cache.h says
 * why these fields). */
struct src_id {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
};

struct text_source {
	const char *path;
	int fd;
	int regular;          /* a regular file: id means something */
	struct src_id id;     /* at open */
	uint64_t pos;         /* raw bytes read so far */
	char *buf;            /* the block: [0, len) read, [0, taken) given */
	size_t cap, len, taken;
	int eof;              /* no more text */
	int started;          /* the first bytes were looked at (gzip?) */
	int bom_checked;
	int threads;
	void *gz;             /* z_stream when the input is gzip */
	unsigned char *zin;   /* compressed bytes [zpos, zlen) not inflated */
	size_t zlen, zpos;
	int raw_eof;          /* the compressed input ended */
};

/* Stats path without reading it (for cache checks).
 * @return 0, or BOAR_EIO (missing file, a directory, a device, no
 *         permission). *regular says whether id means anything. */
int text_file_stat(const char *path, struct src_id *id, int *regular,
		   boar_error *err);

/* Opens path for text_source_next.
 * @return 0 or BOAR_EIO naming the file. */
int text_source_open(const char *path, int threads, struct text_source *s,
		     boar_error *err);

/* The next block: *text, *len hold whole lines (the last one may lack its
 * '\n' only at the end of the file), about `block` bytes or more (a line
 * is never cut); *len is 0 at the end. The block stays valid until the
 * next call.
 * @return 0, BOAR_EIO (read error, or a regular file that changed while
 *         it was read: size, mtime or ctime differ at its end from when it
 *         was opened), BOAR_ECORRUPT (broken gzip data),
 *         BOAR_EPARSE (a line over BOAR_MAX_LINE) or BOAR_ENOMEM; line
 *         is the number of lines before the block, for messages. */
int text_source_next(struct text_source *s, size_t block, uint64_t line,
		     const char **text, size_t *len, boar_error *err);

void text_source_close(struct text_source *s);

/* At the end of reading a regular file: is it still the file that was
 * opened (size, mtime and ctime as in id)?
 * @return 0, or BOAR_EIO naming the file ("changed while it was read"). */
int text_file_unchanged(int fd, const char *path, const struct src_id *id,
			uint64_t read, boar_error *err);

/* ------------------------------------------- a regular file in windows
 *
 * The parsers read a regular file without holding its text: each
 * thread preads whole lines of its own byte range into a small buffer
 * that it reuses, so the text costs no fresh pages (which the kernel
 * would zero, then fill) and stays in the core's cache while it is
 * parsed. A range read short (the file was cut) is an error, never a
 * crash. */
struct text_window {
	int fd;
	uint64_t pos, end; /* the next byte to read; the range's end */
	char *buf;         /* [0, len) read, [0, taken) given out */
	size_t cap, len, taken;
};

/* A window of `size` bytes over fd (it grows for a longer line).
 * @return 0 or BOAR_ENOMEM. */
int text_window_open(struct text_window *w, int fd, size_t size);

/* Points the window at bytes [beg, end) of the file (beg a line start),
 * keeping its buffer. */
void text_window_seek(struct text_window *w, uint64_t beg, uint64_t end);

/* The next whole lines of the range into *text, *len (0 at its end; the
 * last may lack its '\n' only at the range's end).
 * @return 0, or BOAR_EIO (read error, or the file ended early: it
 *         changed) or BOAR_EPARSE (a line over BOAR_MAX_LINE) or
 *         BOAR_ENOMEM, with msg[msg_size] saying which. */
int text_window_next(struct text_window *w, const char **text, size_t *len,
		     char *msg, size_t msg_size);

void text_window_close(struct text_window *w);

/* split_lines over bytes [beg, end) of a regular file: starts[0] = beg,
 * starts[n] = end, each other start just after a '\n'.
 * @return n (0 for an empty range), or -errno for a read error. */
long file_split_lines(int fd, uint64_t beg, uint64_t end, size_t max_pieces,
		      size_t min_piece, uint64_t *starts);

/* pread of n bytes at `at`, in slices on threads when n is large: the
 * count (less than n where the file ends; the bytes up to the first short
 * slice), or -errno. */
ssize_t boar_pread_all(int fd, void *buf, size_t n, uint64_t at, int threads);

/* Where a range of a file starts, in the file's lines: a worker's part
 * (boar_parse_file_range) names the file's own lines in its errors. The
 * lines before `at` are counted only when an error names a line, so a
 * part's reader reads the bytes before its part only then. */
struct line_origin {
	int fd;
	uint64_t at;    /* the range's first byte (a line start) */
	uint64_t lines; /* the lines before it, once counted */
	int counted;    /* 0 not yet, 1 counted, -1 unreadable */
};

/* Line `line` of o's range (1-based) as the file's line: line plus the
 * lines before the range (none for a NULL o); 0 for line 0, or when the
 * bytes before the range cannot be read (an error then names no line,
 * rather than a wrong one). */
uint64_t line_in_file(struct line_origin *o, uint64_t line);

/* Where the next line starts at or after byte `at` (just after a '\n'),
 * end when no '\n' comes before it, or -errno. */
typedef int64_t (*line_start_fn)(void *ctx, uint64_t at, uint64_t end);

/* Cuts bytes [beg, end) into at most max_pieces pieces of roughly equal
 * size at line starts (found by next_start), none smaller than min_piece
 * bytes (except when the text is). starts[0] = beg, starts[n] = end;
 * starts must hold max_pieces + 1 entries.
 * @return n >= 1 (0 only for an empty range), or next_start's -errno. */
long split_at_lines(uint64_t beg, uint64_t end, size_t max_pieces,
		    size_t min_piece, line_start_fn next_start, void *ctx,
		    uint64_t *starts);

/* split_at_lines over a block of text [buf, buf+len) (offsets from buf). */
size_t split_lines(const char *buf, size_t len, size_t max_pieces,
		   size_t min_piece, uint64_t *starts);

/* Counts the newlines and the ':' bytes of [p, end) (bounds on rows and
 * LIBSVM features for the parsers' first pass). */
void count_lines(const char *p, const char *end, uint64_t *newlines,
		 uint64_t *colons);

/* The number of threads to use for a request (0 = all cores), at most
 * 1024. */
int parse_threads(int requested);

#endif
