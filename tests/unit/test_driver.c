/* test_driver.c - one training driver for every place, through the public
 * API:
 * - cluster training (boar_train_ps) over an in-memory parameter server is
 *   the same driver: one worker with one clock per epoch gives the model of
 *   boar_train at one thread (to float rounding); two workers alternating clocks
 *   learn as well; the transport sees every key of every clock ascending;
 *   an evaluation pulls only the keys of the test set, asked ahead with
 *   the next epoch's first clock; with a transport that gathers, the last
 *   epoch is evaluated after finish, on the gathered model (the model
 *   returned, its metrics exactly; the same losses, one pull fewer);
 * - it refuses what a cluster cannot do from the one capability table, and
 *   a transport error comes back as the call's error (never swallowed);
 * - a run the GPU engine cannot do is refused with the same wording;
 * - boar_options grow without breaking callers: an older, smaller struct
 *   trains with the new fields at their defaults; a size the library does
 *   not know is refused; boar_options_init writes only `size` bytes;
 * - device GPU with a plugin file that is not there says so.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "boar.h"
#include "testutil.h"

/* An in-memory parameter server: one float per key. */
struct mem_ps {
	float *w;
	uint64_t n_keys;
	uint64_t clocks, rows, pulls;
	uint32_t last_pull_n; /* keys of the latest pull */
	int fail_at_clock; /* > 0: the clock callback fails there */
	int unsorted;      /* a key list came in out of order */
	/* a pull asked ahead: its keys, collected by the next pull */
	const uint64_t *ahead;
	uint32_t ahead_n;
	uint64_t aheads, ahead_mismatch;
	int finished; /* finish was called */
	float gather_shift; /* added to every weight finish gathers */
};

static int ps_connect(void *ctx, uint64_t n_keys, boar_error *err)
{
	struct mem_ps *p = ctx;
	if (!p->w) {
		p->w = calloc(n_keys, sizeof *p->w);
		p->n_keys = n_keys;
	}
	return p->w && p->n_keys == n_keys ? 0 : BOAR_ENOMEM;
}

static int ps_pull(void *ctx, const uint64_t *keys, uint32_t n, float *vals,
		   boar_error *err)
{
	struct mem_ps *p = ctx;
	p->pulls++;
	p->last_pull_n = n;
	/* a pull asked ahead is read now: this server has no SSP wait, and
	 * the values then count the pushes in between, as they must */
	if (p->ahead && (p->ahead != keys || p->ahead_n != n))
		p->ahead_mismatch++;
	p->ahead = NULL;
	for (uint32_t i = 0; i < n; i++) {
		if (i && keys[i] <= keys[i - 1])
			p->unsorted = 1;
		vals[i] = p->w[keys[i]];
	}
	return 0;
}

static int ps_pull_ahead(void *ctx, const uint64_t *keys, uint32_t n,
			 boar_error *err)
{
	struct mem_ps *p = ctx;
	if (p->ahead)
		p->ahead_mismatch++; /* two asked, none collected */
	p->ahead = keys;
	p->ahead_n = n;
	p->aheads++;
	return 0;
}

static int ps_push(void *ctx, const uint64_t *keys, const float *deltas,
		   uint32_t n, boar_error *err)
{
	struct mem_ps *p = ctx;
	for (uint32_t i = 0; i < n; i++)
		p->w[keys[i]] += deltas[i];
	return 0;
}

static int ps_clock(void *ctx, uint64_t rows, boar_error *err)
{
	struct mem_ps *p = ctx;
	p->clocks++;
	p->rows += rows;
	if (p->fail_at_clock && (int)p->clocks == p->fail_at_clock) {
		snprintf(err->message, sizeof err->message, "shard went away");
		err->code = BOAR_ENET;
		return BOAR_ENET;
	}
	return 0;
}

static int ps_finish(void *ctx, float *w, uint64_t n_keys, int *gathered,
		     boar_error *err)
{
	struct mem_ps *p = ctx;
	for (uint64_t k = 0; k < n_keys; k++)
		w[k] = p->w[k] + p->gather_shift;
	*gathered = 1;
	p->finished = 1;
	return 0;
}

static boar_ps_transport transport(struct mem_ps *p, uint32_t rank,
				   uint32_t workers, uint64_t sync)
{
	boar_ps_transport t = {
		.size = sizeof t, .ctx = p, .rank = rank, .n_workers = workers,
		.sync_every = sync, .connect = ps_connect, .pull = ps_pull,
		.push = ps_push, .clock = ps_clock, .finish = ps_finish,
		.pull_ahead = ps_pull_ahead,
	};
	return t;
}

