/* test_parse_stream.c - reading data files in blocks (parse_source.c,
 * parse_stream.c).
 *
 * - A file cut while it is read is an error naming it (issue 14, case 1:
 *   on main at 7a340ce the file was mapped, and the parser's first touch
 *   of a page past the new end killed the process with SIGBUS; run
 *   `boar train big.svm & truncate -s 1M big.svm` to see it);
 * - every format parses the same in blocks of a few lines as in one
 *   block, with line numbers of errors counted across blocks, headers
 *   only at the file's start, and a CSV column that is numeric in the
 *   first block refused (not reread as categorical) when a later block
 *   holds a word in it;
 * - a UTF-8 BOM is dropped for every format; devices are refused;
 * - gzip input of many members inflates across blocks;
 * - data over max_memory is refused before it is kept;
 * - plain LIBSVM text in a regular file, read in windows of a few bytes
 *   over pieces of a few lines on 3 threads (what each thread of
 *   boar_parse_file does, in windows of 1 MiB), parses as in one block,
 *   with the same line numbers in errors; a file cut while its windows
 *   are read is an error naming it; gzip, blank lines before the data
 *   and other formats are left to the block reader.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "boar.h"
#include "data/dataset.h"
#include "data/parse_chunks.h"
#include "data/format_detect.h"
#include "data/parse_common.h"
#include "testutil.h"

static char dir[256];

static char *path_of(const char *name)
{
	static char p[4][600];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
	return p[k];
}

static void put(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "cannot write %s\n", path);
		exit(1);
	}
}

static int same(const struct boar_dataset *a, const struct boar_dataset *b)
{
	if (a->task != b->task || a->n_rows != b->n_rows || a->nnz != b->nnz ||
	    a->dim != b->dim || a->n_items != b->n_items ||
	    !a->weight != !b->weight)
		return 0;
	uint64_t n = a->n_rows;
	if (memcmp(a->label, b->label, n * 4))
		return 0;
	if (a->task == BOAR_TASK_MF)
		return !memcmp(a->user, b->user, n * 4) &&
		       !memcmp(a->item, b->item, n * 4);
	return !memcmp(a->row_ptr, b->row_ptr, (n + 1) * 8) &&
	       !memcmp(a->idx, b->idx, a->nnz * 4) &&
	       !memcmp(a->val, b->val, a->nnz * 4) &&
	       (!a->weight || !memcmp(a->weight, b->weight, n * 4));
}

/* Parses path in blocks of `size` bytes on 2 threads (BLOCKS), or in
 * windows of `size` bytes over pieces of at least 30 bytes on 3 threads
 * (WINDOWS: 1 when the file is not for windows). */
enum { BLOCKS, WINDOWS };

static int parse_in(int how, const char *path, const boar_load_options *o,
		    size_t size, struct boar_dataset **d, boar_error *e)
{
	int format = o->format;
	struct src_id id;
	int regular;
	memset(e, 0, sizeof *e);
	*d = NULL;
	if (how == WINDOWS)
		return boar_parse_file_windows(path, o, 3, size, 30, &format,
					       &id, &regular, d, e);
	return boar_parse_file_blocks(path, o, 2, size, &format, &id,
				      &regular, d, e);
}

static int parse(const char *path, const boar_load_options *o, size_t block,
		 struct boar_dataset **d, boar_error *e)
{
	return parse_in(BLOCKS, path, o, block, d, e);
}

/* The file parses alike in one block and in each of sizes[] (0-ended)
 * as `how` says: 40-byte blocks, or windows of 40 and 7 bytes (most
 * lines longer than the window). */
