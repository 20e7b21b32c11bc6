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
 * rows in storage order on all the worker's threads (cluster_keys.c),
 * then scanned clock by clock: finding them row by row in the epoch's random
 * order, on one thread, took as long as a 6-thread sweep (and a qsort of
 * them, before, a third of a worker's cycles). The engine (CPU or GPU,
 * through engine_ops.h) loads the pulled values by key before the sweep
 * and hands the new ones back after. Where the time goes is counted per
 * phase (boar_ps_transport.phase_seconds).
 *
 * Each clock's keys are asked for (the transport's pull_ahead) while the
 * clock before sweeps, and an epoch's first clock while the last of the
 * epoch before sweeps: its order is drawn then (boar_order_next, the
 * draw the CPU engine makes when the epoch starts), so no clock but the
 * very first waits for a whole round trip before its sweep.
 *
 * The engine keeps AdaGrad's own sums beside the weights, as the single
 * node does (one cache line a coordinate: sweeps a quarter to a third
 * shorter on 2^20-2^22 models), since weights move only through it, by
 * key (engine_ops.h's layout).
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
#include <time.h>

#include <omp.h>

#include "base/error.h"
#include "data/dataset.h"
#include "data/feature_map.h"
#include "engine.h"
#include "engine_ops.h"
#include "model/model.h"
#include "train.h"
#include "train_cluster.h"
#include "train_cluster_mf.h"
#include "cluster_adagrad.h"
#include "cluster_clock.h"

/* Cluster training runs data-parallel linear models from zero weights
 * (matrix factorization: train_cluster_mf.c).
 * Not optimizer normalized: the engine would convert the whole model
 * between its two spaces around every clock's sweep (engine_norm.c). */
#define CLUSTER_CAPS                                                        \
	(BOAR_CAPS_ALL & ~(BOAR_CAP(MF) | BOAR_CAP(SUBSET) |                \
			   BOAR_CAP(EARLY_STOP) | BOAR_CAP(WARM_START) |    \
			   BOAR_CAP(DETERMINISTIC) | BOAR_CAP(NORMALIZED)))


/* The time since the last mark goes to phase p. */
static void lap(struct cluster *c, enum boar_ps_phase p)
{
	cluster_lap(c->phase, &c->mark, p);
}

/* Room for cap keys as the model knows them, and their sums' keys
 * (none without a map or sums). */
static uint64_t *global_keys(const struct cluster *c, uint64_t *local,
			     uint64_t cap)
{
	return c->fm || c->key_copies > 1
		       ? cluster_alloc(cap * c->key_copies * sizeof(uint64_t), 0)
		       : local;
}

/* Room to ask the next epoch's first clock ahead with the keys of the
 * evaluation that comes before it, where one comes after every epoch
 * (a test set), the next epoch's order is drawn ahead and the weights
 * travel alone (shared sums would need the union's sums too). Under
 * 2^32 keys a pull. @return 0, or -1 out of memory. */
static int with_eval_start(struct cluster *c)
{
	if (!c->next_order || !c->eval_keys || c->key_copies != 1)
		return 0;
	uint64_t most = c->cap + c->n_eval;
	if (most >= UINT32_MAX)
		return 0;
	c->with = cluster_alloc(most * sizeof *c->with, 0);
	c->gwith = global_keys(c, c->with, most);
	c->with_vals = cluster_alloc(most * sizeof *c->with_vals, 0);
	c->with_pos = cluster_alloc(c->cap * sizeof *c->with_pos, 0);
	return c->with && c->gwith && c->with_vals && c->with_pos ? 0 : -1;
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
	cluster_keys_start(c, r);
	int rc = cluster_sums_start(c, r, err);
	if (rc)
		return rc;
	c->keys = cluster_alloc(cap * sizeof *c->keys, 0);
	c->gkeys = global_keys(c, c->keys, cap);
	c->ahead_k = NO_CLOCK;
	c->prep_k = NO_CLOCK;
	/* the next epoch's order drawn ahead: the CPU engine's (whose draw
	 * is boar_order_next), where there is a next epoch */
	if (c->pull_ahead && r->ops == &boar_engine_cpu_ops &&
	    r->o.epochs > 1 &&
	    !(c->next_order = malloc((n ? n : 1) * sizeof *c->next_order)))
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	if (c->pull_ahead && (*clocks > 1 || c->next_order) &&
	    (!(c->ahead_keys =
		       cluster_alloc(cap * sizeof *c->ahead_keys, 0)) ||
	     !(c->ahead_gkeys = global_keys(c, c->ahead_keys, cap)) ||
	     !(c->ahead_before = cluster_alloc(cap * c->key_copies *
						sizeof *c->ahead_before, 0))))
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	cluster_ask_bits_start(c);
	c->before = cluster_alloc(cap * c->key_copies * sizeof *c->before,
				  0);
	c->delta = cluster_alloc(cap * c->key_copies * sizeof *c->delta, 0);
	if (!c->seen || !c->keys || !c->gkeys || !c->before || !c->delta ||
	    (r->o.test && cluster_eval_keys(c, r, r->o.test)) ||
	    with_eval_start(c))
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	return t->connect(t->ctx, (c->dim + 1) * c->width * c->key_copies,
			  err);
}

/* Clock k's keys into keys, the model's into gkeys (their bits into
 * gbits, unless NULL) and, with shared sums, their sums' keys after
 * them. @return how many keys. */
static uint64_t clock_keys(struct cluster *c, const struct train_run *r,
			   const uint32_t *order, uint64_t k, uint64_t *keys,
			   uint64_t *gkeys, uint64_t *gbits)
{
	uint64_t n = cluster_clock_keys(c, r, order, k, keys, gkeys, gbits);
	if (c->sums)
		cluster_sums_keys(c, gkeys, n);
	return n;
}

/* Clock k's keys into c->ahead_keys, and what to ask for them (the
 * transport's pull_ahead) into c->ask, to be asked by ask_found as soon
 * as the current clock's answer is in: they travel while clock k - 1
 * sweeps. Found before that answer is collected, so that the work
 * overlaps the wait for it (the next epoch's bitmaps, made at the last
 * clock, take as long as a few sweeps' waits); the buffers it writes are
 * not the ones the pull still out uses (that is c->gkeys, or the union,
 * which take_with has collected before this runs). */
static void find_ahead(struct cluster *c, const struct train_run *r,
		       const uint32_t *order, uint64_t k)
{
	/* an epoch's first clock: after an evaluation, if one follows */
	c->prep_with = k == 0 && c->with;
	uint64_t *bits = cluster_ask_bits_ready(c);
	c->ahead_nk = clock_keys(c, r, order, k, c->ahead_keys,
				 c->ahead_gkeys, bits);
	cluster_ask_bits_found(c, bits);
	c->ask = c->ahead_gkeys;
	c->n_ask = c->ahead_nk * c->key_copies;
	if (c->prep_with) {
		c->n_with = cluster_union(c->ahead_keys, c->ahead_nk,
					  c->eval_keys, c->n_eval, c->with,
					  c->with_pos);
		cluster_to_global(c, r, c->with, c->gwith, c->n_with);
		c->ask = c->gwith;
		c->n_ask = c->n_with;
	}
	c->prep_k = k;
	lap(c, BOAR_PS_KEYS);
}

/* The keys find_ahead found, asked for now; their values go into
 * ahead_before (with_vals for the union), written there by a transport
 * that can (pull_ahead_into) as they come. */
static int ask_found(struct cluster *c, boar_error *err)
{
	if (c->prep_k == NO_CLOCK)
		return 0;
	c->ahead_with = c->prep_with;
	float *into = c->ahead_with ? c->with_vals : c->ahead_before;
	uint32_t n = (uint32_t)c->n_ask;
	int rc;
	/* with its bits (cluster_ask_bits.c), where the transport takes them:
	 * its requests choose a bitmap or a list shard by shard */
	if (c->ahead_gbits.w && !c->ahead_with)
		rc = c->pull_ahead_bits(c->t->ctx, c->ask, n, c->ahead_gbits.w,
					0, into, err);
	else if (c->pull_ahead_into)
		rc = c->pull_ahead_into(c->t->ctx, c->ask, n, into, err);
	else
		rc = c->pull_ahead(c->t->ctx, c->ask, n, err);
	lap(c, BOAR_PS_PULL);
	c->ahead_k = rc ? NO_CLOCK : c->prep_k;
	c->prep_k = NO_CLOCK;
	return rc;
}

/* A pull still asked ahead, collected now into ahead_before or with_vals
 * (ahead_got), so that another request (refresh, finish) may go, or
 * before the clock's push to load with its store (cluster_store.c): the
 * values are those of the clock asked for, as nothing is pushed before
 * it starts. */
int cluster_settle_ahead(struct cluster *c, boar_error *err)
{
	if (c->ahead_k == NO_CLOCK || c->ahead_got)
		return 0;
	int rc = c->ahead_with
			 ? c->t->pull(c->t->ctx, c->gwith, (uint32_t)c->n_with,
				      c->with_vals, err)
			 : c->t->pull(c->t->ctx, c->ahead_gkeys,
				      (uint32_t)(c->ahead_nk * c->key_copies),
				      c->ahead_before, err);
	c->ahead_got = !rc;
	return rc;
}

/* The first clock's values out of the union asked ahead with the
 * evaluation's keys (collected now if no evaluation collected it), into
 * c->before: the clock's keys are c->keys. */
static int take_with(struct cluster *c, const struct train_run *r,
		     boar_error *err)
{
	int rc = cluster_settle_ahead(c, err);
	if (rc)
		return rc;
	float *before = c->before;
	const float *vals = c->with_vals;
	const uint32_t *pos = c->with_pos;
#pragma omp parallel for num_threads(threads_of(r)) schedule(static) \
	if (c->nk >= PARALLEL_MIN)
	for (uint64_t i = 0; i < c->nk; i++)
		before[i] = vals[pos[i]];
	c->ahead_with = 0;
	return 0;
}

/* Whether this epoch's order is the one drawn ahead (on this worker's
 * share of it): else (an engine whose draw is not boar_order_next) the
 * keys asked for are dropped, their bitmaps cleared, and no epoch is
 * drawn ahead again. */
static int order_as_drawn(struct cluster *c, const uint32_t *order,
			  boar_error *err)
{
	if (!memcmp(order + c->first, c->next_order + c->first,
		    (c->last - c->first) * sizeof *order))
		return 0;
	int rc = cluster_settle_ahead(c, err);
	c->ahead_k = NO_CLOCK;
	c->ahead_got = 0;
	c->ahead_with = 0;
	c->loaded_ahead = 0; /* the next clock's keys are others */
	free(c->next_order);
	c->next_order = NULL;
	if (c->clock_bits)
		memset(c->clock_bits, 0,
		       c->copies * c->clocks * c->words * sizeof *c->clock_bits);
	return rc;
}

/* Before clock k's answer is collected: the keys of the clock after it
 * found, the next epoch's first (its order drawn now) after the last. */
static void find_next(struct cluster *c, const struct train_run *r,
		      const uint32_t *order, uint64_t k)
{
	if (!c->pull_ahead)
		return;
	if (k + 1 < c->clocks) {
		find_ahead(c, r, order, k + 1);
		return;
	}
	if (!c->next_order || c->epoch >= r->o.epochs)
		return;
	boar_order_next(order, c->next_order, r->ops->rows(r->eng), r->o.seed,
			c->epoch + 1, threads_of(r));
	find_ahead(c, r, c->next_order, 0);
}

static int cluster_pull(void *ctx, const struct train_run *r,
			const uint32_t *order, uint64_t b, uint64_t e,
			boar_error *err)
{
	struct cluster *c = ctx;
	c->mark = cluster_now_s();
	uint64_t k = b == c->first ? 0 : c->next;
	c->next = k + 1;
	if (k >= c->clocks || b != cluster_clock_begin(c, k) ||
	    e != cluster_clock_begin(c, k + 1))
		return boar_fail(err, BOAR_EINVAL,
				 "cluster training: rows [%llu, %llu) are not "
				 "clock %llu of the schedule",
				 (unsigned long long)b, (unsigned long long)e,
				 (unsigned long long)k);
	int rc = 0;
	if (k == 0)
		c->epoch++;
	if (k == 0 && c->ahead_k == 0 && (rc = order_as_drawn(c, order, err)))
		return rc;
	if (c->ahead_k == k) { /* asked for during the last sweep */
		uint64_t *t = c->keys, *g = c->gkeys;
		c->keys = c->ahead_keys;
		c->ahead_keys = t;
		c->gkeys = c->ahead_gkeys;
		c->ahead_gkeys = g;
		struct cluster_bits gb = c->gbits; /* kept until collected */
		c->gbits = c->ahead_gbits;
		c->ahead_gbits = gb;
		c->nk = c->ahead_nk;
		if (c->ahead_with) { /* the union's values: copied out */
			if ((rc = take_with(c, r, err)))
				return rc;
		} else { /* its values' place becomes before */
			float *v = c->before;
			c->before = c->ahead_before;
			c->ahead_before = v;
		}
	} else {
		c->nk = clock_keys(c, r, order, k, c->keys, c->gkeys, NULL);
	}
	c->ahead_k = NO_CLOCK;
	lap(c, BOAR_PS_KEYS);
	find_next(c, r, order, k);
	/* else in c->before already (cluster_settle_ahead into what is
	 * now before): collected with the union, or before an evaluation's own
	 * pulls, or alone and loaded already (cluster_store) */
	c->pulled_alone = !c->ahead_got || c->loaded_ahead;
	if (!c->ahead_got)
		rc = c->t->pull(c->t->ctx, c->gkeys,
				(uint32_t)(c->nk * c->key_copies), c->before,
				err);
	c->ahead_got = 0;
	lap(c, BOAR_PS_PULL);
	/* the next clock's request goes before this one's load: the
	 * sooner it leaves, the less of its answer the next pull waits for */
	if (!rc)
		rc = ask_found(c, err);
	if (!rc && !c->loaded_ahead)
		rc = r->ops->load_keys(r->eng, c->keys, c->before, c->nk, err);
	c->loaded_ahead = 0;
	if (!rc && c->sums)
		cluster_sums_load(c, c->keys, c->before + c->nk, c->nk);
	lap(c, BOAR_PS_LOCAL);
	return rc;
}

static int cluster_push(void *ctx, const struct train_run *r, uint64_t rows,
			boar_error *err)
{
	struct cluster *c = ctx;
	lap(c, BOAR_PS_SWEEP);
	int rc = cluster_store(c, r, c->next - 1, err);
	if (rc)
		return rc;
	if (c->sums)
		cluster_sums_added(c, c->keys, c->before + c->nk,
				   c->delta + c->nk, c->nk);
	lap(c, BOAR_PS_LOCAL);
	/* The clock's keys are those of the last pull where cluster_pull
	 * pulled them alone, or of the pull before it where the next
	 * clock's was collected since (cluster_store): push_pulled may
	 * leave them out. */
	const boar_ps_transport *t = c->t;
	int (*push)(void *, const uint64_t *, const float *, uint32_t,
		    boar_error *) = t->push;
	if (t->size > offsetof(boar_ps_transport, push_pulled) &&
	    t->push_pulled && c->pulled_alone)
		push = t->push_pulled;
	rc = push(t->ctx, c->gkeys, c->delta, (uint32_t)(c->nk * c->key_copies),
		  err);
	lap(c, BOAR_PS_PUSH);
	if (!rc)
		rc = c->t->clock(c->t->ctx, rows, err);
	lap(c, BOAR_PS_CLOCK);
	return rc;
}

/* What an evaluation reads, fresh into the host model: the test set's
 * keys (cluster_eval_keys), or every key of the engine where there is no
 * test set (the whole model where there is no map). Where the next
 * epoch's first clock was collected already (cluster_settle_ahead), its
 * keys' values, in c->before, are those of a pull now (after this worker's
 * pushes), so only the other keys are pulled (none where the
 * evaluation's keys were asked with it: c->with), in pulls of at most cap
 * keys into c->delta (free between a push and the next sweep). A scaled
 * weak-scaling worker's clock holds under half of a 2^22 model's keys,
 * and its test rows under half too: pulling every key the clock lacked
 * made each evaluation pull ~2M keys. */
static int refresh_keys(struct cluster *c, const struct train_run *r,
			boar_error *err)
{
	float *w = r->m->w;
	const uint64_t *have = NULL;
	uint64_t nh = 0;
	const float *before = NULL;
	if (c->ahead_got) { /* the union, or the clock's keys alone */
		have = c->ahead_with ? c->with : c->ahead_keys;
		nh = c->ahead_with ? c->n_with : c->ahead_nk;
		before = c->ahead_with ? c->with_vals : c->ahead_before;
	}
	const uint64_t *want = c->eval_keys;
	const uint64_t nw = want ? c->n_eval : c->n_keys;
#pragma omp parallel for num_threads(threads_of(r)) schedule(static) \
	if (nh >= PARALLEL_MIN)
	for (uint64_t i = 0; i < nh; i++)
		w[have[i]] = before[i];
	/* the union holds every key the evaluation reads: nothing is
	 * missing (the walk below would step over all of both lists, some
	 * 4M keys a 4x weak-scaling evaluation, to find none) */
	if (c->ahead_got && c->ahead_with && want)
		return 0;
	int rc = 0;
	for (uint64_t i = 0, h = 0; !rc && i < nw;) {
		uint64_t n = 0;
		for (; i < nw && n < c->cap; i++) {
			uint64_t key = want ? want[i] : i;
			while (h < nh && have[h] < key)
				h++;
			if (h == nh || have[h] != key)
				c->keys[n++] = key;
		}
		if (!n)
			break;
		cluster_to_global(c, r, c->keys, c->gkeys, n);
		rc = c->t->pull(c->t->ctx, c->gkeys, (uint32_t)n, c->delta,
				err);
		for (uint64_t j = 0; !rc && j < n; j++)
			w[c->keys[j]] = c->delta[j];
	}
	return rc;
}

static int cluster_refresh(void *ctx, const struct train_run *r,
			   boar_error *err)
{
	struct cluster *c = ctx;
	double t0 = cluster_now_s();
	int rc = cluster_settle_ahead(c, err);
	if (!rc)
		rc = refresh_keys(c, r, err);
	c->phase[BOAR_PS_REFRESH] += cluster_now_s() - t0;
	return rc;
}

static int transport_check(const boar_ps_transport *t, boar_error *err)
{
	if (!t || (t->size != sizeof *t &&
		   t->size != offsetof(boar_ps_transport, local_rows) &&
		   t->size != offsetof(boar_ps_transport, phase_seconds) &&
		   t->size != offsetof(boar_ps_transport, pull_ahead) &&
		   t->size != offsetof(boar_ps_transport, model_sharded) &&
		   t->size != offsetof(boar_ps_transport, shared_sums) &&
		   t->size != offsetof(boar_ps_transport, wait_clock) &&
		   t->size != offsetof(boar_ps_transport, push_pulled) &&
		   t->size != offsetof(boar_ps_transport, pull_ahead_into) &&
		   t->size != offsetof(boar_ps_transport, pull_ahead_ready) &&
		   t->size != offsetof(boar_ps_transport, pull_ahead_bits) &&
		   t->size != offsetof(boar_ps_transport, gathers)))
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
	/* The views cost a copy of the ids (4 bytes per non-zero); the
	 * engine saves at least 16 bytes (weight, AdaGrad sum, ...) per
	 * feature unused: renumber only where that saves more, which a
	 * model of at most a quarter as many features as the ids never
	 * does (then the map is not even built: a pass over every id) */
	uint64_t ids = train->nnz + (test ? test->nnz : 0);
	if (train->task != BOAR_TASK_LINEAR || train->dim * 16 <= ids * 4)
		return 0;
	int rc = feature_map_build(fm, train->dim, ds, 2, threads, err);
	if (rc)
		return rc;
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

/* The members of t that its size has (an older caller's are left at
 * their zero: not offered). */
static void take_transport(struct cluster *c, const boar_ps_transport *t)
{
	if (t->size > offsetof(boar_ps_transport, local_rows))
		c->local_rows = t->local_rows;
	if (t->size > offsetof(boar_ps_transport, pull_ahead))
		c->pull_ahead = t->pull_ahead;
	if (t->size > offsetof(boar_ps_transport, pull_ahead_into))
		c->pull_ahead_into = t->pull_ahead_into;
	if (t->size > offsetof(boar_ps_transport, pull_ahead_ready))
		c->pull_ahead_ready = t->pull_ahead_ready;
	if (t->size > offsetof(boar_ps_transport, pull_ahead_bits))
		c->pull_ahead_bits = t->pull_ahead_bits;
	/* a caller of an older size connects with the weights' keys alone */
	if (t->size > offsetof(boar_ps_transport, shared_sums))
		c->shared_sums = t->shared_sums;
	if (t->size > offsetof(boar_ps_transport, gathers))
		c->gathers = t->gathers;
}

int boar_train_ps(const boar_dataset *train, const boar_options *o,
		  const boar_ps_transport *t, boar_model **out,
		  boar_error *err)
{
	int rc = transport_check(t, err);
	if (rc)
		return rc;
	if (train->task == BOAR_TASK_MF) /* its own clocks: the rows they touch */
		return boar_train_ps_mf(train, o, t, out, err);
	/* nothing asked ahead until cluster_start says so (a run that fails
	 * before it has nothing to collect) */
	struct cluster c = {.t = t, .dim = train->dim, .ahead_k = NO_CLOCK,
			    .prep_k = NO_CLOCK};
	take_transport(&c, t);
	int *sharded_out = t->size > offsetof(boar_ps_transport, model_sharded)
				   ? t->model_sharded
				   : NULL;
	c.can_shard = sharded_out != NULL;
	const struct train_hook hook = {
		.who = "cluster training",
		.caps = CLUSTER_CAPS,
		.advice = "train on one machine for it",
		/* shared sums move from the sums' own array (cluster_adagrad.c) */
		.layout = c.shared_sums ? 0 : BOAR_LAYOUT_INTERLEAVE,
		.ctx = &c,
		.start = cluster_start,
		.pull = cluster_pull,
		.push = cluster_push,
		.refresh = cluster_refresh,
		/* the test set's keys, or every key where there is none */
		.refresh_covers_test = 1,
		.finish = cluster_finish,
		.final_into_host = cluster_final_into_host,
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
	/* a run that failed with a pull still asked ahead: the transport may
	 * still be writing its answer into ahead_before or with_vals
	 * (pull_ahead_into), so it is collected, or fails, before they are
	 * freed (a transport that failed answers at once) */
	boar_error ignored;
	if (rc && c.pull_ahead_into)
		cluster_settle_ahead(&c, &ignored);
	if (m && mapped && (!rc || rc == BOAR_ECANCELLED)) {
		int grc = cluster_global_model(&c, train, m, &m, err);
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
	if (t->size > offsetof(boar_ps_transport, final_evaluated) &&
	    t->final_evaluated)
		*t->final_evaluated = (!rc || rc == BOAR_ECANCELLED) &&
				      c.final_in_host;
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
	cluster_keys_free(&c);
	cluster_ask_bits_free(&c);
	free(c.keys);
	free(c.eval_keys);
	if (c.gwith != c.with)
		free(c.gwith);
	free(c.with);
	free(c.with_vals);
	free(c.with_pos);
	free(c.ahead_keys);
	free(c.next_order);
	free(c.before);
	free(c.ahead_before);
	free(c.delta);
	cluster_sums_free(&c);
	return rc;
}