static boar_dataset *make_data(uint64_t features, uint32_t nnz)
{
	boar_gen_options g;
	boar_gen_options_default(&g);
	g.task = BOAR_TASK_LINEAR;
	g.rows = 3000;
	g.features = features;
	g.nnz_per_row = nnz;
	g.seed = 5;
	boar_dataset *d = NULL;
	boar_error err;
	int rc = boar_generate(&g, &d, &err);
	CHECK(rc == 0, "generate: %s", err.message);
	return d;
}

static double accuracy(const boar_model *m, const boar_dataset *d)
{
	boar_metrics mt;
	return boar_evaluate(m, d, &mt, 1, NULL) ? 0 : mt.accuracy;
}

/* One worker, `clocks` clocks per epoch: the model of boar_train, up to
 * the rounding of the server's w + (after - before), which is not always
 * `after` in floats (so every clock pulled and pushed all of its keys,
 * also those asked for a clock ahead). */
static void same_as_train(const boar_dataset *d, const boar_options *o,
			  uint64_t clocks)
{
	boar_model *a = NULL, *b = NULL;
	boar_error err;
	struct mem_ps p = { 0 };
	uint64_t rows = boar_dataset_rows(d);
	boar_ps_transport t = transport(&p, 0, 1, (rows + clocks - 1) / clocks);
	double ph[BOAR_PS_PHASES] = { 0 };
	t.phase_seconds = ph;
	if (clocks == 1) /* a caller built before phase_seconds */
		t.size = offsetof(boar_ps_transport, phase_seconds);
	int rc = boar_train(d, o, &a, &err);
	CHECK(rc == 0, "train: %s", err.message);
	rc = boar_train_ps(d, o, &t, &b, &err);
	CHECK(rc == 0, "train_ps: %s", err.message);
	CHECK_EQ_INT(p.clocks, o->epochs * clocks);
	CHECK_EQ_INT(p.rows, o->epochs * boar_dataset_rows(d));
	CHECK(!p.unsorted, "keys came out of order");
	/* with several clocks, every one but the very first was asked for
	 * ahead (an epoch's first during the last sweep of the one before),
	 * and collected with the same keys */
	CHECK_EQ_INT(p.aheads, clocks == 1 ? 0 : o->epochs * clocks - 1);
	CHECK(!p.ahead_mismatch, "a pull ahead was not collected as asked");
	/* where the time went: filled in, unless the caller's struct is
	 * older than the field */
	int filled = 0, negative = 0;
	for (int i = 0; i < BOAR_PS_PHASES; i++) {
		filled += ph[i] > 0;
		negative += ph[i] < 0;
	}
	CHECK(!negative && (clocks == 1 ? !filled : ph[BOAR_PS_SWEEP] > 0),
	      "phase seconds: %d filled, %d negative, sweep %g", filled,
	      negative, ph[BOAR_PS_SWEEP]);
	if (a && b) {
		uint64_t na, nb;
		const float *wa = test_model_weights(a, &na);
		const float *wb = test_model_weights(b, &nb);
		CHECK_EQ_INT(na, nb);
		double worst = 0;
		for (uint64_t i = 0; na == nb && i < na; i++) {
			double e = fabs((double)wa[i] - wb[i]) /
				   (1 + fabs((double)wa[i]));
			worst = e > worst ? e : worst;
		}
		CHECK(worst < 1e-5, "the cluster's model differs from "
				    "boar_train's by %g", worst);
	}
	boar_model_free(a);
	boar_model_free(b);
	free(p.w);
}

/* One worker at one thread: the same model, bit for bit, with pulls
 * asked ahead and without (keys of the next epoch's first clock found in
 * its order drawn ahead); with a test set, evaluated between epochs, the
 * refresh comes while the next epoch's first pull is asked (and takes
 * that pull's values for its keys). */
struct losses {
	double test[16];
	int n;
};

static int note_loss(const boar_epoch_stats *s, void *ctx)
{
	struct losses *l = ctx;
	if (l->n < 16)
		l->test[l->n++] = s->test_loss;
	return 0;
}

