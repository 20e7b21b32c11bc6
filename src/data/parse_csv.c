/* parse_csv.c - the CSV/TSV parser: a label column, numeric columns and
 * hashed categorical columns (the Criteo layout: Id,Label,I1..I13,C1..C26):
 * its rows, read with the layout (separator, columns, header, kinds) that
 * csv_layout.c takes from the first block and the options.
 *
 * Missing values: in a numeric column (given or found) an empty field, or
 * NA, N/A, NaN, null or ? (any case), is missing: no feature, and it does
 * not make an auto column categorical, so one missing cell cannot change
 * how a whole column is read.
 *
 * Features: a numeric column j with a non-empty, non-zero value v is the
 * feature (slot of column j, v); a categorical column with a non-empty
 * value s is (murmur3(s, seed of column j), 1). A column's seed is the
 * murmur3 hash of its 0-based index (with csv_log, numeric values are
 * sign(v) log(1 + |v|) first), so the slots depend on the column's
 * position, not on its header name (a headerless test file with the same
 * layout hashes alike). Slots are the low hash_bits bits (18 when 0).
 * Rows are sorted by slot and collisions summed (parse_rows.h).
 *
 * The file comes in blocks (parse_stream.c). The first block sets the
 * layout (separator, columns, header, kinds) that every later one is read
 * with; an auto column is categorical when the first block holds a value
 * in it that is neither a finite number nor missing, numeric otherwise,
 * and a later block that disagrees is an error naming the line (list the
 * column as categorical), never a column that changes kind halfway.
 *
 * A regular file is read in windows (parse_rows.h) as one block: the
 * layout comes from its first lines, and its auto columns are settled
 * over the whole file.
 *
 * The two passes of parse_rows.h's driver: the first checks every line
 * (field count, quotes, the label, numbers in numeric columns), marks
 * auto columns that hold a value that is not a number, and counts each
 * piece's rows and non-zeros exactly; the second fills the arrays. Every
 * error is found by the first pass, in file order. The header line is
 * left out of the pieces, so every non-blank line of them is a row.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "csv_layout.h"
#include "murmur3.h"
#include "parse_chunks.h"
#include "parse_common.h"
#include "parse_rows.h"
#include "feature_names.h"

/* A missing value: empty, NA, N/A, NaN, null or ?, in any case. */
static int is_missing(const char *b, const char *e)
{
	static const char *const names[] = { "na", "n/a", "nan", "null", "?" };
	size_t n = (size_t)(e - b);
	if (!n)
		return 1;
	for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
		size_t m = strlen(names[k]);
		if (m == n && !strncasecmp(b, names[k], n))
			return 1;
	}
	return 0;
}

/* Checks a numeric field (missing is fine); 0 or the error recorded. */
static int check_number(struct row_piece *c, const struct csv_setup *cs,
			uint64_t line, uint32_t j, const char *fb,
			const char *fe)
{
	float v;
	char q[64];
	if (is_missing(fb, fe) || csv_field_number(fb, fe, &v))
		return 0;
	pc_quote(q, sizeof q, fb, fe);
	if (cs->kind[j] == COL_AUTO_NUM)
		row_piece_fail(c, BOAR_EPARSE, line,
			       "column %u holds %s, but it held only numbers in the first block of the file and is read as numeric: list it as categorical (csv_categorical %u)",
			       j, q, j);
	else
		row_piece_fail(c, BOAR_EPARSE, line,
			       "column %u is numeric but holds %s", j, q);
	return -1;
}

/* What the passes over the pieces share. */
struct csv_parse {
	struct csv_setup *cs;
	uint32_t mask;                 /* slots: the low hash bits */
	const struct name_sink *names; /* NULL, or every feature's name */
};

/* Pass 1 on whole lines [p, end) of a piece: check every line, flag auto
 * columns with a value that is not a number, count rows and (a bound on)
 * non-zeros. */
static void scan_lines(struct row_piece *c, const char *p, const char *end,
		       const void *ctx)
{
	const struct csv_setup *cs = ((const struct csv_parse *)ctx)->cs;
	unsigned char *flags = c->aux;
	uint64_t line = c->lines, rows = 0, nnz = 0;
	char q[64];
	while (p < end) {
		const char *eol, *s = pc_take_line(&p, end, &eol);
		line++;
		if (pc_skip_space(s, eol) == eol)
			continue; /* blank */
		uint32_t j = 0;
		int more = 1;
		while (more) {
			const char *fb, *fe, *bad = NULL;
			s = csv_next_field(s, eol, cs->sep, &fb, &fe, &more,
					   &bad);
			if (!s) {
				row_piece_fail(c, BOAR_EPARSE, line,
					       "field %u: %s", j + 1, bad);
				goto stop;
			}
			if (j >= cs->ncols) {
				j++;
				continue; /* counted, reported below */
			}
			float v;
			switch (cs->kind[j]) {
			case COL_LABEL:
				if (fb == fe && cs->labels_optional)
					break;
				if (fb == fe) {
					row_piece_fail(c, BOAR_EPARSE, line,
						       "empty label (column %u)", j);
					goto stop;
				}
				if (!csv_field_number(fb, fe, &v)) {
					pc_quote(q, sizeof q, fb, fe);
					row_piece_fail(c, BOAR_EPARSE, line,
						       "label %s (column %u) is not a finite number",
						       q, j);
					goto stop;
				}
				break;
			case COL_NUM:
			case COL_AUTO_NUM:
				if (check_number(c, cs, line, j, fb, fe))
					goto stop;
				break;
			case COL_AUTO:
				if (!flags[j] && !is_missing(fb, fe) &&
				    !csv_field_number(fb, fe, &v))
					flags[j] = 1;
				break;
			}
			/* a bound: every non-empty feature field */
			nnz += fb != fe && cs->kind[j] != COL_LABEL &&
			       cs->kind[j] != COL_IGNORE;
			j++;
		}
		if (j != cs->ncols) {
			row_piece_fail(c, BOAR_EPARSE, line,
				       "%u fields, but the first line has %u",
				       j, cs->ncols);
			goto stop;
		}
		rows++;
	}
stop:
	c->lines = line;
	c->rows_ub += rows;
	c->nnz_ub += nnz;
}

