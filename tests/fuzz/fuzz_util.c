/* fuzz_util.c - the harnesses' shared checks and scratch files (fuzz.h). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/dataset.h"
#include "data/parse_common.h"
#include "tests/fuzz/fuzz.h"

const char *fuzz_current_input;

void fuzz_fail(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "fuzz: broken promise: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (fuzz_current_input)
		fprintf(stderr, " (input: %s)", fuzz_current_input);
	fputc('\n', stderr);
	abort();
}

/* ------------------------------------------------------ scratch files */

#define MAX_NAMES 8

static char scratch[256];
static char names[MAX_NAMES][64]; /* the files written, for the cleanup */
static int n_names;

static void remove_scratch(void)
{
	char path[sizeof scratch + sizeof names[0] + 1];
	for (int k = 0; k < n_names; k++) {
		snprintf(path, sizeof path, "%.255s/%.63s", scratch, names[k]);
		unlink(path);
	}
	rmdir(scratch);
}

const char *fuzz_scratch_dir(void)
{
	if (scratch[0])
		return scratch;
	const char *base = getenv("TMPDIR");
	struct stat st;
	if (!base || !*base)
		base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
				       access("/dev/shm", W_OK) == 0
			       ? "/dev/shm"
			       : "/tmp";
	snprintf(scratch, sizeof scratch, "%s/boar-fuzz.XXXXXX", base);
	if (!mkdtemp(scratch)) {
		fprintf(stderr, "fuzz: cannot create %s: %s\n", scratch,
			strerror(errno));
		exit(2);
	}
	atexit(remove_scratch);
	return scratch;
}

const char *fuzz_path(const char *name)
{
	static char path[sizeof scratch + sizeof names[0] + 1];
	int known = 0;
	for (int k = 0; k < n_names && !known; k++)
		known = !strcmp(names[k], name);
	if (!known) {
		if (n_names == MAX_NAMES || strlen(name) >= sizeof names[0]) {
			fprintf(stderr, "fuzz: too many scratch files\n");
			exit(2);
		}
		strcpy(names[n_names++], name);
	}
	snprintf(path, sizeof path, "%.255s/%.63s", fuzz_scratch_dir(), name);
	return path;
}

const char *fuzz_write_file(const char *name, const void *data, size_t len)
{
	const char *path = fuzz_path(name);
	/* A new inode each time (unlink first): a loader that keeps a
	 * mapping of the last file must not see it change underneath. */
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	const char *p = data;
	size_t left = len;
	while (fd >= 0 && left) {
		ssize_t k = write(fd, p, left);
		if (k <= 0) {
			close(fd);
			fd = -1;
			break;
		}
		p += k;
		left -= (size_t)k;
	}
	if (fd < 0 || close(fd) != 0) {
		fprintf(stderr, "fuzz: cannot write %s: %s\n", path,
			strerror(errno));
		exit(2);
	}
	return path;
}

/* ------------------------------------------------------------ checks */

void fuzz_check_error(int rc, const boar_error *err, const char *path)
{
	if (rc >= 0)
		fuzz_fail("load returned %d, neither 0 nor an error code", rc);
	if (err->code != rc)
		fuzz_fail("load returned %d but its boar_error says %d", rc,
			  err->code);
	size_t n = strnlen(err->message, sizeof err->message);
	if (n == 0 || n == sizeof err->message)
		fuzz_fail("error %d with an empty or unterminated message", rc);
	if (strchr(err->message, '\n'))
		fuzz_fail("error message is not one line: \"%s\"",
			  err->message);
	if (rc != BOAR_ENOMEM && !strstr(err->message, path))
		fuzz_fail("error message does not name the file %s: \"%s\"",
			  path, err->message);
}

static void check_floats(const float *x, uint64_t n, const char *what)
{
	for (uint64_t k = 0; k < n; k++)
		if (!isfinite(x[k]))
			fuzz_fail("%s[%llu] is %g", what, (unsigned long long)k,
				  (double)x[k]);
}