static void ahead_same(const boar_dataset *d, const boar_options *base,
		       uint64_t clocks)
{
	boar_model *m[2] = { NULL, NULL };
	struct mem_ps p[2] = { { 0 }, { 0 } };
	struct losses l[2] = { { { 0 }, 0 }, { { 0 }, 0 } };
	uint64_t rows = boar_dataset_rows(d);
	boar_options o = *base;
	o.test = d;
	o.progress = note_loss;
	for (int i = 0; i < 2; i++) {
		boar_error err;
		o.progress_ctx = &l[i];
		boar_ps_transport t =
			transport(&p[i], 0, 1, (rows + clocks - 1) / clocks);
		if (!i)
			t.pull_ahead = NULL;
		int rc = boar_train_ps(d, &o, &t, &m[i], &err);
		CHECK(rc == 0, "train_ps: %s", err.message);
		CHECK(!p[i].ahead_mismatch,
		      "a pull ahead was not collected as asked");
	}
	CHECK_EQ_INT(p[0].aheads, 0);
	CHECK_EQ_INT(p[1].aheads, o.epochs * clocks - 1);
	/* the evaluations saw the same model every epoch */
	CHECK_EQ_INT(l[0].n, o.epochs);
	CHECK(l[0].n == l[1].n &&
		      !memcmp(l[0].test, l[1].test, l[0].n * sizeof *l[0].test),
	      "the test losses per epoch differ with pulls ahead");
	/* an evaluation's refresh pulls only what the next epoch's first
	 * clock, collected already, lacks */
	CHECK(p[1].pulls <= p[0].pulls, "%llu pulls with pulls ahead, %llu "
	      "without", (unsigned long long)p[1].pulls,
	      (unsigned long long)p[0].pulls);
	if (m[0] && m[1]) {
		uint64_t na, nb;
		const float *wa = test_model_weights(m[0], &na);
		const float *wb = test_model_weights(m[1], &nb);
		CHECK(na == nb && !memcmp(wa, wb, na * sizeof *wa),
		      "pulls asked ahead changed the model");
	}
	boar_model_free(m[0]);
	boar_model_free(m[1]);
	free(p[0].w);
	free(p[1].w);
}

/* Two workers taking turns clock by clock on one server: the model learns
 * about as well as one process does. */
static void two_workers(const boar_dataset *d, const boar_options *o)
{
	boar_model *single = NULL, *m = NULL;
	boar_error err;
	CHECK(boar_train(d, o, &single, &err) == 0, "train: %s", err.message);
	/* Worker 1 first (its replica is then discarded), worker 0 after:
	 * sequential turns are an SSP schedule with staleness of a whole
	 * run, the harshest one; both read and write the same server. */
	struct mem_ps p = { 0 };
	boar_ps_transport t1 = transport(&p, 1, 2, 200);
	boar_ps_transport t0 = transport(&p, 0, 2, 200);
	int rc = boar_train_ps(d, o, &t1, &m, &err);
	CHECK(rc == 0, "worker 1: %s", err.message);
	boar_model_free(m);
	m = NULL;
	rc = boar_train_ps(d, o, &t0, &m, &err);
	CHECK(rc == 0, "worker 0: %s", err.message);
	if (m && single)
		CHECK(accuracy(m, d) > accuracy(single, d) - 0.03,
		      "two workers: %.4f vs one process %.4f", accuracy(m, d),
		      accuracy(single, d));
	boar_model_free(single);
	boar_model_free(m);
	free(p.w);
}

