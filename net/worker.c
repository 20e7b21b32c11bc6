/* worker.c - the worker's training loop over the parameter server.
 *
 * See worker.h for the schedule. The keys of a clock are collected with a
 * stamp array (one uint32 per key: the clock that last saw it), so finding
 * the distinct keys of a chunk costs O(its nnz), then sorted because the
 * wire wants them ascending.
 *
 * Two engines sweep a clock's rows. The CPU engine updates the host
 * replica m->w in place, so the pulled values go straight into it. The GPU
 * engine keeps its weights on the card for the whole run: the pulled
 * values are scattered into it before the clock's sweep and gathered back
 * after (boar_gpu_set_weights/get_weights), and the rows of a clock are
 * positions of the GPU engine's own epoch order (boar_gpu_order), which,
 * like the CPU engine's, depends on the seed alone, so the workers'
 * blocks still cover every row once an epoch.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "classes.h"
#include "dataset.h"
#include "engine.h"
#include "error.h"
#include "gpu/gpu_engine.h"
#include "math/loss.h"
#include "math/step.h"
#include "model.h"
#include "net/worker.h"
#include "options.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

struct scratch {
	uint32_t *stamp; /* dim + 1 */
	uint64_t *keys;
	float *before;
	float *delta;
	uint32_t *keys32; /* GPU: the keys as the engine takes them */
	uint64_t cap;
};

/* Distinct keys of rows order[b..e) plus the bias, ascending. A feature j
 * of a K-class model owns keys j*K .. j*K+K-1 (the model is feature-major),
 * so the stamp array is per feature and each feature expands to K keys. */
