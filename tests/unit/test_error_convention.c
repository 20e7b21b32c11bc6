/* test_error_convention.c - boar.h's one error convention, call by call:
 * a function that can fail returns 0 (or a count) or a negative BOAR_E*
 * code, fills the boar_error it is given, leaves its out-parameters alone
 * on failure, and its message names the library's fields, never a CLI
 * flag ("--format").
 */
#include <string.h>
#include <unistd.h>

#include "boar.h"
#include "testutil.h"

/* The message of a failure: the code matches and no "--flag" in it. */
#define CHECK_FAILURE(rc, want, err, field)                                  \
	do {                                                                 \
		CHECK_EQ_INT((rc), (want));                                  \
		CHECK_EQ_INT((err).code, (want));                            \
		CHECK(strstr((err).message, (field)) != NULL,                \
		      "'%s' not in \"%s\"", (field), (err).message);         \
		CHECK(strstr((err).message, "--") == NULL,                   \
		      "a CLI flag in \"%s\"", (err).message);                \
	} while (0)

static boar_dataset *two_rows(void)
{
	static const uint64_t ptr[] = { 0, 1, 2 };
	static const uint32_t idx[] = { 0, 1 };
	static const float val[] = { 1, 1 }, lab[] = { 1, -1 };
	boar_dataset *d = NULL;
	boar_error err;
	int rc = boar_dataset_from_csr(2, 2, ptr, idx, val, lab, &d, &err);
	CHECK(rc == 0, "from_csr: %s", err.message);
	return d;
}

static boar_dataset *three_ratings(void)
{
	static const uint32_t u[] = { 0, 1, 1 }, i[] = { 0, 0, 1 };
	static const float r[] = { 4, 3, 5 };
	boar_dataset *d = NULL;
	boar_error err;
	int rc = boar_dataset_from_ratings(3, u, i, r, &d, &err);
	CHECK(rc == 0, "from_ratings: %s", err.message);
	return d;
}

static boar_model *train_quiet(const boar_dataset *d)
{
	boar_options o;
	boar_options_default(&o);
	o.epochs = 1;
	o.threads = 1;
	o.rank = 2;
	boar_model *m = NULL;
	boar_error err;
	int rc = boar_train(d, &o, &m, &err);
	CHECK(rc == 0, "train: %s", err.message);
	return m;
}

/* Options: a status and the field's name, not a static string. */
static void test_options_check(void)
{
	boar_options o;
	boar_error err;
	boar_options_default(&o);
	CHECK_EQ_INT(boar_options_check(&o, NULL, &err), 0);
	o.eta_decay = 2;
	CHECK_FAILURE(boar_options_check(&o, NULL, &err), BOAR_EINVAL, err,
		      "eta_decay");
	CHECK_EQ_INT(boar_options_check(&o, NULL, NULL), BOAR_EINVAL);
	boar_options_default(&o);
	o.mf_storage = 7;
	CHECK_FAILURE(boar_options_check(&o, NULL, &err), BOAR_EINVAL, err,
		      "mf_storage");
}

/* Loading: a guessed format's parse error says which field forces
 * another, a size over the limit which field raises it. */
static void test_load_messages(void)
{
	static const char words[] = "ham,see you at lunch\nspam,win a prize\n";
	const char *path = test_put_file("words.csv", words, sizeof words - 1);
	boar_dataset *d = NULL;
	boar_error err;
	int rc = boar_dataset_load(path, NULL, &d, &err);
	CHECK(rc < 0, "text labels loaded");
	CHECK(strstr(err.message, "boar_load_options.format") != NULL &&
		      !strstr(err.message, "--"),
	      "\"%s\"", err.message);
	CHECK(d == NULL, "*out written on failure");

	static const char big[] = "1 4000000000:1\n";
	path = test_put_file("big.svm", big, sizeof big - 1);
	boar_load_options lo;
	boar_load_options_default(&lo);
	boar_options o;
	boar_options_default(&o);
	o.max_memory = 1 << 20;
	rc = boar_dataset_load(path, &lo, &d, &err);
	CHECK(rc == 0, "load: %s", err.message);
	if (rc)
		return;
	boar_model *m = NULL;
	rc = boar_train(d, &o, &m, &err);
	CHECK_FAILURE(rc, BOAR_ENOMEM, err, "max_memory");
	CHECK(strstr(err.message, "hash_bits") != NULL, "\"%s\"", err.message);
	CHECK(m == NULL, "*out written on failure");
	boar_dataset_free(d);
}

/* Scoring: a status and an out-parameter, never NaN; a model of the other
 * task is BOAR_EINVAL, data read otherwise BOAR_EMISMATCH, with *err. */
