/* test_feature_hash.c - a model trained on VW and on CSV text scores a row
 * given through boar_hash_vw / boar_hash_csv exactly as it scores the same
 * row parsed from the file, and a slot-id model survives save/load. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "boar.h"
#include "testutil.h"

static boar_model *train_file(const char *path, int format, boar_dataset **d)
{
	boar_load_options lo;
	boar_options o;
	boar_error err;
	boar_model *m = NULL;
	boar_load_options_default(&lo);
	lo.format = format;
	if (boar_dataset_load(path, &lo, d, &err)) {
		CHECK(0, "load %s: %s", path, err.message);
		return NULL;
	}
	boar_options_default(&o);
	o.threads = 1;
	CHECK(boar_train(*d, &o, &m, &err) == 0, "train: %s", err.message);
	return m;
}

/* Score of the first row as boar_predict sees it (from the parsed file). */
static double first_score(const boar_model *m, const boar_dataset *d)
{
	double *p = malloc(boar_dataset_rows(d) * sizeof *p);
	boar_predict(m, d, p, 1, NULL);
	double s = p[0];
	free(p);
	return s;
}

int main(void)
{
	char dir[] = "/tmp/boar-hash-XXXXXX";
	char vw[256], csv[256], saved[256];
	if (!mkdtemp(dir))
		return 1;
	snprintf(vw, sizeof vw, "%s/d.vw", dir);
	snprintf(csv, sizeof csv, "%s/d.csv", dir);
	snprintf(saved, sizeof saved, "%s/m.model", dir);
	FILE *f = fopen(vw, "w");
	for (int r = 0; r < 400; r++)
		fprintf(f, "%d |user age:%d city_%d |ad 12 brand%d:0.5\n",
			r % 3 ? 1 : -1, r % 50, r % 7, r % 3);
	fclose(f);
	f = fopen(csv, "w");
	fprintf(f, "label,count,color\n");
	for (int r = 0; r < 400; r++)
		fprintf(f, "%d,%d,%s\n", r % 3 ? 1 : 0, r % 9,
			r % 3 ? "red" : "blue");
	fclose(f);

	boar_dataset *d = NULL;
	boar_model *m = train_file(vw, BOAR_FORMAT_VW, &d);
	if (m) {
		/* row 0: "-1 |user age:0 city_0 |ad 12 brand0:0.5" */
		uint32_t idx[] = {boar_hash_vw("user", "age"),
				  boar_hash_vw("user", "city_0"),
				  boar_hash_vw("ad", "12"),
				  boar_hash_vw("ad", "brand0")};
		float val[] = {0, 1, 1, 0.5f};
		double want = first_score(m, d);
		double got = boar_sigmoid(test_model_predict_row(m, 4, idx, val));
		CHECK(fabs(want - got) < 1e-6, "VW row: %.6f vs parsed %.6f",
		       got, want);
		boar_error err;
		boar_model *l = NULL;
		CHECK(boar_model_save(m, saved, &err) == 0 &&
			       boar_model_load(saved, &l, &err) == 0,
		       "save/load: %s", err.message);
		if (l) {
			double again = boar_sigmoid(
				test_model_predict_row(l, 4, idx, val));
			CHECK(again == got, "loaded VW model scores differently");
			boar_model_free(l);
		}
	}
	boar_model_free(m);
	boar_dataset_free(d);

	d = NULL;
	m = train_file(csv, BOAR_FORMAT_CSV, &d);
	if (m) {
		/* row 0: label 0, count 0, color blue */
		uint32_t idx[] = {boar_hash_csv(1, NULL), boar_hash_csv(2, "blue")};
		float val[] = {0, 1};
		double want = first_score(m, d);
		double got = boar_sigmoid(test_model_predict_row(m, 2, idx, val));
		CHECK(fabs(want - got) < 1e-6, "CSV row: %.6f vs parsed %.6f",
		       got, want);
	}
	boar_model_free(m);
	boar_dataset_free(d);
	remove(vw);
	remove(csv);
	remove(saved);
	rmdir(dir);
	return TEST_RESULT();
}