/* Column j's feature by name to the sink: "column" for a numeric one,
 * "column=value" for a categorical one (the header's name, else j).
 * @return 0 or -1 (the sink stopped). */
static int emit_name(const struct name_sink *names,
		     const struct csv_setup *cs, uint32_t j, uint32_t slot,
		     const char *fb, const char *fe)
{
	char buf[512];
	int n = cs->colname ? snprintf(buf, sizeof buf, "%s", cs->colname[j])
			    : snprintf(buf, sizeof buf, "%u", j);
	if (fb && n < (int)sizeof buf)
		n += snprintf(buf + n, sizeof buf - (size_t)n, "=%.*s",
			      (int)(fe - fb), fb);
	if (n >= (int)sizeof buf)
		n = (int)sizeof buf - 1; /* a name cut at 511 bytes */
	return names->emit(names->ctx, slot, buf, (size_t)n) ? -1 : 0;
}

/* Pass 2 on whole lines [p, end) of a piece that scanned clean: fill its
 * region (and, with a sink, name each feature). */
static void fill_lines(struct row_piece *c, const struct row_out *o,
		       const char *p, const char *end, const void *ctx)
{
	const struct csv_parse *cp = ctx;
	const struct csv_setup *cs = cp->cs;
	const struct name_sink *names = cp->names;
	uint32_t mask = cp->mask;
	uint64_t line = c->lines;
	size_t rows = c->rows, nnz = c->nnz;
	uint32_t *idx = o->idx + c->nbase;
	float *val = o->val + c->nbase;
	while (p < end) {
		const char *eol, *s = pc_take_line(&p, end, &eol);
		line++;
		if (pc_skip_space(s, eol) == eol)
			continue; /* blank */
		size_t row_start_nnz = nnz;
		float y = 0;
		int more = 1;
		for (uint32_t j = 0; more; j++) {
			const char *fb = NULL, *fe = NULL, *bad;
			s = csv_next_field(s, eol, cs->sep, &fb, &fe, &more,
					   &bad);
			if (!s || j >= cs->ncols) /* the scan passed it */
				goto changed;
			if (fb == fe)
				continue;
			float v = 1.0f;
			switch (cs->kind[j]) {
			case COL_LABEL:
				csv_field_number(fb, fe, &y);
				break;
			case COL_NUM:
			case COL_AUTO_NUM:
				if (is_missing(fb, fe))
					break;
				csv_field_number(fb, fe, &v);
				if (cs->log)
					v = v >= 0 ? log1pf(v) : -log1pf(-v);
				if (v != 0.0f) {
					if (nnz == c->nnz_ub)
						goto changed;
					idx[nnz] = cs->seed[j] & mask;
					val[nnz++] = v;
					if (names && emit_name(names, cs, j,
							       idx[nnz - 1], NULL,
							       NULL))
						goto sink_full;
				}
				break;
			case COL_CAT:
				if (nnz == c->nnz_ub)
					goto changed;
				idx[nnz] = boar_murmur3_32(fb, (size_t)(fe - fb),
							   cs->seed[j]) &
					   mask;
				val[nnz++] = 1.0f;
				if (names && emit_name(names, cs, j, idx[nnz - 1],
						       fb, fe))
					goto sink_full;
				break;
			}
		}
		if (row_end(c, o, line, 1, row_start_nnz, &nnz, rows, y, 1.0f))
			break;
		rows++;
	}
	goto done;
changed: /* the file is not what the scan read */
	row_piece_changed(c);
	goto done;
sink_full:
	row_piece_fail(c, BOAR_ENOMEM, line, "out of memory keeping feature names");
done:
	c->lines = line;
	c->rows = rows;
	c->nnz = nnz;
}

/* After the counting pass of the first block: auto columns become
 * numeric or categorical for good, from what its pieces flagged. */