static void alike(int lineno, int how, const char *name, const char *text,
		  const boar_load_options *o)
{
	static const size_t sizes[2][3] = { { 40, 0 }, { 40, 7, 0 } };
	const char *path = path_of(name);
	put(path, text, strlen(text));
	struct boar_dataset *one = NULL, *other = NULL;
	boar_error e;
	int r1 = parse(path, o, 1 << 20, &one, &e);
	for (const size_t *w = sizes[how]; *w; w++) {
		int r2 = parse_in(how, path, o, *w, &other, &e);
		if (r1 || r2 || !same(one, other) || one->n_rows < 20) {
			fprintf(stderr, "FAIL %s:%d: %s: one block %d, %zu-byte %s %d (%s), rows %llu vs %llu\n",
				__FILE__, lineno, name, r1, *w,
				how == WINDOWS ? "windows" : "blocks", r2,
				e.message,
				one ? (unsigned long long)one->n_rows : 0ULL,
				other ? (unsigned long long)other->n_rows : 0ULL);
			test_failures++;
		}
		boar_dataset_free(other);
	}
	boar_dataset_free(one);
}

/* Parsing in 40-byte blocks (or 16-byte windows) fails with code, naming
 * the file, the line and `want`. */
static void fails(int lineno, int how, const char *name, const char *text,
		  const boar_load_options *o, int code, int line,
		  const char *want)
{
	const char *path = path_of(name);
	put(path, text, strlen(text));
	struct boar_dataset *d = NULL;
	boar_error e;
	int r = parse_in(how, path, o, how == WINDOWS ? 16 : 40, &d, &e);
	char pre[700];
	snprintf(pre, sizeof pre, "%s:%d: ", path, line);
	if (r != code || d || strncmp(e.message, pre, strlen(pre)) ||
	    !strstr(e.message, want)) {
		fprintf(stderr, "FAIL %s:%d: %s: expected %d \"%s...%s\", got %d \"%s\"\n",
			__FILE__, lineno, name, code, pre, want, r, e.message);
		test_failures++;
	}
	boar_dataset_free(d);
}

/* head, then line n times, then tail (malloc'd). */
static char *repeat_tail(const char *head, const char *line, int n,
			 const char *tail)
{
	size_t a = strlen(head), b = strlen(line), c = strlen(tail);
	char *s = malloc(a + b * (size_t)n + c + 1);
	memcpy(s, head, a);
	for (int k = 0; k < n; k++)
		memcpy(s + a + b * (size_t)k, line, b);
	memcpy(s + a + b * (size_t)n, tail, c + 1);
	return s;
}

static char *repeat(const char *head, const char *line, int n)
{
	return repeat_tail(head, line, n, "");
}

static void test_formats_in_blocks(void)
{
	boar_load_options o;
	boar_load_options_default(&o);
	char *t = repeat("# comment\n", "+1 1:0.5 7:2\n\n-1 3:1 # c\n", 30);
	alike(__LINE__, BLOCKS, "a.svm", t, &o);
	free(t);
	o.hash_bits = 4;
	t = repeat("", "1 1:0.5 7:2 23:1\n-1 3:1\n", 30);
	alike(__LINE__, BLOCKS, "h.svm", t, &o);
	free(t);
	boar_load_options_default(&o);
	t = repeat("", "1 2 'tag|f a b:2\n-1 |g c\n", 30);
	alike(__LINE__, BLOCKS, "a.vw", t, &o);
	free(t);
	o.format = BOAR_FORMAT_CSV;
	t = repeat("y,a,b,c,d\n", "1,0.5,x,,3\n0,NA,y,2,\n\n", 30);
	alike(__LINE__, BLOCKS, "a.csv", t, &o);
	free(t);
	boar_load_options_default(&o);
	o.task = BOAR_TASK_MF;
	t = repeat("user,item,rating\n", "1,2,3.5\n7,1,4\n", 30);
	alike(__LINE__, BLOCKS, "a.ratings", t, &o);
	free(t);
}

