/* dataset.c - the dataset API: loading a file (text or its cache),
 * building from the caller's arrays, the accessors, and freeing.
 *
 * Loading: options are checked, the source is stat'ed (missing file,
 * directory and device are BOAR_EIO), a valid cache is read if asked for,
 * otherwise the text is read block by block (parse_stream.c), its format
 * detected from the first block unless forced, parsed on threads,
 * classified, and (if asked) written back as a cache. A cache that cannot be
 * written does not fail the load: the data is good, the cache is only a
 * speed-up, and the next load simply tries again. A cache that is corrupt
 * fails the load with BOAR_ECORRUPT (see cache.h for why).
 *
 * hash_bits applies to LIBSVM data only; rating ids are used as given;
 * VW and CSV data are always hashed (18 bits when hash_bits is 0).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cache.h"
#include "gzip_input.h"
#include "input_spec.h"
#include "murmur3.h"
#include "dataset.h"
#include "options.h"
#include "error.h"
#include "parse_chunks.h"
#include "parse_common.h"

struct boar_dataset *boar_dataset_alloc(int task)
{
	struct boar_dataset *d = calloc(1, sizeof *d);
	if (d) {
		d->task = task;
		d->label_kind = task == BOAR_TASK_MF ? BOAR_LABELS_REAL
						     : BOAR_LABELS_BINARY;
	}
	return d;
}

void boar_dataset_free(boar_dataset *d)
{
	if (!d)
		return;
	for (size_t k = 0; k < sizeof d->owned / sizeof d->owned[0]; k++)
		free(d->owned[k]);
	if (d->map)
		munmap(d->map, d->map_len);
	free(d->path);
	boar_input_spec_free(d->input);
	free(d->csv_kinds[0]);
	free(d->csv_kinds[1]);
	free(d);
}

void boar_dataset_classify(struct boar_dataset *d)
{
	if (d->task != BOAR_TASK_LINEAR) {
		d->label_kind = BOAR_LABELS_REAL;
		d->all_ones = 0;
		return;
	}
	int pm = 1, zo = 1; /* every label in {+1,-1}; every label in {1,0} */
	for (uint64_t r = 0; r < d->n_rows && (pm || zo); r++) {
		float y = d->label[r];
		pm &= y == 1.0f || y == -1.0f;
		zo &= y == 1.0f || y == 0.0f;
	}
	d->label_kind = pm || zo ? BOAR_LABELS_BINARY : BOAR_LABELS_REAL;
	int ones = 1;
	for (uint64_t k = 0; k < d->nnz && ones; k++)
		ones = d->val[k] == 1.0f;
	d->all_ones = ones;
}

int boar_dataset_task(const boar_dataset *d)
{
	return d ? d->task : BOAR_TASK_AUTO;
}

uint64_t boar_dataset_rows(const boar_dataset *d)
{
	return d ? d->n_rows : 0;
}

uint64_t boar_dataset_nnz(const boar_dataset *d)
{
	return d ? d->nnz : 0;
}

uint64_t boar_dataset_features(const boar_dataset *d)
{
	return d ? d->dim : 0;
}

uint64_t boar_dataset_items(const boar_dataset *d)
{
	return d && d->task == BOAR_TASK_MF ? d->n_items : 0;
}

/* ------------------------------------------------- from the caller */

