/* test_rows_ready.c - boar_load_options.rows_ready, the file reader's
 * report of finished rows (the GPU engine copies them to the card while
 * the rest of the file is parsed): on a plain file, at 1, 3 and 8 threads
 * and windows from 256 bytes to 1 MiB, the reports tile every non-zero
 * and every row exactly once, name the loaded dataset's own arrays and
 * sizes, and the bytes of a range are already final when it is reported
 * (a checksum taken in the hook equals the dataset's). A file with
 * comments and blank lines reports its rows once each too, and its
 * dataset no longer matches the counted sizes, which is how a consumer
 * knows that its copy went stale. The same rows as VW text are reported
 * alike; ratings and text in memory never call the hook.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boar.h"
#include "data/dataset.h"
#include "data/parse_common.h"
#include "testutil.h"

struct report {
	boar_rows_ready r;
	uint64_t sum; /* of the range's bytes, taken in the hook */
};

struct log {
	pthread_mutex_t mu;
	struct report *rep;
	size_t n, cap;
};

/* A checksum of the range's idx, val and label bytes. */
static uint64_t range_sum(const uint32_t *idx, const float *val,
			  const float *label, uint64_t nb, uint64_t ne,
			  uint64_t rb, uint64_t re)
{
	uint64_t h = 1469598103934665603ULL;
	for (uint64_t k = nb; k < ne; k++) {
		uint32_t v;
		memcpy(&v, &val[k], 4);
		h = (h ^ idx[k]) * 1099511628211ULL;
		h = (h ^ v) * 1099511628211ULL;
	}
	for (uint64_t k = rb; k < re; k++) {
		uint32_t v;
		memcpy(&v, &label[k], 4);
		h = (h ^ v) * 1099511628211ULL;
	}
	return h;
}

static void on_rows(const boar_rows_ready *r, void *ctx)
{
	struct log *l = ctx;
	uint64_t sum = range_sum(r->idx, r->val, r->label, r->nnz_begin,
				 r->nnz_end, r->row_begin, r->row_end);
	pthread_mutex_lock(&l->mu);
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->rep = realloc(l->rep, l->cap * sizeof *l->rep);
		if (!l->rep)
			abort();
	}
	l->rep[l->n].r = *r;
	l->rep[l->n].sum = sum;
	l->n++;
	pthread_mutex_unlock(&l->mu);
}

/* rows lines of "label id:val ...", ascending ids, 0 to 14 features;
 * with `odd`, comment and blank lines between them. */
static char *make_text(int rows, int odd, uint64_t seed)
{
	size_t cap = (size_t)rows * 240 + 64, len = 0;
	char *t = malloc(cap);
	test_rng_seed(seed);
	for (int r = 0; r < rows; r++) {
		if (odd && r % 17 == 3)
			len += sprintf(t + len, "# a comment %d\n", r);
		if (odd && r % 23 == 5)
			len += sprintf(t + len, "\n");
		len += sprintf(t + len, "%d", test_rng() % 2 ? 1 : -1);
		int n = (int)(test_rng() % 15);
		unsigned id = 0;
		for (int k = 0; k < n; k++) {
			id += 1 + (unsigned)(test_rng() % 50);
			len += sprintf(t + len, " %u:%.3f", id,
				       test_unif() * 4 - 2);
		}
		t[len++] = '\n';
	}
	t[len] = '\0';
	return t;
}

/* The same rows as VW text, "label |f id:val ...": VW reads a numeric
 * name as its number (plus the namespace's seed), so with 24 hash bits no
 * two ids of a row share a slot and nothing is merged; a value of 0 (VW
 * drops the feature) becomes 1. */
static char *to_vw(const char *t)
{
	char *v = malloc(2 * strlen(t) + 1), *o = v;
	for (const char *p = t; *p;) {
		const char *sp = strchr(p, ' '), *nl = strchr(p, '\n');
		if (sp && sp < nl) {
			o += sprintf(o, "%.*s |f%.*s\n", (int)(sp - p), p,
				     (int)(nl - sp), sp);
		} else {
			o += sprintf(o, "%.*s |f\n", (int)(nl - p), p);
		}
		p = nl + 1;
	}
	*o = '\0';
	/* VW drops a feature whose value is 0: none here */
	for (char *z = v; (z = strstr(z, "0.000")); z += 5)
		if (z - v >= 2 && (z[5] == ' ' || z[5] == '\n') &&
		    (z[-1] == ':' || (z[-1] == '-' && z[-2] == ':')))
			z[0] = '1';
	return v;
}

/* VW, hashed: its loads with 24 hash bits. */
static int vw_format;

static struct boar_dataset *load(const char *path, int threads,
				 size_t window, struct log *l)
{
	boar_load_options o;
	boar_load_options_default(&o);
	if (vw_format) {
		o.format = BOAR_FORMAT_VW;
		o.hash_bits = 24;
	}
	o.rows_ready = on_rows;
	o.rows_ready_ctx = l;
	int format = 0, regular = 0;
	struct src_id id;
	struct boar_dataset *d = NULL;
	boar_error e = { 0 };
	int rc = boar_parse_file_windows(path, &o, threads, window, 30,
					 &format, &id, &regular, &d, &e);
	CHECK(rc == 0 && d, "windows load of %s: %d %s", path, rc, e.message);
	return d;
}

