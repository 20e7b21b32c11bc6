/* test_gpu_errors.c - the GPU engine fails cleanly, with a code and a reason.
 *
 * Runs everywhere:
 *  - a build without CUDA answers BOAR_ENOGPU, saying the build has no GPU
 *    support;
 *  - a CUDA build on a machine without a device (or driver) answers
 *    BOAR_ENODEVICE, not a crash;
 *  - with a device: a device id that does not exist is BOAR_ENODEVICE, a
 *    model whose shape does not fit the data is BOAR_EMISMATCH, downloading
 *    into a model of another shape is BOAR_EMISMATCH, an MF rank beyond what
 *    the kernels hold is BOAR_EINVAL, and close(NULL) is a no-op.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boar.h"
#include "data/dataset.h"
#include "model/model.h"
#include "gpu/gpu_engine.h"

static int failures;

static void expect(const char *what, int got, int want, const boar_error *err)
{
	if (got != want) {
		printf("FAIL %s: expected %d (%s), got %d (%s): %s\n", what, want,
		       boar_strerror(want), got, boar_strerror(got), err->message);
		failures++;
	} else if (got && (err->code != got || !err->message[0])) {
		printf("FAIL %s: error %d but boar_error has code %d, message '%s'\n",
		       what, got, err->code, err->message);
		failures++;
	} else {
		printf("ok   %s: %s\n", what, got ? err->message : "success");
	}
}

int main(void)
{
	uint64_t row_ptr[3] = { 0, 2, 3 };
	uint32_t idx[3] = { 0, 3, 1 };
	float val[3] = { 1, 0.5f, 2 }, label[2] = { 1, -1 };
	struct boar_dataset d;
	memset(&d, 0, sizeof d);
	d.task = BOAR_TASK_LINEAR;
	d.label_kind = BOAR_LABELS_BINARY;
	d.n_rows = 2;
	d.nnz = 3;
	d.dim = 4;
	d.row_ptr = row_ptr;
	d.idx = idx;
	d.val = val;
	d.label = label;

	float w[5] = { 0 }, w_small[3] = { 0 };
	struct boar_model m;
	memset(&m, 0, sizeof m);
	m.task = BOAR_TASK_LINEAR;
	m.loss = BOAR_LOSS_LOGISTIC;
	m.dim = 4;
	m.w = w;

	boar_options o;
	memset(&o, 0, sizeof o);
	o.task = BOAR_TASK_LINEAR;
	o.epochs = 1;
	o.eta = 0.1;
	o.eta_decay = 1;
	o.streams = 2;

	boar_error err;
	memset(&err, 0, sizeof err);
	boar_gpu_ctx *c = NULL;
	boar_gpu_close(NULL);
	int rc = boar_gpu_open(&d, &o, &m, &c, &err);
	/* Which build this is shows in the answer (tests are compiled without
	 * the library's BOAR_HAVE_CUDA). */
	if (rc == BOAR_ENOGPU) {
		expect("open without CUDA", rc, BOAR_ENOGPU, &err);
		if (!strstr(err.message, "no GPU support")) {
			printf("FAIL: message should say the build has no GPU support: %s\n",
			       err.message);
			failures++;
		}
		return failures ? 1 : 0;
	}
	if (rc == BOAR_ENODEVICE) {
		expect("open without a device", rc, BOAR_ENODEVICE, &err);
		if (c) {
			printf("FAIL: *out written on failure\n");
			failures++;
		}
		return failures ? 1 : 0;
	}
	expect("open", rc, 0, &err);
	if (rc)
		return 1;
	double loss = 0;
	rc = boar_gpu_epoch(c, 1, 0.1, &loss, &err);
	expect("epoch", rc, 0, &err);
	if (!(loss > 0)) {
		printf("FAIL epoch: expected a positive loss sum, got %g\n", loss);
		failures++;
	}
	struct boar_model small = m;
	small.dim = 2;
	small.w = w_small;
	memset(&err, 0, sizeof err);
	rc = boar_gpu_download(c, &small, &err);
	expect("download into a smaller model", rc, BOAR_EMISMATCH, &err);
	rc = boar_gpu_download(c, &m, &err);
	expect("download", rc, 0, &err);
	boar_gpu_close(c);

	memset(&err, 0, sizeof err);
	c = NULL;
	o.gpu_id = 999;
	rc = boar_gpu_open(&d, &o, &m, &c, &err);
	expect("open device 999", rc, BOAR_ENODEVICE, &err);
	o.gpu_id = 0;

	memset(&err, 0, sizeof err);
	rc = boar_gpu_open(&d, &o, &small, &c, &err);
	expect("open with a model smaller than the data", rc, BOAR_EMISMATCH, &err);

	uint32_t user[1] = { 0 }, item[1] = { 0 };
	float rating[1] = { 4 }, P[2000], Q[2000];
	struct boar_dataset r;
	memset(&r, 0, sizeof r);
	r.task = BOAR_TASK_MF;
	r.n_rows = r.nnz = 1;
	r.dim = 1;
	r.n_items = 1;
	r.user = user;
	r.item = item;
	r.label = rating;
	struct boar_model mf;
	memset(&mf, 0, sizeof mf);
	mf.task = BOAR_TASK_MF;
	mf.loss = BOAR_LOSS_SQUARED;
	mf.dim = 1;
	mf.n_items = 1;
	mf.rank = 2000;
	mf.P = P;
	mf.Q = Q;
	memset(&err, 0, sizeof err);
	rc = boar_gpu_open(&r, &o, &mf, &c, &err);
	expect("open MF with rank 2000", rc, BOAR_EINVAL, &err);
	return failures ? 1 : 0;
}
