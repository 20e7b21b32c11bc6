/* metrics.c - scoring a dataset with a model: predictions, loss, accuracy,
 * AUC, RMSE. Rows are scored in parallel; sums are reduced per thread. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "data/dataset.h"
#include "base/error.h"
#include "math/loss.h"
#include "math/mf_step.h"
#include "auc.h"
#include "metrics.h"
#include "model.h"

/* 0 if d was read as the model's training data was, else BOAR_EMISMATCH
 * saying what differs. */
static int check_fit(const struct boar_model *m, const struct boar_dataset *d,
		     boar_error *err)
{
	if (m->task != d->task)
		return boar_fail(err, BOAR_EMISMATCH,
				 "%s: the model is %s, the data %s",
				 boar_strerror(BOAR_EMISMATCH),
				 m->task == BOAR_TASK_MF ? "MF" : "linear",
				 d->task == BOAR_TASK_MF ? "ratings"
							 : "linear rows");
	if (m->task == BOAR_TASK_LINEAR && m->hash_bits != d->hash_bits)
		return boar_fail(err, BOAR_EMISMATCH,
				 "%s: hash_bits is %d in the model, %d in the "
				 "data", boar_strerror(BOAR_EMISMATCH),
				 m->hash_bits, d->hash_bits);
	if (m->task == BOAR_TASK_LINEAR && m->slot_ids != d->slot_ids)
		return boar_fail(err, BOAR_EMISMATCH,
				 "%s: the %s has hashed feature names, the %s "
				 "plain ids", boar_strerror(BOAR_EMISMATCH),
				 m->slot_ids ? "model" : "data",
				 m->slot_ids ? "data" : "model");
	return 0;
}

/* The margins of row r into s[max(K, 1)]. */
static void row_margins(const struct boar_model *m,
			const struct boar_dataset *d, uint64_t r, double *s)
{
	uint64_t lo = d->row_ptr[r];
	boar_model_margins(m, d->row_ptr[r + 1] - lo, d->idx + lo, d->val + lo,
			   0, s);
}

/* The class index of a label, or K if the model never saw it. */
static uint32_t class_of(const struct boar_model *m, float label)
{
	for (uint32_t c = 0; c < m->n_classes; c++)
		if (m->classes[c] == label)
			return c;
	return m->n_classes;
}

/* Raw score (margin or rating) of row r. Ids beyond the model are ignored:
 * a test file may use features the training file never had. */
static inline double score_row(const struct boar_model *m,
			       const struct boar_dataset *d, uint64_t r)
{
	if (m->n_classes) {
		/* sigmoid and softmax keep the margins' order */
		double s[BOAR_MAX_CLASSES];
		row_margins(m, d, r, s);
		return m->classes[boar_argmax(s, m->n_classes)];
	}
	if (m->task == BOAR_TASK_MF)
		return boar_model_rating(m, d->user[r], d->item[r]);
	double s;
	row_margins(m, d, r, &s);
	return s;
}

static int threads_or_all(int threads)
{
	return threads > 0 ? threads : omp_get_num_procs();
}

int boar_predict(const boar_model *m, const boar_dataset *d, double *out,
		 int threads, boar_error *err)
{
	int rc = check_fit(m, d, err);
	if (rc)
		return rc;
	/* in the label's scale: a probability, a count, a value */
	int margins = m->task == BOAR_TASK_LINEAR && !m->n_classes;
#pragma omp parallel for num_threads(threads_or_all(threads)) schedule(static)
	for (uint64_t r = 0; r < d->n_rows; r++) {
		double s = score_row(m, d, r);
		out[r] = margins ? boar_loss_response(m->loss, s) : s;
	}
	return 0;
}

int boar_predict_scores(const boar_model *m, const boar_dataset *d,
			double *out, int threads, boar_error *err)
{
	int rc = check_fit(m, d, err);
	if (rc)
		return rc;
	if (m->task != BOAR_TASK_LINEAR)
		return boar_fail(err, BOAR_EINVAL, "boar_predict_scores: "
				 "the model is matrix factorization");
	if (!m->n_classes)
		return boar_predict(m, d, out, threads, err);
	uint32_t K = m->n_classes;
#pragma omp parallel for num_threads(threads_or_all(threads)) schedule(static)
	for (uint64_t r = 0; r < d->n_rows; r++) {
		row_margins(m, d, r, &out[r * K]);
		boar_class_probabilities(m->loss, &out[r * K], K);
	}
	return 0;
}

/* The loss of one row's margins for class y, from the margins directly
 * (softmax: log-sum-exp minus the true margin; one-vs-rest: a binary loss
 * per class). A label the model never saw, or a probability below 1e-30,
 * costs -log(1e-30). */
