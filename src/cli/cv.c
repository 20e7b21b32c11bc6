/* cv.c - K-fold cross-validation for `boar train --cv K` (cv.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "common.h"
#include "cv.h"
#include "json.h"

/* splitmix64 of (seed, row): the fold of a row, the same at any thread
 * count and in any order. */
static int fold_of(uint64_t seed, uint64_t r, int k)
{
	uint64_t z = seed + (r + 1) * 0x9E3779B97F4A7C15ULL;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	z ^= z >> 31;
	return (int)(z % (uint64_t)k);
}

/* Trains on every fold but f and evaluates on f. */
static int one_fold(const boar_dataset *d, const boar_options *o, int k,
		    int f, uint64_t *rows, boar_metrics *mt, boar_error *err)
{
	uint64_t n = boar_dataset_rows(d), nin = 0, nout = 0;
	/* held-out rows first, the rest after them */
	for (uint64_t r = 0; r < n; r++)
		if (fold_of(o->seed, r, k) == f)
			rows[nin++] = r;
	for (uint64_t r = 0; r < n; r++)
		if (fold_of(o->seed, r, k) != f)
			rows[nin + nout++] = r;
	if (!nin || !nout) {
		snprintf(err->message, sizeof err->message,
			 "fold %d of %d is %s: too few rows for %d folds", f + 1,
			 k, nin ? "everything" : "empty", k);
		return BOAR_EINVAL;
	}
	boar_dataset *te = NULL, *tr = NULL;
	boar_model *m = NULL;
	int rc = boar_dataset_subset(d, rows, nin, &te, err);
	if (!rc)
		rc = boar_dataset_subset(d, rows + nin, nout, &tr, err);
	if (!rc)
		rc = boar_train(tr, o, &m, err);
	boar_error why;
	if (!rc && (rc = boar_evaluate(m, te, mt, o->threads, &why)))
		snprintf(err->message, sizeof err->message,
			 "evaluating fold %d: %.440s", f + 1, why.message);
	boar_model_free(m);
	boar_dataset_free(tr);
	boar_dataset_free(te);
	return rc;
}

/* The metrics a model of this kind is judged by, in print order. */
static int metrics_of(const boar_metrics *mt, int mf_or_reg, double v[3],
		      const char *names[3])
{
	if (mf_or_reg) {
		names[0] = "rmse";
		v[0] = mt->rmse;
		names[1] = "loss";
		v[1] = mt->loss;
		return 2;
	}
	names[0] = "accuracy";
	v[0] = mt->accuracy;
	names[1] = "loss";
	v[1] = mt->loss;
	names[2] = "auc";
	v[2] = mt->auc;
	return mt->binary && isfinite(mt->auc) ? 3 : 2;
}

int cv_run(const boar_dataset *d, const boar_options *o, int k, int json,
	   const char *path)
{
	uint64_t n = boar_dataset_rows(d);
	uint64_t *rows = malloc((n ? n : 1) * sizeof *rows);
	double sum[3] = { 0 }, sq[3] = { 0 };
	const char *names[3] = { 0 };
	int nm = 3, rc = 0;
	boar_error err = { 0 };
	int reg = boar_dataset_task(d) == BOAR_TASK_MF ||
		  boar_loss_describe(o->loss)->kind == BOAR_LOSS_KIND_REGRESSION;
	if (!rows)
		return cli_report(NULL, BOAR_ENOMEM);
	for (int f = 0; f < k && !rc; f++) {
		boar_metrics mt;
		double v[3];
		if ((rc = one_fold(d, o, k, f, rows, &mt, &err)))
			break;
		int c = metrics_of(&mt, reg, v, names);
		nm = c < nm ? c : nm;
		struct json_obj j;
		if (json) {
			json_begin(&j, stdout);
			json_int(&j, "fold", f + 1);
			json_uint(&j, "rows", mt.rows);
		} else {
			printf("fold %d/%d (%llu rows):", f + 1, k,
			       (unsigned long long)mt.rows);
		}
		for (int i = 0; i < c; i++) {
			sum[i] += v[i];
			sq[i] += v[i] * v[i];
			if (json)
				json_num(&j, names[i], v[i]);
			else
				printf("  %s %.4f", names[i], v[i]);
		}
		if (json)
			json_end(&j);
		else
			putchar('\n');
		fflush(stdout);
	}
	free(rows);
	if (rc)
		return cli_report(&err, rc);
	struct json_obj j;
	if (json) {
		json_begin(&j, stdout);
		json_int(&j, "folds", k);
	} else {
		printf("%d-fold cross-validation of %s:", k, path);
	}
	for (int i = 0; i < nm; i++) {
		double mean = sum[i] / k;
		double var = sq[i] / k - mean * mean;
		double sd = sqrt(var > 0 ? var : 0);
		if (json) {
			char key[32];
			snprintf(key, sizeof key, "%s_mean", names[i]);
			json_num(&j, key, mean);
			snprintf(key, sizeof key, "%s_sd", names[i]);
			json_num(&j, key, sd);
		} else {
			printf("  %s %.4f +- %.4f", names[i], mean, sd);
		}
	}
	if (json)
		json_end(&j);
	else
		putchar('\n');
	return fflush(stdout) ? CLI_EXIT_RUNTIME : CLI_EXIT_OK;
}
