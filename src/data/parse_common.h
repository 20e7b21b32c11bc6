/* parse_common.h - number and token helpers shared by the text parsers, and
 * the parsers' entry points (library-internal).
 *
 * Input is a memory range [p, end) that is NOT NUL-terminated (a block or
 * a window of a file read into memory), so every helper takes the end
 * pointer and never reads at or past it. The helpers are inline because they run once
 * per token on hundreds of MB per second: digits are taken 8 at a time
 * (SWAR) and a decimal of up to 19 digits becomes a float with one double
 * multiplication or division when that is exact (nearly always); the
 * rest reaches strtof in the "C" locale on a NUL-terminated copy. Every
 * path gives strtof's float bit for bit, and none depends on the
 * locale's decimal point.
 */
#ifndef BOAR_PARSE_COMMON_H
#define BOAR_PARSE_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format_detect.h"
#include "dataset.h"
#include "parse_chunks.h"

/* Space, tab, CR (so CRLF files read as LF ones), vertical tab, form feed. */
static inline int pc_is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static inline int pc_is_digit(unsigned char c)
{
	return (unsigned)(c - '0') < 10;
}

static inline const char *pc_skip_space(const char *p, const char *end)
{
	while (p < end && pc_is_space((unsigned char)*p))
		p++;
	return p;
}

/* Takes the next line of [*p, end): returns its start and sets *eol to
 * its end (its '\n', or end); *p moves past it. */
static inline const char *pc_take_line(const char **p, const char *end,
				       const char **eol)
{
	const char *b = *p, *e = memchr(b, '\n', (size_t)(end - b));
	*eol = e ? e : end;
	*p = *eol + 1;
	return b;
}

/* Whether the line [p, eol) is blank or a '#' comment (ratings and
 * LIBSVM files may open with them before a header or the data). */
static inline int pc_blank_or_comment(const char *p, const char *eol)
{
	const char *s = pc_skip_space(p, eol);
	return s == eol || *s == '#';
}

/* End of the token starting at p: the first space or end. */
static inline const char *pc_token_end(const char *p, const char *end)
{
	while (p < end && !pc_is_space((unsigned char)*p))
		p++;
	return p;
}

/* Up to 8 decimal digits at s (which has at least 8 readable bytes) in
 * one go: a byte is a digit when its high nibble is 3 both as is and after
 * adding 6; the leading digits are then shifted to the top of the word and
 * summed pairwise (2, 4, then 8 digits per lane). Bytes after the first
 * non-digit may be garbled by carries but are shifted out. Returns how many
 * digits (0..8) were taken and adds them to *x. */
static inline int pc_swar8(const char *s, uint64_t *x)
{
	static const uint64_t p10[9] = { 1,	  10,	    100,      1000,
					 10000,	  100000,   1000000,  10000000,
					 100000000 };
	uint64_t w;
	memcpy(&w, s, 8);
	uint64_t a = w & 0xF0F0F0F0F0F0F0F0ULL;
	uint64_t b = (w + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL;
	uint64_t bad = (a ^ 0x3030303030303030ULL) | (b ^ 0x3030303030303030ULL);
	int k = bad ? __builtin_ctzll(bad) >> 3 : 8;
	if (!k)
		return 0;
	uint64_t v = (w - 0x3030303030303030ULL) << (8 * (8 - k));
	v = v * 10 + (v >> 8);
	v = ((v & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32)) +
	     ((v >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32))) >>
	    32;
	*x = *x * p10[k] + v;
	return k;
}

/* Decimal digits at s: accumulated into *x while *nd (digits so far,
 * leading zeros included) stays within 19, which always fits 64 bits;
 * beyond that they are only counted. Returns the end of the digits. */
static inline const char *pc_digits(const char *s, const char *end,
				    uint64_t *x, int *nd)
{
	while (end - s >= 8 && *nd <= 11) {
		int k = pc_swar8(s, x);
		*nd += k;
		s += k;
		if (k < 8)
			return s;
	}
	while (s < end && pc_is_digit((unsigned char)*s)) {
		if (*nd < 19)
			*x = *x * 10 + (unsigned)((unsigned char)*s - '0');
		++*nd;
		s++;
	}
	return s;
}

/* Parses decimal digits at p into *v. Returns the pointer after the digits
 * (p itself when there are none). *overflow is set when the value does not
 * fit in 64 bits; callers compare *v against their own bound anyway. */
