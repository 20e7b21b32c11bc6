/* vw_generate.c - a VW row's generated features: its tokens are
 * collected while the line is parsed, then its n-grams are added and its
 * namespace interactions crossed, and every feature is written out as
 * (slot, value), optionally with its name (vw_interactions.h says how
 * each is hashed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "murmur3.h"
#include "vw_interactions.h"

void vw_row_reset(struct vw_row *r)
{
	r->n = 0;
	r->n_seg = 0;
	r->len_buf = 0;
}

void vw_row_free(struct vw_row *r)
{
	free(r->hash);
	free(r->val);
	free(r->seg);
	free(r->name);
	free(r->name_len);
	free(r->segs);
	free(r->buf);
	free(r->order);
	free(r->conc);
	free(r->nm);
	memset(r, 0, sizeof *r);
}

/* Doubles *p (of *cap elements of size sz) until it holds need. */
static int grow(void **p, size_t *cap, size_t need, size_t sz)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, c * sz);
	if (!q)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

static int oom(struct vw_row *r)
{
	snprintf(r->why, sizeof r->why, "out of memory while parsing");
	return -1;
}

int vw_row_segment(struct vw_row *r, uint32_t seed, const char *ns,
		   uint32_t ns_len, unsigned char letter)
{
	if (grow((void **)&r->segs, &r->cap_seg, r->n_seg + 1, sizeof *r->segs))
		return oom(r);
	r->segs[r->n_seg++] = (struct vw_seg){ seed, ns, ns_len, (uint32_t)r->n,
					       0, letter };
	return 0;
}

/* Room for one more feature in every array. */
static int reserve_one(struct vw_row *r)
{
	if (r->n < r->cap)
		return 0;
	size_t c = r->cap ? 2 * r->cap : 64;
	void *p[5] = { realloc(r->hash, c * 4), NULL, NULL, NULL, NULL };
	if (p[0])
		r->hash = p[0];
	if (!p[0] || !(p[1] = realloc(r->val, c * 4)))
		return oom(r);
	r->val = p[1];
	if (!(p[2] = realloc(r->seg, c * 4)))
		return oom(r);
	r->seg = p[2];
	if (!(p[3] = realloc(r->name, c * sizeof *r->name)))
		return oom(r);
	r->name = p[3];
	if (!(p[4] = realloc(r->name_len, c * 4)))
		return oom(r);
	r->name_len = p[4];
	r->cap = c;
	return 0;
}

static int push(struct vw_row *r, uint32_t hash, float val, uint32_t seg,
		const char *name, uint32_t len)
{
	if (reserve_one(r))
		return -1;
	size_t i = r->n++;
	r->hash[i] = hash;
	r->val[i] = val;
	r->seg[i] = seg;
	r->name[i] = name;
	r->name_len[i] = len;
	return 0;
}

int vw_row_add(struct vw_row *r, uint32_t hash, float val, const char *name,
	       uint32_t len)
{
	if (!r->n_seg && vw_row_segment(r, 0, NULL, 0, ' '))
		return -1;
	r->segs[r->n_seg - 1].n_tok++;
	return push(r, hash, val, (uint32_t)(r->n_seg - 1), name, len);
}

/* ------------------------------------------------------------ n-grams */

/* Adds the gram of the tokens at pos[0..n) of segment s. */
static int add_gram(struct vw_row *r, uint32_t s, const uint32_t *pos, int n)
{
	size_t need = r->len_buf + 1;
	for (int k = 0; k < n; k++)
		need += r->name_len[pos[k]] + 1;
	if (grow((void **)&r->buf, &r->cap_buf, need, 1))
		return oom(r);
	size_t at = r->len_buf, o = at;
	float v = 1.0f;
	for (int k = 0; k < n; k++) {
		if (k)
			r->buf[o++] = '^';
		memcpy(r->buf + o, r->name[pos[k]], r->name_len[pos[k]]);
		o += r->name_len[pos[k]];
		v *= r->val[pos[k]];
	}
	r->buf[o] = '\0';
	r->len_buf = o + 1;
	if (!isfinite(v)) {
		snprintf(r->why, sizeof r->why, "the n-gram '%.60s' has an "
			 "infinite value (the product of its tokens'); scale the "
			 "values down", r->buf + at);
		return -1;
	}
	uint32_t h = boar_vw_hash_name(r->buf + at, o - at, r->segs[s].seed);
	return push(r, h, v, s, NULL, (uint32_t)at);
}

