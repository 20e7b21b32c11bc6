/* dump_names.c - slot -> names seen in a data file (dump_names.h): an
 * open-addressing table keyed by slot, filled by the library's name scan
 * (data/feature_names.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/feature_names.h"
#include "dump_names.h"

struct slot_entry {
	uint32_t slot;
	uint32_t n;                         /* names kept */
	const char *names[DUMP_NAMES_KEEP + 1]; /* NULL-terminated */
	uint64_t *extra;                    /* hashes of the others */
	size_t n_extra, cap_extra;
};

struct slot_names {
	struct slot_entry **tab; /* open addressing, power-of-two size */
	size_t cap, used;
	const uint8_t *wanted;
	uint64_t dim;
};

static size_t home(const struct slot_names *t, uint32_t slot)
{
	return (size_t)((slot * 0x9E3779B97F4A7C15ULL) >> 20) & (t->cap - 1);
}

static struct slot_entry **find(struct slot_names *t, uint32_t slot)
{
	size_t i = home(t, slot);
	while (t->tab[i] && t->tab[i]->slot != slot)
		i = (i + 1) & (t->cap - 1);
	return &t->tab[i];
}

static int grow(struct slot_names *t)
{
	struct slot_names n = *t;
	n.cap = t->cap ? 2 * t->cap : 1024;
	if (!(n.tab = calloc(n.cap, sizeof *n.tab)))
		return -1;
	for (size_t i = 0; i < t->cap; i++)
		if (t->tab[i])
			*find(&n, t->tab[i]->slot) = t->tab[i];
	free(t->tab);
	*t = n;
	return 0;
}

/* FNV-1a, 64 bits: enough to tell the names past the kept ones apart. */
static uint64_t name_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t k = 0; k < len; k++)
		h = (h ^ (unsigned char)s[k]) * 0x100000001b3ULL;
	return h;
}

static int keep(void *ctx, uint32_t slot, const char *name, size_t len)
{
	struct slot_names *t = ctx;
	if (slot >= t->dim || !(t->wanted[slot >> 3] >> (slot & 7) & 1))
		return 0;
	if (2 * (t->used + 1) > t->cap && grow(t))
		return -1;
	struct slot_entry **at = find(t, slot), *e = *at;
	if (!e) {
		if (!(e = *at = calloc(1, sizeof *e)))
			return -1;
		e->slot = slot;
		t->used++;
	}
	for (uint32_t k = 0; k < e->n; k++)
		if (!strncmp(e->names[k], name, len) && !e->names[k][len])
			return 0;
	if (e->n < DUMP_NAMES_KEEP) {
		char *c = malloc(len + 1);
		if (!c)
			return -1;
		memcpy(c, name, len);
		c[len] = '\0';
		e->names[e->n++] = c;
		return 0;
	}
	uint64_t h = name_hash(name, len);
	for (size_t k = 0; k < e->n_extra; k++)
		if (e->extra[k] == h)
			return 0;
	if (e->n_extra == e->cap_extra) {
		size_t cap = e->cap_extra ? 2 * e->cap_extra : 8;
		uint64_t *x = realloc(e->extra, cap * sizeof *x);
		if (!x)
			return -1;
		e->extra = x;
		e->cap_extra = cap;
	}
	e->extra[e->n_extra++] = h;
	return 0;
}

int slot_names_collect(const boar_model *m, const char *data_path,
		       const uint8_t *wanted, uint64_t dim,
		       struct slot_names **out, boar_error *err)
{
	struct slot_names *t = calloc(1, sizeof *t);
	if (!t || grow(t)) {
		free(t);
		err->code = BOAR_ENOMEM;
		snprintf(err->message, sizeof err->message, "out of memory");
		return BOAR_ENOMEM;
	}
	t->wanted = wanted;
	t->dim = dim;
	boar_load_options lo;
	boar_model_load_options(m, &lo);
	lo.labels_optional = 1; /* names need no labels */
	struct name_sink sink = { keep, t };
	int rc = boar_feature_names_scan(data_path, &lo, &sink, err);
	if (rc) {
		slot_names_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

const char *const *slot_names_get(const struct slot_names *t, uint32_t slot,
				  uint64_t *more)
{
	struct slot_entry *e = *find((struct slot_names *)t, slot);
	*more = e ? e->n_extra : 0;
	return e ? e->names : NULL;
}

void slot_names_free(struct slot_names *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->cap; i++) {
		struct slot_entry *e = t->tab[i];
		if (!e)
			continue;
		for (uint32_t k = 0; k < e->n; k++)
			free((char *)e->names[k]);
		free(e->extra);
		free(e);
	}
	free(t->tab);
	free(t);
}
