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
