/* search_spec.h - the grid of `boar train --search SPEC`.
 *
 * SPEC is a comma-separated list of NAME=VALUES, where NAME is eta, l1 or
 * l2 and each further comma-separated item without '=' adds a value to the
 * last NAME: "l2=0,1e-6..1e-2:5,eta=0.1,0.3,1". A value is a number or
 * A..B:N, N values evenly spaced in log between A and B (both > 0). The
 * option may be given more than once; a NAME may appear once in all.
 */
#ifndef BOAR_CLI_SEARCH_SPEC_H
#define BOAR_CLI_SEARCH_SPEC_H

#include <stddef.h>

/* Values per NAME, and configurations in all. */
#define SEARCH_SPEC_MAX_VALUES 1000
#define SEARCH_SPEC_MAX_CONFIGS 10000

struct search_spec {
	int given;   /* --search was on the command line */
	double eta[SEARCH_SPEC_MAX_VALUES];
	double l1[SEARCH_SPEC_MAX_VALUES];
	double l2[SEARCH_SPEC_MAX_VALUES];
	int n_eta, n_l1, n_l2;
};

/* Adds spec's lists to *s. @return 0, or -1 with why[] naming the bad
 * part ("--search: ..."). */
int search_spec_add(struct search_spec *s, const char *spec, char *why,
		    size_t why_len);

#endif
