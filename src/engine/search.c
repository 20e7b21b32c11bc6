/* search.c - model selection by a grid search over eta, l1 and l2
 * (boar.h, boar_search).
 *
 * Every configuration is a copy of the caller's options with its eta, l1
 * and l2. It is judged on rows it did not train on: a test set, the folds
 * of boar_dataset_split (cross-validation) or one holdout of it. The splits
 * are taken one at a time (a fold's two subsets are the only copies of the
 * data alive) and the configurations of a split are trained concurrently:
 * `workers` POSIX threads take configurations off a shared counter, each
 * training with threads / workers OpenMP threads of its own (an OpenMP
 * team inside a plain thread is a team of its own; nested inside an
 * OpenMP region it would get one thread). Small models on a few cores
 * train faster side by side than one after another on all the cores: one
 * thread each shares no cache line between them, while Hogwild! threads
 * of one model do (measured in the CLI's search notes, README).
 *
 * Each configuration's result is written only by the worker that trains
 * it (the splits run one after another), so only the choice of a test-set
 * model, the callbacks and the first error need the lock; `stop` is set
 * under it but read by the workers without it (relaxed: a worker that
 * misses it takes one more configuration, whose training stops at its
 * first epoch).
 */
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/options.h"
#include "data/dataset.h"
#include "math/loss.h"

/* Configurations a search may hold: a grid beyond this is a typing slip. */
#define SEARCH_MAX 10000

struct search {
	const boar_dataset *train, *rest, *held; /* the data; this split's */
	boar_options base;       /* the caller's options, whole */
	boar_search_options s;   /* the caller's search options, whole */
	boar_search_result *res; /* one per configuration */
	double *sum, *sq;        /* per configuration: score sums over splits */
	int n, n_split, split;   /* configurations, splits, the current one */
	int workers, threads;    /* concurrent trainings, threads each */
	int regression;          /* judged by RMSE rather than loss */
	int next;                /* the next configuration to take */
	int stop;                /* a callback asked to stop */
	int first_rc;            /* the first failure, and its message */
	boar_error first_err;
	boar_model *kept;        /* test set: the best model so far */
	int kept_at;
	pthread_mutex_t mu;
};

/* What one training reports to the caller's progress callback. */
struct job {
	struct search *S;
	int epochs;
};

static int list_len(int n)
{
	return n > 0 ? n : 1;
}

/* The values of one list (NULL: the base value), checked. */
static const char *check_list(const double *v, int n, int positive)
{
	if (n < 0 || (n > 0 && !v))
		return "a search list has a negative length or no values";
	for (int i = 0; i < n; i++)
		if (!isfinite(v[i]) || v[i] < 0 || (positive && v[i] == 0))
			return positive ? "search values of eta must be > 0"
					: "search values of l1 and l2 must be "
					  ">= 0";
	return NULL;
}

int boar_search_size(const boar_search_options *in)
{
	boar_search_options s;
	if (boar_search_options_widen(in, &s) ||
	    check_list(s.eta, s.n_eta, 1) || check_list(s.l1, s.n_l1, 0) ||
	    check_list(s.l2, s.n_l2, 0))
		return BOAR_EINVAL;
	uint64_t n = (uint64_t)list_len(s.n_eta) * list_len(s.n_l1) *
		     list_len(s.n_l2);
	return n > SEARCH_MAX ? BOAR_EINVAL : (int)n;
}

/* Configuration i's options: eta slowest, l2 fastest. */
static boar_options config(const struct search *S, int i)
{
	boar_options o = S->base;
	int n2 = list_len(S->s.n_l2), n1 = list_len(S->s.n_l1);
	if (S->s.n_l2)
		o.l2 = S->s.l2[i % n2];
	if (S->s.n_l1)
		o.l1 = S->s.l1[i / n2 % n1];
	if (S->s.n_eta)
		o.eta = S->s.eta[i / n2 / n1];
	o.test = NULL;
	o.sweep_progress = NULL; /* trainings side by side: no live line */
	return o;
}

/* Every epoch of every configuration: the caller's callback, one call at
 * a time; a stop asked for once stops every training. */
static int on_epoch(const boar_epoch_stats *st, void *ctx)
{
	struct job *j = ctx;
	struct search *S = j->S;
	j->epochs = st->epoch;
	pthread_mutex_lock(&S->mu);
	if (!S->stop && S->base.progress &&
	    S->base.progress(st, S->base.progress_ctx))
		__atomic_store_n(&S->stop, 1, __ATOMIC_RELAXED);
	int stop = S->stop;
	pthread_mutex_unlock(&S->mu);
	return stop;
}

/* Keeps the lower (score, index) of the kept model and m; frees the
 * other. Called with the lock held. */
static void keep_better(struct search *S, boar_model *m, int i)
{
	const boar_search_result *r = &S->res[i];
	if (S->kept && (S->res[S->kept_at].score < r->score ||
			(S->res[S->kept_at].score == r->score && S->kept_at < i))) {
		boar_model_free(m);
		return;
	}
	boar_model_free(S->kept);
	S->kept = m;
	S->kept_at = i;
}

