/* predict_shared.c - one loaded model, predicted from many threads at once.
 *
 * boar.h promises that a model is immutable once built and that
 * boar_model_predict_row() and boar_model_predict_scores(, NULL) may be called
 * from any number of threads on one model without allocating. This program
 * holds the library to it under ThreadSanitizer (tests/cli/cli_tsan.sh
 * builds both with -fsanitize=thread): for each MODEL DATA pair it scores
 * every row of DATA once on the main thread, then from THREADS threads at
 * the same time, each starting at a different row and going round several
 * times, and checks that every answer equals the main thread's, bit for
 * bit. Any race ThreadSanitizer sees is its own report; wrong answers are
 * ours.
 *
 * usage: predict_shared MODEL DATA [MODEL DATA ...]
 * Exit 0 when every answer matched, 1 otherwise, 2 on bad usage or input.
 * The data is read on one thread and the models must be unhashed (the
 * dataset's ids are then the caller's ids).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <boar.h>

#define THREADS 4
#define ROUNDS 3

struct job {
	const boar_model *m;
	const boar_dataset *d;
	uint64_t rows;
	uint32_t width;     /* scores per row: K, or 1 */
	const double *ref;  /* ref[r * (width + 1)]: predict_row, then scores */
	uint64_t start;     /* this thread's first row */
	uint64_t mismatches;
	uint64_t first_bad; /* row of the first mismatch */
};

/* predict_row and predict_scores of row r into out[width + 1]. */
static int score(const boar_model *m, const boar_dataset *d, uint64_t r,
		 double *out)
{
	const uint32_t *idx;
	const float *val;
	float label;
	int64_t nnz = boar_dataset_row(d, r, &idx, &val, &label, NULL);
	if (nnz < 0)
		return -1;
	if (boar_model_predict_row(m, (size_t)nnz, idx, val, &out[0], NULL))
		return -1;
	return boar_model_predict_scores(m, (size_t)nnz, idx, val, &out[1],
					 NULL) < 0
		       ? -1
		       : 0;
}

static void *worker(void *arg)
{
	struct job *j = arg;
	double got[1 + 1024];
	for (int round = 0; round < ROUNDS; round++) {
		for (uint64_t i = 0; i < j->rows; i++) {
			uint64_t r = (j->start + i) % j->rows;
			const double *want = &j->ref[r * (j->width + 1)];
			if (score(j->m, j->d, r, got) ||
			    memcmp(got, want, (j->width + 1) * sizeof *got)) {
				if (!j->mismatches++)
					j->first_bad = r;
			}
		}
	}
	return NULL;
}

static int check(const char *model_path, const char *data_path)
{
	boar_model *m = NULL;
	boar_dataset *d = NULL;
	boar_load_options lo;
	boar_error err = { 0 };
	double *ref = NULL;
	int status = 2;

	if (boar_model_load(model_path, &m, &err)) {
		fprintf(stderr, "predict_shared: %s\n", err.message);
		goto out;
	}
	if (boar_model_task(m) != BOAR_TASK_LINEAR || boar_model_hash_bits(m)) {
		fprintf(stderr, "predict_shared: %s: need an unhashed linear "
				"model\n", model_path);
		goto out;
	}
	boar_load_options_default(&lo);
	lo.task = BOAR_TASK_LINEAR;
	lo.threads = 1; /* libgomp is not instrumented: keep it out */
	if (boar_dataset_load(data_path, &lo, &d, &err)) {
		fprintf(stderr, "predict_shared: %s\n", err.message);
		goto out;
	}
	uint32_t K = boar_model_classes(m, NULL);
	uint32_t width = K ? K : 1;
	uint64_t rows = boar_dataset_rows(d);
	ref = malloc((rows ? rows : 1) * (width + 1) * sizeof *ref);
	if (!ref || width > 1024) {
		fprintf(stderr, "predict_shared: out of memory\n");
		goto out;
	}
	for (uint64_t r = 0; r < rows; r++)
		if (score(m, d, r, &ref[r * (width + 1)])) {
			fprintf(stderr, "predict_shared: %s: row %llu cannot "
					"be scored\n", data_path,
				(unsigned long long)r + 1);
			goto out;
		}

	struct job jobs[THREADS];
	pthread_t tid[THREADS];
	for (int t = 0; t < THREADS; t++) {
		jobs[t] = (struct job){ .m = m, .d = d, .rows = rows,
					.width = width, .ref = ref,
					.start = rows * t / THREADS };
		if (pthread_create(&tid[t], NULL, worker, &jobs[t])) {
			fprintf(stderr, "predict_shared: pthread_create failed\n");
			for (int u = 0; u < t; u++)
				pthread_join(tid[u], NULL);
			goto out;
		}
	}
	uint64_t bad = 0;
	for (int t = 0; t < THREADS; t++) {
		pthread_join(tid[t], NULL);
		if (jobs[t].mismatches)
			fprintf(stderr, "FAIL: %s on %s: thread %d got %llu "
					"answers unlike the main thread's "
					"(first at row %llu)\n",
				model_path, data_path, t,
				(unsigned long long)jobs[t].mismatches,
				(unsigned long long)jobs[t].first_bad + 1);
		bad += jobs[t].mismatches;
	}
	printf("%s on %s: %llu rows x %u scores, %d threads x %d rounds: %s\n",
	       model_path, data_path, (unsigned long long)rows, width + 1,
	       THREADS, ROUNDS, bad ? "MISMATCH" : "all equal");
	status = bad ? 1 : 0;
out:
	free(ref);
	boar_dataset_free(d);
	boar_model_free(m);
	return status;
}

int main(int argc, char **argv)
{
	if (argc < 3 || (argc - 1) % 2) {
		fprintf(stderr, "usage: predict_shared MODEL DATA [MODEL DATA ...]\n");
		return 2;
	}
	int status = 0;
	for (int i = 1; i + 1 < argc; i += 2) {
		int s = check(argv[i], argv[i + 1]);
		if (s > status)
			status = s;
	}
	return status;
}
