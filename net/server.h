/* server.h - one shard of the parameter server (library-internal).
 *
 * A shard holds the float weights of the key range [lo, hi) of a model of
 * `dim` keys: lo = dim * I / S, hi = dim * (I + 1) / S for shard I of S.
 * It applies pushes (sums of worker deltas) as they arrive, answers pulls
 * under the SSP rule (ssp.h), drops silent workers after the heartbeat
 * timeout, checkpoints its range atomically (checkpoint.h) every
 * checkpoint_every seconds and when it stops, and resumes from the
 * checkpoint on start. The key count comes from the first worker's HELLO
 * unless given (dim), so `boar serve` needs no knowledge of the data.
 *
 * Serving is `threads` io_uring loops (loop.h): the first on the calling
 * thread, which accepts and deals connections out in turn, the others on
 * threads of their own; each applies and answers its own connections'
 * frames (server.c says what they share and how).
 */
#ifndef BOAR_NET_SERVER_H
#define BOAR_NET_SERVER_H

#include <stdint.h>

#include "boar.h"
#include "net/auth.h"
#include "net/wire.h"

struct ps_config {
	uint32_t shard, n_shards;
	int listen_fd;            /* a listening socket (net_listen) */
	int stop_fd;              /* readable -> checkpoint and return; or -1 */
	uint64_t dim;             /* 0: learn it from the first HELLO */
	uint64_t staleness;       /* SSP_INF for fully asynchronous */
	double heartbeat_timeout; /* seconds; 0: 10 */
	const uint8_t *key;       /* NET_KEY_LEN bytes, or NULL: no auth */
	const char *checkpoint_dir;  /* NULL: no checkpoints */
	double checkpoint_every;     /* seconds; 0: only when stopping */
	unsigned threads;            /* loops serving; 0: 1 */
	/* Chain replication (replica.h): a primary's backup "HOST:PORT",
	 * which gets every frame its workers send before they see any
	 * answer after it; or NULL. */
	const char *backup;
	/* This shard is the backup of that primary ("HOST:PORT", for the
	 * logs): it takes the primary's links and no worker until they have
	 * all closed (the primary died), then serves the workers. */
	const char *replica_of;
	/* Events worth a line in a log ("worker 2 dropped: ..."); optional. */
	void (*log)(void *log_ctx, const char *line);
	void *log_ctx;
};

#define PS_MAX_THREADS 64

struct ps_server;

/* Loads the checkpoint if there is one. @return 0 and *out, or an error. */
int ps_server_create(const struct ps_config *c, struct ps_server **out,
		     boar_error *err);
/* Serves until the stop fd fires or a worker sends SHUTDOWN; checkpoints
 * before returning. @return 0 or a negative BOAR_E* code with *err. */
int ps_server_run(struct ps_server *s, boar_error *err);
void ps_server_stats(const struct ps_server *s, struct wire_stats *out);
void ps_server_free(struct ps_server *s);

/* The shard's key range for a model of dim keys. */
static inline void ps_shard_range(uint64_t dim, uint32_t shard,
				  uint32_t n_shards, uint64_t *lo, uint64_t *hi)
{
	*lo = (uint64_t)((unsigned __int128)dim * shard / n_shards);
	*hi = (uint64_t)((unsigned __int128)dim * (shard + 1) / n_shards);
}

#endif