static double class_loss(const struct boar_model *m, const double *s,
			 uint32_t K, uint32_t y)
{
	if (boar_loss_kind(m->loss) == BOAR_LOSS_KIND_MULTINOMIAL) {
		if (y >= K)
			return BOAR_LOSS_CAP;
		double p[BOAR_MAX_CLASSES];
		return fmin(boar_softmax_d(s, K, p) - s[y], BOAR_LOSS_CAP);
	}
	double l = 0;
	for (uint32_t c = 0; c < K; c++) {
		float dd;
		l += boar_loss_eval(m->loss, (float)s[c], c == y ? 1.0f : -1.0f,
				    m->loss_param, &dd);
	}
	return l;
}

/* Multiclass: mean loss of the model's kind and accuracy of the argmax.
 * A label the model never saw counts as an error with the loss of the
 * smallest probability representable. */
static void evaluate_classes(const struct boar_model *m,
			     const struct boar_dataset *d, const uint32_t *rows,
			     uint64_t n, int threads, boar_metrics *res)
{
	double loss = 0, correct = 0;
	uint32_t K = m->n_classes;
#pragma omp parallel for num_threads(threads) schedule(static) \
	reduction(+ : loss, correct)
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = rows ? rows[i] : i;
		double s[BOAR_MAX_CLASSES];
		uint32_t y = class_of(m, d->label[r]);
		row_margins(m, d, r, s);
		correct += boar_argmax(s, K) == y;
		loss += class_loss(m, s, K, y);
	}
	res->loss = n ? loss / n : NAN;
	res->accuracy = n ? correct / n : NAN;
	res->auc = NAN;
	res->rmse = NAN;
	res->mae = NAN;
	res->below = NAN;
}

int boar_evaluate(const boar_model *m, const boar_dataset *d,
		  boar_metrics *out, int threads, boar_error *err)
{
	return boar_evaluate_rows(m, d, NULL, d->n_rows, out, threads, err);
}

int boar_evaluate_rows(const struct boar_model *m,
		       const struct boar_dataset *d, const uint32_t *rows,
		       uint64_t n, boar_metrics *out, int threads,
		       boar_error *err)
{
	int rc = check_fit(m, d, err);
	if (rc)
		return rc;
	threads = threads_or_all(threads);
	if (m->n_classes) {
		boar_metrics res = {.rows = n, .binary = 0};
		evaluate_classes(m, d, rows, n, threads, &res);
		*out = res;
		return 0;
	}
	int binary = m->task == BOAR_TASK_LINEAR &&
		     boar_loss_kind(m->loss) != BOAR_LOSS_KIND_REGRESSION;
	/* the AUC's keys (n words, then n more for its sort) and classes */
	uint64_t *key = binary ? malloc((n ? n : 1) * 2 * sizeof *key) : NULL;
	uint8_t *positive = binary ? malloc(n ? n : 1) : NULL;
	if (binary && (!key || !positive)) {
		free(key);
		free(positive);
		return boar_fail(err, BOAR_ENOMEM, "scoring %llu rows",
				 (unsigned long long)n);
	}
	double loss = 0, sq = 0, ab = 0, below = 0, correct = 0;
	uint64_t nans = 0;
#pragma omp parallel for num_threads(threads) schedule(static) \
	reduction(+ : loss, sq, ab, below, correct, nans)
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = rows ? rows[i] : i;
		double sc = score_row(m, d, r);
		float y = boar_loss_target(m->loss, d->label[r]), dd;
		loss += m->task == BOAR_TASK_MF
				? boar_mf_rating_loss(m->mf_loss, (float)sc, y, &dd)
				: boar_loss_eval(m->loss, (float)sc, y,
						 m->loss_param, &dd);
		if (binary) {
			correct += (sc > 0) == (y > 0);
			/* NaN has no rank: the AUC is NaN (auc_key
			 * must not see one) */
			nans += isnan(sc) != 0;
			key[i] = isnan(sc) ? 0 : auc_key(sc);
			positive[i] = y > 0;
			continue;
		}
		/* regression and MF: in the label's scale */
		double pred = m->task == BOAR_TASK_MF
				      ? sc : boar_loss_response(m->loss, sc);
		double e = pred - d->label[r];
		sq += e * e;
		ab += fabs(e);
		below += d->label[r] < pred;
	}
	boar_metrics res = {.rows = n, .binary = binary};
	res.loss = n ? loss / n : NAN;
	res.rmse = !binary && n ? sqrt(sq / n) : NAN;
	res.mae = !binary && n ? ab / n : NAN;
	res.below = !binary && n ? below / n : NAN;
	res.accuracy = binary && n ? correct / n : NAN;
	res.auc = !binary || nans ? NAN : auc_of_keys(key, positive, n, key + n);
	free(key);
	free(positive);
	*out = res;
	return 0;
}
