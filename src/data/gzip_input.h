/* gzip_input.h - a look at the beginning of a data file's text, through
 * gzip when it is compressed (library-internal).
 *
 * The loader must know a file's format before it can tell whether a binary
 * cache fits (VW and CSV data are hashed, plain LIBSVM is not), and it must
 * know it without parsing or inflating the whole file, which the cache is
 * there to avoid. zlib's gzread reads gzip members and passes plain bytes
 * through unchanged, so one call serves both. The inflate for parsing,
 * block by block, is parse_source.c's.
 */
#ifndef BOAR_GZIP_INPUT_H
#define BOAR_GZIP_INPUT_H

#include <stddef.h>

/* Reads up to cap bytes of path's text (inflated if it is gzip) into buf.
 * @return the count, or -1 when the file cannot be opened or read (the
 *         caller then simply does without the look; opening the file for
 *         real reports the problem). */
long text_peek(const char *path, char *buf, size_t cap);

/* How many bytes of white space (blank lines) [s, s + n) starts with:
 * blank lines before a file's data, which detection and header handling
 * look past. */
static inline size_t text_blank_prefix(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' ||
			 s[i] == '\n'))
		i++;
	return i;
}

static inline int text_all_blank(const char *s, size_t n)
{
	return text_blank_prefix(s, n) == n;
}

#endif
