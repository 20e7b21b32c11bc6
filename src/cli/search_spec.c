/* search_spec.c - parsing `--search SPEC` (search_spec.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search_spec.h"

/* The list named `name` (length n), or NULL. */
static double *list_of(struct search_spec *s, const char *name, size_t n,
		       int **len)
{
	static const char *const names[] = { "eta", "l1", "l2" };
	double *lists[] = { s->eta, s->l1, s->l2 };
	int *lens[] = { &s->n_eta, &s->n_l1, &s->n_l2 };
	for (int i = 0; i < 3; i++)
		if (strlen(names[i]) == n && !strncmp(name, names[i], n)) {
			*len = lens[i];
			return lists[i];
		}
	return NULL;
}

/* One number filling [p, end) whole; 0 or -1. */
static int number(const char *p, const char *end, double *out)
{
	char buf[64];
	size_t n = (size_t)(end - p);
	if (!n || n >= sizeof buf)
		return -1;
	memcpy(buf, p, n);
	buf[n] = 0;
	char *e;
	*out = strtod(buf, &e);
	return *e || !isfinite(*out) ? -1 : 0;
}

/* The item [p, end) (a number or A..B:N) appended to list[*n]; NULL or
 * why not. */
static const char *item(const char *p, const char *end, double *list, int *n,
			int eta)
{
	const char *dots = strstr(p, "..");
	double a, b, v;
	if (!dots || dots >= end) {
		if (number(p, end, &v))
			return "is not a number";
		if (v < 0 || (eta && v == 0))
			return eta ? "eta must be > 0" : "must be >= 0";
		if (*n >= SEARCH_SPEC_MAX_VALUES)
			return "makes too many values";
		list[(*n)++] = v;
		return NULL;
	}
	const char *colon = memchr(dots, ':', (size_t)(end - dots));
	char *e;
	if (!colon)
		return "is a range without :N (A..B:N, N values log-spaced)";
	if (number(p, dots, &a) || number(dots + 2, colon, &b))
		return "is not a range of two numbers A..B:N";
	long k = strtol(colon + 1, &e, 10);
	if (e != end || colon + 1 == end || k < 2)
		return "needs N >= 2 values after ':'";
	if (!(a > 0 && b > 0))
		return "is a log-spaced range: A and B must be > 0 (add 0 as "
		       "a value of its own)";
	if (*n + k > SEARCH_SPEC_MAX_VALUES)
		return "makes too many values";
	for (long i = 0; i < k; i++)
		list[(*n)++] = i == k - 1 ? b
				: exp(log(a) + (log(b) - log(a)) * i / (k - 1));
	return NULL;
}

int search_spec_add(struct search_spec *s, const char *spec, char *why,
		    size_t why_len)
{
	double *list = NULL;
	int *n = NULL, eta = 0;
	const char *p = spec, *msg = NULL;
	s->given = 1;
	for (;;) {
		const char *end = p + strcspn(p, ",");
		const char *eq = memchr(p, '=', (size_t)(end - p));
		const char *v = p;
		if (eq) {
			list = list_of(s, p, (size_t)(eq - p), &n);
			if (!list) {
				snprintf(why, why_len, "--search: '%.*s' is not "
					 "eta, l1 or l2", (int)(eq - p), p);
				return -1;
			}
			if (*n) {
				snprintf(why, why_len, "--search: %.*s is given "
					 "twice", (int)(eq - p), p);
				return -1;
			}
			eta = list == s->eta;
			v = eq + 1;
		}
		if (!list)
			msg = "comes before any NAME= (eta=, l1= or l2=)";
		else
			msg = item(v, end, list, n, eta);
		if (msg) {
			snprintf(why, why_len, "--search: '%.*s' %s",
				 (int)(end - p), p, msg);
			return -1;
		}
		if (!*end)
			break;
		p = end + 1;
	}
	long total = (long)(s->n_eta ? s->n_eta : 1) * (s->n_l1 ? s->n_l1 : 1) *
		     (s->n_l2 ? s->n_l2 : 1);
	if (total > SEARCH_SPEC_MAX_CONFIGS) {
		snprintf(why, why_len, "--search: %ld configurations; at most "
			 "%d", total, SEARCH_SPEC_MAX_CONFIGS);
		return -1;
	}
	return 0;
}