static uint64_t chunk_keys(const struct boar_dataset *d, const uint32_t *order,
			   uint64_t b, uint64_t e, uint32_t stamp, uint32_t K,
			   struct scratch *s)
{
	uint64_t n = 0;
	for (uint64_t p = b; p < e; p++) {
		uint32_t r = order[p];
		for (uint64_t k = d->row_ptr[r]; k < d->row_ptr[r + 1]; k++) {
			uint32_t j = d->idx[k];
			if (s->stamp[j] != stamp) {
				s->stamp[j] = stamp;
				s->keys[n++] = j;
			}
		}
	}
	s->keys[n++] = d->dim; /* the bias, every row touches it */
	qsort(s->keys, n, sizeof *s->keys, cmp_u64);
	if (K > 1) /* expand in place from the back: j -> j*K .. j*K+K-1 */
		for (uint64_t i = n; i-- > 0;)
			for (uint32_t c = K; c-- > 0;)
				s->keys[i * K + c] = s->keys[i] * K + c;
	return n * K;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The GPU engine's clock: loads the nk pulled values s->before of keys
 * s->keys into the device model, sweeps positions [b, e) of the epoch and
 * reads the keys back; leaves after - before in s->delta and the new values
 * in m->w (the host replica, as the CPU engine would). */
static int sweep_gpu(boar_gpu_ctx *g, struct scratch *s, uint64_t nk,
		     int epoch, uint64_t b, uint64_t e, double eta,
		     double *loss, struct boar_model *m, boar_error *err)
{
	int rc;
	double l = 0;
	for (uint64_t i = 0; i < nk; i++)
		s->keys32[i] = (uint32_t)s->keys[i];
	if ((rc = boar_gpu_set_weights(g, s->keys32, s->before, nk, err)) ||
	    (rc = boar_gpu_sweep(g, epoch, b, e, eta, &l, err)) ||
	    (rc = boar_gpu_get_weights(g, s->keys32, s->delta, nk, err)))
		return rc;
	if (!isfinite(l))
		return boar_fail(err, BOAR_EDIVERGED,
				 "training diverged in epoch %d; lower --eta",
				 epoch);
	*loss += l;
	for (uint64_t i = 0; i < nk; i++) {
		m->w[s->keys[i]] = s->delta[i];
		s->delta[i] -= s->before[i];
	}
	return 0;
}

/* The bias is touched by every row of every worker: each worker's delta
 * for it sums a clock's worth of steps taken from one stale value, and the
 * shard adding W of them steps W times too far (plain SGD diverged with two
 * workers). Pushing the bias as 1/W of the delta makes the shard's bias the
 * average of the workers' replicas, as the GPU engine does for its hot
 * coordinates per block; sparse features rarely collide and are summed. */
static void damp_bias(struct scratch *s, uint64_t nk, uint64_t bias_key,
		      uint32_t W)
{
	for (uint64_t i = 0; i < nk; i++)
		if (s->keys[i] >= bias_key)
			s->delta[i] /= (float)W;
}

/* Pulls every key into m->w (for evaluation and the final replica). */
static int pull_all(struct ps_client *c, struct boar_model *m,
		    struct scratch *s, boar_error *err)
{
	uint64_t dim = (m->dim + 1) * boar_model_width(m);
	for (uint64_t lo = 0; lo < dim;) {
		uint64_t n = dim - lo > s->cap ? s->cap : dim - lo;
		for (uint64_t i = 0; i < n; i++)
			s->keys[i] = lo + i;
		int rc = ps_client_pull(c, s->keys, (uint32_t)n, m->w + lo, err);
		if (rc)
			return rc;
		lo += n;
	}
	return 0;
}

/* The same model boar_train would start from: zeros, binary/regression or
 * K classes (every worker reads the same labels, so all agree on K and the
 * class order). */
static int new_model(const struct boar_dataset *d, const boar_options *o,
		     struct boar_model **out, boar_error *err)
{
	struct boar_model *m;
	int binary = d->label_kind == BOAR_LABELS_BINARY;
	int kind = boar_loss_kind(o->loss);
	if (kind == BOAR_LOSS_KIND_REGRESSION ||
	    (binary && kind != BOAR_LOSS_KIND_MULTINOMIAL)) {
		m = boar_model_alloc(BOAR_TASK_LINEAR, o->loss, d->dim, 0, 0, 0);
	} else {
		float classes[BOAR_MAX_CLASSES];
		uint32_t k;
		if (boar_collect_classes(d, classes, BOAR_MAX_CLASSES, &k) ||
		    k < 2)
			return boar_fail(err, BOAR_EINVAL,
					 "this loss needs class labels; use "
					 "--loss squared for real targets");
		m = boar_model_alloc_multiclass(o->loss, d->dim, k, classes);
	}
	if (!m)
		return boar_fail(err, BOAR_ENOMEM, "out of memory for the model");
	m->loss_param = (float)o->loss_param;
	m->hash_bits = d->hash_bits;
	*out = m;
	return 0;
}

int boar_ps_train(const boar_dataset *train, const boar_options *o_in,
		  const struct ps_worker_config *wc, boar_model **out,
		  struct ps_worker_report *rep, boar_error *err)
{
	const struct boar_dataset *d = train;
	struct boar_model *m = NULL;
	struct boar_engine *e = NULL;
	boar_gpu_ctx *g = NULL;
	struct ps_client *c = NULL;
	struct scratch s = { 0 };
	int rc;

	memset(rep, 0, sizeof *rep);
	const char *why = boar_options_check(o_in, train);
	if (why)
		return boar_fail(err, BOAR_EINVAL, "%s", why);
	if (d->task != BOAR_TASK_LINEAR)
		return boar_fail(err, BOAR_EINVAL,
				 "cluster training supports linear models "
				 "(binary, regression, multiclass), not matrix "
				 "factorization");
	const int gpu = o_in->device == BOAR_DEVICE_GPU;
	boar_options o = *o_in;
	boar_options_resolve(&o, train);

