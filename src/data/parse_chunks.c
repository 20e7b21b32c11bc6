/* parse_chunks.c - cutting a block of text into line-aligned pieces for
 * the parser threads, and counting its lines. See parse_chunks.h (the
 * reading is parse_source.c's). */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

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

long split_at_lines(uint64_t beg, uint64_t end, size_t max_pieces,
		    size_t min_piece, line_start_fn next_start, void *ctx,
		    uint64_t *starts)
{
	uint64_t len = end - beg;
	if (len == 0)
		return 0;
	if (max_pieces < 1)
		max_pieces = 1;
	if (min_piece < 1)
		min_piece = 1;
	if (len / min_piece < max_pieces)
		max_pieces = len / min_piece ? (size_t)(len / min_piece) : 1;
	size_t n = 0;
	uint64_t pos = beg;
	starts[0] = beg;
	while (n + 1 < max_pieces) {
		/* The piece ends after the first '\n' at or after its share's
		 * last byte, so a line that straddles the share stays whole. */
		uint64_t target = beg + (uint64_t)((unsigned __int128)len *
						   (n + 1) / max_pieces);
		if (target <= pos)
			target = pos + 1;
		if (target >= end)
			break;
		int64_t next = next_start(ctx, target - 1, end);
		if (next < 0)
			return (long)next;
		if ((uint64_t)next >= end)
			break;
		starts[++n] = (uint64_t)next;
		pos = (uint64_t)next;
	}
	starts[++n] = end;
	return (long)n;
}

/* The offset just after the first '\n' at or after `at` in a block of
 * text, or end when there is none. */
static int64_t text_line_start(void *buf, uint64_t at, uint64_t end)
{
	const char *nl = memchr((const char *)buf + at, '\n', end - at);
	return nl ? (int64_t)(nl - (const char *)buf) + 1 : (int64_t)end;
}

size_t split_lines(const char *buf, size_t len, size_t max_pieces,
		   size_t min_piece, uint64_t *starts)
{
	return (size_t)split_at_lines(0, len, max_pieces, min_piece,
				      text_line_start, (void *)buf, starts);
}

uint64_t line_in_file(struct line_origin *o, uint64_t line)
{
	if (!o || !line)
		return line;
	char buf[1 << 16];
	for (uint64_t at = 0; !o->counted && at < o->at;) {
		size_t want = o->at - at < sizeof buf ? (size_t)(o->at - at)
						      : sizeof buf;
		ssize_t got = boar_pread_all(o->fd, buf, want, at, 1);
		if (got <= 0) {
			o->counted = -1;
			break;
		}
		uint64_t nl, colons;
		count_lines(buf, buf + got, &nl, &colons);
		o->lines += nl;
		at += (uint64_t)got;
	}
	if (!o->counted)
		o->counted = 1;
	return o->counted < 0 ? 0 : o->lines + line;
}