/* The end of configuration i's last split: its means and the callback. */
static void finish_config(struct search *S, int i, boar_model *m)
{
	boar_search_result *r = &S->res[i];
	int k = S->n_split;
	if (!r->rc) {
		double mean = S->sum[i] / k, var = S->sq[i] / k - mean * mean;
		r->score = mean;
		r->score_sd = k > 1 && var > 0 ? sqrt(var) : 0;
		r->loss /= k;
		r->accuracy /= k;
		r->auc /= k;
		r->rmse /= k;
	}
	pthread_mutex_lock(&S->mu);
	if (m && !r->rc)
		keep_better(S, m, i);
	else
		boar_model_free(m);
	if (!S->stop && S->s.on_result && S->s.on_result(r, i, S->s.ctx))
		__atomic_store_n(&S->stop, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&S->mu);
}

/* Trains configuration i on this split's rows and scores it on the
 * held-out ones. */
static void run_config(struct search *S, int i)
{
	boar_search_result *r = &S->res[i];
	boar_options o = config(S, i);
	struct job j = {.S = S};
	boar_model *m = NULL;
	boar_error err = {0};
	boar_metrics mt;
	o.threads = S->threads;
	o.progress = on_epoch;
	o.progress_ctx = &j;
	double t0 = omp_get_wtime();
	int rc = r->rc ? r->rc : boar_train(S->rest, &o, &m, &err);
	if (!rc)
		rc = boar_evaluate(m, S->held, &mt, S->threads, &err);
	if (rc && !r->rc) {
		r->rc = rc;
		r->score = INFINITY;
		pthread_mutex_lock(&S->mu);
		if (!S->first_rc || rc == BOAR_ECANCELLED) {
			S->first_rc = rc;
			S->first_err = err;
		}
		pthread_mutex_unlock(&S->mu);
	}
	r->seconds += omp_get_wtime() - t0;
	if (!rc) {
		double score = S->regression ? mt.rmse : mt.loss;
		S->sum[i] += score;
		S->sq[i] += score * score;
		r->loss += mt.loss;
		r->accuracy += mt.accuracy;
		r->auc += mt.auc;
		r->rmse += mt.rmse;
		r->binary = mt.binary;
		r->epochs = j.epochs;
	}
	int keep = !rc && S->s.test && S->split == 0;
	if (keep || S->split == S->n_split - 1)
		finish_config(S, i, keep ? m : NULL);
	if (!keep)
		boar_model_free(m);
}

static void *worker(void *arg)
{
	struct search *S = arg;
	for (;;) {
		int i = __atomic_fetch_add(&S->next, 1, __ATOMIC_RELAXED);
		if (i >= S->n || __atomic_load_n(&S->stop, __ATOMIC_RELAXED))
			return NULL;
		run_config(S, i);
	}
}

/* Every configuration on this split, S->workers at a time. */
static int run_split(struct search *S)
{
	pthread_t t[64];
	int started = 0;
	S->next = 0;
	for (; started < S->workers - 1; started++)
		if (pthread_create(&t[started], NULL, worker, S))
			break; /* fewer helpers; this thread works too */
	worker(S);
	for (int k = 0; k < started; k++)
		pthread_join(t[k], NULL);
	return S->stop ? BOAR_ECANCELLED : 0;
}

/* This split's training and held-out rows. */
static int open_split(struct search *S, int f, boar_dataset **rest,
		      boar_dataset **held, boar_error *err)
{
	if (S->s.test) {
		S->rest = S->train;
		S->held = S->s.test;
		return 0;
	}
	double lo = S->s.folds >= 2 ? (double)f / S->n_split : 0;
	double hi = S->s.folds >= 2 ? (double)(f + 1) / S->n_split
				    : S->s.holdout;
	int rc = boar_dataset_split(S->train, S->base.seed, lo, hi, rest, held,
				    err);
	S->rest = *rest;
	S->held = *held;
	return rc;
}