static void check_linear(const struct boar_dataset *d)
{
	if (d->hash_bits < 0 || d->hash_bits > 32)
		fuzz_fail("hash_bits %d", d->hash_bits);
	if (d->hash_bits && d->dim != 1ull << d->hash_bits)
		fuzz_fail("hashed into 2^%d slots but dim is %llu",
			  d->hash_bits, (unsigned long long)d->dim);
	if (d->dim > 1ull << 32)
		fuzz_fail("dim %llu does not fit 32-bit ids",
			  (unsigned long long)d->dim);
	if (d->row_ptr[0] != 0 || d->row_ptr[d->n_rows] != d->nnz)
		fuzz_fail("row offsets run from %llu to %llu, nnz is %llu",
			  (unsigned long long)d->row_ptr[0],
			  (unsigned long long)d->row_ptr[d->n_rows],
			  (unsigned long long)d->nnz);
	for (uint64_t r = 0; r < d->n_rows; r++) {
		uint64_t b = d->row_ptr[r], e = d->row_ptr[r + 1];
		if (b > e || e > d->nnz)
			fuzz_fail("row %llu spans [%llu, %llu) of %llu",
				  (unsigned long long)r,
				  (unsigned long long)b,
				  (unsigned long long)e,
				  (unsigned long long)d->nnz);
		for (uint64_t k = b; k < e; k++)
			if (d->idx[k] >= d->dim)
				fuzz_fail("row %llu: id %u >= dim %llu",
					  (unsigned long long)r, d->idx[k],
					  (unsigned long long)d->dim);
		const uint32_t *idx;
		const float *val;
		float label;
		int64_t nnz = boar_dataset_row(d, r, &idx, &val, &label, NULL);
		if (nnz != (int64_t)(e - b) || (nnz && idx != d->idx + b) ||
		    memcmp(&label, &d->label[r], sizeof label))
			fuzz_fail("boar_dataset_row(%llu, NULL) disagrees with the "
				  "arrays", (unsigned long long)r);
	}
	check_floats(d->val, d->nnz, "value");
	if (d->all_ones)
		for (uint64_t k = 0; k < d->nnz; k++)
			if (d->val[k] != 1.0f)
				fuzz_fail("all_ones is set but value[%llu] is %g",
					  (unsigned long long)k,
					  (double)d->val[k]);
	if (d->label_kind == BOAR_LABELS_BINARY) {
		int pm = 1, zo = 1;
		for (uint64_t r = 0; r < d->n_rows; r++) {
			float y = d->label[r];
			pm &= y == 1.0f || y == -1.0f;
			zo &= y == 1.0f || y == 0.0f;
		}
		if (!pm && !zo)
			fuzz_fail("labels said binary but are not");
	}
}

static void check_ratings(const struct boar_dataset *d)
{
	if (d->nnz != d->n_rows)
		fuzz_fail("ratings: nnz %llu for %llu ratings",
			  (unsigned long long)d->nnz,
			  (unsigned long long)d->n_rows);
	if (d->dim > 1ull << 32 || d->n_items > 1ull << 32)
		fuzz_fail("ratings: %llu users, %llu items do not fit 32 bits",
			  (unsigned long long)d->dim,
			  (unsigned long long)d->n_items);
	for (uint64_t k = 0; k < d->n_rows; k++)
		if (d->user[k] >= d->dim || d->item[k] >= d->n_items)
			fuzz_fail("rating %llu: user %u item %u outside %llu x "
				  "%llu",
				  (unsigned long long)k, d->user[k], d->item[k],
				  (unsigned long long)d->dim,
				  (unsigned long long)d->n_items);
}

void fuzz_check_dataset(const boar_dataset *ds)
{
	const struct boar_dataset *d = ds;
	if (boar_dataset_rows(ds) != d->n_rows ||
	    boar_dataset_task(ds) != d->task)
		fuzz_fail("public accessors disagree with the dataset");
	if (d->task == BOAR_TASK_LINEAR)
		check_linear(d);
	else if (d->task == BOAR_TASK_MF)
		check_ratings(d);
	else
		fuzz_fail("dataset of task %d", d->task);
	check_floats(d->label, d->n_rows, "label");
	if (d->weight) {
		check_floats(d->weight, d->n_rows, "weight");
		for (uint64_t r = 0; r < d->n_rows; r++)
			if (d->weight[r] < 0)
				fuzz_fail("weight[%llu] is %g",
					  (unsigned long long)r,
					  (double)d->weight[r]);
	}
}

