/* parse_rate.c - how fast boar_dataset_load parses a text file, and a
 * fingerprint of what it parsed.
 *
 * usage: parse_rate FILE [THREADS [REPEATS [HASH_BITS [FORMAT [LABEL]]]]]
 * Loads FILE (no cache; FORMAT libsvm, vw, csv or ratings, else
 * detected; LABEL a CSV file's label column) REPEATS times on THREADS
 * threads (0: all cores)
 * and prints the best and median wall seconds, the best MB/s of text,
 * the least CPU seconds (all threads) of a load, and
 * an FNV-1a fingerprint of every row (label, ids and values as bit
 * patterns, and the instance weights when there are any; or every
 * rating's user, item and value), so that two builds can be checked to
 * parse the same file to the same bits. With PARSE_RATE_MEMORY=1 in the
 * environment the file is read into memory once and the text parsed
 * with boar_dataset_parse_text (one thread): the parser's own loop,
 * without the file reading. Built with -DBOAR_API_7A340CE it links
 * against commit 7a340ce's libboar (whose load options and row accessor
 * differ), for rebench.sh's old-against-new pairs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <time.h>

#include "boar.h"
#ifndef BOAR_API_7A340CE
#include "data/dataset.h" /* the ratings and weights, for the fingerprint */
#endif

#define MAX_REPEATS 64

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* CPU seconds of the process so far (all threads, user and system): on a
 * machine shared with other work a steadier measure than wall time. */
static double cpu_now(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 +
	       u.ru_stime.tv_sec + u.ru_stime.tv_usec * 1e-6;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t k = 0; k < n; k++)
		h = (h ^ b[k]) * 0x100000001b3ULL;
	return h;
}

/* Every row's label, length, ids and value bits, in order (then the
 * weights, if any); or every rating's user, item and value. */
static uint64_t fingerprint(const boar_dataset *d)
{
	uint64_t h = 0xcbf29ce484222325ULL, n = boar_dataset_rows(d);
#ifndef BOAR_API_7A340CE
	if (d->task == BOAR_TASK_MF) {
		for (uint64_t r = 0; r < n; r++) {
			h = fnv(h, &d->user[r], 4);
			h = fnv(h, &d->item[r], 4);
			h = fnv(h, &d->label[r], 4);
		}
		return h;
	}
#endif
	for (uint64_t r = 0; r < n; r++) {
		const uint32_t *idx;
		const float *val;
		float y;
#ifdef BOAR_API_7A340CE
		int64_t k = boar_dataset_row(d, r, &idx, &val, &y);
#else
		int64_t k = boar_dataset_row(d, r, &idx, &val, &y, NULL);
#endif
		if (k < 0)
			return 0; /* ratings: rows are not readable here */
		h = fnv(h, &y, 4);
		h = fnv(h, &k, 8);
		h = fnv(h, idx, (size_t)k * 4);
		h = fnv(h, val, (size_t)k * 4);
	}
#ifndef BOAR_API_7A340CE
	if (d->weight)
		h = fnv(h, d->weight, n * 4);
#endif
	return h;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr,
			"usage: parse_rate FILE [THREADS [REPEATS [HASH_BITS [FORMAT [LABEL]]]]]\n");
		return 2;
	}
	int threads = argc > 2 ? atoi(argv[2]) : 0;
	int repeats = argc > 3 ? atoi(argv[3]) : 3;
	if (repeats < 1 || repeats > MAX_REPEATS)
		repeats = 3;
	boar_load_options lo;
	boar_load_options_default(&lo);
	lo.threads = threads;
	lo.hash_bits = argc > 4 ? atoi(argv[4]) : 0;
	if (argc > 5) {
		lo.format = boar_format_from_name(argv[5]);
		if (lo.format < 0) {
			fprintf(stderr, "parse_rate: unknown format %s\n", argv[5]);
			return 2;
		}
		if (lo.format == BOAR_FORMAT_RATINGS)
			lo.task = BOAR_TASK_MF;
	}
	if (argc > 6)
		lo.csv_label = argv[6];
	struct stat st;
	if (stat(argv[1], &st) < 0) {
		perror(argv[1]);
		return 1;
	}
	char *text = NULL;
#ifndef BOAR_API_7A340CE
	const char *mem = getenv("PARSE_RATE_MEMORY");
	if (mem && *mem == '1') {
		FILE *f = fopen(argv[1], "rb");
		text = malloc((size_t)st.st_size + 1);
		if (!f || !text ||
		    fread(text, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
			fprintf(stderr, "parse_rate: cannot read %s\n", argv[1]);
			return 1;
		}
		fclose(f);
	}
#endif
	double t[MAX_REPEATS], cpu[MAX_REPEATS];
	uint64_t fp = 0, rows = 0, nnz = 0;
	for (int rep = 0; rep < repeats; rep++) {
		boar_dataset *d = NULL;
		boar_error err;
		double t0 = now(), c0 = cpu_now();
#ifndef BOAR_API_7A340CE
		int ret = text ? boar_dataset_parse_text(text, (size_t)st.st_size,
							 argv[1], &lo, &d, &err)
			       : boar_dataset_load(argv[1], &lo, &d, &err);
#else
		int ret = boar_dataset_load(argv[1], &lo, &d, &err);
#endif
		if (ret) {
			fprintf(stderr, "parse_rate: %s\n", err.message);
			return 1;
		}
		t[rep] = now() - t0;
		cpu[rep] = cpu_now() - c0;
		if (rep == 0) {
			fp = fingerprint(d);
			rows = boar_dataset_rows(d);
			nnz = boar_dataset_nnz(d);
		}
		boar_dataset_free(d);
	}
	free(text);
	qsort(t, (size_t)repeats, sizeof t[0], by_value);
	qsort(cpu, (size_t)repeats, sizeof cpu[0], by_value);
	printf("parse_rate: %llu rows %llu nnz  best %.4f s  median %.4f s  %.0f MB/s  cpu best %.4f s  fingerprint %016llx\n",
	       (unsigned long long)rows, (unsigned long long)nnz, t[0],
	       t[repeats / 2], (double)st.st_size / t[0] / 1e6, cpu[0],
	       (unsigned long long)fp);
	return 0;
}
