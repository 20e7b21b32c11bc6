/* worker.c - the parameter-server client as the transport of boar_train_ps.
 *
 * Only transport: the training (schedule, keys, engines) is libboar's.
 * Throttling (a simulated straggler) and the counters of the report live
 * here because they are about the wire, not the model.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "net/worker.h"

struct worker {
	const struct ps_worker_config *wc;
	struct ps_client_config cc;
	struct ps_client *c;
	struct ps_worker_report *rep;
	double t_start;
	int threads; /* the engine's: the client merges pulls on them */
	int zero_start; /* a linear model: the shards start at zero */
	/* the keys (array) and count of the last pull and of the one
	 * before, which a push of the same may name instead of carrying
	 * them (w_push_pulled) */
	const uint64_t *pulled, *pulled_before;
	uint32_t n_pulled, n_pulled_before;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static int w_connect(void *ctx, uint64_t n_keys, boar_error *err)
{
	struct worker *w = ctx;
	w->cc = w->wc->net;
	w->cc.dim = n_keys;
	w->cc.threads = w->threads;
	w->cc.zero_start = w->zero_start;
	w->rep->keys = n_keys;
	w->t_start = now_s();
	int rc = ps_client_connect(&w->cc, &w->c, err);
	/* pushes and answers cross the links while the engine sweeps */
	return rc ? rc : ps_client_start_async(w->c, err);
}

static int w_pull(void *ctx, const uint64_t *keys, uint32_t n, float *vals,
		  boar_error *err)
{
	struct worker *w = ctx;
	w->pulled_before = w->pulled;
	w->n_pulled_before = w->n_pulled;
	w->pulled = keys;
	w->n_pulled = n;
	if (ps_client_ahead_pending(w->c))
		return ps_client_pull_collect(w->c, keys, n, vals, err);
	return ps_client_pull(w->c, keys, n, vals, err);
}

/* vals NULL: the answer into the client's own buffer (pull_ahead);
 * bits NULL: the requests' bitmaps set from the keys */
static int w_pull_ahead_bits(void *ctx, const uint64_t *keys, uint32_t n,
			     const uint64_t *bits, uint64_t bits_base,
			     float *vals, boar_error *err)
{
	struct worker *w = ctx;
	w->rep->pulls_ahead++;
	return ps_client_pull_ahead_bits(w->c, keys, n, bits, bits_base, vals,
					 err);
}

static int w_pull_ahead_into(void *ctx, const uint64_t *keys, uint32_t n,
			     float *vals, boar_error *err)
{
	return w_pull_ahead_bits(ctx, keys, n, NULL, 0, vals, err);
}

static int w_pull_ahead(void *ctx, const uint64_t *keys, uint32_t n,
			boar_error *err)
{
	return w_pull_ahead_into(ctx, keys, n, NULL, err);
}

/* The library collects the pull at once where this says 1. */
static int w_pull_ahead_ready(void *ctx)
{
	struct worker *w = ctx;
	int ready = ps_client_ahead_ready(w->c);
	w->rep->pulls_early += (uint64_t)ready;
	return ready;
}

static int w_push(void *ctx, const uint64_t *keys, const float *deltas,
		  uint32_t n, boar_error *err)
{
	struct worker *w = ctx;
	return ps_client_push(w->c, keys, deltas, n, err);
}

/* The library says keys are the last pull's, or the one's before where
 * the last was the next clock's collected early; the client checks what
 * it can cheaply (each shard's count and ends), this which array. */
static int w_push_pulled(void *ctx, const uint64_t *keys,
			 const float *deltas, uint32_t n, boar_error *err)
{
	struct worker *w = ctx;
	if (keys == w->pulled && n == w->n_pulled)
		return ps_client_push_pulled(w->c, keys, deltas, n, err);
	if (keys == w->pulled_before && n == w->n_pulled_before)
		return ps_client_push_pulled_before(w->c, keys, deltas, n,
						    err);
	return ps_client_push(w->c, keys, deltas, n, err);
}

static int w_clock(void *ctx, uint64_t rows, boar_error *err)
{
	struct worker *w = ctx;
	int rc = ps_client_clock(w->c, err);
	if (rc)
		return rc;
	w->rep->clocks++;
	w->rep->rows += rows;
	if (w->wc->throttle_ms)
		sleep_ms(w->wc->throttle_ms);
	return 0;
}

/* The barrier of boar_ps_transport.wait_clock: each shard's slowest
 * counted worker (its STATS) polled until it has ticked `clock` times
 * (a shard counts a CLOCK after the pushes before it on that
 * connection), backing off from 20 us to 1 ms. */
static int w_wait_clock(void *ctx, uint64_t clock, boar_error *err)
{
	struct worker *w = ctx;
	long ns = 20000;
	for (uint32_t i = 0; i < w->cc.n_shards;) {
		struct wire_stats st;
		int rc = ps_client_stats(w->c, i, &st, err);
		if (rc)
			return rc;
		if (st.min_clock >= clock) {
			i++;
			continue;
		}
		struct timespec ts = { 0, ns };
		nanosleep(&ts, NULL);
		ns = ns < 1000000 ? ns * 2 : ns;
	}
	return 0;
}

