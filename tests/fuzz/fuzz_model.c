/* fuzz_model.c - the model file loader (src/model/model_io.c), and what is done
 * with a model once loaded.
 *
 * The input is a mode byte (fuzz.h) and then the model file; with
 * FUZZ_FIX_SUMS the crc32 before the "BEND" trailer is recomputed, so that
 * the fuzzer reaches what a loader must check beyond it. A model that
 * loads must keep the promises a trained one keeps (issue 14, case 6 and
 * the inconsistent headers): every weight, factor, bias and class label
 * finite, class labels strictly ascending, a loss that fits the kind of
 * model (softmax only with classes, classes never with squared loss, MF
 * always squared). It is then used as the CLI would: rows predicted
 * (ids in and past its dimension), a small dataset evaluated (AUC,
 * accuracy, RMSE; a hang here is libFuzzer's timeout), the text export
 * written, and the model saved and loaded again, which must give the same
 * file.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "model/model.h"
#include "tests/fuzz/fuzz.h"

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int k = 0; k < 4; k++)
		p[k] = (uint8_t)(v >> (8 * k));
}

static void check_floats(const float *x, uint64_t n, const char *what)
{
	for (uint64_t k = 0; k < n; k++)
		if (!isfinite(x[k]))
			fuzz_fail("model %s[%llu] is %g", what,
				  (unsigned long long)k, (double)x[k]);
}

static void check_model(const struct boar_model *m)
{
	if (m->task == BOAR_TASK_LINEAR) {
		uint64_t n = 0;
		const float *w = NULL;
		if (boar_model_weights(m, &w, &n, NULL))
			fuzz_fail("boar_model_weights refuses a linear model");
		if (n != (m->dim + 1) * boar_model_width(m))
			fuzz_fail("%llu weights for dim %llu and %u classes",
				  (unsigned long long)n,
				  (unsigned long long)m->dim, m->n_classes);
		check_floats(w, n, "weight");
		check_floats(m->classes, m->n_classes, "class label");
		for (uint32_t c = 1; c < m->n_classes; c++)
			if (!(m->classes[c - 1] < m->classes[c]))
				fuzz_fail("class labels %g, %g not ascending",
					  (double)m->classes[c - 1],
					  (double)m->classes[c]);
		if (m->loss == BOAR_LOSS_SOFTMAX && m->n_classes < 2)
			fuzz_fail("softmax model with %u classes",
				  m->n_classes);
		if (m->loss == BOAR_LOSS_SQUARED && m->n_classes)
			fuzz_fail("squared-loss model with %u classes",
				  m->n_classes);
		return;
	}
	if (m->task != BOAR_TASK_MF)
		fuzz_fail("model of task %d", m->task);
	if (m->loss != BOAR_LOSS_SQUARED || m->n_classes)
		fuzz_fail("MF model with loss %d and %u classes", m->loss,
			  m->n_classes);
	check_floats(m->P, m->dim * m->rank, "P");
	check_floats(m->Q, m->n_items * m->rank, "Q");
	if (m->has_bias) {
		check_floats(m->bu, m->dim, "user bias");
		check_floats(m->bi, m->n_items, "item bias");
		check_floats(&m->mu, 1, "mean");
	}
}

/* Tiny datasets to evaluate a loaded model on, built once. */
static boar_dataset *linear_data, *ratings_data;

static void make_data(void)
{
	static const uint64_t row_ptr[5] = { 0, 2, 3, 5, 5 };
	static const uint32_t idx[5] = { 0, 7, 1, 2, 1000000 };
	static const float val[5] = { 1, -2, 0.5f, 3, 1 };
	static const float labels[4] = { 1, -1, 1, -1 };
	static const uint32_t users[4] = { 0, 1, 3, 100000 };
	static const uint32_t items[4] = { 0, 2, 1, 0 };
	static const float ratings[4] = { 4, 1, 3, 5 };
	if (boar_dataset_from_csr(4, 1000001, row_ptr, idx, val, labels,
				  &linear_data, NULL) ||
	    boar_dataset_from_ratings(4, users, items, ratings, &ratings_data,
				      NULL))
		fuzz_fail("cannot build the evaluation datasets");
}

static void use_model(const boar_model *m)
{
	static const uint32_t ids[6] = { 0, 1, 7, 65535, 1u << 31, UINT32_MAX };
	static const float vals[6] = { 1, -1, 2, 0.5f, 1, 3 };
	static double scores[BOAR_MAX_CLASSES];
	boar_metrics res;
	if (!linear_data)
		make_data();
	if (boar_model_task(m) == BOAR_TASK_LINEAR) {
		double s;
		boar_model_predict_row(m, 6, ids, vals, &s, NULL);
		boar_model_predict_row(m, 0, ids, vals, &s, NULL);
		boar_model_predict_scores(m, 6, ids, vals, scores, NULL);
		boar_evaluate(m, linear_data, &res, 1, NULL);
	} else {
		double s;
		boar_model_predict_pair(m, 0, 0, &s, NULL);
		boar_model_predict_pair(m, UINT32_MAX, UINT32_MAX, &s, NULL);
		boar_evaluate(m, ratings_data, &res, 1, NULL);
	}
	boar_model_export_text(m, fuzz_path("export"), NULL);
}

/* save(load(file)) must give the file back. */
static void round_trip(const boar_model *m, const uint8_t *file, size_t len)
{
	const char *path = fuzz_path("saved");
	boar_error err;
	if (boar_model_save(m, path, &err))
		fuzz_fail("cannot save a loaded model: %s", err.message);
	FILE *f = fopen(path, "rb");
	uint8_t *back = malloc(len + 1);
	size_t got = f && back ? fread(back, 1, len + 1, f) : 0;
	if (f)
		fclose(f);
	if (got != len || memcmp(back, file, len))
		fuzz_fail("the model saved again is not the file loaded "
			  "(%zu bytes, was %zu)", got, len);
	free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned mode = data[0];
	data++;
	size--;
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if ((mode & FUZZ_FIX_SUMS) && size >= 8)
		put_le32(buf + size - 8,
			 (uint32_t)crc32(0, buf, (uInt)(size - 8)));
	const char *path = fuzz_write_file("model", buf, size);

	boar_model *m = NULL;
	boar_error err;
	memset(&err, 0, sizeof err);
	int rc = boar_model_load(path, &m, &err);
	if (rc) {
		fuzz_check_error(rc, &err, path);
	} else {
		check_model(m);
		use_model(m);
		round_trip(m, buf, size);
		boar_model_free(m);
	}
	free(buf);
	return 0;
}