static void test_errors_across_blocks(void)
{
	boar_load_options o;
	boar_load_options_default(&o);
	char *bad = repeat_tail("", "+1 1:1\n", 50, "-1 2:x\n"); /* 9 blocks */
	fails(__LINE__, BLOCKS, "bad.svm", bad, &o, BOAR_EPARSE, 51,
	      "value 'x' of index 2 is not a number");
	free(bad);

	/* a ratings header is only a header at the start of the file */
	o.task = BOAR_TASK_MF;
	bad = repeat_tail("user,item,rating\n", "1,2,3\n", 40,
			  "user,item,rating\n");
	fails(__LINE__, BLOCKS, "bad.ratings", bad, &o, BOAR_EPARSE, 42,
	      "user id 'user' is not a non-negative integer");
	free(bad);

	/* a CSV column numeric in the first block does not turn categorical
	 * in a later one */
	boar_load_options_default(&o);
	o.format = BOAR_FORMAT_CSV;
	bad = repeat_tail("y,a,b\n", "1,2,3\n", 40, "0,word,3\n");
	fails(__LINE__, BLOCKS, "late.csv", bad, &o, BOAR_EPARSE, 42,
	      "column 1 holds 'word', but it held only numbers in the first block");
	free(bad);
}

static void test_windows(void)
{
	boar_load_options o;
	boar_load_options_default(&o);
	char *t = repeat("# comment\n", "+1 1:0.5 7:2\n\n-1 3:1 qid:4 # c\n", 30);
	alike(__LINE__, WINDOWS, "w.svm", t, &o);
	free(t);
	t = repeat("\xEF\xBB\xBF", "1 1:0.18257418 7:2e-3 23:1\r\n-1 3:1\n", 30);
	alike(__LINE__, WINDOWS, "wbom.svm", t, &o); /* and no '\n' at the end: */
	t[strlen(t) - 1] = '\0';
	alike(__LINE__, WINDOWS, "wlast.svm", t, &o);
	o.hash_bits = 4;
	alike(__LINE__, WINDOWS, "wh.svm", t, &o);
	free(t);

	/* an error's line counts the lines of every piece before it */
	boar_load_options_default(&o);
	char *bad = repeat_tail("", "+1 1:1 2:0.25\n", 60, "-1 2:x\n+1 1:1\n");
	fails(__LINE__, WINDOWS, "wbad.svm", bad, &o, BOAR_EPARSE, 61,
	      "value 'x' of index 2 is not a number");
	free(bad);

	/* only comments: no rows, as in blocks */
	struct boar_dataset *d = NULL;
	boar_error e;
	const char *path = path_of("wnone.svm");
	put(path, "# a\n# b\n", 8);
	CHECK_EQ_INT(parse_in(WINDOWS, path, &o, 16, &d, &e), BOAR_EPARSE);
	CHECK(strstr(e.message, "no data rows"), "%s", e.message);

	/* not for windows: blank lines first, gzip, a first line longer
	 * than the detection window */
	char *longline = repeat_tail("", "x", (int)DETECT_WINDOW + 10, "\n");
	const char *const other[] = { "\n+1 1:1\n", "\x1f\x8b\x08", longline };
	for (size_t k = 0; k < 3; k++) {
		path = path_of("wother");
		put(path, other[k], strlen(other[k]));
		CHECK_EQ_INT(parse_in(WINDOWS, path, &o, 16, &d, &e), 1);
	}
	free(longline);
	/* a FIFO is not opened by the windowed reader (its writer's bytes
	 * would be lost to the block reader's open): refused unopened */
	path = path_of("wfifo");
	if (!mkfifo(path, 0600)) {
		CHECK_EQ_INT(parse_in(WINDOWS, path, &o, 16, &d, &e), 1);
		unlink(path);
	}
}

/* The progress callback runs on the loading thread between windows of
 * the parsing pass: cutting the file there is a cut while it is read. */
struct cut_ctx {
	const char *path;
	int calls;
};

static void cut_in_progress(uint64_t done, uint64_t total, void *ctx)
{
	struct cut_ctx *c = ctx;
	if (!c->calls++ && truncate(c->path, 1000))
		fprintf(stderr, "cannot truncate %s\n", c->path);
}

