/* test_gpu_preload.c - the training rows copied to the card while the file
 * is parsed (engine_ops.h: boar_engine_warm_rows / _done, the plugin's
 * gpu_preload.cu), as `boar train --device gpu` uses them: a plain LIBSVM
 * file's copy is whole (done returns it), and training with it gives the
 * losses of training without it (the same seed: the engine's usual copy);
 * a file whose rows move after parsing (comments, blank lines) gives no
 * copy, and a failed load none either. Exit 77 without the build's plugin
 * (tests/run-tests exports BUILD) or without a usable GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boar.h"
#include "engine/engine_ops.h"
#include "testutil.h"

#define EPOCHS 4

struct losses {
	double train[EPOCHS + 1];
};

static int on_epoch(const boar_epoch_stats *s, void *ctx)
{
	struct losses *l = ctx;
	if (s->epoch >= 1 && s->epoch <= EPOCHS)
		l->train[s->epoch] = s->train_loss;
	return 0;
}

/* rows of a linear rule on 200 features, 8 to 30 non-zeros each; with
 * `odd`, comment and blank lines between them. */
static char *make_text(int rows, int odd)
{
	size_t cap = (size_t)rows * 420 + 64, len = 0;
	char *t = malloc(cap);
	test_rng_seed(11);
	for (int r = 0; r < rows; r++) {
		if (odd && r % 13 == 2)
			len += sprintf(t + len, "# comment\n\n");
		char feats[400];
		size_t fl = 0;
		double margin = 0;
		int n = 8 + (int)(test_rng() % 23);
		unsigned id = 0;
		for (int k = 0; k < n && id < 190; k++) {
			id += 1 + (unsigned)(test_rng() % 8);
			double v = test_unif() * 2 - 1;
			margin += (id % 3 == 0 ? 1.5 : -0.7) * v;
			fl += (size_t)sprintf(feats + fl, " %u:%.3f", id, v);
		}
		len += sprintf(t + len, "%d%s\n", margin > 0 ? 1 : -1, feats);
	}
	t[len] = '\0';
	return t;
}

/* Loads path with the warm handle's hook and returns done's answer. */
static const void *load_with(void *warm, const char *path, boar_dataset **d)
{
	boar_load_options lo;
	boar_load_options_default(&lo);
	lo.rows_ready = boar_engine_warm_rows;
	lo.rows_ready_ctx = warm;
	boar_error e = { 0 };
	*d = NULL;
	int rc = boar_dataset_load(path, &lo, d, &e);
	CHECK(rc == 0, "load %s: %s", path, e.message);
	return boar_engine_warm_done(warm, rc ? NULL : *d);
}

static void train(const boar_dataset *d, boar_options *o, const void *pre,
		  struct losses *l)
{
	o->gpu_preload = pre;
	o->progress = on_epoch;
	o->progress_ctx = l;
	boar_model *m = test_train(d, o);
	boar_model_free(m);
}

/* Within 5%: the GPU's atomic updates land in a different order from
 * run to run (1.2% apart in epoch 1 under compute-sanitizer), where rows
 * copied wrong would not train at all (log loss 0.69). */
static void same_losses(const char *what, const struct losses *a,
			const struct losses *b)
{
	for (int e = 1; e <= EPOCHS; e++)
		CHECK(a->train[e] > 0 && a->train[e] < 0.5 &&
			      fabs(a->train[e] - b->train[e]) <=
				      0.05 * b->train[e],
		      "%s: epoch %d train loss %.5f, without the copy %.5f",
		      what, e, a->train[e], b->train[e]);
}

int main(void)
{
	const char *plugin = test_gpu_plugin();
	if (!plugin || access(plugin, R_OK))
		TEST_SKIP("no GPU plugin in the build directory");
	snprintf(test_dir, sizeof test_dir, "%s/boar-gpu-preload.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(test_dir)) {
		perror("mkdtemp");
		return 1;
	}
	char *t = make_text(20000, 0);
	char plain[600], odd[600];
	snprintf(plain, sizeof plain, "%s",
		 test_put_file("plain.svm", t, strlen(t)));
	free(t);
	t = make_text(20000, 1);
	snprintf(odd, sizeof odd, "%s", test_put_file("odd.svm", t, strlen(t)));
	free(t);

	boar_options o;
	boar_options_default(&o);
	o.device = BOAR_DEVICE_GPU;
	o.gpu_plugin = plugin;
	o.epochs = EPOCHS;
	o.optimizer = BOAR_OPT_ADAGRAD;
	o.seed = 5;

	void *warm = boar_engine_warm_start(&o);
	CHECK(warm != NULL, "the plugin %s starts", plugin);
	boar_dataset *d = NULL;
	const void *pre = load_with(warm, plain, &d);
	if (!pre) {
		boar_model *m = NULL;
		boar_error e;
		int rc = boar_train(d, &o, &m, &e);
		boar_model_free(m);
		boar_dataset_free(d);
		boar_engine_warm_join(warm);
		unlink(plain);
		unlink(odd);
		rmdir(test_dir);
		if (rc == BOAR_ENODEVICE || rc == BOAR_ENOGPU)
			TEST_SKIP("%s", e.message);
		CHECK(0, "a plain file's rows were copied whole");
		return TEST_RESULT();
	}
	CHECK(boar_engine_warm_done(warm, d) == pre, "done repeats its answer");
	struct losses with = { { 0 } }, without = { { 0 } };
	train(d, &o, pre, &with);
	train(d, &o, NULL, &without);
	same_losses("plain file", &with, &without);
	/* taken once: a second run copies as usual */
	struct losses again = { { 0 } };
	train(d, &o, pre, &again);
	same_losses("plain file, copy taken", &again, &without);
	boar_dataset_free(d);
	boar_engine_warm_join(warm);

	warm = boar_engine_warm_start(&o);
	pre = load_with(warm, odd, &d);
	CHECK(pre == NULL, "rows that moved after parsing: no copy");
	train(d, &o, pre, &with);
	boar_dataset_free(d);
	boar_engine_warm_join(warm);

	warm = boar_engine_warm_start(&o);
	CHECK(boar_engine_warm_done(warm, NULL) == NULL, "a failed load: none");
	boar_engine_warm_join(warm);
	boar_engine_warm_join(NULL);
	CHECK(boar_engine_warm_done(NULL, NULL) == NULL, "no handle: none");

	unlink(plain);
	unlink(odd);
	rmdir(test_dir);
	return TEST_RESULT();
}
