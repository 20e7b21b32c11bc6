/* train_cluster.c - cluster training: the training driver (train.c) with a
 * per-clock hook that pulls a clock's keys from a parameter server before
 * its sweep and pushes what changed after (boar_train_ps, boar.h).
 *
 * The transport (boar_ps_transport) is the caller's: libboar-net's io_uring
 * client in the boar CLI. This file knows keys, not sockets; net/ knows
 * sockets, not models.
 *
 * The keys of a clock come out ascending (transports want them so) from a
 * bitmap per clock, made for all of an epoch's clocks in one pass over the
 * rows in storage order on all the worker's threads (epoch_marks), then
 * scanned clock by clock: finding them row by row in the epoch's random
 * order, on one thread, took as long as a 6-thread sweep (and a qsort of
 * them, before, a third of a worker's cycles). The engine (CPU or GPU,
 * through engine_ops.h) loads the pulled values by key before the sweep
 * and hands the new ones back after. Where the time goes is counted per
 * phase (boar_ps_transport.phase_seconds).
 *
 * The worker's engine holds only the features its rows and test rows use
 * (data/feature_map.h: local ids, ascending like the global ones), so a
 * 2^32-weight hashed model trains on workers of a few hundred MiB: the
 * driver runs on views of the datasets renumbered into the map, and keys
 * are translated to the model's (global) keys only on their way to the
 * transport. The final model is gathered into a dense one where that
 * fits the memory limit, else it stays in the servers (model_sharded).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <omp.h>

#include "base/error.h"
#include "base/mem_limit.h"
#include "data/dataset.h"
#include "data/feature_map.h"
#include "engine_ops.h"
#include "model/model.h"
#include "model/model_copy.h"
#include "model/model_input.h"
#include "train.h"

/* Cluster training runs data-parallel linear models from zero weights.
 * Not optimizer normalized: the engine would convert the whole model
 * between its two spaces around every clock's sweep (engine_norm.c). */
#define CLUSTER_CAPS                                                        \
	(BOAR_CAPS_ALL & ~(BOAR_CAP(MF) | BOAR_CAP(SUBSET) |                \
			   BOAR_CAP(EARLY_STOP) | BOAR_CAP(WARM_START) |    \
			   BOAR_CAP(DETERMINISTIC) | BOAR_CAP(NORMALIZED)))

