/* test_model_sections.c - a model remembers how its data was read and,
 * with save_resume, its optimizer state, across save and load; a model
 * without either is still a version 1 file (and version 1 files load);
 * damaged or unknown sections are refused with a message. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "boar.h"
#include "testutil.h"

static long file_size(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fclose(f);
	return n;
}

static uint32_t file_version(const char *path)
{
	uint32_t v = 0;
	FILE *f = fopen(path, "rb");
	if (f && fseek(f, 8, SEEK_SET) == 0 && fread(&v, 4, 1, f) == 1)
		fclose(f);
	else if (f)
		fclose(f);
	return v;
}

static void *slurp(const char *path, long *n)
{
	*n = file_size(path);
	FILE *f = fopen(path, "rb");
	char *b = malloc(*n > 0 ? (size_t)*n : 1);
	if (f && b && fread(b, 1, (size_t)*n, f) != (size_t)*n)
		*n = -1;
	if (f)
		fclose(f);
	return b;
}

static void from_arrays_is_version_1(void)
{
	uint64_t rp[3] = { 0, 1, 2 };
	uint32_t idx[2] = { 0, 1 };
	float val[2] = { 1, 1 }, y[2] = { 1, -1 };
	boar_dataset *d = NULL;
	boar_model *m = NULL, *l = NULL;
	boar_options o;
	boar_error err;
	boar_load_options lo;
	CHECK(boar_dataset_from_csr(2, 2, rp, idx, val, y, &d, &err) == 0,
	      "%s", err.message);
	boar_options_default(&o);
	o.threads = 1;
	CHECK(boar_train(d, &o, &m, &err) == 0, "%s", err.message);
	const char *p = test_put_file("arr.model", "", 0);
	CHECK(boar_model_save(m, p, &err) == 0, "%s", err.message);
	CHECK_EQ_INT(file_version(p), 1);
	CHECK(boar_model_load(p, &l, &err) == 0, "%s", err.message);
	CHECK_EQ_INT(boar_model_load_options(l, &lo), 0);
	CHECK_EQ_INT(lo.format, BOAR_FORMAT_AUTO);
	boar_model_free(l);
	boar_model_free(m);
	boar_dataset_free(d);
}

int main(void)
{
	snprintf(test_dir, sizeof test_dir, "/tmp/boar-sections-XXXXXX");
	if (!mkdtemp(test_dir))
		return 1;
	from_arrays_is_version_1();

	/* A CSV read with options: the model keeps them. */
	char csv[8192];
	size_t n = (size_t)snprintf(csv, sizeof csv, "Id,Label,count,color\n");
	for (int r = 0; r < 200; r++)
		n += (size_t)snprintf(csv + n, sizeof csv - n, "%d,%d,%d,%s\n",
				      1000 + r, r % 3 ? 1 : 0, r % 9,
				      r % 3 ? "red" : "blue");
	const char *path = test_put_file("d.csv", csv, n);
	char cpath[512];
	snprintf(cpath, sizeof cpath, "%s", path);
	boar_load_options lo, back;
	boar_load_options_default(&lo);
	lo.csv_label = "Label";
	lo.csv_ignore = "Id";
	lo.csv_log = 1;
	boar_dataset *d = NULL;
	boar_model *m = NULL, *l = NULL;
	boar_error err;
	boar_options o;
	CHECK(boar_dataset_load(cpath, &lo, &d, &err) == 0, "%s", err.message);
	boar_options_default(&o);
	o.threads = 1;
	o.epochs = 3;
	o.save_resume = 1;
	CHECK(boar_train(d, &o, &m, &err) == 0, "%s", err.message);
	const char *mp = test_put_file("csv.model", "", 0);
	char mpath[512];
	snprintf(mpath, sizeof mpath, "%s", mp);
	CHECK(boar_model_save(m, mpath, &err) == 0, "%s", err.message);
	CHECK_EQ_INT(file_version(mpath), 2);
	CHECK(boar_model_load(mpath, &l, &err) == 0, "%s", err.message);
	if (l) {
		CHECK_EQ_INT(boar_model_load_options(l, &back), 1);
		CHECK_EQ_INT(back.format, BOAR_FORMAT_CSV);
		CHECK(back.csv_label && !strcmp(back.csv_label, "Label"),
		      "label %s", back.csv_label ? back.csv_label : "NULL");
		CHECK(back.csv_ignore && !strcmp(back.csv_ignore, "Id"),
		      "ignore");
		/* the kinds the training file settled on, by header name */
		CHECK(back.csv_categorical &&
			      !strcmp(back.csv_categorical, "color"),
		      "categorical %s", back.csv_categorical);
		CHECK(back.csv_numeric && !strcmp(back.csv_numeric, "count"),
		      "numeric %s", back.csv_numeric);
		CHECK_EQ_INT(back.csv_log, 1);
		CHECK_EQ_INT(back.hash_bits, 18);
		/* Data read the model's way scores as the training data. */
		boar_dataset *d2 = NULL;
		boar_metrics a, b;
		CHECK(boar_dataset_load(cpath, &back, &d2, &err) == 0, "%s",
		      err.message);
		if (d2) {
			boar_evaluate(m, d, &a, 1, NULL);
			boar_evaluate(l, d2, &b, 1, NULL);
			CHECK(a.loss == b.loss, "%g vs %g", a.loss, b.loss);
		}
		boar_dataset_free(d2);
		/* Warm start from the saved state continues training. */
		boar_model *w = NULL;
		o.init_model = l;
		CHECK(boar_train(d, &o, &w, &err) == 0, "%s", err.message);
		o.optimizer = BOAR_OPT_SGD;
		boar_model *w2 = NULL;
		CHECK(boar_train(d, &o, &w2, &err) == BOAR_EINVAL,
		      "sgd on adagrad state accepted");
		CHECK(strstr(err.message, "AdaGrad") != NULL, "%s", err.message);
		boar_model_free(w);
		boar_model_free(w2);
	}
	boar_model_free(l);
	l = NULL;

	/* Damage: a flipped byte in a section is a checksum mismatch; an
	 * unknown section tag (checksum recomputed is not possible here, so
	 * cut the file short instead) is refused, never half-read. */
	long len;
	unsigned char *b = slurp(mpath, &len);
	CHECK(len > 100, "size %ld", len);
	if (len > 100) {
		unsigned char *c = malloc((size_t)len);
		memcpy(c, b, (size_t)len);
		c[len - 20] ^= 0x40;
		const char *bad = test_put_file("flip.model", c, (size_t)len);
		CHECK(boar_model_load(bad, &l, &err) == BOAR_ECORRUPT,
		      "flipped section byte loaded");
		bad = test_put_file("cut.model", b, (size_t)len - 12);
		CHECK(boar_model_load(bad, &l, &err) < 0, "cut file loaded");
		/* A version 1 header with sections after it: size mismatch. */
		memcpy(c, b, (size_t)len);
		c[8] = 1;
		bad = test_put_file("v1.model", c, (size_t)len);
		CHECK(boar_model_load(bad, &l, &err) == BOAR_ECORRUPT,
		      "v1 with sections loaded");
		CHECK(strstr(err.message, "size") != NULL, "%s", err.message);
		free(c);
	}
	free(b);
	boar_model_free(m);
	boar_dataset_free(d);
	return TEST_RESULT();
}