static void refusals(const boar_dataset *d, const boar_options *base)
{
	boar_options o = *base;
	boar_model *m = NULL;
	boar_error err;
	struct mem_ps p = { 0 };
	boar_ps_transport t = transport(&p, 0, 1, 500);

	o.early_stop = 2;
	int rc = boar_train_ps(d, &o, &t, &m, &err);
	CHECK_EQ_INT(rc, BOAR_EINVAL);
	CHECK(strstr(err.message, "cluster training does not support early "
				  "stopping"),
	      "message: %s", err.message);
	CHECK_EQ_INT(p.clocks, 0);

	o = *base;
	o.deterministic = 1;
	rc = boar_train_ps(d, &o, &t, &m, &err);
	CHECK(rc == BOAR_EINVAL && strstr(err.message, "deterministic"),
	      "deterministic: %d %s", rc, err.message);

	/* normalized is refused by name; auto takes AdaGrad (above) */
	o = *base;
	o.optimizer = BOAR_OPT_NORMALIZED;
	rc = boar_train_ps(d, &o, &t, &m, &err);
	CHECK(rc == BOAR_EINVAL && strstr(err.message, "normalized"),
	      "normalized: %d %s", rc, err.message);

	/* A transport error is the call's error, with its message. */
	p.fail_at_clock = 3;
	rc = boar_train_ps(d, base, &t, &m, &err);
	CHECK_EQ_INT(rc, BOAR_ENET);
	CHECK(strstr(err.message, "shard went away"), "message: %s",
	      err.message);
	free(p.w);

	t.size = 8;
	rc = boar_train_ps(d, base, &t, &m, &err);
	CHECK(rc == BOAR_EINVAL && strstr(err.message, "size"), "size: %s",
	      err.message);

	/* The GPU refusals come from the same table: deterministic mode is
	 * asked for here, which the GPU engine does not take (refused before
	 * a device is touched, or BOAR_ENOGPU where no plugin is). */
	o = *base;
	o.device = BOAR_DEVICE_GPU;
	o.deterministic = 1;
	rc = boar_train(d, &o, &m, &err);
	CHECK(rc == BOAR_ENOGPU ||
		      (rc == BOAR_EINVAL &&
		       strstr(err.message, "the GPU engine does not support "
					   "deterministic training")),
	      "GPU deterministic: %d %s", rc, err.message);

	o = *base;
	o.device = BOAR_DEVICE_GPU;
	o.gpu_plugin = "/nonexistent/libboar-gpu.so.0";
	rc = boar_train(d, &o, &m, &err);
	CHECK_EQ_INT(rc, BOAR_ENOGPU);
	CHECK(strstr(err.message, "/nonexistent/libboar-gpu.so.0"),
	      "plugin message: %s", err.message);
}

/* boar_options as a program built against boar 0.1 had it: up to
 * n_class_weights. */
static void options_abi(const boar_dataset *d)
{
	size_t old = offsetof(boar_options, n_class_weights) + sizeof(int);
	unsigned char buf[sizeof(boar_options) + 16];
	memset(buf, 0xAB, sizeof buf);
	boar_options_init((boar_options *)buf, old);
	CHECK(buf[old] == 0xAB && buf[sizeof buf - 1] == 0xAB,
	      "boar_options_init wrote past the caller's size");
	boar_options *o = (boar_options *)buf;
	CHECK_EQ_INT(o->size, old);
	CHECK_EQ_INT(o->epochs, 10);
	o->threads = 1;
	o->epochs = 2;
	boar_model *m = NULL;
	boar_error err;
	int rc = boar_train(d, o, &m, &err);
	CHECK(rc == 0, "an older options struct: %s", err.message);
	boar_model_free(m);

	boar_options z;
	memset(&z, 0, sizeof z);
	CHECK_EQ_INT(boar_options_check(&z, d, NULL), BOAR_EINVAL);
	rc = boar_train(d, &z, &m, &err);
	CHECK(rc == BOAR_EINVAL && strstr(err.message, "boar_options.size"),
	      "size 0: %d %s", rc, err.message);
	boar_options big;
	boar_options_default(&big);
	big.size = sizeof big + 8;
	CHECK_EQ_INT(boar_options_check(&big, d, NULL), BOAR_EINVAL);
}

/* The per-epoch test losses of a worker that pulls, before evaluating,
 * only the keys the test set reads, and the size of that pull. */
struct eval_probe {
	double loss[16];
	uint32_t refreshed[16];
	int after_finish[16];
	int n;
	const struct mem_ps *p; /* NULL: boar_train */
};

static int note_eval(const boar_epoch_stats *s, void *ctx)
{
	struct eval_probe *e = ctx;
	if (e->n < 16) {
		e->refreshed[e->n] = e->p ? e->p->last_pull_n : 0;
		e->after_finish[e->n] = e->p && e->p->finished;
		e->loss[e->n++] = s->test_loss;
	}
	return 0;
}

/* A test set of 8 of d's 3000 rows: it reads few of the model's keys. */
static boar_dataset *few_rows(const boar_dataset *d)
{
	uint64_t rows[8] = { 3, 17, 100, 101, 555, 1200, 2048, 2999 };
	boar_dataset *test = NULL;
	boar_error err;
	CHECK(boar_dataset_subset(d, rows, 8, &test, &err) == 0, "subset: %s",
	      err.message);
	return test;
}

/* An evaluation reads the test set's weights only, so the refresh before
 * it pulls those (its distinct features and the bias), not every key the
 * worker holds, and still evaluates the model boar_train evaluates (one
 * worker, one clock an epoch, one thread: the same model to rounding). */
