/* parse_vw.c - the Vowpal Wabbit text format parser.
 *
 *   label [importance [base]] ['tag]|ns[:scale] name[:value] ... |ns2 ...
 *
 * The label is a number (+1/-1 or 1/0 for classification, any real for
 * squared loss); the importance weight becomes the row's instance weight
 * (default 1; a file where every row weighs 1 gets no weight array); the
 * base (VW's initial prediction) is accepted and ignored. A tag is a token
 * starting with '\'' or one written right against the '|' after the label
 * ("1 2|f" is label 1 with tag 2, as in VW; "1|f" is label 1); it is
 * skipped. With labels_optional (prediction) a row may have no label
 * ("|f a", "'t |f a", "t|f a"); it reads as 0. vw_ignore / vw_keep
 * drop the features of namespaces by their first letter, as VW's --ignore
 * and --keep do.
 *
 * Hashing is VW's: a namespace's seed is the hash of its name (0 for the
 * unnamed one, "| a b"), a feature's hash is murmur3(name, seed) unless
 * the name is all decimal digits, in which case it is that number plus the
 * seed (murmur3.h); the slot is the hash's low hash_bits bits. So a feature
 * lands in the slot VW would give it with -b hash_bits. Values default to
 * 1 and are multiplied by the namespace's scale; features whose value is 0
 * are dropped as VW drops them. VW's constant feature is not added: the
 * linear model has its own bias. Within a row the slots are sorted and
 * collisions summed (parse_rows.h).
 *
 * With interactions or n-grams (vw_interactions.h) a row's features are
 * collected first and expanded at the end of its line; the counting pass
 * then bounds each line's generated features, refuses a line past
 * VW_MAX_ROW_FEATURES and checks the block's arrays against the memory
 * limit before they are allocated.
 *
 * Blank lines are skipped (VW's multi-line examples are not supported).
 * Errors name the line: no '|', a label or value that is not a number, a
 * missing label, an empty feature name, a negative importance.
 *
 * Passes, pieces and windows: parse_rows.h's driver. The counting pass
 * bounds the non-zeros of a piece by the spaces that a token follows,
 * since every feature token follows one (count_starts).
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mem_limit.h"
#include "murmur3.h"
#include "parse_chunks.h"
#include "parse_common.h"
#include "parse_rows.h"
#include "vw_interactions.h"

/* What every piece of one parse shares. */
struct vw_parse {
	int hash_bits, optional;
	uint64_t max_memory;       /* the limit on generated features */
	const unsigned char *drop; /* namespaces dropped, by first letter */
	struct vw_gen *gen;        /* NULL: no generated features */
	const struct name_sink *names; /* NULL, or every feature's name */
};

/* Counts newlines and the places where a feature may start in [p, end):
 * a space (pc_is_space: ' ', tab, CR, VT, FF) followed by a byte that is
 * none of those, nor '\n' or '|'. Every feature starts so (a token ends
 * at a space, ':' or '|', a value at a space or '|', and a '|' starts a
 * namespace), so this bounds a piece's features; it counts the label of
 * a line only where a space precedes it, so on a plain file it is exact
 * and the pieces' regions touch. 32 bytes a step (each compared with the
 * byte after it) in 8-bit lanes summed before they wrap. */
typedef unsigned char v32u8 __attribute__((vector_size(32)));

static inline int vw_gap(unsigned char c)
{
	return pc_is_space(c);
}

static inline int vw_starts(unsigned char c)
{
	return !pc_is_space(c) && c != '\n' && c != '|';
}

static void count_starts(const char *p, const char *end, uint64_t *newlines,
			 uint64_t *starts)
{
	uint64_t a = 0, b = 0;
	v32u8 vnl, vsp, vbar, v9, v4;
	memset(&vnl, '\n', sizeof vnl);
	memset(&vsp, ' ', sizeof vsp);
	memset(&vbar, '|', sizeof vbar);
	memset(&v9, '\t', sizeof v9);
	memset(&v4, '\r' - '\t', sizeof v4);
	while (end - p > 32) {
		v32u8 x = { 0 }, y = { 0 };
		for (int i = 0; i < 255 && end - p > 32; i++, p += 32) {
			v32u8 w, u;
			memcpy(&w, p, 32);
			memcpy(&u, p + 1, 32);
			/* true is all ones: -1; tab..CR less '\n' are spaces */
			v32u8 nl = (v32u8)(w == vnl);
			v32u8 sp = (v32u8)(w == vsp) |
				   ((v32u8)(w - v9 <= v4) & ~nl);
			v32u8 usp = (v32u8)(u == vsp) | (v32u8)(u - v9 <= v4) |
				    (v32u8)(u == vbar);
			x -= nl;
			y -= sp & ~usp;
		}
		for (int i = 0; i < 32; i++) {
			a += x[i];
			b += y[i];
		}
	}
	for (; p < end; p++) {
		a += *p == '\n';
		b += p + 1 < end && vw_gap((unsigned char)p[0]) &&
		     vw_starts((unsigned char)p[1]);
	}
	*newlines = a;
	*starts = b;
}

