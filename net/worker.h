/* worker.h - a cluster worker's transport: libboar's boar_train_ps
 * (src/engine/train_cluster.c: the training driver with a per-clock hook) over
 * this folder's parameter-server client (part of libboar-net; the
 * `boar train --ps/--cluster` glue calls it).
 *
 * The schedule (which rows, which keys, when to pull and push) is
 * boar_train_ps's, see boar.h; this file connects to the shards, carries
 * the pulls, pushes and clocks, and at the end flushes what the
 * significance filter held back and says DONE; with gather set it then
 * waits for the others and fetches the whole model.
 */
#ifndef BOAR_NET_WORKER_H
#define BOAR_NET_WORKER_H

#include <stdint.h>

#include "boar.h"
#include "net/client.h"

struct ps_worker_config {
	struct ps_client_config net; /* dim is filled in from the data */
	uint64_t sync_every;         /* rows per clock; 0: 1000 */
	unsigned throttle_ms;        /* sleep per clock (a straggler, tests) */
	int gather;                  /* fetch the final model (worker 0) */
	int shutdown;                /* then ask the shards to exit */
	int eval_every_epoch;        /* evaluate o->test after every epoch
					(pulls every key); else o->test is
					not used */
	int local_rows;              /* the data is this worker's part */
	int shared_sums;             /* AdaGrad's sums in the shards
					(boar_ps_transport.shared_sums) */
};

struct ps_worker_report {
	uint64_t clocks;
	uint64_t pulls_ahead; /* clocks whose keys were asked a clock ahead */
	/* of them, collected before the clock before pushed (its store and
	 * their load in one pass: boar_ps_transport.pull_ahead_ready) */
	uint64_t pulls_early;
	uint64_t rows;
	double seconds;  /* connect to DONE */
	double gather_s; /* after DONE: the gather, stats and shutdown */
	double phase[BOAR_PS_PHASES]; /* seconds per boar_ps_phase */
	struct ps_client_counters net;
	/* gather only: what each shard reports (up to 64 shards) */
	uint32_t n_shards;
	struct wire_stats shard[64];
	/* the model was too large to gather and stays in the shards
	 * (boar_ps_transport.model_sharded): *out is its head */
	int model_sharded;
	/* keys the shards hold: the model's weights, or twice as many with
	 * AdaGrad's sums beside them */
	uint64_t keys;
	/* the last epoch's test metrics are the gathered model's
	 * (boar_ps_transport.final_evaluated) */
	int final_evaluated;
};

/* Trains on `train` with options o (o->progress, if set, is called after
 * every epoch, with test metrics of a fresh pull of the whole model when
 * eval_every_epoch is set; an evaluation that fails fails the call).
 * @return 0 and *out (the gathered model with gather, else the worker's
 *         replica: the engine's own weights), or a negative BOAR_E* code
 *         with *err. */
int boar_ps_train(const boar_dataset *train, const boar_options *o,
		  const struct ps_worker_config *wc, boar_model **out,
		  struct ps_worker_report *rep, boar_error *err);

#endif