static void eval_pulls_test_keys(const boar_dataset *d,
				 const boar_options *base)
{
	boar_dataset *test = few_rows(d);
	boar_error err;
	if (!test)
		return;
	uint64_t dim = boar_dataset_features(d), distinct = 0;
	uint8_t *seen = calloc(dim, 1);
	for (uint64_t r = 0; seen && r < 8; r++) {
		const uint32_t *idx;
		const float *val;
		float y;
		int64_t n = boar_dataset_row(test, r, &idx, &val, &y, NULL);
		for (int64_t k = 0; k < n; k++)
			if (idx[k] < dim && !seen[idx[k]]++)
				distinct++;
	}
	free(seen);
	boar_options o = *base;
	o.test = test;
	o.progress = note_eval;
	struct eval_probe a = { .p = NULL }, b = { .p = NULL };
	struct mem_ps p = { 0 };
	boar_ps_transport t = transport(&p, 0, 1, boar_dataset_rows(d));
	t.pull_ahead = NULL; /* the refresh is then the last pull */
	b.p = &p;
	boar_model *ma = NULL, *mb = NULL;
	o.progress_ctx = &a;
	CHECK(boar_train(d, &o, &ma, &err) == 0, "train: %s", err.message);
	o.progress_ctx = &b;
	CHECK(boar_train_ps(d, &o, &t, &mb, &err) == 0, "train_ps: %s",
	      err.message);
	CHECK_EQ_INT(a.n, o.epochs);
	CHECK_EQ_INT(b.n, o.epochs);
	for (int e = 0; e < a.n && e < b.n; e++) {
		CHECK(fabs(a.loss[e] - b.loss[e]) <= 1e-6 * (1 + a.loss[e]),
		      "epoch %d: test loss %.9g in the cluster, %.9g alone",
		      e + 1, b.loss[e], a.loss[e]);
		CHECK(b.refreshed[e] == distinct + 1,
		      "epoch %d: the refresh pulled %u keys, the test set "
		      "reads %llu", e + 1, b.refreshed[e],
		      (unsigned long long)distinct + 1);
	}
	boar_model_free(ma);
	boar_model_free(mb);
	boar_dataset_free(test);
	free(p.w);
}

/* Two runs of one worker on d (each its own in-memory server), a test
 * set of few rows evaluated after every epoch: what the evaluation
 * tests compare. */
struct eval_pair {
	boar_dataset *test;
	boar_options o;
	struct eval_probe e[2];
	struct mem_ps p[2];
	boar_model *m[2];
	boar_ps_transport t[2];
};

/* The pair's test set, options and transports of `clocks` clocks an
 * epoch (probes noting each epoch's loss). @return 0 where the test set
 * could not be made. */
static int eval_pair_init(struct eval_pair *x, const boar_dataset *d,
			  const boar_options *base, uint64_t clocks)
{
	memset(x, 0, sizeof *x);
	if (!(x->test = few_rows(d)))
		return 0;
	x->o = *base;
	x->o.test = x->test;
	x->o.progress = note_eval;
	uint64_t n = boar_dataset_rows(d);
	for (int i = 0; i < 2; i++)
		x->t[i] = transport(&x->p[i], 0, 1, (n + clocks - 1) / clocks);
	return 1;
}

/* Run i of the pair. */
static void eval_pair_run(struct eval_pair *x, const boar_dataset *d, int i)
{
	boar_error err;
	x->o.progress_ctx = &x->e[i];
	CHECK(boar_train_ps(d, &x->o, &x->t[i], &x->m[i], &err) == 0,
	      "train_ps: %s", err.message);
}

static void eval_pair_free(struct eval_pair *x)
{
	for (int i = 0; i < 2; i++) {
		boar_model_free(x->m[i]);
		free(x->p[i].w);
	}
	boar_dataset_free(x->test);
}

/* With pulls asked ahead, the next epoch's first clock is asked with the
 * keys of the evaluation before it: the evaluation pulls nothing of its
 * own (one pull a clock, and the last evaluation's), and the losses are
 * those of a run without pulls ahead, bit for bit. */
