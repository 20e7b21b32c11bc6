/* vw_interactions.h - features the VW reader generates from a row's own
 * (library-internal): namespace interactions (VW's -q / --interactions)
 * and n-grams with skips (VW's --ngram / --skips).
 *
 * They are computed while parsing, into the row itself, so the CPU, GPU
 * and cluster engines see them as ordinary features and need no change.
 *
 * Namespaces are named by first letter, as VW names them (' ' the unnamed
 * one); ':' in an interaction stands for every namespace of the row.
 *
 * Interactions (facts from VW's "Feature interactions" documentation):
 * the feature of a tuple (f1, ..., fk), one from each namespace of the
 * interaction, has the product of their values and the hash
 *   h = h(f1); h = h * 16777619 ^ h(fi) for i = 2..k   (32-bit FNV)
 * of their namespaced murmur3 hashes, its slot the low hash_bits bits.
 * A namespace crossed with itself gives combinations, not permutations
 * (-q aa over a1 a2: a1*a1, a1*a2, a2*a2), and an interaction that
 * repeats a letter has its letters sorted first ("bab" is "abb"), as VW
 * does. An interaction that is a reordering of an earlier one (-q ab -q
 * ba, or one that a wildcard repeats) is dropped, as VW drops it.
 *
 * N-grams (boar's own hashing; VW documents none): with N for a
 * namespace, every run of 2..N of its kept tokens within one |namespace
 * segment is one more feature of that namespace, named by the tokens
 * joined with '^' ("new^york") and hashed as that name in the namespace,
 * so boar_hash_vw(ns, "new^york") finds it; its value is the product of
 * the tokens' values. With skips K a gram may leave out up to K tokens
 * in all between its first and last (the k-skip-n-grams of Guthrie et
 * al.): "a b c", N 2, K 1 gives a^b, a^c, b^c. Grams belong to their
 * namespace, so interactions cross them too.
 *
 * Limits: an interaction has 2..VW_MAX_INTERACTION letters; N is 1..
 * VW_MAX_NGRAM, K 0..VW_MAX_SKIPS and needs N >= 2; a row may generate at
 * most VW_MAX_ROW_FEATURES features (an error names the line otherwise).
 */
#ifndef BOAR_VW_INTERACTIONS_H
#define BOAR_VW_INTERACTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "boar.h"
#include "feature_names.h"

#define VW_MAX_INTERACTION 8
#define VW_MAX_NGRAM 8
#define VW_MAX_SKIPS 8
#define VW_MAX_ROW_FEATURES (1u << 28)
#define VW_MAX_CONCRETE 4096 /* interactions a row's wildcards expand to */
#define VW_FNV_PRIME 16777619u

/* One interaction: its namespace letters (':' a wildcard). */
struct vw_inter {
	unsigned char len;
	unsigned char ns[VW_MAX_INTERACTION];
};

/* The generation options, compiled. */
struct vw_gen {
	size_t n_inter;
	struct vw_inter *inter; /* canonical, duplicates removed */
	int wild;               /* some interaction has a ':' */
	unsigned char ngram[256], skips[256]; /* per letter; N < 2: none */
	uint64_t gram_mult[256]; /* features per token at most (1 + grams) */
	int any_ngram;
};

/* Does o ask for generated features? */
static inline int vw_generates(const boar_load_options *o)
{
	return o->vw_interactions || o->vw_ngrams || o->vw_skips;
}

/* Compiles o's vw_interactions, vw_ngrams and vw_skips. *out is NULL
 * when they ask for nothing.
 * @return 0, BOAR_EINVAL with the reason in why, or BOAR_ENOMEM. */
int vw_gen_compile(const boar_load_options *o, struct vw_gen **out,
		   char *why, size_t why_len);
void vw_gen_free(struct vw_gen *g);

/* A segment: one |namespace of a row. */
struct vw_seg {
	uint32_t seed;         /* the namespace's hash */
	const char *ns;        /* its name (in the text) and length */
	uint32_t ns_len;
	uint32_t first, n_tok;  /* its tokens among the row's features */
	unsigned char letter;
};

/* A row's features while it is parsed, and the scratch space to expand
 * them (one per parsing thread; zero-initialise it). */
struct vw_row {
	size_t n, cap;          /* features */
	uint32_t *hash;         /* namespaced murmur3, not yet masked */
	float *val;
	uint32_t *seg;          /* index into segs */
	const char **name;      /* a token: in the text; a gram: NULL */
	uint32_t *name_len;     /* a token: length; a gram: offset in buf */
	size_t n_seg, cap_seg;
	struct vw_seg *segs;
	char *buf;              /* the grams' joined names */
	size_t len_buf, cap_buf;
	uint32_t *order;        /* feature indices grouped by letter */
	size_t cap_order;
	uint32_t count[256], start[256];
	unsigned char present[256]; /* letters in the row, ascending */
	int n_present;
	struct vw_inter *conc;  /* the row's interactions, wildcards expanded */
	size_t cap_conc;
	uint64_t bound[256];    /* vw_line_bound's features per letter */
	char *nm;               /* a name being built for a sink */
	size_t cap_nm;
	char why[200];          /* a failure's reason */
};

void vw_row_reset(struct vw_row *r);
void vw_row_free(struct vw_row *r);
/* Starts a namespace segment. @return 0 or -1 (out of memory). */
int vw_row_segment(struct vw_row *r, uint32_t seed, const char *ns,
		   uint32_t ns_len, unsigned char letter);
/* Adds a token feature to the current segment. @return 0 or -1. */
int vw_row_add(struct vw_row *r, uint32_t hash, float val, const char *name,
	       uint32_t len);

/* Expands r (grams, then interactions) and writes every feature of the
 * row, its own first, as (slot, value) into idx/val, which hold `room`
 * entries (vw_line_bound's count). With a sink, each feature's name goes
 * to it too: "ns^token", "ns^t1^t2" for a gram, names joined by '*' for
 * an interaction.
 * @return the count, or -1 with r->why set (a product not finite, out of
 *         memory, a sink's refusal). */
int64_t vw_row_generate(const struct vw_gen *g, struct vw_row *r,
			uint32_t mask, uint32_t *idx, float *val, size_t room,
			const struct name_sink *sink);

/* The interactions of a row whose letters are r->present (ascending):
 * g's own, or, with wildcards, those they expand to (in r->conc).
 * @return the count, or -1 with r->why set. */
int64_t vw_row_interactions(const struct vw_gen *g, struct vw_row *r,
			    const struct vw_inter **list);

/* At most how many features the VW line whose namespaces start at `bar`
 * (the first '|') and end at eol generates, given the letters `drop`
 * drops; r is scratch. UINT64_MAX past VW_MAX_ROW_FEATURES or
 * VW_MAX_CONCRETE (r->why says which). */
uint64_t vw_line_bound(const struct vw_gen *g, const unsigned char *drop,
		       const char *bar, const char *eol, struct vw_row *r);

#endif
