/* parse_chunks.h - getting a text file into memory and cutting it into
 * per-thread pieces at line boundaries (library-internal).
 *
 * A regular file is mapped read-only (no copy, pages shared with the page
 * cache); anything else that can be opened (a pipe, /dev/stdin) is read into
 * a heap buffer. Gzip input (recognised by its magic bytes, whatever the
 * file is called; concatenated members too) is inflated with zlib into a
 * heap buffer, so every format reads compressed as well. Pieces always start at the beginning of a line and end just
 * after a '\n' (or at the end of the text), so a parser can work on each one
 * alone and the line numbers add up.
 */
#ifndef BOAR_PARSE_CHUNKS_H
#define BOAR_PARSE_CHUNKS_H

#include <stddef.h>
#include <stdint.h>

#include "boar.h"

struct text_file {
	const char *buf;
	size_t len;
	void *map;       /* mmap'd (munmap on close), or NULL */
	size_t map_len;
	void *heap;      /* read into the heap (free on close), or NULL */
	uint64_t size;   /* st_size of the source (0 for a pipe) */
	int64_t mtime_ns;
	int regular;     /* a regular file (size and mtime mean something) */
};

/* Stats path without reading it: size, mtime and whether it is a regular
 * file, for cache checks.
 * @return 0, or BOAR_EIO (missing file, a directory, no permission). */
int text_file_stat(const char *path, uint64_t *size, int64_t *mtime_ns,
		   int *regular, boar_error *err);

/* Opens and maps (or reads, or inflates) path.
 * @return 0, BOAR_EIO, BOAR_ENOMEM, or BOAR_ECORRUPT for broken gzip data. */
int text_file_open(const char *path, struct text_file *f, boar_error *err);
void text_file_close(struct text_file *f);

/* Cuts [buf, buf+len) into at most max_pieces pieces of roughly equal size
 * at line starts, none smaller than min_piece bytes (except when the text
 * is). starts[0] = 0, starts[n] = len; returns n >= 1 (0 only for len 0).
 * starts must hold max_pieces + 1 entries. */
size_t split_lines(const char *buf, size_t len, size_t max_pieces,
		   size_t min_piece, size_t *starts);

/* Counts the newlines and the ':' bytes of [p, end) (bounds on rows and
 * LIBSVM features for the parsers' first pass). */
void count_lines(const char *p, const char *end, uint64_t *newlines,
		 uint64_t *colons);

/* The number of threads to use for a request (0 = all cores), at most
 * 1024. */
int parse_threads(int requested);

#endif