/* Every position in [0, n) covered exactly once by the reports' ranges. */
static int tiles(const struct log *l, uint64_t n, int rows)
{
	unsigned char *seen = calloc(n ? n : 1, 1);
	int ok = 1;
	for (size_t k = 0; k < l->n && ok; k++) {
		const boar_rows_ready *r = &l->rep[k].r;
		uint64_t b = rows ? r->row_begin : r->nnz_begin;
		uint64_t e = rows ? r->row_end : r->nnz_end;
		ok = b <= e && e <= n;
		for (uint64_t i = b; ok && i < e; i++)
			ok = !seen[i]++;
	}
	for (uint64_t i = 0; ok && i < n; i++)
		ok = seen[i] == 1;
	free(seen);
	return ok;
}

static void plain_file(const char *path, int threads, size_t window)
{
	struct log l = { .mu = PTHREAD_MUTEX_INITIALIZER };
	struct boar_dataset *d = load(path, threads, window, &l);
	if (!d)
		return;
	CHECK(l.n > 0, "%d threads, window %zu: rows were reported",
	      threads, window);
	int same = 1, sums = 1;
	for (size_t k = 0; k < l.n; k++) {
		const boar_rows_ready *r = &l.rep[k].r;
		same &= r->idx == d->idx && r->val == d->val &&
			r->label == d->label && r->nnz_cap == d->nnz &&
			r->rows_cap == d->n_rows;
		sums &= l.rep[k].sum == range_sum(d->idx, d->val, d->label,
						  r->nnz_begin, r->nnz_end,
						  r->row_begin, r->row_end);
	}
	CHECK(same, "%d threads, window %zu: the reports name the dataset's "
		    "arrays and sizes", threads, window);
	CHECK(sums, "%d threads, window %zu: reported bytes are final",
	      threads, window);
	CHECK(tiles(&l, d->nnz, 0), "%d threads, window %zu: every non-zero "
				    "once", threads, window);
	CHECK(tiles(&l, d->n_rows, 1), "%d threads, window %zu: every row "
				       "once", threads, window);
	boar_dataset_free(d);
	free(l.rep);
}

static void odd_file(const char *path)
{
	struct log l = { .mu = PTHREAD_MUTEX_INITIALIZER };
	struct boar_dataset *d = load(path, 3, 512, &l);
	if (!d)
		return;
	uint64_t rows = 0, nnz = 0;
	int moved = 0;
	for (size_t k = 0; k < l.n; k++) {
		const boar_rows_ready *r = &l.rep[k].r;
		rows += r->row_end - r->row_begin;
		nnz += r->nnz_end - r->nnz_begin;
		moved |= r->nnz_cap != d->nnz || r->rows_cap != d->n_rows;
	}
	CHECK(rows == d->n_rows && nnz == d->nnz,
	      "comments: each row reported once (%llu of %llu rows)",
	      (unsigned long long)rows, (unsigned long long)d->n_rows);
	CHECK(moved, "comments: the counted sizes differ from the dataset's");
	boar_dataset_free(d);
	free(l.rep);
}

int main(void)
{
	snprintf(test_dir, sizeof test_dir, "%s/boar-rows-ready.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(test_dir)) {
		perror("mkdtemp");
		return 1;
	}
	char *t = make_text(3000, 0, 7);
	char plain[600];
	snprintf(plain, sizeof plain, "%s", test_put_file("plain.svm", t,
							   strlen(t)));
	int threads[] = { 1, 3, 8 };
	size_t windows[] = { 256, 4096, 1 << 20 };
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			plain_file(plain, threads[i], windows[j]);

	/* the public load of the same file reports as well */
	struct log l = { .mu = PTHREAD_MUTEX_INITIALIZER };
	boar_load_options o;
	boar_load_options_default(&o);
	o.rows_ready = on_rows;
	o.rows_ready_ctx = &l;
	boar_dataset *d = NULL;
	boar_error e = { 0 };
	CHECK(boar_dataset_load(plain, &o, &d, &e) == 0, "load: %s",
	      e.message);
	CHECK(d && tiles(&l, d->nnz, 0) && tiles(&l, d->n_rows, 1),
	      "boar_dataset_load: every row and non-zero reported once");
	boar_dataset_free(d);
	/* text in memory: no reports */
	size_t before = l.n;
	d = NULL;
	CHECK(boar_dataset_parse_text(t, strlen(t), "text", &o, &d, &e) == 0,
	      "text: %s", e.message);
	CHECK(l.n == before, "text in memory calls no hook");
	boar_dataset_free(d);
	free(l.rep);
	free(t);

	t = make_text(3000, 1, 8);
	odd_file(test_put_file("odd.svm", t, strlen(t)));
	free(t);

	/* VW's rows are reported alike */
	t = make_text(3000, 0, 9);
	char *v = to_vw(t);
	vw_format = 1;
	char vw[600];
	snprintf(vw, sizeof vw, "%s", test_put_file("plain.vw", v, strlen(v)));
	plain_file(vw, 3, 4096);
	vw_format = 0;
	free(v);
	free(t);
	/* ratings have no place in a report: none */
	l = (struct log){ .mu = PTHREAD_MUTEX_INITIALIZER };
	const char *r = test_put_file("r.ratings", "1 2 3\n4 5 1.5\n", 14);
	o.task = BOAR_TASK_MF;
	d = NULL;
	CHECK(boar_dataset_load(r, &o, &d, &e) == 0 && l.n == 0,
	      "ratings: %s, %zu reports", e.message, l.n);
	boar_dataset_free(d);
	unlink(r);
	unlink(vw);

	unlink(plain);
	char odd[600];
	snprintf(odd, sizeof odd, "%s/odd.svm", test_dir);
	unlink(odd);
	rmdir(test_dir);
	return TEST_RESULT();
}