static int shard_stats(struct worker *w, boar_error *err)
{
	struct ps_worker_report *rep = w->rep;
	rep->n_shards = w->cc.n_shards < 64 ? w->cc.n_shards : 64;
	for (uint32_t i = 0; i < rep->n_shards; i++) {
		int rc = ps_client_stats(w->c, i, &rep->shard[i], err);
		if (rc)
			return rc;
	}
	return 0;
}

/* The whole model into model (none: it stays in the shards), every
 * shard's stats, and the shards stopped where asked. */
static int gather(struct worker *w, float *model, uint64_t n_keys,
		  int *gathered, boar_error *err)
{
	if (!model)
		return shard_stats(w, err);
	float *all = malloc((n_keys ? n_keys : 1) * sizeof *all);
	if (!all)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	int rc = ps_client_gather(w->c, all, err);
	if (!rc) {
		memcpy(model, all, n_keys * sizeof *all);
		*gathered = 1;
	}
	free(all);
	if (rc || (rc = shard_stats(w, err)))
		return rc;
	if (w->wc->shutdown)
		return ps_client_shutdown(w->c, err);
	return 0;
}

/* Flush, DONE, and with gather the whole model and every shard's stats.
 * Other workers keep their replica as it is: the shards may be gone as
 * soon as worker 0 has gathered, so they must not ask for more. A model
 * too large to gather (model NULL) stays in the shards, which keep
 * running for predictions (boar predict --ps). */
static int w_finish(void *ctx, float *model, uint64_t n_keys, int *gathered,
		    boar_error *err)
{
	struct worker *w = ctx;
	struct ps_worker_report *rep = w->rep;
	int rc;
	if ((rc = ps_client_flush(w->c, err)) || (rc = ps_client_done(w->c, err)))
		return rc;
	double done = now_s();
	rep->seconds = done - w->t_start;
	if (!w->wc->gather)
		return 0;
	rc = gather(w, model, n_keys, gathered, err);
	rep->gather_s = now_s() - done;
	return rc;
}

/* BOAR_PS_AHEAD (a debugging aid; net/README.md): "keybits", the
 * requests' bitmaps set by the client from the key lists, not copied
 * from the library's (pull_ahead_bits); "copy", pulls asked ahead
 * answered into the client's buffer and copied at the collect;
 * "late", collected only after the clock's pushes, the client adding
 * them (never before, for the library's store and load in one pass);
 * "off", none asked ahead (each clock pulled as it starts); unset, the
 * answers decoded where the library reads them. A worker of one thread
 * trains the same model, bit for bit, every way (tests/cli/net_ahead.sh).
 * @return 0, or BOAR_EINVAL for any other value (a typo would otherwise
 * measure the default while its user thinks otherwise). */
static int ahead_ways(boar_ps_transport *t, boar_error *err)
{
	const char *way = getenv("BOAR_PS_AHEAD");
	if (!way)
		return 0;
	if (strcmp(way, "keybits") && strcmp(way, "copy") &&
	    strcmp(way, "late") && strcmp(way, "off"))
		return boar_fail(err, BOAR_EINVAL,
				 "BOAR_PS_AHEAD is '%s': keybits, copy, late, "
				 "off, or unset",
				 way);
	t->pull_ahead_bits = NULL;
	if (!strcmp(way, "keybits"))
		return 0;
	t->pull_ahead_ready = NULL;
	if (!strcmp(way, "late"))
		return 0;
	t->pull_ahead_into = NULL;
	if (!strcmp(way, "off"))
		t->pull_ahead = NULL;
	return 0;
}

int boar_ps_train(const boar_dataset *train, const boar_options *o_in,
		  const struct ps_worker_config *wc, boar_model **out,
		  struct ps_worker_report *rep, boar_error *err)
{
	memset(rep, 0, sizeof *rep);
	struct worker w = {
		.wc = wc,
		.rep = rep,
		.threads = o_in->threads,
		.zero_start = boar_dataset_task(train) == BOAR_TASK_LINEAR,
	};
	boar_ps_transport t = {
		.size = sizeof t,
		.ctx = &w,
		.rank = wc->net.rank,
		.n_workers = wc->net.n_workers,
		.sync_every = wc->sync_every,
		.connect = w_connect,
		.pull = w_pull,
		.push = w_push,
		.clock = w_clock,
		.finish = w_finish,
		.local_rows = wc->local_rows,
		.phase_seconds = rep->phase,
		.pull_ahead = w_pull_ahead,
		.model_sharded = &rep->model_sharded,
		.shared_sums = wc->shared_sums,
		.wait_clock = w_wait_clock,
		.push_pulled = w_push_pulled,
		.pull_ahead_into = w_pull_ahead_into,
		.pull_ahead_ready = w_pull_ahead_ready,
		.pull_ahead_bits = w_pull_ahead_bits,
		.gathers = wc->gather,
		.final_evaluated = &rep->final_evaluated,
	};
	int rc = ahead_ways(&t, err);
	if (rc)
		return rc;
	boar_options o = *o_in;
	if (!wc->eval_every_epoch)
		o.test = NULL; /* only the evaluating worker pulls its keys */
	rc = boar_train_ps(train, &o, &t, out, err);
	if (w.c)
		ps_client_get_counters(w.c, &rep->net);
	ps_client_free(w.c);
	return rc;
}