/* The options, the splits and the threads; 0 or BOAR_EINVAL. */
static int prepare(struct search *S, const boar_options *o,
		   const boar_search_options *s, boar_error *err)
{
	int rc = boar_options_import(o, S->train, &S->base, err);
	if (rc)
		return rc;
	if (boar_search_options_widen(s, &S->s))
		return boar_fail(err, BOAR_EINVAL,
				 "boar_search_options.size is not a size this "
				 "libboar knows: fill the options with "
				 "boar_search_options_default()");
	const char *why = check_list(S->s.eta, S->s.n_eta, 1);
	why = why ? why : check_list(S->s.l1, S->s.n_l1, 0);
	why = why ? why : check_list(S->s.l2, S->s.n_l2, 0);
	if (!why && (S->s.folds < 0 || S->s.folds == 1 || S->s.parallel < 0 ||
		     !(S->s.holdout >= 0 && S->s.holdout < 1)))
		why = "search folds must be 0 or >= 2, holdout in [0, 1) and "
		      "parallel >= 0";
	if (why)
		return boar_fail(err, BOAR_EINVAL, "%s", why);
	if ((S->n = boar_search_size(&S->s)) < 0)
		return boar_fail(err, BOAR_EINVAL,
				 "a search of more than %d configurations",
				 SEARCH_MAX);
	if (!S->s.test && S->s.folds < 2 && S->s.holdout == 0)
		S->s.folds = 5;
	S->n_split = S->s.test || S->s.folds < 2 ? 1 : S->s.folds;
	for (int i = 0; i < S->n; i++) {
		boar_options c = config(S, i);
		boar_error e;
		if (boar_options_check(&c, S->train, &e))
			return boar_fail(err, BOAR_EINVAL, "eta %g, l1 %g, l2 %g: %s",
					 c.eta, c.l1, c.l2, e.message);
	}
	int threads = S->base.threads > 0 ? S->base.threads : omp_get_num_procs();
	int w = S->s.parallel ? S->s.parallel : threads;
	w = w < S->n ? w : S->n;
	w = w < 64 ? w : 64;
	S->workers = w;
	S->threads = threads / w > 0 ? threads / w : 1;
	/* MF for MAE is judged by its loss, the MAE */
	S->regression = boar_dataset_task(S->train) == BOAR_TASK_MF
				? S->base.mf_loss == BOAR_MF_LOSS_SQUARED
				: boar_loss_kind(S->base.loss) ==
					  BOAR_LOSS_KIND_REGRESSION;
	return 0;
}

/* The configurations as run, defaults resolved (MF's from the data). */
static void describe(struct search *S)
{
	for (int i = 0; i < S->n; i++) {
		boar_options c = config(S, i);
		boar_options_resolve(&c, S->train);
		S->res[i] = (boar_search_result){.eta = c.eta, .l1 = c.l1,
						 .l2 = c.l2};
	}
}

/* The lowest score that trained (the first of equals), or -1. */
static int choose(const struct search *S)
{
	int best = -1;
	for (int i = 0; i < S->n; i++)
		if (!S->res[i].rc && !isnan(S->res[i].score) &&
		    (best < 0 || S->res[i].score < S->res[best].score))
			best = i;
	return best;
}

/* The chosen configuration on all the training rows. */
static int refit(struct search *S, int best, boar_model **model,
		 boar_error *err)
{
	if (S->s.test) {
		*model = S->kept;
		S->kept = NULL;
		return 0;
	}
	boar_options o = config(S, best);
	o.sweep_progress = S->base.sweep_progress;
	boar_model *m = NULL;
	int rc = boar_train(S->train, &o, &m, err);
	if (rc) { /* a stopped training hands back its model: not ours */
		boar_model_free(m);
		return rc;
	}
	*model = m;
	return 0;
}

static int search_all(struct search *S, int *best, boar_model **model,
		      boar_error *err)
{
	int rc = 0;
	for (S->split = 0; !rc && S->split < S->n_split; S->split++) {
		boar_dataset *rest = NULL, *held = NULL;
		rc = open_split(S, S->split, &rest, &held, err);
		if (!rc)
			rc = run_split(S);
		boar_dataset_free(rest);
		boar_dataset_free(held);
	}
	if (rc == BOAR_ECANCELLED)
		return boar_fail(err, rc, "the search was stopped by a callback");
	if (rc)
		return rc;
	int b = choose(S);
	if (b < 0) {
		if (err)
			*err = S->first_err;
		return S->first_rc;
	}
	if (model && (rc = refit(S, b, model, err)))
		return rc;
	*best = b;
	return 0;
}

int boar_search(const boar_dataset *train, const boar_options *o,
		const boar_search_options *s, boar_search_result *results,
		size_t result_size, int *best, boar_model **model,
		boar_error *err)
{
	struct search S = {.train = train};
	if (!train || !results || !best || !result_size)
		return boar_fail(err, BOAR_EINVAL,
				 "boar_search needs data, results and best");
	int rc = prepare(&S, o, s, err);
	if (rc)
		return rc;
	S.res = calloc(S.n, sizeof *S.res);
	S.sum = calloc(S.n, sizeof *S.sum);
	S.sq = calloc(S.n, sizeof *S.sq);
	if (!S.res || !S.sum || !S.sq || pthread_mutex_init(&S.mu, NULL)) {
		rc = boar_fail(err, BOAR_ENOMEM, "out of memory");
		goto out;
	}
	describe(&S);
	rc = search_all(&S, best, model, err);
	size_t each = result_size < sizeof *S.res ? result_size : sizeof *S.res;
	for (int i = 0; i < S.n; i++)
		memcpy((char *)results + i * result_size, &S.res[i], each);
	pthread_mutex_destroy(&S.mu);
out:
	boar_model_free(S.kept);
	free(S.res);
	free(S.sum);
	free(S.sq);
	return rc;
}