/* -------------------------------------------------------- comparing */

static int same_array(const void *a, const void *b, uint64_t n, size_t sz)
{
	return n == 0 || (a && b && !memcmp(a, b, n * sz));
}

void fuzz_check_same(const boar_dataset *da, const boar_dataset *db,
		     const char *how)
{
	const struct boar_dataset *a = da, *b = db;
	int same = a->task == b->task && a->n_rows == b->n_rows &&
		   a->nnz == b->nnz && a->dim == b->dim &&
		   a->n_items == b->n_items && a->hash_bits == b->hash_bits &&
		   a->label_kind == b->label_kind && a->slot_ids == b->slot_ids &&
		   !a->weight == !b->weight &&
		   same_array(a->label, b->label, a->n_rows, 4) &&
		   same_array(a->weight, b->weight,
			      a->weight ? a->n_rows : 0, 4);
	if (same && a->task == BOAR_TASK_LINEAR)
		same = same_array(a->row_ptr, b->row_ptr, a->n_rows + 1, 8) &&
		       same_array(a->idx, b->idx, a->nnz, 4) &&
		       same_array(a->val, b->val, a->nnz, 4);
	else if (same)
		same = same_array(a->user, b->user, a->n_rows, 4) &&
		       same_array(a->item, b->item, a->n_rows, 4);
	if (!same)
		fuzz_fail("%s gives another dataset: %llu rows, %llu nnz, dim "
			  "%llu against %llu, %llu, %llu",
			  how, (unsigned long long)b->n_rows,
			  (unsigned long long)b->nnz,
			  (unsigned long long)b->dim,
			  (unsigned long long)a->n_rows,
			  (unsigned long long)a->nnz,
			  (unsigned long long)a->dim);
}

/* ------------------------------------------------------------ parsers */

#define PARSE_PATH "fuzz-input"
/* Small enough that the seeds span many blocks: a block is whole lines of
 * about this many bytes (one line when longer), the first one longer
 * (block_for). */
#define SMALL_BLOCK 16

/* A header (ratings, CSV) is looked for in the first block only, which
 * in real use is 64 MiB or more: the block size is made to reach past the
 * first line that is not blank, so that one holding nothing but blank
 * lines is not what the harness tests. */
static size_t block_for(const uint8_t *data, size_t size)
{
	size_t k = 0, line_end = 0;
	int blank = 1;
	for (; k < size; k++) {
		if (data[k] == '\n') {
			line_end = k + 1;
			if (!blank)
				break;
		} else if (!pc_is_space(data[k])) {
			blank = 0;
		}
	}
	if (k == size)
		line_end = size;
	return line_end + SMALL_BLOCK;
}

static int parse_text(const uint8_t *data, size_t size, int format,
		      const boar_load_options *o, struct boar_dataset **d,
		      boar_error *err)
{
	struct csv_setup *csv = NULL;
	/* The reader drops a UTF-8 byte order mark before any parser sees
	 * the text (parse_source.c): so does this. */
	if (size >= 3 && !memcmp(data, "\xEF\xBB\xBF", 3)) {
		data += 3;
		size -= 3;
	}
	struct parse_input in = {
		.path = PARSE_PATH,
		.buf = (const char *)data,
		.len = size,
		.first_block = 1,
		.threads = 1,
		.hash_bits = o->hash_bits,
		.opt = o,
		.csv = &csv,
	};
	if (!boar_format_name(format) || format == BOAR_FORMAT_AUTO)
		fuzz_fail("fuzz_parse: no parser for format %d", format);
	int rc = boar_parse_format(format, &in, d, err);
	boar_csv_setup_free(csv);
	if (rc) {
		fuzz_check_error(rc, err, PARSE_PATH);
		if (*d)
			fuzz_fail("parser failed with %d but returned a "
				  "dataset", rc);
		return rc;
	}
	if (!*d)
		fuzz_fail("parser succeeded without a dataset");
	boar_dataset_classify(*d);
	fuzz_check_dataset(*d);
	return 0;
}

