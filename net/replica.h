/* replica.h - a primary shard's links to its backup (library-internal).
 *
 * Chain replication with a chain of two: a primary started with a backup
 * (`boar serve --backup HOST:PORT`) opens one link to it per worker rank,
 * as that worker (a HELLO marked WIRE_F_REPLICA, through the client code
 * of client.c, so the handshake and the per-frame tags are the workers'),
 * and forwards every frame the worker sent it and it took: pushes with
 * their sequence numbers, clocks, DONE, heartbeats, SHUTDOWN. The backup
 * applies them as a shard applies a worker's, so its weights, clocks and
 * last sequence numbers follow the primary's.
 *
 * A push counts as acknowledged when the shard answers the worker anything
 * after it (client.h): before any answer to worker R the primary waits
 * until the backup has answered a STATS on R's link (replica_sync), and
 * frames on one connection are handled in order, so every push the worker
 * sees acknowledged lives in both processes. Pushes are not held back:
 * one round trip per answer, not per push.
 *
 * When the primary dies its links close; the backup (replica_shard.c)
 * then takes the workers, which reconnect to it (client.h: backups), and
 * resend what it had not answered, numbered as before.
 *
 * A backup that cannot be reached (2 s of reconnecting), refuses, or does
 * not answer a STATS within 10 s is lost: logged, asked to stop (it
 * misses what follows, so it must not take over when its links close),
 * and the primary goes on alone (the chain shrinks to its head). Thread rule: any thread; each
 * rank's link has its own lock.
 */
#ifndef BOAR_NET_REPLICA_H
#define BOAR_NET_REPLICA_H

#include <stdint.h>

#include "boar.h"

struct replica;

struct replica_config {
	const char *addr;          /* the backup's HOST:PORT */
	const uint8_t *key;        /* NET_KEY_LEN bytes, or NULL */
	uint32_t shard, n_shards;
	void (*log)(void *log_ctx, const char *line);
	void *log_ctx;
};

/* Checks the address; connects nothing yet. @return 0 and *out, or an
 * error code. */
int replica_create(const struct replica_config *cfg, struct replica **out,
		   boar_error *err);
/* Worker `rank` joined the primary at `clock`: its link is opened if it is
 * not (the first call sizes the set for n_workers and dim). */
void replica_join(struct replica *r, uint32_t rank, uint32_t n_workers,
		  uint64_t dim, uint64_t clock);
/* Forwards one frame of worker `rank` (plain payload). */
void replica_forward(struct replica *r, uint32_t rank, int type,
		     uint16_t flags, const uint8_t *payload, uint32_t len);
/* Returns once the backup holds everything forwarded for `rank` (or the
 * backup is lost). */
void replica_sync(struct replica *r, uint32_t rank);
/* Whether the backup is still in the chain. */
int replica_alive(const struct replica *r);
void replica_free(struct replica *r);

#endif
