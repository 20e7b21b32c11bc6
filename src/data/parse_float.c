/* parse_float.c - the exact slow path of the parsers' float reading
 * (parse_common.h): strtof in the "C" locale on a NUL-terminated copy of
 * the number, for what the inline fast path cannot convert exactly. */
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse_common.h"

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void make_c_locale(void)
{
	c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* strtof whatever locale the program has set: a data file's decimal
 * point is '.' (LC_NUMERIC "de_DE" would stop strtof at it). */
static float strtof_c(const char *s, char **end)
{
	pthread_once(&c_locale_once, make_c_locale);
	if (c_locale)
		return strtof_l(s, end, c_locale);
	return strtof(s, end); /* no locale object: the C library's own */
}

/* Could c be part of a number strtof reads (digits, sign, point,
 * exponent, "inf", "nan(...)", hex)? The copy stops at the first byte
 * that cannot, so a CSV line is not copied whole for each field. */
static int in_number(unsigned char c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ||
	       c == '.' || c == '+' || c == '-' || c == '(' || c == ')' ||
	       c == '_';
}

const char *pc_parse_float_slow(const char *p, const char *end, float *out)
{
	char small[64], *buf = small;
	const char *te = p;
	while (te < end && in_number((unsigned char)*te))
		te++;
	size_t n = (size_t)(te - p);
	if (n == 0)
		return p;
	if (n >= sizeof small && !(buf = malloc(n + 1)))
		return p; /* out of memory: read as "not a number" */
	memcpy(buf, p, n);
	buf[n] = '\0';
	char *e;
	float f = strtof_c(buf, &e);
	size_t used = (size_t)(e - buf);
	if (buf != small)
		free(buf);
	if (used == 0)
		return p;
	*out = f;
	return p + used;
}

float pc_scale_slow(uint64_t m, int e10)
{
	char buf[48];
	snprintf(buf, sizeof buf, "%llue%d", (unsigned long long)m, e10);
	return strtof_c(buf, NULL);
}