/* End of a VW token: whitespace or '|' ends it. */
static inline const char *vw_token_end(const char *p, const char *end)
{
	while (p < end && !pc_is_space((unsigned char)*p) && *p != '|')
		p++;
	return p;
}

static inline int ends_number(const char *t, const char *eol)
{
	return t == eol || pc_is_space((unsigned char)*t) || *t == '|';
}

/* The part before the first '|': label, importance, base, tag. Returns 0
 * or records the error. */
static int parse_head(struct row_piece *c, uint64_t line, const char *s,
		      const char *bar, int optional, float *label,
		      float *weight)
{
	float nums[3];
	int n = 0;
	char q[64];
	while ((s = pc_skip_space(s, bar)) < bar) {
		const char *te = vw_token_end(s, bar);
		/* Unlabeled (optional): "tag|f" is a tag, as in VW. */
		if (*s == '\'' || (te == bar && (n > 0 || optional))) {
			s = te; /* the tag (as VW: 'tag, or against the '|') */
			continue;
		}
		float v;
		const char *t = pc_parse_float(s, te, &v);
		if (t != te) {
			pc_quote(q, sizeof q, s, te);
			row_piece_fail(c, BOAR_EPARSE, line,
				       n ? "%s is not a number (after the label come the importance weight and the base)"
					 : "label %s is not a number",
				       q);
			return -1;
		}
		if (n == 3) {
			row_piece_fail(c, BOAR_EPARSE, line,
				       "too many numbers before '|': a VW line starts with label [importance [base]]");
			return -1;
		}
		if (!isfinite(v)) {
			row_piece_fail(c, BOAR_EPARSE, line,
				       n ? "importance or base is NaN or infinite"
					 : "label is NaN or infinite");
			return -1;
		}
		nums[n++] = v;
		s = te;
	}
	if (!n && optional) {
		*label = 0; /* unlabeled: a row to predict */
		*weight = 1;
		return 0;
	}
	if (!n) {
		row_piece_fail(c, BOAR_EPARSE, line,
			       "missing label before the first '|'");
		return -1;
	}
	*label = nums[0];
	*weight = n > 1 ? nums[1] : 1.0f;
	if (*weight < 0) {
		row_piece_fail(c, BOAR_EPARSE, line,
			       "importance weight %g is negative", *weight);
		return -1;
	}
	return 0;
}

/* Parses the whole lines [p, end) of piece c into its region of o (its
 * counts go on). */
