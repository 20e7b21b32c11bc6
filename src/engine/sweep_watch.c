/* sweep_watch.c - the watcher thread of sweep_watch.h. */
#include <errno.h>
#include <omp.h>
#include <time.h>

#include "sweep_watch.h"

static void *watch(void *arg)
{
	struct sweep_watch *w = arg;
	pthread_mutex_lock(&w->mu);
	while (!w->quit) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_nsec += SWEEP_WATCH_MS * 1000000L;
		t.tv_sec += t.tv_nsec / 1000000000L;
		t.tv_nsec %= 1000000000L;
		if (pthread_cond_timedwait(&w->cv, &w->mu, &t) != ETIMEDOUT ||
		    !w->epoch || w->quit)
			continue;
		double secs = omp_get_wtime() - w->t0;
		if (secs < SWEEP_WATCH_MS / 1000.0)
			continue;
		uint64_t now = w->ops->rows_done(w->eng);
		if (now == UINT64_MAX || w->base == UINT64_MAX)
			continue;
		uint64_t done = now - w->base;
		boar_sweep_stats s = {.epoch = w->epoch,
				      .rows_done = done < w->rows ? done : w->rows,
				      .rows = w->rows, .seconds = secs};
		w->fn(&s, w->ctx);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

void sweep_watch_start(struct sweep_watch *w, const boar_options *o,
		       const struct boar_engine_ops *ops, void *eng)
{
	*w = (struct sweep_watch){.fn = o->sweep_progress,
				  .ctx = o->progress_ctx, .ops = ops,
				  .eng = eng};
	if (!w->fn || !ops->rows_done)
		return;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (pthread_mutex_init(&w->mu, NULL)) {
		pthread_condattr_destroy(&ca);
		return;
	}
	if (pthread_cond_init(&w->cv, &ca)) {
		pthread_mutex_destroy(&w->mu);
	} else if (pthread_create(&w->thread, NULL, watch, w)) {
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
	} else {
		w->running = 1;
	}
	pthread_condattr_destroy(&ca);
}

void sweep_watch_begin(struct sweep_watch *w, int epoch, uint64_t rows)
{
	if (!w->running)
		return;
	pthread_mutex_lock(&w->mu);
	w->epoch = epoch;
	w->rows = rows;
	w->base = w->ops->rows_done(w->eng);
	w->t0 = omp_get_wtime();
	pthread_mutex_unlock(&w->mu);
}

void sweep_watch_end(struct sweep_watch *w)
{
	if (!w->running)
		return;
	pthread_mutex_lock(&w->mu);
	w->epoch = 0;
	pthread_mutex_unlock(&w->mu);
}

void sweep_watch_stop(struct sweep_watch *w)
{
	if (!w->running)
		return;
	pthread_mutex_lock(&w->mu);
	w->quit = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	w->running = 0;
}