static int settle_kinds(struct row_piece *pc, size_t n, const void *ctx,
			const char *path, uint64_t line_base, boar_error *err)
{
	struct csv_setup *cs = ((const struct csv_parse *)ctx)->cs;
	for (uint32_t j = 0; j < cs->ncols; j++) {
		if (cs->kind[j] != COL_AUTO)
			continue;
		cs->kind[j] = COL_AUTO_NUM;
		for (size_t k = 0; k < n; k++)
			if (((unsigned char *)pc[k].aux)[j])
				cs->kind[j] = COL_CAT;
	}
	return 0;
}

/* Each piece's column flags for the counting pass. */
static int flags_init(struct row_piece *c, const void *ctx)
{
	c->aux = calloc(((const struct csv_parse *)ctx)->cs->ncols, 1);
	return c->aux ? 0 : -1;
}

/* The header (if any) of a block that starts the file, text [buf, end):
 * the bytes and lines the pieces leave out (the lines before it are
 * blank), and its end for kind_list. */
static void header_span(const struct csv_setup *cs, const char *buf,
			const char *end, size_t *skip, uint64_t *skip_lines,
			const char **hdr_eol)
{
	*skip = 0;
	*skip_lines = 0;
	*hdr_eol = NULL;
	if (!cs->hdr)
		return;
	const char *eol = memchr(cs->hdr, '\n', (size_t)(end - cs->hdr));
	*hdr_eol = eol ? eol : end;
	*skip = eol ? (size_t)(eol + 1 - buf) : (size_t)(end - buf);
	count_lines(buf, buf + *skip, skip_lines, &(uint64_t){ 0 });
	*skip_lines += !eol;
}

/* The parse of rows with layout cs, hashed into 2^hash_bits slots (18
 * when 0). */
static struct row_format csv_format(struct csv_parse *cp, struct csv_setup *cs,
				    int hash_bits,
				    const struct name_sink *names)
{
	int bits = hash_bits ? hash_bits : BOAR_VW_DEFAULT_HASH_BITS;
	*cp = (struct csv_parse){ cs, (uint32_t)((1ULL << bits) - 1), names };
	return (struct row_format){
		.task = BOAR_TASK_LINEAR,
		.hash_bits = bits,
		.slot_ids = 1,
		.serial = names != NULL,
		.ctx = cp,
		.count = scan_lines,
		.parse = fill_lines,
		.aux_init = flags_init,
		.counted = settle_kinds,
	};
}

/* The rows, with layout cs, of the block `in`, or (pf not NULL) of the
 * file whose head `in` holds. */
static int csv_rows(struct csv_setup *cs, const struct parse_input *in,
		    const struct parse_file *pf, struct boar_dataset **out,
		    uint64_t *lines, boar_error *err)
{
	size_t skip;
	uint64_t skip_lines;
	const char *hdr_eol;
	header_span(cs, in->buf, in->buf + in->len, &skip, &skip_lines,
		    &hdr_eol);
	struct csv_parse cp;
	struct row_format f = csv_format(&cp, cs, in->hash_bits, in->names);
	struct parse_file rest = pf ? *pf : (struct parse_file){ 0 };
	rest.beg += skip;
	int ret = pf ? row_parse_file(&rest, skip_lines, &f, out, lines, err)
		     : row_parse_text(in, skip, skip_lines, &f, out, err);
	if (!ret) /* what the dataset keeps of the layout */
		(*out)->csv_label_col = cs->label == UINT32_MAX ? 0 : cs->label + 1;
	if (!ret && in->first_block) { /* the kinds the file settled on */
		(*out)->csv_kinds[0] = csv_kind_list(cs, cs->hdr, hdr_eol,
						     COL_CAT, COL_CAT);
		(*out)->csv_kinds[1] = csv_kind_list(cs, cs->hdr, hdr_eol,
						     COL_NUM, COL_AUTO_NUM);
	}
	cs->hdr = NULL; /* later blocks reuse the buffer: no header there */
	return ret;
}

int boar_parse_csv(const struct parse_input *in, struct boar_dataset **out,
		   boar_error *err)
{
	struct csv_setup *cs = *in->csv;
	if (!cs) {
		if (!(cs = calloc(1, sizeof *cs)))
			return boar_fail_line(err, BOAR_ENOMEM, in->path, 0,
					      "out of memory");
		*in->csv = cs; /* the caller frees it */
		int ret = csv_setup(in, cs, err);
		if (ret)
			return ret;
	}
	return csv_rows(cs, in, NULL, out, NULL, err);
}

int boar_parse_csv_file(const struct parse_file *pf,
			struct boar_dataset **out, uint64_t *lines,
			boar_error *err)
{
	struct csv_setup *cs = calloc(1, sizeof *cs);
	if (!cs)
		return boar_fail_line(err, BOAR_ENOMEM, pf->path, 0,
				      "out of memory");
	struct parse_input head = {
		.path = pf->path, .buf = pf->head, .len = pf->head_len,
		.first_block = 1, .threads = 1, .hash_bits = pf->hash_bits,
		.opt = pf->opt, .origin = pf->origin,
	};
	int ret = csv_setup(&head, cs, err);
	if (!ret)
		ret = csv_rows(cs, &head, pf, out, lines, err);
	boar_csv_setup_free(cs);
	return ret;
}