static void parse_piece(struct row_piece *c, const struct row_out *o,
			const char *p, const char *end, const void *ctx)
{
	const struct vw_parse *vp = ctx;
	int hash_bits = vp->hash_bits, optional = vp->optional;
	const unsigned char *drop = vp->drop;
	struct vw_row *row = c->aux;
	int collect = row != NULL; /* features go through row (generation) */
	uint64_t line = c->lines;
	size_t rows = c->rows, nnz = c->nnz;
	uint32_t *idx = o->idx + c->nbase;
	float *val = o->val + c->nbase;
	uint32_t mask = (uint32_t)((1ULL << hash_bits) - 1);
	char q[64];

	while (p < end) {
		const char *eol, *b = pc_take_line(&p, end, &eol);
		const char *s = pc_skip_space(b, eol);
		line++;
		if (s == eol)
			continue; /* blank line */
		const char *bar = memchr(s, '|', (size_t)(eol - s));
		if (!bar) {
			row_piece_fail(c, BOAR_EPARSE, line,
				       "missing '|': a VW line is label [importance] ['tag]|namespace features...");
			break;
		}
		float y, w;
		if (parse_head(c, line, s, bar, optional, &y, &w))
			break;
		if (w != 1.0f)
			c->weighted = 1;
		size_t row_start = nnz;
		if (collect)
			vw_row_reset(row);
		uint32_t seed = 0;
		float scale = 1.0f;
		int dropped = 0; /* the namespace is --ignore'd (or not --keep'd) */
		s = bar;
		while (s < eol) {
			if (*s == '|') {
				/* a namespace: |name[:scale], or | alone */
				const char *ns = s + 1, *ne = ns;
				while (ne < eol && !pc_is_space((unsigned char)*ne) &&
				       *ne != ':' && *ne != '|')
					ne++;
				seed = ne > ns ? boar_vw_hash_name(ns, (size_t)(ne - ns), 0)
					       : 0;
				unsigned char letter = ne > ns ? (unsigned char)*ns : ' ';
				dropped = drop[letter];
				if (collect && !dropped &&
				    vw_row_segment(row, seed, ns, (uint32_t)(ne - ns),
						   letter)) {
					row_piece_fail(c, BOAR_ENOMEM, line, "%s", row->why);
					goto stop;
				}
				scale = 1.0f;
				s = ne;
				if (s < eol && *s == ':') {
					const char *vs = s + 1;
					const char *t = pc_parse_float(vs, eol, &scale);
					if (t == vs || !ends_number(t, eol) ||
					    !isfinite(scale)) {
						pc_quote(q, sizeof q, vs, vw_token_end(vs, eol));
						row_piece_fail(c, BOAR_EPARSE, line,
							       "namespace scale %s is not a finite number",
							       q);
						goto stop;
					}
					s = t;
				}
				continue;
			}
			if (pc_is_space((unsigned char)*s)) {
				s++;
				continue;
			}
			/* a feature: name[:value] */
			const char *ns = s, *ne = s;
			while (ne < eol && !pc_is_space((unsigned char)*ne) &&
			       *ne != ':' && *ne != '|')
				ne++;
			float v = 1.0f;
			s = ne;
			if (s < eol && *s == ':') {
				const char *vs = s + 1;
				const char *t = pc_parse_float(vs, eol, &v);
				if (t == vs || !ends_number(t, eol)) {
					pc_quote(q, sizeof q, ns, vw_token_end(vs, eol));
					row_piece_fail(c, BOAR_EPARSE, line,
						       "bad number after ':' in %s: features are name[:value]",
						       q);
					goto stop;
				}
				s = t;
			}
			if (ne == ns) {
				pc_quote(q, sizeof q, ns, vw_token_end(s, eol));
				row_piece_fail(c, BOAR_EPARSE, line,
					       "empty feature name in %s", q);
				goto stop;
			}
			/* One check for the value as written and as scaled:
			 * the scale is finite, so a finite value can only
			 * overflow here. */
			v *= scale;
			if (!isfinite(v)) {
				pc_quote(q, sizeof q, ns, ne);
				row_piece_fail(c, BOAR_EPARSE, line,
					       "value of feature %s%s", q,
					       scale == 1.0f ? " is NaN or infinite"
					       : isinf(v) ? " times its namespace's scale is infinite"
							  : " times its namespace's scale is NaN");
				goto stop;
			}
			if (v == 0.0f || dropped)
				continue; /* VW drops zero features */
			uint32_t h = boar_vw_hash_name(ns, (size_t)(ne - ns), seed);
			if (collect) {
				if (vw_row_add(row, h, v, ns, (uint32_t)(ne - ns))) {
					row_piece_fail(c, BOAR_ENOMEM, line, "%s",
						       row->why);
					goto stop;
				}
				continue;
			}
			/* the space before it was counted */
			if (nnz == c->nnz_ub)
				goto changed;
			idx[nnz] = h & mask;
			val[nnz] = v;
			nnz++;
		}
		if (collect) {
			/* the counting pass bounded the line's features */
			int64_t m = vw_row_generate(vp->gen, row, mask, idx + nnz,
						    val + nnz,
						    (size_t)(c->nnz_ub - nnz),
						    vp->names);
			if (m < 0) {
				row_piece_fail(c, BOAR_EPARSE, line, "%s", row->why);
				break;
			}
			nnz += (size_t)m;
		}
		if (row_end(c, o, line, 1, row_start, &nnz, rows, y, w))
			break;
		rows++;
	}
	goto stop;
changed:
	row_piece_changed(c);
stop:
	c->lines = line;
	c->rows = rows;
	c->nnz = nnz;
}

/* The counting pass with generated features: each line's bound (its
 * tokens, grams and tuples), a line past the limit an error. */
static void count_lines_gen(struct row_piece *c, const char *p,
			    const char *end, const struct vw_parse *vp)
{
	struct vw_row *row = c->aux;
	uint64_t line = 0, nnz = 0;
	while (p < end) {
		const char *eol, *b = pc_take_line(&p, end, &eol);
		const char *s = pc_skip_space(b, eol);
		line++;
		const char *bar = memchr(s, '|', (size_t)(eol - s));
		if (!bar)
			continue; /* blank, or the parser's error */
		uint64_t bound = vw_line_bound(vp->gen, vp->drop, bar, eol, row);
		if (bound == UINT64_MAX) {
			row_piece_fail(c, BOAR_EPARSE, c->lines + line, "%s",
				       row->why);
			break;
		}
		nnz += bound;
	}
	c->lines += line;
	c->rows_ub += line;
	c->nnz_ub += nnz;
}