static inline const char *pc_parse_u64(const char *p, const char *end,
				       uint64_t *v, int *overflow)
{
	uint64_t x = 0;
	int nd = 0, of = 0;
	while (end - p >= 8 && nd <= 11) {
		int k = pc_swar8(p, &x);
		nd += k;
		p += k;
		if (k < 8)
			goto done;
	}
	while (p < end && pc_is_digit((unsigned char)*p)) {
		unsigned d = (unsigned char)*p - '0';
		if (x > (UINT64_MAX - d) / 10)
			of = 1;
		else
			x = x * 10 + d;
		p++;
	}
done:
	*v = x;
	*overflow = of;
	return p;
}

/* The slow, exact paths (parse_float.c): strtof in the "C" locale on a
 * NUL-terminated copy of the number at p (digits, sign, point, exponent,
 * "nan", "inf"; the copy stops at the first byte that cannot be part
 * of one); returns the end of the number, or p if there is none. And
 * m * 10^e10 through the same strtof. */
const char *pc_parse_float_slow(const char *p, const char *end, float *out);
float pc_scale_slow(uint64_t m, int e10);

/* m * 10^e10 rounded once to the nearest float (ties to even), exactly
 * as strtof reads the digits of m followed by "e<e10>".
 *
 * Fast path (Clinger's): when m is at most 2^53 and |e10| at most 22, m
 * and 10^|e10| are exact doubles, so one multiplication or division is
 * the exact value rounded once to a double, q. Rounding q again to a
 * float gives the exact value's float unless q sits exactly halfway
 * between two floats (the halfway points are doubles, so the exact value
 * and q are on the same side of every other one): then, and for
 * everything outside the fast range, strtof decides. The text writer
 * uses this same function to check that its digits read back. */
static inline float pc_scale(uint64_t m, int e10)
{
	static const double p10[23] = {
		1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
		1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
		1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
	};
	if (m <= (1ULL << 53) && e10 >= -22 && e10 <= 22) {
		double q = e10 < 0 ? (double)m / p10[-e10] : (double)m * p10[e10];
		uint64_t bits;
		memcpy(&bits, &q, 8);
		/* the 29 bits a float drops are exactly one half of its ulp
		 * (q is far from the float subnormals and from overflow) */
		if ((bits & 0x1FFFFFFFULL) != 0x10000000ULL)
			return (float)q;
	}
	return pc_scale_slow(m, e10);
}

/* Parses a float at p, stopping at the first byte that cannot continue the
 * number (or at end). Returns the pointer after the number, or p when there
 * is none; the caller checks that a space or the end of the line follows.
 * The float is strtof's, bit for bit, in any locale.
 *
 * pc_parse_float_any reads any number; pc_parse_float first tries the
 * shape nearly every data file writes, and hands the rest on.
 *
 * A decimal of up to 19 digits (leading zeros included) fits a
 * uint64 exactly and goes through pc_scale. Longer numbers, "nan" and
 * "inf" take pc_parse_float_slow. Hex floats are not read ("0x1p3" is 0
 * followed by junk). */
static inline const char *pc_parse_float_any(const char *p,
					     const char *end, float *out)
{
	const char *s = p;
	int neg = 0;
	if (s < end && (*s == '-' || *s == '+')) {
		neg = *s == '-';
		s++;
	}
	uint64_t m = 0;
	int nd = 0, e10 = 0;
	s = pc_digits(s, end, &m, &nd);
	if (s < end && *s == '.') {
		int before = nd;
		s = pc_digits(s + 1, end, &m, &nd);
		e10 = before - nd;
	}
	if (!nd)
		goto slow; /* nan, inf, ".", or not a number at all */
	if (s < end && (*s == 'e' || *s == 'E')) {
		const char *q = s + 1;
		int eneg = 0, ex = 0, any = 0;
		if (q < end && (*q == '-' || *q == '+')) {
			eneg = *q == '-';
			q++;
		}
		while (q < end && pc_is_digit((unsigned char)*q)) {
			if (ex < 100000)
				ex = ex * 10 + (*q - '0');
			any = 1;
			q++;
		}
		if (!any)
			return s; /* "1e": the caller reports the junk */
		e10 += eneg ? -ex : ex;
		s = q;
	}
	if (nd > 19)
		goto slow;
	float f = m ? pc_scale(m, e10) : 0.0f;
	*out = neg ? -f : f;
	return s;
slow:
	return pc_parse_float_slow(p, end, out);
}