static void test_cut_while_windowed(void)
{
	static const struct {
		const char *name, *line;
		int task, format;
	} cases[] = {
		{ "wcut.svm", "+1 1:1 2:0.5\n", 0, 0 },
		{ "wcut.vw", "1 |f a b:2\n", 0, BOAR_FORMAT_VW },
		{ "wcut.csv", "1,0.5,x\n", 0, BOAR_FORMAT_CSV },
		{ "wcut.ratings", "1,2,3.5\n", BOAR_TASK_MF, 0 },
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		const char *path = path_of(cases[k].name);
		char *t = repeat("", cases[k].line, 10000);
		put(path, t, strlen(t));
		free(t);
		boar_load_options o;
		boar_load_options_default(&o);
		o.task = cases[k].task;
		o.format = cases[k].format;
		o.csv_header = -1;
		struct cut_ctx cut = { path, 0 };
		o.progress = cut_in_progress;
		o.progress_ctx = &cut;
		struct boar_dataset *d = NULL;
		boar_error e;
		int format = o.format, regular;
		struct src_id id;
		memset(&e, 0, sizeof e);
		CHECK_EQ_INT(boar_parse_file_windows(path, &o, 1, 4096, 1 << 20,
						     &format, &id, &regular,
						     &d, &e),
			     BOAR_EIO);
		CHECK(!d && strstr(e.message, path) &&
			      strstr(e.message, "changed while it was read"),
		      "%s: message: %s", cases[k].name, e.message);
		unlink(path);
	}
}

/* Every format in windows: as in one block at 1 to 8 threads, windows of
 * 16 bytes (most lines longer) over pieces of at least 30 bytes, so that
 * the pieces' cuts fall inside lines and every window ends inside one. */
static void threads_alike(int lineno, const char *name, const char *text,
			  const boar_load_options *o)
{
	const char *path = path_of(name);
	put(path, text, strlen(text));
	struct boar_dataset *one = NULL;
	boar_error e;
	int r1 = parse(path, o, 1 << 20, &one, &e);
	for (int t = 1; t <= 8; t++) {
		struct boar_dataset *win = NULL;
		int format = o->format, regular;
		struct src_id id;
		int r2 = boar_parse_file_windows(path, o, t, 16, 30, &format,
						 &id, &regular, &win, &e);
		if (r1 || r2 || !same(one, win) || one->n_rows < 20) {
			fprintf(stderr, "FAIL %s:%d: %s: one block %d, windows on %d threads %d (%s)\n",
				__FILE__, lineno, name, r1, t, r2, e.message);
			test_failures++;
		}
		boar_dataset_free(win);
	}
	boar_dataset_free(one);
}

static void test_formats_in_windows(void)
{
	boar_load_options o;
	boar_load_options_default(&o);
	o.format = BOAR_FORMAT_VW;
	/* CRLF, blank lines, tags, weights, namespaces with scales */
	char *t = repeat("", "1 2 'tag|f a b:2\r\n\n-1 |g:0.5 c d:-1.5\n", 30);
	threads_alike(__LINE__, "w.vw", t, &o);
	alike(__LINE__, WINDOWS, "w2.vw", t, &o);
	t[strlen(t) - 1] = '\0'; /* no '\n' at the end */
	threads_alike(__LINE__, "wlast.vw", t, &o);
	free(t);
	o.vw_interactions = "fg";
	t = repeat("", "1 |f a b |g c\n-1 |g d |f e\n", 30);
	threads_alike(__LINE__, "wq.vw", t, &o);
	free(t);

	boar_load_options_default(&o);
	o.format = BOAR_FORMAT_CSV;
	/* a header, CRLF, blank lines, missing values, quotes; the word in
	 * column c comes only late (the whole file is one block) */
	t = repeat_tail("y,a,b,c\r\n", "1,0.5,x,2\r\n0,NA,\"y,z\",\n\n", 30,
			"1,2,w,word");
	threads_alike(__LINE__, "w.csv", t, &o);
	free(t);
	o.csv_header = -1;
	t = repeat("", "1\t0.5\tx\n0\t3\ty\n", 30);
	threads_alike(__LINE__, "wtab.csv", t, &o);
	free(t);

	boar_load_options_default(&o);
	o.task = BOAR_TASK_MF;
	/* comments before a header, '::' and ',', blank lines, CRLF */
	t = repeat_tail("# ratings\nuser,item,rating\n",
			"1::2::3.5\r\n\n7,1,4,964982\n# c\n", 30, "3 4 5");
	threads_alike(__LINE__, "w.ratings", t, &o);
	free(t);
	t = repeat("", "1 2 3.5\n7 1 4\n", 30);
	threads_alike(__LINE__, "wplain.ratings", t, &o);
	free(t);

	boar_load_options_default(&o);
	t = repeat("# comment\n", "+1 1:0.5 7:2\r\n\n-1 3:1 qid:4 # c\n", 30);
	threads_alike(__LINE__, "wt.svm", t, &o);
	free(t);
}