/* The grams that continue pos[0..depth) with up to `left` skips. */
static int grams_from(struct vw_row *r, uint32_t s, uint32_t *pos, int depth,
		      int max_n, int left, uint32_t end)
{
	if (depth >= 2 && add_gram(r, s, pos, depth))
		return -1;
	if (depth == max_n)
		return 0;
	for (uint32_t nx = pos[depth - 1] + 1;
	     nx < end && (int)(nx - pos[depth - 1] - 1) <= left; nx++) {
		pos[depth] = nx;
		if (grams_from(r, s, pos, depth + 1, max_n,
			       left - (int)(nx - pos[depth - 1] - 1), end))
			return -1;
	}
	return 0;
}

static int add_grams(const struct vw_gen *g, struct vw_row *r)
{
	size_t n_seg = r->n_seg;
	for (uint32_t s = 0; s < n_seg; s++) {
		const struct vw_seg sg = r->segs[s];
		int max_n = g->ngram[sg.letter];
		if (max_n < 2)
			continue;
		uint32_t pos[VW_MAX_NGRAM], end = sg.first + sg.n_tok;
		for (uint32_t i = sg.first; i + 1 < end; i++) {
			pos[0] = i;
			if (grams_from(r, s, pos, 1, max_n, g->skips[sg.letter],
				       end))
				return -1;
		}
	}
	return 0;
}

/* ----------------------------------------------------- names (a sink) */

/* Appends feature i's name ("ns^token", "ns^t1^t2") to r->nm at *len. */
static int name_of(struct vw_row *r, uint32_t i, size_t *len)
{
	const struct vw_seg *sg = &r->segs[r->seg[i]];
	const char *t = r->name[i] ? r->name[i] : r->buf + r->name_len[i];
	size_t tl = r->name[i] ? r->name_len[i] : strlen(t);
	if (grow((void **)&r->nm, &r->cap_nm, *len + sg->ns_len + tl + 3, 1))
		return oom(r);
	if (sg->ns_len) {
		memcpy(r->nm + *len, sg->ns, sg->ns_len);
		*len += sg->ns_len;
		r->nm[(*len)++] = '^';
	}
	memcpy(r->nm + *len, t, tl);
	*len += tl;
	r->nm[*len] = '\0';
	return 0;
}

/* The name of the tuple at[0..k) to the sink. */
static int emit_name(struct vw_row *r, const struct name_sink *sink,
		     uint32_t slot, const uint32_t *at, int k)
{
	size_t len = 0;
	for (int j = 0; j < k; j++) {
		if (j) {
			if (grow((void **)&r->nm, &r->cap_nm, len + 2, 1))
				return oom(r);
			r->nm[len++] = '*';
		}
		if (name_of(r, at[j], &len))
			return -1;
	}
	if (sink->emit(sink->ctx, slot, r->nm, len)) {
		snprintf(r->why, sizeof r->why, "out of memory keeping names");
		return -1;
	}
	return 0;
}

/* -------------------------------------------------------- interactions */

/* r->order: the features grouped by letter (r->start, r->count), the
 * letters in r->present, ascending. */
