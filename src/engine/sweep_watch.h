/* sweep_watch.h - progress inside an epoch (boar_options.sweep_progress),
 * for the training driver (library-internal).
 *
 * The sweep's threads do not report: they already count rows for their
 * own reasons (engine_ops.h, rows_done). One watcher thread per run wakes
 * every SWEEP_WATCH_MS while a sweep runs, reads that count and calls the
 * callback, so progress costs the sweep nothing but a few wake-ups a
 * second on another thread. Calls happen under the watch's lock, so once
 * sweep_watch_end() returns no call for that epoch is running or to come.
 */
#ifndef BOAR_SWEEP_WATCH_H
#define BOAR_SWEEP_WATCH_H

#include <pthread.h>
#include <stdint.h>

#include "boar.h"
#include "engine_ops.h"

#define SWEEP_WATCH_MS 100

struct sweep_watch {
	boar_sweep_progress_fn fn;
	void *ctx;
	const struct boar_engine_ops *ops;
	void *eng;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int running;  /* the thread exists */
	int quit;
	int epoch;    /* the epoch sweeping now, 0 between sweeps */
	uint64_t rows, base; /* its rows, and rows_done when it began */
	double t0;    /* when it began (omp_get_wtime) */
};

/* Starts the watcher when o asks for progress and the engine can count;
 * otherwise (or if no thread can be made) the watch stays idle. */
void sweep_watch_start(struct sweep_watch *w, const boar_options *o,
		       const struct boar_engine_ops *ops, void *eng);
/* A sweep of `rows` rows of epoch begins / has ended. */
void sweep_watch_begin(struct sweep_watch *w, int epoch, uint64_t rows);
void sweep_watch_end(struct sweep_watch *w);
/* Stops and joins the watcher (a no-op for an idle watch). */
void sweep_watch_stop(struct sweep_watch *w);

#endif