/* An error on a late line names it, whichever piece and window hold it. */
static void test_errors_in_windows(void)
{
	boar_load_options o;
	boar_load_options_default(&o);
	o.format = BOAR_FORMAT_VW;
	char *bad = repeat_tail("", "1 |f a b:2\n\n", 40, "1 |f a b:x\n1 |f a\n");
	fails(__LINE__, WINDOWS, "wbad.vw", bad, &o, BOAR_EPARSE, 81,
	      "bad number after ':' in 'b:x'");
	free(bad);

	o.format = BOAR_FORMAT_CSV;
	bad = repeat_tail("y,a,b\n", "1,2,3\r\n", 60, "0,1\n1,2,3\n");
	fails(__LINE__, WINDOWS, "wbad.csv", bad, &o, BOAR_EPARSE, 62,
	      "2 fields, but the first line has 3");
	free(bad);

	boar_load_options_default(&o);
	o.task = BOAR_TASK_MF;
	bad = repeat_tail("# c\nuser,item,rating\n", "1,2,3\n# c\n", 30,
			  "1,-2,3\n1,2,3\n");
	fails(__LINE__, WINDOWS, "wbad.ratings", bad, &o, BOAR_EPARSE, 63,
	      "negative item id '-2'");
	free(bad);
}

/* Issue 14, case 1: the file is cut after the first block was read. */
static void test_cut_while_read(void)
{
	const char *path = path_of("cut.svm");
	char *t = repeat("", "+1 1:1 2:0.5\n", 10000);
	put(path, t, strlen(t));
	free(t);
	struct text_source s;
	boar_error e;
	memset(&e, 0, sizeof e);
	CHECK_EQ_INT(text_source_open(path, 2, &s, &e), 0);
	const char *text;
	size_t len;
	CHECK_EQ_INT(text_source_next(&s, 4096, 0, &text, &len, &e), 0);
	CHECK(len > 4000 && len <= 4096, "first block %zu bytes", len);
	CHECK(truncate(path, 10000) == 0, "truncate");
	int r;
	uint64_t blocks = 0;
	while (!(r = text_source_next(&s, 4096, 0, &text, &len, &e)) && len)
		blocks++;
	CHECK_EQ_INT(r, BOAR_EIO);
	CHECK(strstr(e.message, path) &&
		      strstr(e.message, "changed while it was read"),
	      "message: %s", e.message);
	text_source_close(&s);

	/* grown while read, and rewritten in place: the same */
	t = repeat("", "+1 1:1 2:0.5\n", 1000);
	put(path, t, strlen(t));
	CHECK_EQ_INT(text_source_open(path, 2, &s, &e), 0);
	CHECK_EQ_INT(text_source_next(&s, 4096, 0, &text, &len, &e), 0);
	FILE *f = fopen(path, "ab");
	fputs("-1 3:1\n", f);
	fclose(f);
	while (!(r = text_source_next(&s, 4096, 0, &text, &len, &e)) && len)
		;
	CHECK_EQ_INT(r, BOAR_EIO);
	text_source_close(&s);
	free(t);
	unlink(path);
}