int boar_dataset_from_csr(uint64_t n_rows, uint32_t n_features,
			  const uint64_t *row_ptr, const uint32_t *idx,
			  const float *val, const float *labels,
			  boar_dataset **out, boar_error *err)
{
	if (!out)
		return boar_fail(err, BOAR_EINVAL, "out must not be NULL");
	if (n_rows == 0)
		return boar_fail(err, BOAR_EINVAL, "n_rows is 0: no rows");
	if (!row_ptr || !labels)
		return boar_fail(err, BOAR_EINVAL,
				 "row_ptr and labels must not be NULL");
	if (row_ptr[0] != 0)
		return boar_fail(err, BOAR_EINVAL,
				 "row_ptr[0] is %llu: it must be 0",
				 (unsigned long long)row_ptr[0]);
	for (uint64_t r = 0; r < n_rows; r++)
		if (row_ptr[r + 1] < row_ptr[r])
			return boar_fail(err, BOAR_EINVAL,
					 "row %llu: row_ptr decreases",
					 (unsigned long long)r);
	uint64_t nnz = row_ptr[n_rows];
	if (nnz && (!idx || !val))
		return boar_fail(err, BOAR_EINVAL,
				 "idx and val must not be NULL when there are non-zeros");
	for (uint64_t r = 0; r < n_rows; r++) {
		if (!isfinite(labels[r]))
			return boar_fail(err, BOAR_EINVAL,
					 "row %llu: label is NaN or infinite",
					 (unsigned long long)r);
		for (uint64_t k = row_ptr[r]; k < row_ptr[r + 1]; k++) {
			if (idx[k] >= n_features)
				return boar_fail(err, BOAR_EINVAL,
						 "row %llu: feature id %u is not below n_features %u",
						 (unsigned long long)r, idx[k],
						 n_features);
			if (k > row_ptr[r] && idx[k] <= idx[k - 1])
				return boar_fail(err, BOAR_EINVAL,
						 "row %llu: feature ids must be strictly ascending (%u %s %u)",
						 (unsigned long long)r, idx[k],
						 idx[k] == idx[k - 1] ? "repeats" : "after",
						 idx[k - 1]);
			if (!isfinite(val[k]))
				return boar_fail(err, BOAR_EINVAL,
						 "row %llu: value of feature %u is NaN or infinite",
						 (unsigned long long)r, idx[k]);
		}
	}
	struct boar_dataset *d = boar_dataset_alloc(BOAR_TASK_LINEAR);
	if (!d)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	d->n_rows = n_rows;
	d->nnz = nnz;
	d->dim = n_features;
	d->row_ptr = malloc((n_rows + 1) * sizeof *d->row_ptr);
	d->idx = malloc((nnz ? nnz : 1) * sizeof *d->idx);
	d->val = malloc((nnz ? nnz : 1) * sizeof *d->val);
	d->label = malloc(n_rows * sizeof *d->label);
	d->owned[0] = d->row_ptr;
	d->owned[1] = d->idx;
	d->owned[2] = d->val;
	d->owned[3] = d->label;
	if (!d->row_ptr || !d->idx || !d->val || !d->label) {
		boar_dataset_free(d);
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	}
	memcpy(d->row_ptr, row_ptr, (n_rows + 1) * sizeof *row_ptr);
	if (nnz) {
		memcpy(d->idx, idx, nnz * sizeof *idx);
		memcpy(d->val, val, nnz * sizeof *val);
	}
	memcpy(d->label, labels, n_rows * sizeof *labels);
	boar_dataset_classify(d);
	*out = d;
	return 0;
}

int boar_dataset_from_ratings(uint64_t n, const uint32_t *users,
			      const uint32_t *items, const float *ratings,
			      boar_dataset **out, boar_error *err)
{
	if (!out)
		return boar_fail(err, BOAR_EINVAL, "out must not be NULL");
	if (n == 0)
		return boar_fail(err, BOAR_EINVAL, "n is 0: no ratings");
	if (!users || !items || !ratings)
		return boar_fail(err, BOAR_EINVAL,
				 "users, items and ratings must not be NULL");
	uint64_t mu = 0, mi = 0;
	for (uint64_t k = 0; k < n; k++) {
		if (!isfinite(ratings[k]))
			return boar_fail(err, BOAR_EINVAL,
					 "rating %llu is NaN or infinite",
					 (unsigned long long)k);
		if (users[k] >= mu)
			mu = (uint64_t)users[k] + 1;
		if (items[k] >= mi)
			mi = (uint64_t)items[k] + 1;
	}
	struct boar_dataset *d = boar_dataset_alloc(BOAR_TASK_MF);
	if (!d)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	d->n_rows = d->nnz = n;
	d->dim = mu;
	d->n_items = mi;
	d->user = malloc(n * sizeof *d->user);
	d->item = malloc(n * sizeof *d->item);
	d->label = malloc(n * sizeof *d->label);
	d->owned[0] = d->user;
	d->owned[1] = d->item;
	d->owned[2] = d->label;
	if (!d->user || !d->item || !d->label) {
		boar_dataset_free(d);
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	}
	memcpy(d->user, users, n * sizeof *users);
	memcpy(d->item, items, n * sizeof *items);
	memcpy(d->label, ratings, n * sizeof *ratings);
	boar_dataset_classify(d);
	*out = d;
	return 0;
}

/* ------------------------------------------------------- from files */

void boar_load_options_fill(boar_load_options *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
	o->task = BOAR_TASK_AUTO;
	o->format = BOAR_FORMAT_AUTO;
	o->threads = 0;
	o->use_cache = 0;
	o->cache_path = NULL;
	o->hash_bits = 0;
	o->csv_label = NULL;
	o->csv_ignore = NULL;
	o->csv_categorical = NULL;
	o->csv_numeric = NULL;
	o->csv_separator = 0;
	o->csv_header = 0;
	o->csv_log = 0;
}

