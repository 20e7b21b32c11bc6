/* gpu_agree.h - what the tests holding the GPU engine to the CPU's share:
 * deterministic data draws, the per-epoch losses of a run, training on
 * either device (a skip where there is no GPU), and the options every
 * comparison starts from. Include after testutil.h. */
#ifndef BOAR_TEST_GPU_AGREE_H
#define BOAR_TEST_GPU_AGREE_H

#include <stdint.h>
#include <string.h>

#include "boar.h"
#include "testutil.h"

#define EPOCHS 5

/* A 64-bit LCG's top bits: deterministic data on every platform (each
 * data maker seeds it). */
static uint64_t lcg;

static inline double unif(void)
{
	lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
	return (lcg >> 11) * (1.0 / 9007199254740992.0);
}

static inline uint32_t below(uint32_t n)
{
	return (uint32_t)(unif() * n);
}

struct run {
	double loss[EPOCHS];
	int epochs;
};

static inline int on_epoch(const boar_epoch_stats *s, void *ctx)
{
	struct run *r = ctx;
	if (s->epoch >= 1 && s->epoch <= EPOCHS)
		r->loss[s->epoch - 1] = s->train_loss;
	r->epochs = s->epoch;
	return 0;
}

/* Trains on `device`, the losses per epoch into r; skips the test where
 * the GPU engine is missing or finds no device. */
static inline boar_model *train(const boar_dataset *d, boar_options o,
				int device, struct run *r)
{
	boar_model *m = NULL;
	boar_error err;
	memset(r, 0, sizeof *r);
	o.device = device;
	o.gpu_plugin = test_gpu_plugin();
	o.progress = on_epoch;
	o.progress_ctx = r;
	int rc = boar_train(d, &o, &m, &err);
	if (device == BOAR_DEVICE_GPU &&
	    (rc == BOAR_ENOGPU || rc == BOAR_ENODEVICE))
		TEST_SKIP("no GPU here: %s", err.message);
	CHECK(rc == 0, "%s training: %s", device ? "GPU" : "CPU",
	      err.message);
	return rc ? NULL : m;
}

/* The options every comparison starts from: one thread against the GPU,
 * atomic updates, the step each optimizer takes here. */
static inline boar_options agree_options(int loss, int opt, int l2)
{
	boar_options o;
	boar_options_default(&o);
	o.loss = loss;
	o.optimizer = opt;
	o.update = BOAR_UPDATE_ATOMIC;
	o.epochs = EPOCHS;
	o.eta = opt == BOAR_OPT_SGD ? 0.05 : 0.1;
	o.l2 = l2 ? 1e-3 : 0;
	o.threads = 1;
	o.seed = 3;
	return o;
}

#endif
