/* cv.c - K-fold cross-validation for `boar train --cv K` (cv.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "common.h"
#include "cv.h"
#include "json.h"

/* Trains on every fold but f and evaluates on f: fold f of k is
 * boar_dataset_split's [f/k, (f+1)/k) of the seed, as boar_search's. */
static int one_fold(const boar_dataset *d, const boar_options *o, int k,
		    int f, boar_metrics *mt, boar_error *err)
{
	boar_dataset *te = NULL, *tr = NULL;
	boar_model *m = NULL;
	int rc = boar_dataset_split(d, o->seed, (double)f / k,
				    (double)(f + 1) / k, &tr, &te, err);
	if (rc == BOAR_EINVAL)
		snprintf(err->message, sizeof err->message,
			 "fold %d of %d: too few rows for %d folds", f + 1, k,
			 k);
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
		names[2] = "mae";
		v[2] = mt->mae;
		return 3;
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
	double sum[3] = { 0 }, sq[3] = { 0 };
	const char *names[3] = { 0 };
	int nm = 3, rc = 0;
	boar_error err = { 0 };
	int reg = boar_dataset_task(d) == BOAR_TASK_MF ||
		  boar_loss_describe(o->loss)->kind == BOAR_LOSS_KIND_REGRESSION;
	for (int f = 0; f < k && !rc; f++) {
		boar_metrics mt;
		double v[3];
		if ((rc = one_fold(d, o, k, f, &mt, &err)))
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