/* Is [s, eol) a line with a LIBSVM feature token (a ':' after the first
 * token that is not part of a '::' separator)? */
static int has_feature_token(const char *s, const char *eol)
{
	s = pc_token_end(s, eol);
	for (;;) {
		s = pc_skip_space(s, eol);
		if (s == eol || *s == '#')
			return 0;
		const char *te = pc_token_end(s, eol);
		for (const char *c = s; c < te; c++) {
			if (*c != ':')
				continue;
			if (c + 1 < te && c[1] == ':')
				break; /* "::": a ratings separator */
			return 1;
		}
		s = te;
	}
}

/* Counts the leading numeric fields of a ratings-style line. */
static int numeric_fields(const char *s, const char *eol)
{
	int n = 0;
	while (s < eol && *s != '#') {
		float v;
		const char *t = pc_parse_float(s, eol, &v);
		if (t == s)
			break;
		if (t < eol && !pc_is_space((unsigned char)*t) && *t != ',' &&
		    *t != ':')
			break;
		n++;
		s = pc_skip_space(t, eol);
		if (s < eol && *s == ',')
			s++;
		else if (s + 1 < eol && s[0] == ':' && s[1] == ':')
			s += 2;
		else if (s < eol && *s == ':')
			break;
		s = pc_skip_space(s, eol);
	}
	return n;
}

/* How much of the text detection looks at (and the cache check peeks). */
#define DETECT_WINDOW ((size_t)1 << 20)

/* A VW line: a '|' after at most four tokens (label, importance, base,
 * tag) holding nothing that a LIBSVM comment, a CSV field or a feature
 * would have. */
static int looks_vw(const char *s, const char *eol)
{
	const char *bar = memchr(s, '|', (size_t)(eol - s));
	if (!bar)
		return 0;
	int tokens = 0;
	for (; s < bar; s++) {
		if (*s == ',' || *s == '#' || *s == ':')
			return 0;
		tokens += !pc_is_space((unsigned char)*s) &&
			  (s + 1 == bar || pc_is_space((unsigned char)s[1]));
	}
	return tokens <= 4;
}

/* A CSV line: five fields or more split by ',' (or by tabs, with no ':'
 * that would make them LIBSVM tokens) before any '#' (a LIBSVM comment
 * may hold commas). Ratings lines have 3 or 4. */
static int looks_csv(const char *s, const char *eol)
{
	int commas = 0, tabs = 0, colons = 0;
	for (; s < eol && *s != '#'; s++) {
		commas += *s == ',';
		tabs += *s == '\t';
		colons += *s == ':';
	}
	return commas >= 4 || (tabs >= 4 && !colons);
}

/* Does the line start with two ids ("user item", digits only, then a
 * separator)? Ratings need them; "1,0.5,3" is a CSV row, not a rating. */
static int leading_ids(const char *s, const char *eol)
{
	for (int k = 0; k < 2; k++) {
		const char *t = s;
		while (t < eol && pc_is_digit((unsigned char)*t))
			t++;
		if (t == s || t == eol ||
		    !(pc_is_space((unsigned char)*t) || *t == ',' || *t == ':'))
			return 0;
		s = pc_skip_space(t, eol);
		if (s < eol && *s == ',')
			s++;
		else if (s + 1 < eol && s[0] == ':' && s[1] == ':')
			s += 2;
		s = pc_skip_space(s, eol);
	}
	return 1;
}

/* Fields split by ',' or a tab (LIBSVM and VW rows have neither)? */
static int has_separator(const char *s, const char *eol)
{
	for (; s < eol && *s != '#'; s++)
		if (*s == ',' || *s == '\t')
			return 1;
	return 0;
}

int boar_detect_format(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + (len < DETECT_WINDOW ? len : DETECT_WINDOW);
	int looked = 0, separated = 0;
	while (p < end && looked < 32) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		const char *s = pc_skip_space(p, eol);
		p = eol + 1;
		if (s == eol || *s == '#')
			continue;
		looked++;
		if (looks_vw(s, eol))
			return BOAR_FORMAT_VW;
		if (looks_csv(s, eol))
			return BOAR_FORMAT_CSV;
		if (has_feature_token(s, eol))
			return BOAR_FORMAT_LIBSVM;
		if (numeric_fields(s, eol) >= 3 && leading_ids(s, eol))
			return BOAR_FORMAT_RATINGS;
		if (has_separator(s, eol)) {
			float v;
			const char *t = pc_parse_float(s, eol, &v);
			/* a number, then a separator: a CSV row of any width
			 * ("1,free entry", "1,0.5,3") */
			const char *u = pc_skip_space(t, eol);
			if (t > s && t < eol &&
			    (*t == '\t' || (u < eol && *u == ',')))
				return BOAR_FORMAT_CSV;
			separated++;
		}
		/* a label-only row or a header line: look further */
	}
	/* Only separated lines that start with text ("ham,Go until..."):
	 * CSV, whose parser names the first label that is not a number. */
	return separated && separated == looked ? BOAR_FORMAT_CSV
						: BOAR_FORMAT_LIBSVM;
}