	if (o.init_model)
		return boar_fail(err, BOAR_EINVAL,
				 "cluster training starts from zero weights: "
				 "--init-model is not supported");
	if (o.early_stop)
		return boar_fail(err, BOAR_EINVAL,
				 "early stopping is not supported in cluster "
				 "training (the workers would stop apart)");
	if (o.deterministic)
		return boar_fail(err, BOAR_EINVAL,
				 "--deterministic is not supported in cluster "
				 "training (the clocks interleave workers)");
	uint32_t R = wc->net.rank, W = wc->net.n_workers;
	if ((rc = new_model(d, &o, &m, err)))
		return rc;
	uint32_t K = boar_model_width(m);
	uint64_t keys_total = (d->dim + 1) * K;
	if (gpu && K > 1) {
		rc = boar_fail(err, BOAR_EINVAL,
			       "the GPU engine has no multiclass models yet; "
			       "use the CPU");
		goto out;
	}
	if (gpu && d->dim >= UINT32_MAX) {
		rc = boar_fail(err, BOAR_EINVAL,
			       "GPU cluster workers take fewer than 2^32 - 1 "
			       "features (the keys are 32-bit)");
		goto out;
	}
	if (gpu)
		rc = boar_gpu_open(d, &o, m, &g, err);
	else
		rc = boar_engine_create(d, &o, m, &e, err);
	if (rc)
		goto out;

	/* Clock schedule: the same number of clocks per epoch everywhere. */
	uint64_t n = d->n_rows;
	uint64_t per_worker = (n + W - 1) / W;
	uint64_t sync = wc->sync_every ? wc->sync_every : 1000;
	uint64_t clocks = (per_worker + sync - 1) / sync;
	if (!clocks)
		clocks = 1;
	uint64_t b0 = n * R / W, b1 = n * (R + 1) / W;

	uint64_t max_row = 0;
	for (uint64_t r = 0; r < n; r++) {
		uint64_t k = d->row_ptr[r + 1] - d->row_ptr[r];
		if (k > max_row)
			max_row = k;
	}
	/* keys of one clock: at most its nnz + 1, at most the whole model */
	uint64_t chunk_rows = (b1 - b0 + clocks - 1) / clocks;
	uint64_t cap = (chunk_rows * max_row + 1) * K;
	if (cap > keys_total)
		cap = keys_total;
	if (cap < 4096)
		cap = keys_total < 4096 ? keys_total : 4096;
	s.cap = cap;
	s.stamp = malloc((d->dim + 1) * sizeof *s.stamp);
	s.keys = malloc(cap * sizeof *s.keys);
	s.before = malloc(cap * sizeof *s.before);
	s.delta = malloc(cap * sizeof *s.delta);
	if (gpu)
		s.keys32 = malloc(cap * sizeof *s.keys32);
	if (!s.stamp || !s.keys || !s.before || !s.delta ||
	    (gpu && !s.keys32)) {
		rc = boar_fail(err, BOAR_ENOMEM, "out of memory");
		goto out;
	}
	memset(s.stamp, 0xff, (d->dim + 1) * sizeof *s.stamp);

	struct ps_client_config cc = wc->net;
	cc.dim = keys_total;
	if ((rc = ps_client_connect(&cc, &c, err)))
		goto out;

