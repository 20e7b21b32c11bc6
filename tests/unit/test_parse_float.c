/* test_parse_float.c - the parsers' float reading is strtof's, bit for
 * bit: short decimals (the inline fast path), decimals on and near the
 * halfway points between two floats (where rounding through a double
 * could be off by one: the fast path must see those and hand them on), long decimals, exponents far out, "nan" and "inf"
 * (the strtof path), and the same under a locale whose decimal point is
 * ','. Hex floats are not data: "0x1p3" reads as 0 followed by junk. */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/parse_common.h"
#include "testutil.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static int mismatches;

/* The parser's float and end against strtof's ("C" locale), read from a
 * line where more follows (the inline fast path wants 17 readable bytes)
 * and from the number alone. */
static void check_in(const char *text, size_t n, const char *end)
{
	float got = 12345.0f, want;
	const char *e = pc_parse_float(text, end, &got);
	char *we;
	want = strtof(text, &we);
	if (we == text) { /* not a number: the parser must say so */
		if (e != text && mismatches++ < 10)
			fprintf(stderr, "'%.*s': parsed, strtof did not\n",
				(int)n, text);
		return;
	}
	uint32_t gb, wb;
	memcpy(&gb, &got, 4);
	memcpy(&wb, &want, 4);
	if ((gb != wb || e != text + (we - text)) && mismatches++ < 10)
		fprintf(stderr, "'%.*s': got %a (%zu bytes), strtof %a (%zu)\n",
			(int)n, text, got, (size_t)(e - text), want,
			(size_t)(we - text));
}

static void check_one(const char *text)
{
	char line[200];
	size_t n = strlen(text);
	check_in(text, n, text + n);
	if (n + 40 < sizeof line) {
		snprintf(line, sizeof line, "%s 17:0.5 18:1 19:2 20:3 21:4", text);
		check_in(line, n, line + strlen(line));
	}
}

/* Random decimals of 1..22 digits, a point anywhere, an exponent now and
 * then. */
static void random_decimals(int count)
{
	char b[80];
	for (int k = 0; k < count; k++) {
		int nd = 1 + (int)(next() % 22), point = (int)(next() % (nd + 1));
		char *o = b;
		if (next() % 3 == 0)
			*o++ = '-';
		for (int i = 0; i < nd; i++) {
			if (i == point)
				*o++ = '.';
			*o++ = (char)('0' + next() % 10);
		}
		if (next() % 4 == 0)
			o += sprintf(o, "e%d", (int)(next() % 90) - 45);
		*o = '\0';
		check_one(b);
	}
}

/* Halfway points between neighbouring floats, written exactly and then
 * cut to 17 and 9 significant digits, and a hair above and below. */
static void halfway_points(int count)
{
	char b[96];
	for (int k = 0; k < count; k++) {
		uint32_t bits = (uint32_t)(next() % 0x7f000000u) + 0x00800000u;
		float f, g;
		memcpy(&f, &bits, 4);
		bits++;
		memcpy(&g, &bits, 4);
		double mid = ((double)f + (double)g) / 2; /* exact in a double */
		snprintf(b, sizeof b, "%.60g", mid);
		check_one(b);
		snprintf(b, sizeof b, "%.17g", mid);
		check_one(b);
		snprintf(b, sizeof b, "%.16g", mid);
		check_one(b);
		snprintf(b, sizeof b, "%.15g", mid);
		check_one(b);
		snprintf(b, sizeof b, "%.9g", mid);
		check_one(b);
		snprintf(b, sizeof b, "%.17g", nextafter(mid, 0));
		check_one(b);
		snprintf(b, sizeof b, "%.17g", nextafter(mid, 1e300));
		check_one(b);
	}
	/* the inline fast path's shape (up to 7 + 8 digits, no exponent)
	 * near halfway points: rounding through a double must not meet one */
	for (int k = 0; k < count; k++) {
		uint32_t bits = 0x3a800000u + (uint32_t)(next() % 0x0e000000u);
		float f, g;
		memcpy(&f, &bits, 4);
		bits++;
		memcpy(&g, &bits, 4);
		double mid = ((double)f + (double)g) / 2;
		if (mid >= 1e7)
			continue;
		for (int fd = 1; fd <= 8; fd++) {
			snprintf(b, sizeof b, "%.*f", fd, mid);
			check_one(b);
		}
	}
	/* ties that a double meets exactly: 2^24 + 1 and friends */
	check_one("16777217");
	check_one("16777219");
	check_one("33554434");
	check_one("1.00000005960464477539062500000001");
	check_one("1.000000059604644775390625");
}

static void odd_forms(void)
{
	static const char *const t[] = {
		"0", "-0", "+1", ".5", "5.", "-.5e1", "1e38", "3.5e38", "1e39",
		"1e-38", "1e-45", "1e-46", "7e-46", "1.4e-45", "1e99999",
		"1e-99999", "nan", "-inf", "inf", "infinity",
		"1234567890123456789012345678901234567890",
		"0.000000000000000000000000000000000000001234567890123456789",
		"123456789012345678901234567890123456789012345678901234567890"
		"123456789012345678901234567890e-60",
		"9007199254740993", "9007199254740992e-22", "1e22", "1e23",
		"3.4028235e38", "3.40282357e38", "1.17549435e-38",
	};
	for (size_t k = 0; k < sizeof t / sizeof t[0]; k++)
		check_one(t[k]);
	/* not numbers, and numbers followed by junk */
	float v = 0;
	const char *s = ".";
	CHECK(pc_parse_float(s, s + 1, &v) == s, "'.' is not a number");
	s = "-";
	CHECK(pc_parse_float(s, s + 1, &v) == s, "'-' is not a number");
	s = "1e";
	CHECK(pc_parse_float(s, s + 2, &v) == s + 1, "'1e' ends at the 'e'");
	s = "2.5:7";
	CHECK(pc_parse_float(s, s + 5, &v) == s + 3 && v == 2.5f,
	      "a number ends at ':'");
	/* the end pointer is respected: "12" of "123" */
	s = "0x1p3";
	CHECK(pc_parse_float(s, s + 5, &v) == s + 1 && v == 0.0f,
	      "hex is not read");
	s = "123";
	CHECK(pc_parse_float(s, s + 2, &v) == s + 2 && v == 12.0f,
	      "reads only up to end");
}

int main(void)
{
	random_decimals(300000);
	halfway_points(50000);
	odd_forms();
	CHECK_EQ_INT(mismatches, 0);
	/* the scale the text writer checks its digits with */
	CHECK(pc_scale(16777217, 0) == 16777216.0f, "tie to even");
	CHECK(pc_scale(1, -50) == 0.0f, "underflow");
	/* a locale with a decimal comma changes nothing */
	if (setlocale(LC_NUMERIC, "de_DE.UTF-8") ||
	    setlocale(LC_NUMERIC, "fr_FR.UTF-8")) {
		const char *s = "0.100000000000000000000000001";
		float v = 0;
		const char *e = pc_parse_float(s, s + strlen(s), &v);
		CHECK(e == s + strlen(s) && v == 0.1f,
		      "the slow path reads '.' under a decimal-comma locale");
		setlocale(LC_NUMERIC, "C");
	}
	return TEST_RESULT();
}