/* The common shape, [-+]D[.F] with at most 7 digits D, at most 8
 * digits F (both may be 0) and no exponent, when 16 bytes can be read:
 * two SWAR steps and one exact division, with no loop. Anything else
 * (more digits, an exponent, no digit) goes to pc_parse_float_any from
 * the start. */
static inline __attribute__((always_inline)) const char *
pc_parse_float(const char *p, const char *end, float *out)
{
	static const double p10[9] = { 1e0, 1e1, 1e2, 1e3, 1e4,
				       1e5, 1e6, 1e7, 1e8 };
	const char *s = p;
	if (end - p < 17)
		return pc_parse_float_any(p, end, out);
	int neg = *s == '-';
	s += neg | (*s == '+');
	uint64_t m = 0;
	int nd = pc_swar8(s, &m), fd = 0;
	s += nd;
	if (nd == 8)
		return pc_parse_float_any(p, end, out);
	if (*s == '.') { /* s + 1 + 8 <= p + 17 <= end */
		fd = pc_swar8(s + 1, &m);
		s += 1 + fd;
		if (fd == 8 && s < end && pc_is_digit((unsigned char)*s))
			return pc_parse_float_any(p, end, out);
	}
	if (nd + fd == 0 || (s < end && (*s | 0x20) == 'e'))
		return pc_parse_float_any(p, end, out);
	/* m < 10^15 and 10^fd are exact doubles, so q is the value x
	 * rounded once, within 2^-53 of it (relative). Rounding q to a float
	 * is then exact (pc_scale says why) unless q is a halfway point
	 * between floats that x is not, and here it cannot be: a halfway
	 * point h = M 2^e (M < 2^25) other than x is at least 2^-52 of x
	 * away, as x - h has numerator m 2^-e - M 10^fd (e < 0), an integer
	 * not 0, over 10^fd 2^-e, with m 2^-e < 2^25 10^fd <= 2^52 (and at
	 * least 1/m > 2^-50 when e >= 0). So no tie check is needed. */
	float f = (float)((double)m / p10[fd]);
	*out = neg ? -f : f;
	return s;
}

/* Writes a printable, quoted, bounded copy of [p, end) into out for error
 * messages: bytes outside printable ASCII become \xNN, long tokens are cut
 * with "...". */
static inline void pc_quote(char *out, size_t n, const char *p, const char *end)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	if (n < 8) {
		if (n)
			out[0] = '\0';
		return;
	}
	out[o++] = '\'';
	for (; p < end; p++) {
		unsigned char c = (unsigned char)*p;
		if (o + 8 >= n || o > 40) {
			out[o++] = '.';
			out[o++] = '.';
			out[o++] = '.';
			break;
		}
		if (c >= 0x20 && c < 0x7f && c != '\'') {
			out[o++] = (char)c;
		} else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o++] = '\'';
	out[o] = '\0';
}

/* ---------------------------------------------------------- parsers */

struct name_sink; /* feature_names.h */
struct csv_setup; /* parse_csv.c: a CSV file's layout, from its first block */

/* What a parser needs to know about its input: one block of whole lines
 * of the file (parse_stream.c calls the parser once per block and joins
 * the pieces). */
struct parse_input {
	const char *path;   /* for error messages */
	const char *buf;    /* the block's text */
	size_t len;
	uint64_t line_base; /* lines of the file before the block */
	struct line_origin *origin; /* NULL, or lines before line_base's
				       (a part of a file, counted lazily) */
	int first_block;    /* the block starts the file (a header is there) */
	int threads;        /* > 0 */
	int hash_bits;      /* linear only */
	const boar_load_options *opt; /* the CSV options (may be NULL) */
	struct csv_setup **csv; /* CSV: NULL before the first block, then the
				   layout every later block is read with */
	uint64_t *lines;    /* out, on success: the block's lines (the text's
			       '\n' bytes, and a last line without one) */
	const struct name_sink *names; /* every feature's name goes here
					  (feature_names.h), one thread */
};

void boar_csv_setup_free(struct csv_setup *cs);

/* VW and CSV hash into 2^18 slots when hash_bits is 0, as VW does. */
#define BOAR_VW_DEFAULT_HASH_BITS 18

/* Each returns 0 and a filled dataset (arrays owned, n_rows may be 0), or a
 * negative BOAR_E* code with err naming path and the 1-based line. */
int boar_parse_libsvm(const struct parse_input *in, struct boar_dataset **out,
		      boar_error *err);
int boar_parse_ratings(const struct parse_input *in,
		       struct boar_dataset **out, boar_error *err);