	double t_start = now_s();
	uint32_t stamp = 0;
	for (int epoch = 1; epoch <= o.epochs; epoch++) {
		double t0 = now_s(), loss = 0;
		double eta = boar_step_size(o.eta, o.eta_decay, epoch);
		uint64_t nnz = 0;
		const uint32_t *order;
		if (gpu) {
			if ((rc = boar_gpu_order(g, epoch, &order, err)))
				goto out;
		} else {
			order = boar_engine_order(e, epoch);
		}
		for (uint64_t k = 0; k < clocks; k++) {
			uint64_t b = b0 + (b1 - b0) * k / clocks;
			uint64_t en = b0 + (b1 - b0) * (k + 1) / clocks;
			if (++stamp == UINT32_MAX) {
				memset(s.stamp, 0xff,
				       (d->dim + 1) * sizeof *s.stamp);
				stamp = 0;
			}
			uint64_t nk = chunk_keys(d, order, b, en, stamp, K, &s);
			if ((rc = ps_client_pull(c, s.keys, (uint32_t)nk,
						 s.before, err)))
				goto out;
			if (gpu) {
				if ((rc = sweep_gpu(g, &s, nk, epoch, b, en, eta,
						    &loss, m, err)))
					goto out;
			} else {
				for (uint64_t i = 0; i < nk; i++)
					m->w[s.keys[i]] = s.before[i];
				if ((rc = boar_engine_sweep(e, epoch, b, en,
							    &loss))) {
					boar_fail(err, rc,
						  "training diverged in epoch "
						  "%d; lower --eta",
						  epoch);
					goto out;
				}
				for (uint64_t i = 0; i < nk; i++)
					s.delta[i] = m->w[s.keys[i]] -
						     s.before[i];
			}
			damp_bias(&s, nk, keys_total - K, W);
			if ((rc = ps_client_push(c, s.keys, s.delta,
						 (uint32_t)nk, err)))
				goto out;
			if ((rc = ps_client_clock(c, err)))
				goto out;
			for (uint64_t p = b; p < en; p++)
				nnz += d->row_ptr[order[p] + 1] -
				       d->row_ptr[order[p]];
			rep->clocks++;
			rep->rows += en - b;
			if (wc->throttle_ms)
				sleep_ms(wc->throttle_ms);
		}
		if (o.progress) {
			boar_epoch_stats st = { .epoch = epoch };
			st.seconds = now_s() - t0;
			st.updates_per_sec = st.seconds > 0 ? nnz / st.seconds
							    : 0;
			st.train_loss = b1 > b0 ? loss / (double)(b1 - b0) : 0;
			st.eta = eta;
			if (o.test && wc->eval_every_epoch) {
				boar_metrics mt;
				if ((rc = pull_all(c, m, &s, err)))
					goto out;
				if (!boar_evaluate(m, o.test, &mt, o.threads)) {
					st.has_test = 1;
					st.test_loss = mt.loss;
					st.test_accuracy = mt.accuracy;
					st.test_auc = mt.auc;
					st.test_rmse = mt.rmse;
				}
			}
			if (o.progress(&st, o.progress_ctx))
				break;
		}
	}
	if ((rc = ps_client_flush(c, err)) || (rc = ps_client_done(c, err)))
		goto out;
	rep->seconds = now_s() - t_start;
	if (wc->gather) {
		float *w = malloc(keys_total * sizeof *w);
		if (!w) {
			rc = boar_fail(err, BOAR_ENOMEM, "out of memory");
			goto out;
		}
		rc = ps_client_gather(c, w, err);
		if (!rc)
			memcpy(m->w, w, keys_total * sizeof *w);
		free(w);
		if (rc)
			goto out;
		rep->n_shards = cc.n_shards < 64 ? cc.n_shards : 64;
		for (uint32_t i = 0; i < rep->n_shards; i++)
			if ((rc = ps_client_stats(c, i, &rep->shard[i], err)))
				goto out;
		if (wc->shutdown && (rc = ps_client_shutdown(c, err)))
			goto out;
	}
	/* Other workers keep their replica as it is: the shards may be gone
	 * as soon as worker 0 has gathered, so they must not ask for more. */
	for (uint64_t i = 0; i < keys_total; i++)
		if (!isfinite(m->w[i])) {
			rc = boar_fail(err, BOAR_EDIVERGED,
				       "the model diverged; lower --eta");
			goto out;
		}
	ps_client_get_counters(c, &rep->net);
	*out = m;
	m = NULL;
	rc = 0;
out:
	if (c)
		ps_client_get_counters(c, &rep->net);
	ps_client_free(c);
	boar_engine_free(e);
	boar_gpu_close(g);
	boar_model_free(m);
	free(s.stamp);
	free(s.keys);
	free(s.before);
	free(s.delta);
	free(s.keys32);
	return rc;
}
