/* vw_interactions.c - the VW generation options: reading and checking
 * them, the namespace interactions a row has (wildcards expanded,
 * duplicates dropped), and the bound on the features a line generates
 * that the parser's counting pass needs (vw_interactions.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "vw_interactions.h"

void vw_gen_free(struct vw_gen *g)
{
	if (!g)
		return;
	free(g->inter);
	free(g);
}

/* The letters of x, sorted: two interactions are the same when these
 * are (VW drops -q ba after -q ab). */
static void sorted_key(const struct vw_inter *x, unsigned char *key)
{
	memcpy(key, x->ns, x->len);
	for (int i = 1; i < x->len; i++)
		for (int j = i; j > 0 && key[j - 1] > key[j]; j--) {
			unsigned char t = key[j];
			key[j] = key[j - 1];
			key[j - 1] = t;
		}
}

static int same_set(const struct vw_inter *a, const struct vw_inter *b)
{
	unsigned char ka[VW_MAX_INTERACTION], kb[VW_MAX_INTERACTION];
	if (a->len != b->len)
		return 0;
	sorted_key(a, ka);
	sorted_key(b, kb);
	return !memcmp(ka, kb, a->len);
}

/* VW sorts an interaction that repeats a letter ("bab" becomes "abb"),
 * so that equal letters are adjacent and give combinations. */
static void canonical(struct vw_inter *x)
{
	unsigned char key[VW_MAX_INTERACTION];
	sorted_key(x, key);
	for (int i = 1; i < x->len; i++)
		if (key[i] == key[i - 1]) {
			memcpy(x->ns, key, x->len);
			return;
		}
}

static int has_wild(const struct vw_inter *x)
{
	return memchr(x->ns, ':', x->len) != NULL;
}

