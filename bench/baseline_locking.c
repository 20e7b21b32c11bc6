/* baseline_locking.c - the two locking schemes Hogwild! is measured against.
 *
 * usage: baseline_locking --scheme aig|rr|free [options] TRAIN
 *
 * Trains the same model as `boar train --optimizer sgd --l2 0` (logistic
 * loss on CSR rows, a bias, step eta * decay^(epoch-1), a fresh shuffle per
 * epoch, each thread a contiguous slice of it) with one of three ways of
 * sharing the weights between threads:
 *
 *  - aig:  a lock per coordinate (the Hogwild! paper's "AIG"). Before a
 *          row is read, its thread takes the locks of every coordinate the
 *          row touches, in ascending order so that two threads never
 *          deadlock, and releases them after the write-back: each update is
 *          atomic as a whole. One byte-sized spinlock per coordinate (ids
 *          fold onto 2^22 locks for larger models).
 *  - rr:   round robin (the paper's "RR", after Langford et al.): thread t
 *          computes the gradient of steps t, t+T, t+2T, ... at whatever the
 *          weights are, then waits for its turn to write: updates land in
 *          one fixed global order, one at a time.
 *  - free: the same loop with no locks at all (relaxed loads and stores):
 *          the control that shows what the locks alone cost here.
 *
 * The bias is touched by every row. As in boar's plain-SGD sweep, aig and
 * free accumulate a thread's bias steps and publish them every 64 rows
 * (aig under the bias's own lock) so that the comparison is about the
 * feature coordinates; rr, being serial in its writes, applies it exactly.
 *
 * --time-limit S stops a run whose sweeps have taken S seconds, in the
 * middle of an epoch if need be (that epoch's object then says "truncated"
 * and counts only the rows done): round robin hands the turn over once per
 * row, and on a machine with more runnable threads than cores each hand-over
 * can wait for a scheduler tick, so one run could otherwise take hours.
 *
 * Output: one JSON object per epoch on stdout with the keys boar train
 * --json uses (epoch, seconds, updates_per_sec, train_loss, eta, and
 * test_loss/test_accuracy with --test), so the suite reads both alike.
 * "seconds" is the sweep alone, as in boar.
 *
 * Reads data through the public API (boar_dataset_load) and the CSR arrays
 * through src/data/dataset.h; it does not use boar's engine.
 */
#include <math.h>
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atomics/atomics.h"
#include "boar.h"
#include "data/dataset.h"

#define MAX_LOCK_BITS 22
#define BIAS_FLUSH 64

enum { SCHEME_AIG, SCHEME_RR, SCHEME_FREE };

struct config {
	int scheme;
	int threads;
	int epochs;
	double eta;
	double decay;
	uint64_t seed;
	int cache;
	double time_limit;
	const char *train;
	const char *test;
};

struct shared {
	const struct boar_dataset *d;
	float *w;          /* dim weights + the bias at w[dim] */
	uint64_t dim;
	uint8_t *locks;    /* aig: one spinlock per (folded) coordinate */
	uint64_t lock_mask;
	double deadline;   /* CLOCK_MONOTONIC seconds; 0: none */
	uint8_t bias_lock BOAR_ALIGNED_CACHE_LINE;
	uint64_t turn BOAR_ALIGNED_CACHE_LINE; /* rr: the step allowed to write */
	int stop BOAR_ALIGNED_CACHE_LINE;      /* the deadline passed */
};