static int group(struct vw_row *r)
{
	if (grow((void **)&r->order, &r->cap_order, r->n, 4))
		return oom(r);
	r->n_present = 0;
	for (size_t i = 0; i < r->n; i++) {
		unsigned char l = r->segs[r->seg[i]].letter;
		if (!r->count[l]++)
			r->present[r->n_present++] = l;
	}
	for (int i = 1; i < r->n_present; i++)
		for (int j = i; j > 0 && r->present[j - 1] > r->present[j]; j--) {
			unsigned char x = r->present[j];
			r->present[j] = r->present[j - 1];
			r->present[j - 1] = x;
		}
	uint32_t at = 0;
	for (int k = 0; k < r->n_present; k++) {
		r->start[r->present[k]] = at;
		at += r->count[r->present[k]];
		r->count[r->present[k]] = 0; /* refilled below */
	}
	for (size_t i = 0; i < r->n; i++) {
		unsigned char l = r->segs[r->seg[i]].letter;
		r->order[r->start[l] + r->count[l]++] = (uint32_t)i;
	}
	return 0;
}

static void ungroup(struct vw_row *r)
{
	for (int k = 0; k < r->n_present; k++)
		r->count[r->present[k]] = 0;
}

/* Writes interaction x's tuples from *n on; a letter repeated takes
 * indices that never decrease (combinations, as VW). */
static int cross(struct vw_row *r, const struct vw_inter *x, uint32_t mask,
		 uint32_t *idx, float *val, size_t room, size_t *n,
		 const struct name_sink *sink)
{
	int k = x->len;
	const uint32_t *list[VW_MAX_INTERACTION];
	uint32_t cnt[VW_MAX_INTERACTION], it[VW_MAX_INTERACTION];
	uint32_t ph[VW_MAX_INTERACTION], at[VW_MAX_INTERACTION];
	float pv[VW_MAX_INTERACTION];
	for (int j = 0; j < k; j++) {
		cnt[j] = r->count[x->ns[j]];
		if (!cnt[j])
			return 0;
		list[j] = r->order + r->start[x->ns[j]];
	}
	int j = 0;
	it[0] = 0;
	for (;;) {
		if (it[j] >= cnt[j]) {
			if (!j)
				return 0;
			it[--j]++;
			continue;
		}
		uint32_t f = at[j] = list[j][it[j]];
		ph[j] = j ? ph[j - 1] * VW_FNV_PRIME ^ r->hash[f] : r->hash[f];
		pv[j] = j ? pv[j - 1] * r->val[f] : r->val[f];
		if (j + 1 < k) {
			j++;
			it[j] = x->ns[j] == x->ns[j - 1] ? it[j - 1] : 0;
			continue;
		}
		if (!isfinite(pv[j])) {
			size_t len = 0;
			if (!name_of(r, at[0], &len))
				snprintf(r->why, sizeof r->why, "an interaction "
					 "of '%.60s' has an infinite value (the "
					 "product of its features'); scale the "
					 "values down", r->nm);
			return -1;
		}
		if (*n == room) {
			snprintf(r->why, sizeof r->why, "internal: the row's "
				 "features outgrew their bound");
			return -1;
		}
		idx[*n] = ph[j] & mask;
		val[(*n)++] = pv[j];
		if (sink && emit_name(r, sink, ph[j] & mask, at, k))
			return -1;
		it[j]++;
	}
}

int64_t vw_row_generate(const struct vw_gen *g, struct vw_row *r,
			uint32_t mask, uint32_t *idx, float *val, size_t room,
			const struct name_sink *sink)
{
	if (g && g->any_ngram && add_grams(g, r))
		return -1;
	if (r->n > room) {
		snprintf(r->why, sizeof r->why, "internal: the row's features "
			 "outgrew their bound");
		return -1;
	}
	size_t n = 0;
	for (uint32_t i = 0; i < r->n; i++) {
		idx[n] = r->hash[i] & mask;
		val[n++] = r->val[i];
		if (sink && emit_name(r, sink, r->hash[i] & mask, &i, 1))
			return -1;
	}
	if (!g || !g->n_inter)
		return (int64_t)n;
	if (group(r))
		return -1;
	const struct vw_inter *list;
	int64_t n_list = vw_row_interactions(g, r, &list);
	int rc = n_list < 0 ? -1 : 0;
	for (int64_t k = 0; k < n_list && !rc; k++)
		rc = cross(r, &list[k], mask, idx, val, room, &n, sink);
	ungroup(r);
	return rc ? -1 : (int64_t)n;
}