static void eval_asked_ahead(const boar_dataset *d, const boar_options *base,
			     uint64_t clocks)
{
	struct eval_pair x;
	if (!eval_pair_init(&x, d, base, clocks))
		return;
	x.t[0].pull_ahead = NULL;
	for (int i = 0; i < 2; i++) {
		eval_pair_run(&x, d, i);
		CHECK(!x.p[i].ahead_mismatch,
		      "a pull ahead was not collected as asked");
	}
	const struct eval_probe *e = x.e;
	CHECK(e[0].n == x.o.epochs && e[1].n == x.o.epochs &&
		      !memcmp(e[0].loss, e[1].loss, e[0].n * sizeof *e[0].loss),
	      "the test losses differ with the evaluation asked ahead");
	CHECK(x.p[1].pulls == x.o.epochs * clocks + 1,
	      "%llu pulls for %llu clocks: an evaluation pulled on its own",
	      (unsigned long long)x.p[1].pulls,
	      (unsigned long long)(x.o.epochs * clocks));
	eval_pair_free(&x);
}

/* A transport that gathers: the last epoch is evaluated after finish, on
 * the gathered model, whose metrics boar_evaluate gives exactly (the
 * gather shifts every weight, as other workers' last pushes would, so
 * that the worker's own weights would not pass for it); the earlier
 * epochs before it, with the losses of a transport that does not
 * gather, which pulls the test set's keys once more for the last
 * evaluation. */
static void last_on_gathered(const boar_dataset *d, const boar_options *base,
			     uint64_t clocks)
{
	struct eval_pair x;
	if (!eval_pair_init(&x, d, base, clocks))
		return;
	int final[2] = { -1, -1 };
	for (int i = 0; i < 2; i++) {
		x.t[i].gathers = i;
		x.t[i].final_evaluated = &final[i];
		x.p[i].gather_shift = i ? 0.25f : 0;
		x.e[i].p = &x.p[i];
		eval_pair_run(&x, d, i);
	}
	const struct eval_probe *e = x.e;
	int last = x.o.epochs - 1;
	CHECK(final[0] == 0 && final[1] == 1,
	      "final_evaluated %d without gathers, %d with", final[0],
	      final[1]);
	CHECK(e[0].n == x.o.epochs && e[1].n == x.o.epochs &&
		      !memcmp(e[0].loss, e[1].loss, last * sizeof *e[0].loss),
	      "the test losses before the last epoch differ");
	for (int k = 0; k < e[1].n; k++)
		CHECK(e[0].after_finish[k] == 0 &&
			      e[1].after_finish[k] == (k == last),
		      "epoch %d evaluated %s finish", k + 1,
		      e[1].after_finish[k] ? "after" : "before");
	boar_metrics mt;
	boar_error err;
	CHECK(x.m[1] &&
		      boar_evaluate(x.m[1], x.test, &mt, x.o.threads, &err) ==
			      0 &&
		      mt.loss == e[1].loss[last],
	      "the last epoch's loss %.17g is not the returned model's",
	      e[1].loss[last]);
	CHECK(x.p[1].pulls + 1 == x.p[0].pulls,
	      "%llu pulls gathering, %llu not: the last evaluation pulled",
	      (unsigned long long)x.p[1].pulls,
	      (unsigned long long)x.p[0].pulls);
	eval_pair_free(&x);
}

int main(void)
{
	boar_dataset *d = make_data(500, 12);
	/* sparse: a clock's rows touch few of the keys, so a clock that
	 * missed some of its keys would lose their updates */
	boar_dataset *sparse = make_data(50000, 5);
	if (!d || !sparse)
		return 1;
	boar_options o;
	boar_options_default(&o);
	o.threads = 1;
	o.epochs = 4;
	/* AdaGrad named: it is the cluster's auto, where boar_train's is
	 * normalized, which cluster training does not have */
	o.optimizer = BOAR_OPT_ADAGRAD;
	same_as_train(d, &o, 1);
	same_as_train(sparse, &o, 7);
	ahead_same(sparse, &o, 7);
	ahead_same(d, &o, 1);
	eval_pulls_test_keys(sparse, &o);
	eval_pulls_test_keys(d, &o);
	eval_asked_ahead(sparse, &o, 7);
	last_on_gathered(sparse, &o, 7); /* a map of the worker's features */
	last_on_gathered(d, &o, 1);
	o.optimizer = BOAR_OPT_SGD;
	o.l2 = 1e-4;
	same_as_train(d, &o, 1);
	boar_options_default(&o);
	o.threads = 1;
	o.epochs = 4;
	two_workers(d, &o);
	refusals(d, &o);
	options_abi(d);
	boar_dataset_free(d);
	boar_dataset_free(sparse);
	return TEST_RESULT();
}
