/* cluster_parse.h - the number parsers of the cluster options
 * (cluster.c), apart so that cluster.c stays within the size rule. */
#ifndef BOAR_CLI_CLUSTER_PARSE_H
#define BOAR_CLI_CLUSTER_PARSE_H

#include <stdlib.h>

/* A decimal count <= max into *out. @return 0, or -1. */
static inline int parse_u(const char *s, unsigned long long max,
			  unsigned long long *out)
{
	char *end;
	if (!s || !*s || *s == '-')
		return -1;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || v > max)
		return -1;
	*out = v;
	return 0;
}

/* A number in [0, 1e12] into *out. @return 0, or -1. */
static inline int parse_d(const char *s, double *out)
{
	char *end;
	if (!s || !*s)
		return -1;
	double v = strtod(s, &end);
	if (*end || !(v >= 0) || v > 1e12)
		return -1;
	*out = v;
	return 0;
}

#endif