static int read_interactions(const char *list, struct vw_gen *g, char *why,
			     size_t why_len)
{
	size_t items = 1;
	for (const char *p = list; *p; p++)
		items += *p == ',';
	if (!(g->inter = calloc(items, sizeof *g->inter)))
		return BOAR_ENOMEM;
	for (const char *p = list;;) {
		size_t n = strcspn(p, ",");
		if (n < 2 || n > VW_MAX_INTERACTION) {
			snprintf(why, why_len, "interaction '%.*s': give 2 to %d "
				 "namespace letters (e.g. -q ab, --interactions "
				 "abc; ':' is any namespace)", (int)(n > 20 ? 20 : n),
				 p, VW_MAX_INTERACTION);
			return BOAR_EINVAL;
		}
		struct vw_inter x = { .len = (unsigned char)n };
		memcpy(x.ns, p, n);
		if (!has_wild(&x))
			canonical(&x);
		int dup = 0;
		for (size_t k = 0; k < g->n_inter && !dup; k++)
			dup = has_wild(&x) ? !memcmp(&g->inter[k], &x, sizeof x)
					   : !has_wild(&g->inter[k]) &&
						     same_set(&g->inter[k], &x);
		if (!dup)
			g->inter[g->n_inter++] = x;
		g->wild |= has_wild(&x);
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

/* "N" (every namespace) or "aN" (namespaces starting with a) items into
 * per[256], the bare one into *all (-1: none). */
static int read_per_ns(const char *list, const char *what, int lo, int hi,
		       int *per, int *all, char *why, size_t why_len)
{
	for (const char *p = list;;) {
		size_t n = strcspn(p, ",");
		const char *d = p;
		int letter = -1;
		if (n && (unsigned)(*p - '0') > 9) {
			letter = (unsigned char)*p;
			d++;
		}
		long v = 0;
		int ok = d < p + n && p + n - d <= 3;
		for (const char *q = d; ok && q < p + n; q++) {
			ok = (unsigned)(*q - '0') <= 9;
			v = v * 10 + (*q - '0');
		}
		if (!ok || v < lo || v > hi) {
			snprintf(why, why_len, "%s '%.*s': give a number from %d "
				 "to %d, alone (every namespace) or after a "
				 "namespace letter (e.g. a2)", what,
				 (int)(n > 20 ? 20 : n), p, lo, hi);
			return BOAR_EINVAL;
		}
		int *slot = letter < 0 ? all : &per[letter];
		if (*slot >= 0) {
			snprintf(why, why_len, "%s given twice for %s%c", what,
				 letter < 0 ? "every namespace" : "namespace ",
				 letter < 0 ? ' ' : letter);
			return BOAR_EINVAL;
		}
		*slot = (int)v;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

/* n-choose-k for the small numbers of the gram bound. */
static uint64_t choose(unsigned n, unsigned k)
{
	uint64_t r = 1;
	for (unsigned i = 1; i <= k; i++)
		r = r * (n - k + i) / i;
	return r;
}

static int read_grams(const boar_load_options *o, struct vw_gen *g, char *why,
		      size_t why_len)
{
	int N[256], K[256], all_n = -1, all_k = -1, rc;
	for (int l = 0; l < 256; l++)
		N[l] = K[l] = -1;
	if (o->vw_ngrams && (rc = read_per_ns(o->vw_ngrams, "--ngram", 1,
					      VW_MAX_NGRAM, N, &all_n, why,
					      why_len)))
		return rc;
	if (o->vw_skips && (rc = read_per_ns(o->vw_skips, "--skips", 0,
					     VW_MAX_SKIPS, K, &all_k, why,
					     why_len)))
		return rc;
	for (int l = 0; l < 256; l++) {
		int n = N[l] >= 0 ? N[l] : all_n, k = K[l] >= 0 ? K[l] : all_k;
		if (K[l] > 0 && n < 2) {
			snprintf(why, why_len, "--skips %c%d needs --ngram of at "
				 "least 2 for namespace %c", l, K[l], l);
			return BOAR_EINVAL;
		}
		g->ngram[l] = (unsigned char)(n >= 2 ? n : 0);
		g->skips[l] = (unsigned char)(n >= 2 && k > 0 ? k : 0);
		g->gram_mult[l] = 1;
		/* n-grams starting at a token, by the K skips' spread over
		 * its n-1 gaps: C(n-1+K, n-1) at most for each length */
		for (int m = 2; m <= g->ngram[l]; m++)
			g->gram_mult[l] += choose((unsigned)(m - 1 + g->skips[l]),
						  (unsigned)(m - 1));
		g->any_ngram |= g->ngram[l] >= 2;
	}
	if (all_k > 0 && !g->any_ngram) {
		snprintf(why, why_len, "--skips %d needs --ngram of at least 2",
			 all_k);
		return BOAR_EINVAL;
	}
	return 0;
}

int vw_gen_compile(const boar_load_options *o, struct vw_gen **out,
		   char *why, size_t why_len)
{
	*out = NULL;
	if (!o->vw_interactions && !o->vw_ngrams && !o->vw_skips)
		return 0;
	struct vw_gen *g = calloc(1, sizeof *g);
	if (!g)
		return BOAR_ENOMEM;
	int rc = o->vw_interactions
			 ? read_interactions(o->vw_interactions, g, why, why_len)
			 : 0;
	if (!rc)
		rc = read_grams(o, g, why, why_len);
	if (rc) {
		vw_gen_free(g);
		return rc;
	}
	*out = g;
	return 0;
}

/* ------------------------------------------ the row's interactions */

/* Adds x to r->conc unless it repeats one there. @return 0 or -1. */
static int add_concrete(struct vw_row *r, size_t *n, struct vw_inter x)
{
	canonical(&x);
	for (size_t k = 0; k < *n; k++)
		if (same_set(&r->conc[k], &x))
			return 0;
	if (*n == VW_MAX_CONCRETE) {
		snprintf(r->why, sizeof r->why, "the wildcard interactions "
			 "expand to more than %d namespace combinations in "
			 "this row", VW_MAX_CONCRETE);
		return -1;
	}
	if (*n == r->cap_conc) {
		size_t cap = r->cap_conc ? 2 * r->cap_conc : 16;
		struct vw_inter *c = realloc(r->conc, cap * sizeof *c);
		if (!c) {
			snprintf(r->why, sizeof r->why, "out of memory");
			return -1;
		}
		r->conc = c;
		r->cap_conc = cap;
	}
	r->conc[(*n)++] = x;
	return 0;
}

/* Every way of filling x's wildcards from position `at` on with the
 * letters present in the row. */
static int fill_wild(struct vw_row *r, size_t *n, struct vw_inter x, int at)
{
	while (at < x.len && x.ns[at] != ':')
		at++;
	if (at == x.len)
		return add_concrete(r, n, x);
	for (int k = 0; k < r->n_present; k++) {
		x.ns[at] = r->present[k];
		if (fill_wild(r, n, x, at + 1))
			return -1;
	}
	return 0;
}

int64_t vw_row_interactions(const struct vw_gen *g, struct vw_row *r,
			    const struct vw_inter **list)
{
	*list = g->inter;
	if (!g->wild)
		return (int64_t)g->n_inter;
	size_t n = 0;
	for (size_t k = 0; k < g->n_inter; k++)
		if (fill_wild(r, &n, g->inter[k], 0))
			return -1;
	*list = r->conc;
	return (int64_t)n;
}

/* ------------------------------------------------------ the bound */

/* Tuples of interaction x over per-letter counts c: for each distinct
 * letter repeated m times, the m-combinations with repetition of its c
 * features, C(c+m-1, m); saturates above VW_MAX_ROW_FEATURES. */
static uint64_t tuples(const struct vw_inter *x, const uint64_t *c)
{
	unsigned char key[VW_MAX_INTERACTION];
	sorted_key(x, key);
	unsigned __int128 total = 1;
	for (int i = 0; i < x->len;) {
		int m = 1;
		while (i + m < x->len && key[i + m] == key[i])
			m++;
		uint64_t n = c[key[i]];
		unsigned __int128 part = 1;
		for (int j = 1; j <= m; j++)
			part = part * (n + (uint64_t)j - 1) / (unsigned)j;
		total *= part;
		if (total > VW_MAX_ROW_FEATURES)
			return (uint64_t)VW_MAX_ROW_FEATURES + 1;
		i += m;
	}
	return (uint64_t)total;
}

static inline int is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

uint64_t vw_line_bound(const struct vw_gen *g, const unsigned char *drop,
		       const char *bar, const char *eol, struct vw_row *r)
{
	uint64_t *c = r->bound, total = 0;
	r->n_present = 0;
	for (const char *s = bar; s < eol;) {
		/* s is at a '|': the namespace, its scale, its tokens */
		const char *ns = s + 1;
		unsigned char letter = ns < eol && !is_space((unsigned char)*ns) &&
					       *ns != ':' && *ns != '|'
				       ? (unsigned char)*ns
				       : ' ';
		s = ns;
		while (s < eol && !is_space((unsigned char)*s) && *s != '|')
			s++;
		uint64_t t = 0;
		while (s < eol && *s != '|') {
			if (is_space((unsigned char)*s)) {
				s++;
				continue;
			}
			t++;
			while (s < eol && !is_space((unsigned char)*s) &&
			       *s != '|')
				s++;
		}
		if (drop[letter] || !t)
			continue;
		if (!c[letter])
			r->present[r->n_present++] = letter;
		c[letter] += t * g->gram_mult[letter];
		total += t * g->gram_mult[letter];
	}
	/* ascending, as the parser's grouping lists them */
	for (int i = 1; i < r->n_present; i++)
		for (int j = i; j > 0 && r->present[j - 1] > r->present[j]; j--) {
			unsigned char x = r->present[j];
			r->present[j] = r->present[j - 1];
			r->present[j - 1] = x;
		}
	const struct vw_inter *list;
	int64_t n = vw_row_interactions(g, r, &list);
	for (int64_t k = 0; k < n && total <= VW_MAX_ROW_FEATURES; k++)
		total += tuples(&list[k], c);
	for (int i = 0; i < r->n_present; i++)
		c[r->present[i]] = 0;
	if (n < 0)
		return UINT64_MAX;
	if (total > VW_MAX_ROW_FEATURES) {
		snprintf(r->why, sizeof r->why, "the interactions and n-grams "
			 "make more than %u features of this row; drop an "
			 "interaction, lower --ngram or --ignore a namespace",
			 VW_MAX_ROW_FEATURES);
		return UINT64_MAX;
	}
	return total;
}