static void test_bom_and_devices(void)
{
	boar_load_options o;
	boar_load_options_default(&o);
	struct boar_dataset *d;
	boar_error e;
	static const struct {
		const char *name, *text;
		int task;
		uint64_t rows;
	} cases[] = {
		{ "bom.svm", "\xEF\xBB\xBF+1 1:1\n-1 2:1\n", 0, 2 },
		{ "bom.vw", "\xEF\xBB\xBF" "1 | a\n-1 | b\n", 0, 2 },
		{ "bom.csv", "\xEF\xBB\xBF\n1,2,3,4,5\n0,1,1,4,5\n", 0, 2 },
		{ "bom.ratings", "\xEF\xBB\xBFu,i,r\n1,2,3\n", BOAR_TASK_MF, 1 },
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		const char *path = path_of(cases[k].name);
		put(path, cases[k].text, strlen(cases[k].text));
		o.task = cases[k].task;
		o.csv_header = strstr(cases[k].name, ".csv") ? -1 : 0;
		d = NULL;
		int r = boar_dataset_load(path, &o, &d, &e);
		CHECK(r == 0 && d && d->n_rows == cases[k].rows,
		      "%s: %d %s, rows %llu", cases[k].name, r, e.message,
		      d ? (unsigned long long)d->n_rows : 0ULL);
		boar_dataset_free(d);
		unlink(path);
	}
	boar_load_options_default(&o);
	d = NULL;
	CHECK_EQ_INT(boar_dataset_load("/dev/null", &o, &d, &e), BOAR_EIO);
	CHECK(strstr(e.message, "/dev/null: is a device"), "%s", e.message);
}

static void test_gzip_members(void)
{
	/* 30 members, each one line, inflated through 40-byte blocks */
	const char *path = path_of("m.svm.gz"), *plain = path_of("m.svm");
	FILE *p = fopen(plain, "wb");
	for (int k = 0; k < 30; k++) {
		char line[64];
		int n = snprintf(line, sizeof line, "%s %d:1 %d:0.5\n",
				 k % 2 ? "+1" : "-1", k + 1, k + 40);
		gzFile z = gzopen(path, k ? "ab" : "wb");
		gzwrite(z, line, (unsigned)n);
		gzclose(z);
		fputs(line, p);
	}
	fclose(p);
	boar_load_options o;
	boar_load_options_default(&o);
	struct boar_dataset *a = NULL, *b = NULL;
	boar_error e;
	CHECK_EQ_INT(parse(path, &o, 40, &a, &e), 0);
	CHECK_EQ_INT(parse(plain, &o, 1 << 20, &b, &e), 0);
	CHECK(a && b && same(a, b) && a->n_rows == 30, "gzip members");
	boar_dataset_free(a);
	boar_dataset_free(b);
	unlink(path);
	unlink(plain);
}

static void test_memory_limit(void)
{
	const char *path = path_of("lim.svm");
	char *t = repeat("", "+1 1:1 2:0.5\n", 100);
	put(path, t, strlen(t));
	free(t);
	boar_load_options o;
	boar_load_options_default(&o);
	o.max_memory = 1000; /* 100 rows, 200 non-zeros: ~2.8 KB */
	struct boar_dataset *d = NULL;
	boar_error e;
	CHECK_EQ_INT(boar_dataset_load(path, &o, &d, &e), BOAR_ENOMEM);
	CHECK(strstr(e.message, path) && strstr(e.message, "the data needs") &&
		      strstr(e.message, "over the memory limit of 1000 B"),
	      "%s", e.message);
	/* and in blocks, refused as it grows */
	CHECK_EQ_INT(parse(path, &o, 40, &d, &e), BOAR_ENOMEM);
	CHECK(!d, "no dataset");
	o.max_memory = 1 << 20;
	CHECK_EQ_INT(boar_dataset_load(path, &o, &d, &e), 0);
	boar_dataset_free(d);
	unlink(path);
}

int main(void)
{
	snprintf(dir, sizeof dir, "%s/boar-test-stream.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_formats_in_blocks();
	test_errors_across_blocks();
	test_cut_while_read();
	test_windows();
	test_cut_while_windowed();
	test_formats_in_windows();
	test_errors_in_windows();
	test_bom_and_devices();
	test_gzip_members();
	test_memory_limit();
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd))
		CHECK(0, "cannot remove %s", dir);
	return TEST_RESULT();
}