static void test_scoring(void)
{
	boar_dataset *lin = two_rows(), *mf = three_ratings();
	if (!lin || !mf)
		return;
	boar_model *ml = train_quiet(lin), *mm = train_quiet(mf);
	if (!ml || !mm)
		goto out;
	boar_error err;
	static const uint32_t ids[] = { 0 };
	static const float vals[] = { 1 };
	double s = 42;
	CHECK_EQ_INT(boar_model_predict_row(ml, 1, ids, vals, &s, &err), 0);
	CHECK(s != 42 && isfinite(s), "score %g", s);
	s = 42;
	CHECK_FAILURE(boar_model_predict_row(mm, 1, ids, vals, &s, &err),
		      BOAR_EINVAL, err, "boar_model_predict_row");
	CHECK(s == 42, "score written on failure");
	CHECK_FAILURE(boar_model_predict_pair(ml, 0, 0, &s, &err), BOAR_EINVAL,
		      err, "linear");
	CHECK_EQ_INT(boar_model_predict_pair(mm, 1, 1, &s, &err), 0);
	CHECK(s != 42, "rating not written");
	double sc[2];
	CHECK_EQ_INT(boar_model_predict_scores(ml, 1, ids, vals, sc, &err), 1);
	CHECK_FAILURE(boar_model_predict_scores(mm, 1, ids, vals, sc, &err),
		      BOAR_EINVAL, err, "matrix factorization");

	const float *w = NULL;
	uint64_t n = 0;
	CHECK_EQ_INT(boar_model_weights(ml, &w, &n, &err), 0);
	CHECK(w && n == 3, "weights %p %llu", (const void *)w,
	      (unsigned long long)n);
	w = NULL;
	CHECK_FAILURE(boar_model_weights(mm, &w, &n, &err), BOAR_EINVAL, err,
		      "matrix factorization");
	CHECK(w == NULL, "weights written on failure");
	const float *P, *Q, *bu, *bi;
	float mu;
	uint64_t items;
	CHECK_FAILURE(boar_model_factors(ml, &P, &Q, &bu, &bi, &mu, &items,
					 &err),
		      BOAR_EINVAL, err, "linear");

	double out[3];
	boar_metrics mt;
	CHECK_FAILURE(boar_predict(ml, mf, out, 1, &err), BOAR_EMISMATCH, err,
		      "ratings");
	CHECK_FAILURE(boar_evaluate(mm, lin, &mt, 1, &err), BOAR_EMISMATCH,
		      err, "linear");
	CHECK_FAILURE(boar_predict_scores(mm, mf, out, 1, &err), BOAR_EINVAL,
		      err, "matrix factorization");
	CHECK_EQ_INT(boar_evaluate(ml, lin, &mt, 1, &err), 0);

	const uint32_t *ix;
	const float *vx;
	float y;
	CHECK_EQ_INT(boar_dataset_row(lin, 1, &ix, &vx, &y, &err), 1);
	CHECK_FAILURE(boar_dataset_row(lin, 2, &ix, &vx, &y, &err),
		      BOAR_EINVAL, err, "row 2");
	CHECK_FAILURE(boar_dataset_row(mf, 0, &ix, &vx, &y, &err),
		      BOAR_EINVAL, err, "ratings");
out:
	boar_model_free(ml);
	boar_model_free(mm);
	boar_dataset_free(lin);
	boar_dataset_free(mf);
}

/* Lookups: BOAR_EINVAL (not -1, which is BOAR_ENOMEM) for a name they do
 * not know; the version string is the header's. */
static void test_lookups(void)
{
	CHECK_EQ_INT(boar_loss_from_name("nope"), BOAR_EINVAL);
	CHECK_EQ_INT(boar_optimizer_from_name("nope"), BOAR_EINVAL);
	CHECK_EQ_INT(boar_format_from_name("nope"), BOAR_EINVAL);
	CHECK_EQ_INT(boar_format_from_name(NULL), BOAR_EINVAL);
	char v[32];
	snprintf(v, sizeof v, "%d.%d.%d", BOAR_VERSION_MAJOR,
		 BOAR_VERSION_MINOR, BOAR_VERSION_PATCH);
	CHECK(!strcmp(boar_version(), v), "%s vs %s", boar_version(), v);
}

int main(void)
{
	snprintf(test_dir, sizeof test_dir, "/tmp/boar-errconv-XXXXXX");
	if (!mkdtemp(test_dir))
		TEST_SKIP("no scratch directory");
	test_options_check();
	test_load_messages();
	test_scoring();
	test_lookups();
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", test_dir);
	(void)!system(cmd);
	return TEST_RESULT();
}
