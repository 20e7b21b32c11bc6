/* vw_tags.c - tags of VW rows (vw_tags.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "vw_tags.h"

static int blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

int vw_tag(const char *s, size_t len, const char **tag, size_t *tag_len)
{
	const char *end = s + len, *bar = memchr(s, '|', len);
	const char *p = s;
	*tag_len = 0;
	while (p < end && blank((unsigned char)*p))
		p++;
	if (p == end || *p == '\n')
		return 0;
	if (!bar)
		return 1;
	while (p < bar) {
		while (p < bar && blank((unsigned char)*p))
			p++;
		const char *te = p;
		while (te < bar && !blank((unsigned char)*te))
			te++;
		if (te == p)
			break;
		if (*p == '\'' || te == bar) {
			*tag = *p == '\'' ? p + 1 : p;
			*tag_len = (size_t)(te - *tag);
		}
		p = te;
	}
	return 1;
}

void vw_tags_free(char **tags, size_t n)
{
	for (size_t k = 0; tags && k < n; k++)
		free(tags[k]);
	free(tags);
}

int vw_tags_read(const char *path, char ***out, size_t *n_out)
{
	gzFile g = gzopen(path, "rb");
	if (!g)
		return -1;
	size_t n = 0, cap = 1024, llen = 0, lcap = 1 << 16;
	char **tags = malloc(cap * sizeof *tags), *line = malloc(lcap);
	int rc = tags && line ? 0 : -1;
	/* A line may be longer than the buffer: grow until it holds one. */
	while (!rc && gzgets(g, line + llen, (int)(lcap - llen))) {
		llen += strlen(line + llen);
		if (llen + 1 >= lcap && line[llen - 1] != '\n') {
			char *b = realloc(line, lcap * 2);
			if (!b) {
				rc = -1;
				break;
			}
			line = b;
			lcap *= 2;
			continue;
		}
		const char *t;
		size_t tl;
		int row = vw_tag(line, llen, &t, &tl);
		llen = 0;
		if (!row)
			continue;
		if (n == cap) {
			char **b = realloc(tags, cap * 2 * sizeof *tags);
			if (!b) {
				rc = -1;
				break;
			}
			tags = b;
			cap *= 2;
		}
		if (!(tags[n] = strndup(tl ? t : "", tl))) {
			rc = -1;
			break;
		}
		n++;
	}
	int e = errno;
	gzclose(g);
	free(line);
	if (rc) {
		vw_tags_free(tags, n);
		errno = e ? e : ENOMEM;
		return -1;
	}
	*out = tags;
	*n_out = n;
	return 0;
}