/* A parse error in a file whose format was guessed: say which format it
 * was read as and how to force another. */
static void boar_note_detected(boar_error *err, int format)
{
	if (!err)
		return;
	size_t n = strlen(err->message);
	snprintf(err->message + n, sizeof err->message - n,
		 " (read as %s, detected from the first lines; force another "
		 "with --format libsvm|vw|csv|ratings)", boar_format_name(format));
}

static const char *const format_names[BOAR_FORMAT_CODES] = {
	[BOAR_FORMAT_AUTO] = "auto",
#define FORMAT_NAME(N, code, name, task, hashed, help) [code] = #name,
	BOAR_FORMAT_MAP(FORMAT_NAME)
#undef FORMAT_NAME
};

const char *boar_format_name(int format)
{
	return format >= 0 && format < BOAR_FORMAT_CODES ? format_names[format]
							  : NULL;
}

int boar_format_from_name(const char *name)
{
	for (int f = 0; name && f < BOAR_FORMAT_CODES; f++)
		if (!strcmp(format_names[f], name))
			return f;
	return -1;
}

/* Each format's task and whether its features are names hashed into
 * slots, from boar.h's list; AUTO reads as linear, unhashed. */
static const struct {
	int task, hashed;
} format_traits[BOAR_FORMAT_CODES] = {
	[BOAR_FORMAT_AUTO] = {BOAR_TASK_LINEAR, 0},
#define FORMAT_TRAITS(N, code, name, task, hashed, help) \
	[code] = {BOAR_TASK_##task, hashed},
	BOAR_FORMAT_MAP(FORMAT_TRAITS)
#undef FORMAT_TRAITS
};

static int format_task(int format)
{
	return format_traits[format].task;
}

static int format_hashed(int format)
{
	return format_traits[format].hashed;
}

static int check_load_options(const boar_load_options *o, boar_error *err)
{
	if (o->task < BOAR_TASK_AUTO || o->task > BOAR_TASK_MF)
		return boar_fail(err, BOAR_EINVAL, "unknown task %d", o->task);
	if (o->format < BOAR_FORMAT_AUTO || o->format >= BOAR_FORMAT_CODES)
		return boar_fail(err, BOAR_EINVAL, "unknown format %d",
				 o->format);
	if (o->threads < 0)
		return boar_fail(err, BOAR_EINVAL,
				 "threads must be >= 0 (0 = all cores)");
	if (o->hash_bits < 0 || o->hash_bits > 32)
		return boar_fail(err, BOAR_EINVAL,
				 "hash_bits must be between 0 and 32");
	if (o->task != BOAR_TASK_AUTO && o->format != BOAR_FORMAT_AUTO &&
	    o->task != format_task(o->format))
		return boar_fail(err, BOAR_EINVAL,
				 "task and format disagree: the linear task reads LIBSVM, VW or CSV, matrix factorization reads ratings");
	return 0;
}

int boar_detect_format_for(int task, const char *buf, size_t len)
{
	int f = boar_detect_format(buf, len);
	return task == BOAR_TASK_LINEAR && f == BOAR_FORMAT_RATINGS
		       ? BOAR_FORMAT_LIBSVM
		       : f;
}

/* The hash_bits a format's data ends up with. */
static int data_hash_bits(int format, int hash_bits)
{
	if (!hash_bits && format_hashed(format))
		return BOAR_VW_DEFAULT_HASH_BITS;
	return hash_bits;
}

/* cache.h keys a cache on its source's identity, the task and hash_bits;
 * the CSV options shape the arrays too, so their hash is part of the key:
 * a cache written under other CSV options then reads as stale and is
 * rebuilt. 0 for the other formats. */
static uint64_t csv_options_key(int format, const boar_load_options *o)
{
	if (format == BOAR_FORMAT_VW && (o->vw_ignore || o->vw_keep)) {
		/* dropped namespaces shape the rows too */
		uint32_t h = boar_murmur3_32("vw", 2, 0);
		h = o->vw_ignore ? boar_murmur3_32(o->vw_ignore,
						   strlen(o->vw_ignore), h)
				 : h * 31 + 7;
		h = o->vw_keep ? boar_murmur3_32(o->vw_keep, strlen(o->vw_keep), h)
			       : h * 31 + 7;
		return (uint64_t)h << 1 | 1;
	}
	if (format != BOAR_FORMAT_CSV)
		return 0;
	const char *s[4] = { o->csv_label, o->csv_ignore, o->csv_categorical,
			     o->csv_numeric };
	uint32_t h = boar_murmur3_32("csv", 3, 0);
	for (int k = 0; k < 4; k++)
		h = s[k] ? boar_murmur3_32(s[k], strlen(s[k]), h) : h * 31 + 7;
	int tail[3] = { o->csv_separator, o->csv_header, o->csv_log };
	h = boar_murmur3_32(tail, sizeof tail, h);
	return (uint64_t)h << 1 | 1;
}

int boar_dataset_load(const char *path, const boar_load_options *o,
		      boar_dataset **out, boar_error *err)
{
	boar_load_options def;
	if (boar_load_options_widen(o, &def))
		return boar_fail(err, BOAR_EINVAL, "boar_load_options.size is "
				 "not a size this libboar knows: fill the "
				 "options with boar_load_options_default()");
	o = &def;
	if (!path || !out)
		return boar_fail(err, BOAR_EINVAL,
				 "path and out must not be NULL");
	int ret = check_load_options(o, err);
	if (ret)
		return ret;
	int format = o->format;
	if (!format && o->task == BOAR_TASK_MF)
		format = BOAR_FORMAT_RATINGS;
	/* Options naming CSV columns say what the file is (a separator or
	 * header setting only says how to read one, should it be CSV). */
	if (!format && (o->csv_label || o->csv_ignore || o->csv_categorical ||
			o->csv_numeric || o->csv_log))
		format = BOAR_FORMAT_CSV;
	if (!format && (o->vw_ignore || o->vw_keep))
		format = BOAR_FORMAT_VW;
	int detected = !format;
	int threads = parse_threads(o->threads);

	struct src_id id;
	int regular;
	ret = text_file_stat(path, &id, &regular, err);
	if (ret)
		return ret;

	char *cache_path = NULL;
	int use_cache = o->use_cache && regular;
	if (use_cache && !format) {
		/* which cache fits depends on the format: look at as much
		 * of the text as detection does */
		char *head = malloc(DETECT_WINDOW);
		long n = head ? text_peek(path, head, DETECT_WINDOW) : -1;
		if (n > 0)
			format = boar_detect_format_for(o->task, head,
							(size_t)n);
		else
			use_cache = 0;
		free(head);
	}
	uint64_t key = use_cache ? csv_options_key(format, o) : 0;
	if (use_cache) {
		if (o->cache_path) {
			cache_path = strdup(o->cache_path);
		} else if ((cache_path = malloc(strlen(path) + 11))) {
			sprintf(cache_path, "%s.boarcache", path);
		}
		if (!cache_path)
			return boar_fail(err, BOAR_ENOMEM, "out of memory");
		struct cache_want w = {
			.src = id,
			.options_key = key,
			.task = format_task(format),
			.hash_bits = data_hash_bits(format, o->hash_bits),
			.threads = threads,
		};
		ret = boar_cache_load(cache_path, &w, out, err);
		if (ret <= 0) {
			free(cache_path);
			if (ret == 0) { /* the cache keeps arrays, not how ids came */
				(*out)->slot_ids = format_hashed(format);
				(*out)->path = strdup(path); /* NULL: messages do without */
				ret = boar_dataset_note_input(out, format, o, err);
			}
			return ret;
		}
	}

	struct boar_dataset *d = NULL;
	struct src_id read_id;
	int read_regular;
	ret = boar_parse_file(path, o, threads, &format, &read_id,
			      &read_regular, &d, err);
	if (ret == BOAR_EPARSE && detected && format)
		boar_note_detected(err, format);
	if (ret)
		goto out;
	boar_dataset_classify(d);
	d->path = strdup(path); /* NULL when out of memory: messages do without */
	/* The cache records the identity of what was actually read (the
	 * reader checked it did not change while it read), so a file changed
	 * since the stat above is simply seen as stale next time. */
	if (use_cache && read_regular && !d->weight) /* the cache has no weights */
		boar_cache_write(cache_path, d, &read_id, key, threads, NULL);
out:
	free(cache_path);
	if (ret) {
		boar_dataset_free(d);
		return ret;
	}
	*out = d;
	return boar_dataset_note_input(out, format, o, err);
}
