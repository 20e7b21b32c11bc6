/* gzip_input.c - the beginning of a possibly gzip-compressed file. See
 * gzip_input.h. */
#include <limits.h>
#include <zlib.h>

#include "gzip_input.h"

long text_peek(const char *path, char *buf, size_t cap)
{
	gzFile z = gzopen(path, "rb");
	if (!z)
		return -1;
	if (cap > INT_MAX)
		cap = INT_MAX;
	size_t got = 0;
	while (got < cap) {
		/* a truncated or damaged stream still gives what it inflated
		 * before the damage; the real open reports the damage */
		int r = gzread(z, buf + got, (unsigned)(cap - got));
		if (r <= 0)
			break;
		got += (size_t)r;
		/* blank lines before the data tell detection nothing: look
		 * past them (the parser skips them the same way) */
		if (text_all_blank(buf, got))
			got = 0;
	}
	gzclose(z);
	return (long)got;
}