#define CHECK_EVERY 1024

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void shuffle(uint32_t *a, uint64_t n, uint64_t seed)
{
	uint64_t s = seed;
	for (uint64_t i = n; i > 1; i--) {
		uint64_t j = splitmix(&s) % i;
		uint32_t t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}

static inline void spin_lock(uint8_t *l)
{
	for (;;) {
		if (!__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
			return;
		while (__atomic_load_n(l, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
	}
}

static inline void spin_unlock(uint8_t *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* Logistic loss of margin m against y = +-1, and its derivative. */
static inline double logistic(float m, float y, float *d)
{
	float z = y * m;
	float e = expf(-fabsf(z));
	float r = 1.0f / (1.0f + e);
	*d = -y * (z > 0 ? e * r : r);
	return (z > 0 ? 0.0f : -z) + log1pf(e);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* Lock ids of a row, ascending and without repeats, into ids[]. Row ids
 * ascend already; only folding onto fewer locks than coordinates can
 * reorder them. */
static uint64_t row_locks(const struct shared *s, uint64_t lo, uint64_t hi,
			  uint32_t *ids)
{
	const uint32_t *idx = s->d->idx;
	uint64_t n = 0;
	int sorted = 1;
	for (uint64_t k = lo; k < hi; k++) {
		ids[n] = (uint32_t)(idx[k] & s->lock_mask);
		if (n && ids[n] <= ids[n - 1])
			sorted = 0;
		n++;
	}
	if (sorted)
		return n;
	qsort(ids, n, sizeof *ids, cmp_u32);
	uint64_t u = 0;
	for (uint64_t i = 0; i < n; i++)
		if (!u || ids[i] != ids[u - 1])
			ids[u++] = ids[i];
	return u;
}

/* Every CHECK_EVERY rows: has the run used up its time? */
static int out_of_time(struct shared *s, uint64_t i)
{
	if (!s->deadline || i % CHECK_EVERY)
		return __atomic_load_n(&s->stop, __ATOMIC_RELAXED);
	if (now() > s->deadline)
		__atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
	return __atomic_load_n(&s->stop, __ATOMIC_RELAXED);
}

/* One thread's slice [begin, end) of the order under aig or free; *done
 * receives the non-zeros it processed. */
static double sweep_slice(struct shared *s, const uint32_t *order,
			  uint64_t begin, uint64_t end, float eta, int scheme,
			  uint32_t *ids, uint64_t *done)
{
	const struct boar_dataset *d = s->d;
	float *w = s->w, *bias = &s->w[s->dim];
	double loss = 0;
	float pending = 0;
	int rows = 0;

	*done = 0;
	for (uint64_t i = begin; i < end; i++) {
		if (out_of_time(s, i - begin))
			break;
		uint32_t r = order[i];
		uint64_t lo = d->row_ptr[r], hi = d->row_ptr[r + 1], nl = 0;
		*done += hi - lo;
		if (scheme == SCHEME_AIG) {
			nl = row_locks(s, lo, hi, ids);
			for (uint64_t k = 0; k < nl; k++)
				spin_lock(&s->locks[ids[k]]);
		}
		float m = boar_load_relaxed(bias) + pending, g;
		for (uint64_t k = lo; k < hi; k++)
			m += boar_load_relaxed(&w[d->idx[k]]) * d->val[k];
		loss += logistic(m, boar_label_sign(d->label[r]), &g);
		for (uint64_t k = lo; k < hi; k++)
			boar_add_racy(&w[d->idx[k]], -eta * g * d->val[k]);
		if (scheme == SCHEME_AIG)
			for (uint64_t k = nl; k > 0; k--)
				spin_unlock(&s->locks[ids[k - 1]]);
		pending -= eta * g;
		if (++rows == BIAS_FLUSH) {
			if (scheme == SCHEME_AIG)
				spin_lock(&s->bias_lock);
			boar_add_racy(bias, pending);
			if (scheme == SCHEME_AIG)
				spin_unlock(&s->bias_lock);
			pending = 0;
			rows = 0;
		}
	}
	if (scheme == SCHEME_AIG)
		spin_lock(&s->bias_lock);
	boar_add_racy(bias, pending);
	if (scheme == SCHEME_AIG)
		spin_unlock(&s->bias_lock);
	return loss;
}

/* Round robin: thread t owns global steps t, t+T, ...; it computes the
 * step's gradient, then waits until turn equals the step, writes, and
 * passes the turn on. The acquire/release pair on turn orders one step's
 * writes before the next step's. */
static double sweep_rr(struct shared *s, const uint32_t *order, uint64_t n,
		       float eta, int t, int nt, float *grad, uint64_t *done)
{
	const struct boar_dataset *d = s->d;
	float *w = s->w, *bias = &s->w[s->dim];
	double loss = 0;

	*done = 0;
	for (uint64_t step = (uint64_t)t; step < n; step += (uint64_t)nt) {
		if (out_of_time(s, step / (uint64_t)nt))
			break;
		uint32_t r = order[step];
		uint64_t lo = d->row_ptr[r], hi = d->row_ptr[r + 1];
		float m = boar_load_relaxed(bias), g;
		for (uint64_t k = lo; k < hi; k++)
			m += boar_load_relaxed(&w[d->idx[k]]) * d->val[k];
		loss += logistic(m, boar_label_sign(d->label[r]), &g);
		for (uint64_t k = lo; k < hi; k++)
			grad[k - lo] = -eta * g * d->val[k];
		unsigned spins = 0;
		while (__atomic_load_n(&s->turn, __ATOMIC_ACQUIRE) != step) {
			if (++spins > 4096) { /* more threads than cores */
				if (__atomic_load_n(&s->stop, __ATOMIC_RELAXED))
					return loss;
				if (s->deadline && now() > s->deadline) {
					__atomic_store_n(&s->stop, 1,
							 __ATOMIC_RELAXED);
					return loss;
				}
				sched_yield();
			} else {
				__builtin_ia32_pause();
			}
		}
		*done += hi - lo;
		for (uint64_t k = lo; k < hi; k++)
			boar_add_racy(&w[d->idx[k]], grad[k - lo]);
		boar_add_racy(bias, -eta * g);
		__atomic_store_n(&s->turn, step + 1, __ATOMIC_RELEASE);
	}
	return loss;
}

static void evaluate(const struct shared *s, const struct boar_dataset *t,
		     double *loss, double *acc)
{
	double l = 0;
	uint64_t right = 0;
	for (uint64_t r = 0; r < t->n_rows; r++) {
		float m = s->w[s->dim], g;
		for (uint64_t k = t->row_ptr[r]; k < t->row_ptr[r + 1]; k++)
			if (t->idx[k] < s->dim)
				m += s->w[t->idx[k]] * t->val[k];
		float y = boar_label_sign(t->label[r]);
		l += logistic(m, y, &g);
		right += (m > 0) == (y > 0);
	}
	*loss = t->n_rows ? l / t->n_rows : 0;
	*acc = t->n_rows ? (double)right / t->n_rows : 0;
}

static int load(const char *path, int cache, boar_dataset **out)
{
	boar_load_options lo;
	boar_error err;
	boar_load_options_default(&lo);
	lo.task = BOAR_TASK_LINEAR;
	lo.use_cache = cache;
	if (boar_dataset_load(path, &lo, out, &err)) {
		fprintf(stderr, "baseline_locking: %s\n", err.message);
		return -1;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: baseline_locking --scheme aig|rr|free [options] TRAIN\n"
		"  --threads N     threads (default: all cores)\n"
		"  --epochs N      passes (default: 10)\n"
		"  --eta X         initial step (default: 0.1)\n"
		"  --eta-decay X   step multiplier per epoch (default: 0.9)\n"
		"  --seed S        shuffling seed (default: 1)\n"
		"  --test FILE     log loss and accuracy after every epoch\n"
		"  --time-limit S  stop once the sweeps have taken S seconds\n"
		"  --cache         read/write FILE.boarcache as boar does\n");
	exit(2);
}

static void parse_args(int argc, char **argv, struct config *c)
{
	*c = (struct config){.scheme = -1, .threads = omp_get_num_procs(),
			     .epochs = 10, .eta = 0.1, .decay = 0.9, .seed = 1};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--cache")) {
			c->cache = 1;
			continue;
		}
		if (a[0] != '-') {
			c->train = a;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--scheme"))
			c->scheme = !strcmp(v, "aig") ? SCHEME_AIG
				    : !strcmp(v, "rr") ? SCHEME_RR
				    : !strcmp(v, "free") ? SCHEME_FREE : -1;
		else if (!strcmp(a, "--threads"))
			c->threads = atoi(v);
		else if (!strcmp(a, "--epochs"))
			c->epochs = atoi(v);
		else if (!strcmp(a, "--eta"))
			c->eta = atof(v);
		else if (!strcmp(a, "--eta-decay"))
			c->decay = atof(v);
		else if (!strcmp(a, "--seed"))
			c->seed = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--test"))
			c->test = v;
		else if (!strcmp(a, "--time-limit"))
			c->time_limit = atof(v);
		else
			usage();
	}
	if (c->scheme < 0 || !c->train || c->threads < 1 || c->epochs < 1 ||
	    !(c->eta > 0))
		usage();
}

int main(int argc, char **argv)
{
	struct config c;
	parse_args(argc, argv, &c);

	boar_dataset *train = NULL, *test = NULL;
	if (load(c.train, c.cache, &train) ||
	    (c.test && load(c.test, c.cache, &test)))
		return 1;
	const struct boar_dataset *d = train;
	struct shared *s = aligned_alloc(BOAR_CACHE_LINE,
					 (sizeof *s + BOAR_CACHE_LINE - 1) /
						 BOAR_CACHE_LINE *
						 BOAR_CACHE_LINE);
	uint32_t *order = malloc(d->n_rows * sizeof *order);
	uint64_t max_row = 0;
	for (uint64_t r = 0; r < d->n_rows; r++)
		if (d->row_ptr[r + 1] - d->row_ptr[r] > max_row)
			max_row = d->row_ptr[r + 1] - d->row_ptr[r];
	if (!s || !order)
		goto nomem;
	memset(s, 0, sizeof *s);
	s->d = d;
	s->dim = d->dim;
	s->w = calloc(d->dim + 1, sizeof *s->w);
	int bits = 0;
	while (bits < MAX_LOCK_BITS && (1ULL << bits) < d->dim)
		bits++;
	s->lock_mask = (1ULL << bits) - 1;
	s->locks = calloc(1ULL << bits, 1);
	if (!s->w || !s->locks)
		goto nomem;
	for (uint64_t r = 0; r < d->n_rows; r++)
		order[r] = (uint32_t)r;

	double spent = 0;
	for (int ep = 1; ep <= c.epochs && !s->stop; ep++) {
		float eta = (float)(c.eta * pow(c.decay, ep - 1));
		shuffle(order, d->n_rows, c.seed * 1000003u + (uint64_t)ep);
		s->turn = 0;
		double loss = 0, t0 = now();
		uint64_t done = 0;
		int nomem_seen = 0;
		s->deadline = c.time_limit > 0 ? t0 + c.time_limit - spent : 0;
#pragma omp parallel num_threads(c.threads) reduction(+ : loss, nomem_seen, done)
		{
			uint64_t mine = 0;
			int t = omp_get_thread_num(), nt = omp_get_num_threads();
			uint32_t *buf = malloc((max_row + 1) * sizeof(float));
			if (!buf) {
				nomem_seen = 1;
				/* rr cannot go on without every thread */
				if (c.scheme == SCHEME_RR)
					abort();
			} else if (c.scheme == SCHEME_RR) {
				loss = sweep_rr(s, order, d->n_rows, eta, t, nt,
						(float *)buf, &mine);
			} else {
				uint64_t b = d->n_rows * t / nt;
				uint64_t e = d->n_rows * (t + 1) / nt;
				loss = sweep_slice(s, order, b, e, eta, c.scheme,
						   buf, &mine);
			}
			done = mine;
			free(buf);
		}
		double secs = now() - t0;
		spent += secs;
		if (nomem_seen)
			goto nomem;
		printf("{\"epoch\": %d, \"seconds\": %.9g, \"updates_per_sec\": "
		       "%.10g, \"train_loss\": %.10g, \"eta\": %.6g",
		       ep, secs, secs > 0 ? done / secs : 0,
		       d->n_rows ? loss / d->n_rows : 0, eta);
		if (s->stop)
			printf(", \"truncated\": true, \"nnz_done\": %llu",
			       (unsigned long long)done);
		if (test) {
			double tl, ta;
			evaluate(s, test, &tl, &ta);
			printf(", \"test_loss\": %.10g, \"test_accuracy\": %.10g",
			       tl, ta);
		}
		printf("}\n");
		fflush(stdout);
	}
	free(s->w);
	free(s->locks);
	free(s);
	free(order);
	boar_dataset_free(train);
	boar_dataset_free(test);
	return 0;
nomem:
	fprintf(stderr, "baseline_locking: out of memory\n");
	return 1;
}