int boar_parse_vw(const struct parse_input *in, struct boar_dataset **out,
		  boar_error *err);
int boar_parse_csv(const struct parse_input *in, struct boar_dataset **out,
		   boar_error *err);
/* A regular file that is parsed in windows, its text never held whole
 * (parse_chunks.h, "a regular file in windows"). */
struct parse_file {
	const char *path;
	int fd;
	const struct src_id *id; /* at open: checked again at the end */
	uint64_t beg, end;  /* the text's bytes (after a byte order mark) */
	const char *head;   /* its first whole lines (at least one), from */
	size_t head_len;    /* beg: where CSV and ratings find a header */
	size_t window;      /* bytes a thread reads at a time */
	size_t min_piece;   /* the smallest share of a thread */
	int threads;
	int hash_bits;
	uint64_t max_memory; /* the dataset's limit (boar_memory_check) */
	const boar_load_options *opt; /* progress, and the formats' options */
	struct line_origin *origin; /* NULL: beg is in the file's first line
				       (whatever blank lines before it) */
};

/* A format from a file in windows: a counting pass and a parsing pass,
 * each thread reading its pieces through a window of its own, straight
 * into the dataset's arrays; the same dataset as the block parser on the
 * whole text (a CSV file's auto columns are settled over all of it).
 * *lines: the file's lines.
 * @return 0, a BOAR_E* code with err naming the file (and line), or 1
 *         (ratings only) when the head holds only comments: the block
 *         reader then looks further for a header. */
int boar_parse_libsvm_file(const struct parse_file *f,
			   struct boar_dataset **out, uint64_t *lines,
			   boar_error *err);
int boar_parse_vw_file(const struct parse_file *f, struct boar_dataset **out,
		       uint64_t *lines, boar_error *err);
int boar_parse_csv_file(const struct parse_file *f, struct boar_dataset **out,
			uint64_t *lines, boar_error *err);
int boar_parse_ratings_file(const struct parse_file *f,
			    struct boar_dataset **out, uint64_t *lines,
			    boar_error *err);

/* boar_parse_<name>() of the format's line in boar.h's BOAR_FORMAT_MAP. */
int boar_parse_format(int format, const struct parse_input *in,
		      struct boar_dataset **out, boar_error *err);

/* Parses the file at path block by block (format forced or detected from
 * its first block) into *out, refusing data that would need more memory
 * than o->max_memory allows. *format is the format used; *id and
 * *regular say what was read (for the cache).
 * @return 0 or a BOAR_E* code with err naming the file (and line). */
int boar_parse_file(const char *path, const boar_load_options *o,
		    int threads, int *format, struct src_id *id, int *regular,
		    struct boar_dataset **out, boar_error *err);

/* The same reading for the names behind a file's hashed slots
 * (feature_names.h): one thread, blocks of about `block` bytes, every
 * feature's name to `names`, the rows dropped block by block. BOAR_EINVAL
 * for a format without names.
 * @return 0 or a BOAR_E* code with err naming the file (and line). */
int boar_parse_file_names(const char *path, const boar_load_options *o,
			  size_t block, const struct name_sink *names,
			  boar_error *err);

/* The windowed reader alone (tests make windows and pieces tiny): 1 when
 * the file is not for it (not a plain regular file of text with data on
 * its first line, that line within the detection window), else as
 * boar_parse_file. */
int boar_parse_file_windows(const char *path, const boar_load_options *o,
			    int threads, size_t window, size_t min_piece,
			    int *format, struct src_id *id, int *regular,
			    struct boar_dataset **out, boar_error *err);

/* Bytes [lo, hi) of a regular file (lo a line start, hi one or the
 * file's end: a worker's part) in windows on `threads` threads, its text
 * never held whole; messages name the file and its own lines, as a parse
 * of the whole file would (the lines before lo counted only for an error
 * that names one). Classified and noted as boar_dataset_parse_text's.
 * @return 0, a BOAR_E* code, or 1 when the range is not for windows (as
 * boar_parse_file_windows): the caller parses it as a block. */
int boar_parse_file_range(const char *path, uint64_t lo,
			  uint64_t hi, const boar_load_options *o,
			  int threads, struct boar_dataset **out,
			  boar_error *err);

/* The same with blocks of about `block` bytes (tests make them tiny to
 * cross many block boundaries). */
int boar_parse_file_blocks(const char *path, const boar_load_options *o,
			   int threads, size_t block, int *format,
			   struct src_id *id, int *regular,
			   struct boar_dataset **out, boar_error *err);

#endif