void fuzz_parse(const uint8_t *data, size_t size, int format,
		const boar_load_options *o)
{
	struct boar_dataset *whole = NULL, *blocks = NULL;
	boar_error err, err2;
	memset(&err, 0, sizeof err);
	memset(&err2, 0, sizeof err2);
	int rc = parse_text(data, size, format, o, &whole, &err);
	if (!rc && whole->n_rows == 0) { /* the loader refuses this */
		boar_dataset_free(whole);
		whole = NULL;
		rc = BOAR_EPARSE;
	}

	const char *path = fuzz_write_file("input", data, size);
	int fmt = format, regular;
	struct src_id id;
	int rc2 = boar_parse_file_blocks(path, o, 1, block_for(data, size),
					 &fmt, &id, &regular, &blocks, &err2);
	if (rc2) {
		fuzz_check_error(rc2, &err2, path);
	} else {
		boar_dataset_classify(blocks);
		fuzz_check_dataset(blocks);
	}
	/* CSV decides its auto columns' kind on the first block, so a later
	 * block may refuse a value that one block reads as categorical (the
	 * message says so), at a line before any other error; everything
	 * else must agree. */
	int rcb = rc;
	boar_error errb = err;
	if (format == BOAR_FORMAT_CSV && rc2) {
		rcb = rc2;
		errb = err2;
	}
	if (!rcb != !rc2)
		fuzz_fail("in memory: %s; in blocks: %s",
			  rcb ? errb.message : "parsed",
			  rc2 ? err2.message : "parsed");
	if (rcb && rcb != rc2)
		fuzz_fail("error %d in memory (%s), %d in blocks (%s)", rcb,
			  errb.message, rc2, err2.message);
	if (rcb && errb.line && errb.line != err2.line)
		fuzz_fail("error at line %llu in memory (%s), at %llu in "
			  "blocks (%s)",
			  (unsigned long long)errb.line, errb.message,
			  (unsigned long long)err2.line, err2.message);
	if (!rcb)
		fuzz_check_same(whole, blocks, "parsing in blocks");
	boar_dataset_free(blocks);
	/* A regular file (any format) is read in windows, as one block (a
	 * CSV file's columns settle over all of it): tiny windows over
	 * pieces of a few bytes on 3 threads must agree with the text in
	 * memory (1: the file is not for windows, e.g. blank lines before
	 * the data) */
	struct boar_dataset *win = NULL;
	int rc3 = boar_parse_file_windows(path, o, 3, SMALL_BLOCK, 8, &fmt,
					  &id, &regular, &win, &err2);
	if (rc3 != 1) {
		if (rc3)
			fuzz_check_error(rc3, &err2, path);
		if (!rc != !rc3 || (rc && rc != rc3) ||
		    (rc && err.line && err.line != err2.line))
			fuzz_fail("in memory: %s; in windows: %s",
				  rc ? err.message : "parsed",
				  rc3 ? err2.message : "parsed");
		if (!rc) {
			boar_dataset_classify(win);
			fuzz_check_same(whole, win, "parsing in windows");
		}
		boar_dataset_free(win);
	}
	boar_dataset_free(whole);
}

uint8_t *fuzz_take_mode(const uint8_t *data, size_t size, unsigned *mode,
			size_t *len)
{
	if (size < 1)
		return NULL;
	*mode = data[0];
	*len = size - 1;
	uint8_t *buf = malloc(*len ? *len : 1);
	if (buf)
		memcpy(buf, data + 1, *len);
	return buf;
}

void fuzz_put_le32(uint8_t *p, uint32_t v)
{
	for (int k = 0; k < 4; k++)
		p[k] = (uint8_t)(v >> (8 * k));
}