struct cluster {
	const boar_ps_transport *t;
	int local_rows; /* t->local_rows, where t's size has it */
	/* Local keys (the engine's) to the model's: NULL where they are
	 * the same (every feature used). */
	const struct feature_map *fm;
	uint64_t dim;      /* the model's features (global) */
	uint64_t n_keys;   /* the engine's keys: (its dim + 1) * width */
	int can_shard;     /* the transport takes a model left sharded */
	int sharded;       /* finish: the model stays in the servers */
	float *gathered;   /* finish: the whole model, (dim + 1) * width */
	uint32_t width; /* keys per feature: K, or 1 */
	uint64_t *seen;  /* a bit per feature, all clear between clocks */
	/* This epoch's keys, found in one pass over the rows in storage
	 * order (epoch_marks): a bitmap per clock, and each row's clock. */
	uint64_t first, last, clocks; /* the schedule (cluster_start) */
	uint64_t words;               /* bitmap words per clock */
	uint64_t *clock_bits;         /* copies x clocks x words, or NULL */
	int copies;                   /* of the bitmaps: one per thread
					 (plain stores) or one (atomics) */
	uint32_t *clock_of;           /* per row: its clock, or NO_CLOCK */
	uint64_t next;                /* the clock the next pull is for */
	/* The transport's pull_ahead (or NULL), and the keys of clock
	 * ahead_k (NO_CLOCK: none) asked for with it. */
	int (*pull_ahead)(void *ctx, const uint64_t *keys, uint32_t n,
			  boar_error *err);
	uint64_t *ahead_keys, ahead_nk, ahead_k;
	uint64_t *keys;  /* the current clock's keys, ascending */
	uint64_t nk;
	/* The same keys as the transport knows them (the model's): the
	 * arrays above where there is no map. */
	uint64_t *gkeys, *ahead_gkeys;
	float *before, *delta;
	uint64_t cap;
	double phase[BOAR_PS_PHASES]; /* seconds per boar_ps_phase */
	double mark;                  /* when the last phase ended */
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The time since the last mark goes to phase p. */
static void lap(struct cluster *c, enum boar_ps_phase p)
{
	double t = now_s();
	c->phase[p] += t - c->mark;
	c->mark = t;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

#define NO_CLOCK UINT32_MAX
/* Less work than this many non-zeros (or 16 times as many bitmap words)
 * stays on one thread: a parallel region costs more than it saves. */
#define PARALLEL_MIN (1u << 18)

/* The worker's threads (the engine's). */
static int threads_of(const struct train_run *r)
{
	return r->o.threads > 0 ? r->o.threads : omp_get_max_threads();
}

/* Marks the features of rows order[b..e) in c->seen, on `threads`
 * threads: a bit already set is only read, so the hot features of
 * power-law data cost a shared read, not a contended atomic. */
static void mark_parallel(struct cluster *c, const struct boar_dataset *d,
			  const uint32_t *order, uint64_t b, uint64_t e,
			  int threads)
{
	uint64_t *seen = c->seen;
#pragma omp parallel for num_threads(threads) schedule(static) \
	if ((e - b) * (d->nnz / (d->n_rows + 1)) >= PARALLEL_MIN)
	for (uint64_t p = b; p < e; p++) {
		uint32_t r = order[p];
		for (uint64_t k = d->row_ptr[r]; k < d->row_ptr[r + 1]; k++) {
			uint32_t j = d->idx[k];
			uint64_t bit = 1ull << (j & 63);
			if (!(__atomic_load_n(&seen[j / 64], __ATOMIC_RELAXED) &
			      bit))
				__atomic_fetch_or(&seen[j / 64], bit,
						  __ATOMIC_RELAXED);
		}
	}
}

/* The features set in bits[words], ascending into c->keys, clearing it: each
 * thread counts the bits of its range of words, then writes them from
 * where the counts before it end. @return how many. */
static uint64_t scan_parallel(struct cluster *c, uint64_t *bits,
			      uint64_t words, int copies, uint64_t stride,
			      int threads)
{
	uint64_t at[65] = {0};
	int nt = 1;
	if (threads > 64)
		threads = 64;
#pragma omp parallel num_threads(threads) if (words >= PARALLEL_MIN / 16)
	{
		int t = omp_get_thread_num(), n = omp_get_num_threads();
		uint64_t lo = words * t / n, hi = words * (t + 1) / n, m = 0;
		for (uint64_t w = lo; w < hi; w++) {
			for (int i = 1; i < copies; i++) { /* fold into copy 0 */
				bits[w] |= bits[i * stride + w];
				bits[i * stride + w] = 0;
			}
			m += (uint64_t)__builtin_popcountll(bits[w]);
		}
		at[t + 1] = m;
#pragma omp barrier
#pragma omp single
		{
			nt = n;
			for (int i = 1; i <= n; i++)
				at[i] += at[i - 1];
		}
		m = at[t];
		for (uint64_t w = lo; w < hi; w++) {
			uint64_t x = bits[w];
			if (!x)
				continue;
			bits[w] = 0;
			for (; x; x &= x - 1)
				c->keys[m++] = w * 64 + (uint64_t)__builtin_ctzll(x);
		}
	}
	return at[nt];
}

/* Distinct features of rows order[b..e), ascending, one thread: listed
 * as found, then sorted (the bitmap only dedups), for clocks with few
 * non-zeros against the model's size, where scanning it would cost more
 * than a sort. */
static uint64_t features_sorted(struct cluster *c, const struct boar_dataset *d,
				const uint32_t *order, uint64_t b, uint64_t e)
{
	uint64_t n = 0;
	for (uint64_t p = b; p < e; p++) {
		uint32_t r = order[p];
		for (uint64_t k = d->row_ptr[r]; k < d->row_ptr[r + 1]; k++) {
			uint32_t j = d->idx[k];
			uint64_t bit = 1ull << (j & 63);
			if (!(c->seen[j / 64] & bit)) {
				c->seen[j / 64] |= bit;
				c->keys[n++] = j;
			}
		}
	}
	qsort(c->keys, n, sizeof *c->keys, cmp_u64);
	for (uint64_t i = 0; i < n; i++)
		c->seen[c->keys[i] / 64] = 0;
	return n;
}

/* Every clock's features of this epoch at once, into c->clock_bits: the
 * rows in storage order, each marking the bitmap of the clock the order
 * puts it in. Visiting rows in the epoch's random order, clock by clock,
 * missed the cache on every row (as many misses as the sweep itself, and
 * on one thread); storage order streams them, and the bitmaps of a
 * 2^20-feature model (128 KiB per clock) stay in cache. Each thread marks
 * its own copy where there is room for one per thread: one shared copy
 * set by atomics moved every line it touched between the cores (most of
 * this pass's time with 6 threads); the scan folds the copies. */
static void epoch_marks(struct cluster *c, const struct train_run *r,
			const uint32_t *order)
{
	const struct boar_dataset *d = r->d;
	uint64_t L = c->last - c->first, C = c->clocks, W = c->words;
	uint64_t *bits = c->clock_bits;
	uint32_t *clock_of = c->clock_of;
	int threads = threads_of(r);
	if (c->copies > 1 && threads > c->copies)
		threads = c->copies;
	/* each thread its own copy (no shared cache lines), or atomics */
	int own = c->copies > 1;
#pragma omp parallel num_threads(threads) if (d->nnz >= PARALLEL_MIN)
	{
#pragma omp for schedule(static)
		for (uint64_t i = 0; i < d->n_rows; i++)
			clock_of[i] = NO_CLOCK;
		/* position q of the share is in clock k, the last whose
		 * start first + L*k/C (the driver's cut) is <= q */
#pragma omp for schedule(static)
		for (uint64_t q = 0; q < L; q++)
			clock_of[order[c->first + q]] =
				(uint32_t)(((q + 1) * C + L - 1) / L - 1);
#pragma omp for schedule(dynamic, 4096)
		for (uint64_t i = 0; i < d->n_rows; i++) {
			uint32_t k = clock_of[i];
			if (k == NO_CLOCK)
				continue;
			uint64_t *b = bits + k * W;
			uint64_t x = d->row_ptr[i], end = d->row_ptr[i + 1];
			if (own) {
				b += (uint64_t)omp_get_thread_num() * C * W;
				for (; x < end; x++)
					b[d->idx[x] / 64] |= 1ull
							     << (d->idx[x] & 63);
				continue;
			}
			for (; x < end; x++) {
				uint32_t j = d->idx[x];
				uint64_t bit = 1ull << (j & 63);
				if (!(__atomic_load_n(&b[j / 64],
						      __ATOMIC_RELAXED) & bit))
					__atomic_fetch_or(&b[j / 64], bit,
							  __ATOMIC_RELAXED);
			}
		}
	}
}

/* Where clock k of an epoch starts in its order (the driver's cut). */
static uint64_t clock_begin(const struct cluster *c, uint64_t k)
{
	return c->first + (c->last - c->first) * k / c->clocks;
}

/* Clock k's distinct features, ascending into c->keys: from the epoch's
 * bitmaps where there are some (clock 0 makes them), else from its rows.
 * @return how many. */
static uint64_t clock_features(struct cluster *c, const struct train_run *r,
			       const uint32_t *order, uint64_t k)
{
	const struct boar_dataset *d = r->d;
	uint64_t b = clock_begin(c, k), e = clock_begin(c, k + 1);
	if (c->clock_bits) {
		if (k == 0)
			epoch_marks(c, r, order);
		return scan_parallel(c, c->clock_bits + k * c->words, c->words,
				     c->copies, c->clocks * c->words,
				     threads_of(r));
	}
	uint64_t nnz = (uint64_t)((double)d->nnz * (e - b) /
				  (d->n_rows ? d->n_rows : 1));
	if (c->words < 16 * nnz) {
		mark_parallel(c, d, order, b, e, threads_of(r));
		return scan_parallel(c, c->seen, c->words, 1, 0,
				     threads_of(r));
	}
	return features_sorted(c, d, order, b, e);
}

/* Distinct keys of clock k's rows plus the bias, ascending, into c->keys.
 * A feature j of a K-class model owns keys j*K .. j*K+K-1 (the model is
 * feature-major), so the bitmap is per feature and each feature expands
 * to K keys. */
static uint64_t clock_keys(struct cluster *c, const struct train_run *r,
			   const uint32_t *order, uint64_t k)
{
	const struct boar_dataset *d = r->d;
	uint32_t K = c->width;
	uint64_t n = clock_features(c, r, order, k);
	c->keys[n++] = d->dim; /* the bias (the largest key), every row */
	if (K > 1) /* expand in place from the back: j -> j*K .. j*K+K-1 */
		for (uint64_t i = n; i-- > 0;)
			for (uint32_t j = K; j-- > 0;)
				c->keys[i * K + j] = c->keys[i] * K + j;
	return n * K;
}

/* keys[0..n) (the engine's) as the model's keys, into out: feature f of
 * the map is global[f], the bias (f = the map's size) the model's bias.
 * The map keeps the order, so they stay ascending. */
static void to_global(const struct cluster *c, const struct train_run *r,
		      const uint64_t *keys, uint64_t *out, uint64_t n)
{
	if (!c->fm)
		return; /* out is keys */
	const uint32_t *g = c->fm->global;
	uint64_t K = c->width, m = c->fm->n, dim = c->dim;
#pragma omp parallel for num_threads(threads_of(r)) schedule(static) \
	if (n >= PARALLEL_MIN)
	for (uint64_t i = 0; i < n; i++) {
		uint64_t f = keys[i] / K, k = keys[i] % K;
		out[i] = (f < m ? g[f] : dim) * K + k;
	}
}

/* Room for cap keys as the model knows them (none without a map). */
static uint64_t *global_keys(const struct cluster *c, uint64_t *local,
			     uint64_t cap)
{
	return c->fm ? malloc(cap * sizeof(uint64_t)) : local;
}

/* The schedule: the same number of clocks per epoch on every worker, and
 * room for the keys of the largest clock. */
static int cluster_start(void *ctx, const struct train_run *r, uint64_t *first,
			 uint64_t *last, uint64_t *clocks, boar_error *err)
{
	struct cluster *c = ctx;
	const struct boar_dataset *d = r->d;
	const boar_ps_transport *t = c->t;
	uint32_t R = t->rank, W = t->n_workers;
	uint64_t n = r->ops->rows(r->eng);
	uint64_t sync = t->sync_every ? t->sync_every : 1000;
	uint64_t per_worker = (n + W - 1) / W;
	*first = n * R / W;
	*last = n * (R + 1) / W;
	if (c->local_rows) { /* the rows are this worker's part already */
		per_worker = n;
		*first = 0;
		*last = n;
	}
	*clocks = (per_worker + sync - 1) / sync;
	if (!*clocks)
		*clocks = 1;

	c->width = boar_model_width(r->m);
	c->n_keys = (d->dim + 1) * c->width;
	uint64_t max_row = 0;
	for (uint64_t i = 0; i < d->n_rows; i++)
		if (d->row_ptr[i + 1] - d->row_ptr[i] > max_row)
			max_row = d->row_ptr[i + 1] - d->row_ptr[i];
	/* keys of one clock: at most its nnz + 1, at most the whole model */
	uint64_t rows = (*last - *first + *clocks - 1) / *clocks;
	uint64_t cap = (rows * max_row + 1) * c->width;
	if (cap > c->n_keys)
		cap = c->n_keys;
	if (cap < 4096)
		cap = c->n_keys < 4096 ? c->n_keys : 4096;
	c->cap = cap;
	c->first = *first;
	c->last = *last;
	c->clocks = *clocks;
	c->words = (d->dim + 63) / 64;
	c->seen = calloc(c->words + 1, sizeof *c->seen);
	/* the epoch's bitmaps where they take at most the size of the
	 * data's ids (a huge hashed model marks clock by clock instead) */
	uint64_t set = c->clocks * c->words, room = d->nnz / 2 + 1;
	int threads = threads_of(r);
	c->copies = (uint64_t)threads * set <= room ? threads : 1;
	if (set <= room) {
		c->clock_bits = calloc(c->copies * set, sizeof *c->clock_bits);
		c->clock_of = malloc((d->n_rows ? d->n_rows : 1) *
				     sizeof *c->clock_of);
		if (!c->clock_bits || !c->clock_of) {
			free(c->clock_bits);
			free(c->clock_of);
			c->clock_bits = NULL;
			c->clock_of = NULL;
		}
	}
	c->keys = malloc(cap * sizeof *c->keys);
	c->gkeys = global_keys(c, c->keys, cap);
	c->ahead_k = NO_CLOCK;
	if (c->pull_ahead && *clocks > 1 &&
	    (!(c->ahead_keys = malloc(cap * sizeof *c->ahead_keys)) ||
	     !(c->ahead_gkeys = global_keys(c, c->ahead_keys, cap))))
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	c->before = malloc(cap * sizeof *c->before);
	c->delta = malloc(cap * sizeof *c->delta);
	if (!c->seen || !c->keys || !c->gkeys || !c->before || !c->delta)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	return t->connect(t->ctx, (c->dim + 1) * c->width, err);
}

/* Clock k's keys into c->ahead_keys, asked for now (the transport's
 * pull_ahead) so that they travel while clock k - 1 sweeps. */
static int ask_ahead(struct cluster *c, const struct train_run *r,
		     const uint32_t *order, uint64_t k, boar_error *err)
{
	uint64_t *cur = c->keys;
	c->keys = c->ahead_keys; /* the key finders write into c->keys */
	c->ahead_nk = clock_keys(c, r, order, k);
	c->ahead_keys = c->keys;
	c->keys = cur;
	to_global(c, r, c->ahead_keys, c->ahead_gkeys, c->ahead_nk);
	lap(c, BOAR_PS_KEYS);
	int rc = c->pull_ahead(c->t->ctx, c->ahead_gkeys,
			       (uint32_t)c->ahead_nk, err);
	lap(c, BOAR_PS_PULL);
	c->ahead_k = rc ? NO_CLOCK : k;
	return rc;
}

static int cluster_pull(void *ctx, const struct train_run *r,
			const uint32_t *order, uint64_t b, uint64_t e,
			boar_error *err)
{
	struct cluster *c = ctx;
	c->mark = now_s();
	uint64_t k = b == c->first ? 0 : c->next;
	c->next = k + 1;
	if (k >= c->clocks || b != clock_begin(c, k) ||
	    e != clock_begin(c, k + 1))
		return boar_fail(err, BOAR_EINVAL,
				 "cluster training: rows [%llu, %llu) are not "
				 "clock %llu of the schedule",
				 (unsigned long long)b, (unsigned long long)e,
				 (unsigned long long)k);
	if (c->ahead_k == k) { /* asked for during the last sweep */
		uint64_t *t = c->keys, *g = c->gkeys;
		c->keys = c->ahead_keys;
		c->ahead_keys = t;
		c->gkeys = c->ahead_gkeys;
		c->ahead_gkeys = g;
		c->nk = c->ahead_nk;
	} else {
		c->nk = clock_keys(c, r, order, k);
		to_global(c, r, c->keys, c->gkeys, c->nk);
	}
	c->ahead_k = NO_CLOCK;
	lap(c, BOAR_PS_KEYS);
	int rc = c->t->pull(c->t->ctx, c->gkeys, (uint32_t)c->nk, c->before,
			    err);
	lap(c, BOAR_PS_PULL);
	if (!rc)
		rc = r->ops->load_keys(r->eng, c->keys, c->before, c->nk, err);
	lap(c, BOAR_PS_LOCAL);
	if (!rc && c->pull_ahead && k + 1 < c->clocks)
		rc = ask_ahead(c, r, order, k + 1, err);
	return rc;
}

/* The bias is touched by every row of every worker: each worker's delta
 * for it sums a clock's worth of steps taken from one stale value, and the
 * shard adding W of them steps W times too far (plain SGD diverged with two
 * workers). Pushing the bias as 1/W of the delta makes the shard's bias the
 * average of the workers' replicas, as the GPU engine does for its hot
 * coordinates per block; sparse features rarely collide and are summed. */
static void damp_bias(struct cluster *c)
{
	uint64_t bias_key = c->n_keys - c->width;
	/* the bias keys are the largest, so the last ones */
	for (uint64_t i = c->nk; i-- > 0 && c->keys[i] >= bias_key;)
		c->delta[i] /= (float)c->t->n_workers;
}

static int cluster_push(void *ctx, const struct train_run *r, uint64_t rows,
			boar_error *err)
{
	struct cluster *c = ctx;
	lap(c, BOAR_PS_SWEEP);
	int rc = r->ops->store_keys(r->eng, c->keys, c->delta, c->nk, err);
	if (rc)
		return rc;
	float *delta = c->delta;
	const float *before = c->before;
#pragma omp parallel for num_threads(threads_of(r)) \
	schedule(static) if (c->nk >= PARALLEL_MIN)
	for (uint64_t i = 0; i < c->nk; i++)
		delta[i] -= before[i];
	damp_bias(c);
	lap(c, BOAR_PS_LOCAL);
	rc = c->t->push(c->t->ctx, c->gkeys, c->delta, (uint32_t)c->nk, err);
	lap(c, BOAR_PS_PUSH);
	if (!rc)
		rc = c->t->clock(c->t->ctx, rows, err);
	lap(c, BOAR_PS_CLOCK);
	return rc;
}

/* Every key of the engine into the host model, in pulls of at most cap
 * keys: the whole model where there is no map, else every weight the
 * worker's rows and test rows use (all an evaluation reads). */
static int cluster_refresh(void *ctx, const struct train_run *r,
			   boar_error *err)
{
	struct cluster *c = ctx;
	double t0 = now_s();
	int rc = 0;
	for (uint64_t lo = 0; !rc && lo < c->n_keys;) {
		uint64_t n = c->n_keys - lo > c->cap ? c->cap : c->n_keys - lo;
		for (uint64_t i = 0; i < n; i++)
			c->keys[i] = lo + i;
		to_global(c, r, c->keys, c->gkeys, n);
		rc = c->t->pull(c->t->ctx, c->gkeys, (uint32_t)n, r->m->w + lo,
				err);
		lo += n;
	}
	c->phase[BOAR_PS_REFRESH] += now_s() - t0;
	return rc;
}

/* Whether the whole model, twice (the model and the transport's buffer
 * for the gather), fits the memory limit and the address space this
 * process may have (ulimit -v). */
static int dense_fits(const struct cluster *c, const struct train_run *r)
{
	uint64_t need = boar_mul_sat((c->dim + 1) * c->width, 8);
	struct rlimit as;
	if (!getrlimit(RLIMIT_AS, &as) && as.rlim_cur != RLIM_INFINITY &&
	    need > (uint64_t)as.rlim_cur / 2)
		return 0;
	return need <= boar_memory_limit(r->o.max_memory);
}

/* The transport's end; with a map, the whole model goes into c->gathered
 * (the engine's model has only the worker's features), or nowhere when it
 * is too large for this process (the servers keep it). */
static int cluster_finish(void *ctx, const struct train_run *r,
			  boar_error *err)
{
	struct cluster *c = ctx;
	int gathered = 0;
	if (!c->fm)
		return c->t->finish(c->t->ctx, r->m->w, c->n_keys, &gathered,
				    err);
	uint64_t n = (c->dim + 1) * c->width;
	c->sharded = c->can_shard && !dense_fits(c, r);
	if (!c->sharded && !(c->gathered = calloc(n, sizeof *c->gathered)))
		return boar_fail(err, BOAR_ENOMEM,
				 "out of memory for the gathered model");
	int rc = c->t->finish(c->t->ctx, c->gathered, n, &gathered, err);
	if (!rc && !gathered && c->gathered) { /* this worker's replica */
		float *w = c->gathered;
		const uint32_t *g = c->fm->global;
		uint64_t K = c->width, m = c->fm->n;
		for (uint64_t f = 0; f <= m; f++)
			memcpy(&w[(f < m ? g[f] : c->dim) * K],
			       &r->m->w[f * K], K * sizeof *w);
	}
	return rc;
}

static int transport_check(const boar_ps_transport *t, boar_error *err)
{
	if (!t || (t->size != sizeof *t &&
		   t->size != offsetof(boar_ps_transport, local_rows) &&
		   t->size != offsetof(boar_ps_transport, phase_seconds) &&
		   t->size != offsetof(boar_ps_transport, pull_ahead) &&
		   t->size != offsetof(boar_ps_transport, model_sharded)))
		return boar_fail(err, BOAR_EINVAL,
				 "boar_ps_transport.size is not a size this "
				 "libboar knows: set it to "
				 "sizeof(boar_ps_transport)");
	if (!t->n_workers || t->rank >= t->n_workers)
		return boar_fail(err, BOAR_EINVAL,
				 "boar_ps_transport: rank %u of %u workers",
				 t->rank, t->n_workers);
	if (!t->connect || !t->pull || !t->push || !t->clock || !t->finish)
		return boar_fail(err, BOAR_EINVAL,
				 "boar_ps_transport: a callback is missing");
	return 0;
}

/* The model's head: no feature weights (dim 0), everything else of m
 * (loss, hashing, classes, bias weights, input): what predicting through
 * the servers needs besides the weights they hold. */
static struct boar_model *model_head(const struct boar_model *m,
				     const boar_dataset *train)
{
	struct boar_model *h =
		m->n_classes ? boar_model_alloc_multiclass(m->loss, 0,
							   m->n_classes,
							   m->classes)
			     : boar_model_alloc(m->task, m->loss, 0, 0, 0, 0);
	if (!h)
		return NULL;
	h->hash_bits = m->hash_bits;
	h->slot_ids = m->slot_ids;
	h->loss_param = m->loss_param;
	memcpy(h->w, &m->w[m->dim * boar_model_width(m)],
	       boar_model_width(m) * sizeof *h->w);
	boar_error e;
	if (boar_model_note_input(h, train, &e)) {
		boar_model_free(h);
		return NULL;
	}
	return h;
}

/* What the driver trained on the views (lm, the worker's features) as the
 * model the caller asked for: the whole model gathered (or this worker's
 * replica) at the data's dim, or the head of a model the servers keep. */
static int global_model(struct cluster *c, const boar_dataset *train,
			struct boar_model *lm, boar_model **out,
			boar_error *err)
{
	struct boar_model *gm = NULL;
	if (c->sharded) {
		if (!(gm = model_head(lm, train)))
			return boar_fail(err, BOAR_ENOMEM, "out of memory");
	} else {
		if (!c->gathered)
			return boar_fail(err, BOAR_EINVAL,
					 "cluster training: no model came back "
					 "from the transport");
		int rc = boar_model_grow_copy(lm, train, &gm, err);
		if (rc)
			return rc;
		memcpy(gm->w, c->gathered,
		       (c->dim + 1) * c->width * sizeof *gm->w);
		if ((rc = boar_model_note_input(gm, train, err))) {
			boar_model_free(gm);
			return rc;
		}
	}
	boar_model_free(lm);
	*out = gm;
	return 0;
}

/* The map of the features train and test use, and the views of both
 * renumbered into it; *fm_used 0 (no views) where nearly every feature is
 * used.
 * (Only linear models train in a cluster.) */
static int make_views(const boar_dataset *train, const boar_dataset *test,
		      int threads, struct feature_map *fm,
		      struct boar_dataset *tv, struct boar_dataset *sv,
		      int *fm_used, boar_error *err)
{
	const struct boar_dataset *ds[2] = { train, test };
	*fm_used = 0;
	if (train->task != BOAR_TASK_LINEAR)
		return 0;
	int rc = feature_map_build(fm, train->dim, ds, 2, threads, err);
	if (rc)
		return rc;
	/* The views cost a copy of the ids (4 bytes per non-zero); the
	 * engine saves at least 16 bytes (weight, AdaGrad sum, ...) per
	 * feature unused: renumber only where that saves more. */
	uint64_t ids = train->nnz + (test ? test->nnz : 0);
	if ((train->dim - fm->n) * 16 <= ids * 4) {
		feature_map_free(fm);
		return 0;
	}
	if ((rc = feature_map_view(fm, train, tv, threads, err)) ||
	    (test && (rc = feature_map_view(fm, test, sv, threads, err)))) {
		feature_map_view_free(tv);
		feature_map_free(fm);
		return rc;
	}
	*fm_used = 1;
	return 0;
}

int boar_train_ps(const boar_dataset *train, const boar_options *o,
		  const boar_ps_transport *t, boar_model **out,
		  boar_error *err)
{
	int rc = transport_check(t, err);
	if (rc)
		return rc;
	struct cluster c = {.t = t, .dim = train->dim};
	if (t->size > offsetof(boar_ps_transport, local_rows))
		c.local_rows = t->local_rows;
	if (t->size > offsetof(boar_ps_transport, pull_ahead))
		c.pull_ahead = t->pull_ahead;
	int *sharded_out = t->size > offsetof(boar_ps_transport, model_sharded)
				   ? t->model_sharded
				   : NULL;
	c.can_shard = sharded_out != NULL;
	const struct train_hook hook = {
		.who = "cluster training",
		.caps = CLUSTER_CAPS,
		.advice = "train on one machine for it",
		.ctx = &c,
		.start = cluster_start,
		.pull = cluster_pull,
		.push = cluster_push,
		.refresh = cluster_refresh,
		.finish = cluster_finish,
	};
	struct feature_map fm;
	struct boar_dataset tv = { 0 }, sv = { 0 };
	int mapped = 0;
	boar_options ov = *o;
	if ((rc = make_views(train, o->test, o->threads, &fm, &tv, &sv,
			     &mapped, err)))
		return rc;
	if (mapped) {
		c.fm = &fm;
		if (o->test)
			ov.test = &sv;
	}
	struct boar_model *m = NULL;
	rc = boar_train_driver(mapped ? &tv : train, &ov, &hook, &m, err);
	if (m && mapped && (!rc || rc == BOAR_ECANCELLED)) {
		int grc = global_model(&c, train, m, &m, err);
		if (grc) {
			boar_model_free(m);
			m = NULL;
			rc = grc;
		}
	}
	if (!rc || rc == BOAR_ECANCELLED)
		*out = m;
	if (sharded_out)
		*sharded_out = c.sharded;
	if (t->size > offsetof(boar_ps_transport, phase_seconds) &&
	    t->phase_seconds)
		for (int p = 0; p < BOAR_PS_PHASES; p++)
			t->phase_seconds[p] += c.phase[p];
	if (mapped) {
		feature_map_view_free(&tv);
		feature_map_view_free(&sv);
		feature_map_free(&fm);
	}
	if (c.gkeys != c.keys)
		free(c.gkeys);
	if (c.ahead_gkeys != c.ahead_keys)
		free(c.ahead_gkeys);
	free(c.gathered);
	free(c.seen);
	free(c.clock_bits);
	free(c.clock_of);
	free(c.keys);
	free(c.ahead_keys);
	free(c.before);
	free(c.delta);
	return rc;
}