/* The counting pass: a row per line, a feature per place one may start,
 * or each line's bound with generated features. */
static void count_vw(struct row_piece *c, const char *p, const char *end,
		     const void *ctx)
{
	const struct vw_parse *vp = ctx;
	if (vp->gen) {
		count_lines_gen(c, p, end, vp);
		return;
	}
	uint64_t nl, starts;
	count_starts(p, end, &nl, &starts);
	row_count_lines(c, p, end, nl);
	c->nnz_ub += starts;
}

/* With generated features: the arrays the bounds ask for, against the
 * memory limit, before they are allocated. */
static int check_generated(struct row_piece *pc, size_t n, const void *ctx,
			   const char *path, uint64_t line_base,
			   boar_error *err)
{
	const struct vw_parse *vp = ctx;
	if (!vp->gen)
		return 0;
	uint64_t lines = 0, nnz = 0;
	for (size_t k = 0; k < n; k++) {
		lines += pc[k].rows_ub;
		nnz = boar_add_sat(nnz, pc[k].nnz_ub);
	}
	uint64_t need = boar_add_sat(boar_mul_sat(nnz, 8),
				     boar_mul_sat(lines, 20));
	return boar_memory_check(need, vp->max_memory, path,
				 "the data with its interactions and n-grams",
				 err);
}

/* A row of its own for each piece whose features are collected first
 * (generation, or names to a sink). */
static int row_init(struct row_piece *c, const void *ctx)
{
	const struct vw_parse *vp = ctx;
	if (vp->gen || vp->names)
		c->aux = calloc(1, sizeof(struct vw_row));
	return (vp->gen || vp->names) && !c->aux ? -1 : 0;
}

static void row_free(struct row_piece *c)
{
	if (c->aux)
		vw_row_free(c->aux);
	free(c->aux);
	c->aux = NULL;
}

/* The namespaces dropped (by first letter, as VW's --ignore / --keep name
 * them; ' ' is the unnamed one) and the generated features of options lo:
 * the parse's settings. 0, or BOAR_EINVAL / BOAR_ENOMEM with err set. */
static int vw_setup(const boar_load_options *lo, int hash_bits,
		    unsigned char drop[256], struct vw_parse *vp,
		    boar_error *err)
{
	memset(drop, lo && lo->vw_keep ? 1 : 0, 256);
	for (const char *k = lo && lo->vw_keep ? lo->vw_keep : ""; *k; k++)
		drop[(unsigned char)*k] = 0;
	for (const char *k = lo && lo->vw_ignore ? lo->vw_ignore : ""; *k; k++)
		drop[(unsigned char)*k] = 1;
	struct vw_gen *gen = NULL;
	char why[200];
	int ret = lo ? vw_gen_compile(lo, &gen, why, sizeof why) : 0;
	if (ret)
		return ret == BOAR_EINVAL ? boar_fail(err, ret, "%s", why)
					  : boar_fail(err, ret, "out of memory");
	*vp = (struct vw_parse){
		.hash_bits = hash_bits ? hash_bits : BOAR_VW_DEFAULT_HASH_BITS,
		.optional = lo && lo->labels_optional,
		.max_memory = lo ? lo->max_memory : 0,
		.drop = drop,
		.gen = gen,
	};
	return 0;
}

static struct row_format vw_format(const struct vw_parse *vp)
{
	return (struct row_format){
		.task = BOAR_TASK_LINEAR,
		.weights = 1,
		.hash_bits = vp->hash_bits,
		.slot_ids = 1,
		.serial = vp->names != NULL,
		.ctx = vp,
		.count = count_vw,
		.parse = parse_piece,
		.aux_init = row_init,
		.aux_free = row_free,
		.counted = check_generated,
	};
}

int boar_parse_vw(const struct parse_input *in, struct boar_dataset **out,
		  boar_error *err)
{
	unsigned char drop[256];
	struct vw_parse vp;
	int ret = vw_setup(in->opt, in->hash_bits, drop, &vp, err);
	if (ret)
		return ret;
	vp.names = in->names;
	struct row_format f = vw_format(&vp);
	ret = row_parse_text(in, 0, 0, &f, out, err);
	vw_gen_free(vp.gen);
	return ret;
}

int boar_parse_vw_file(const struct parse_file *pf, struct boar_dataset **out,
		       uint64_t *lines, boar_error *err)
{
	unsigned char drop[256];
	struct vw_parse vp;
	int ret = vw_setup(pf->opt, pf->hash_bits, drop, &vp, err);
	if (ret)
		return ret;
	struct row_format f = vw_format(&vp);
	ret = row_parse_file(pf, 0, &f, out, lines, err);
	vw_gen_free(vp.gen);
	return ret;
}
