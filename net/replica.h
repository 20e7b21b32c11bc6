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
 * after it (client.h), so no answer to worker R leaves the primary before
 * the backup has answered a STATS sent after every push of R forwarded
 * so far. Nothing waits for that on a serving thread: each link has a
 * thread of its own that sends what the lanes queue (replica_forward
 * copies the frame and returns) and, after each batch of pushes, one
 * STATS (answered after every frame before it), so the backup has often
 * acknowledged a worker's pushes before its next request comes. A lane
 * that has an answer for R takes a ticket (replica_ticket: the pushes
 * of R forwarded so far); if the backup has not acknowledged them yet,
 * it keeps the answer (replica_shard.c) and goes on serving, and when
 * the STATS that covers them is answered the link's thread says so
 * (cfg.acked) and the lane sends the answers their tickets allow
 * (replica_acked), in order. One round trip per batch of pushes, none
 * on a lane.
 *
 * When the primary dies its links close; the backup (replica_shard.c)
 * then takes the workers, which reconnect to it (client.h: backups), and
 * resend what it had not answered, numbered as before.
 *
 * A backup that cannot be reached (2 s of reconnecting), refuses, or does
 * not answer a STATS within 10 s is lost: logged, asked to stop (it
 * misses what follows, so it must not take over when its links close),
 * and the primary goes on alone (the chain shrinks to its head): every
 * ticket counts as acknowledged from then on. Thread rule: any thread;
 * each rank's link has its own lock and thread; cfg.acked is called from
 * a link's thread holding none of the replica's locks.
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
	/* The backup holds more of worker `rank`'s pushes (every worker's
	 * when rank is UINT32_MAX: the backup was lost): answers kept for
	 * a ticket may go (replica_acked). */
	void (*acked)(void *ctx, uint32_t rank);
	void *ctx;
};

/* Checks the address; connects nothing yet. @return 0 and *out, or an
 * error code. */
int replica_create(const struct replica_config *cfg, struct replica **out,
		   boar_error *err);
/* Worker `rank` joined the primary at `clock`: its link is opened if it is
 * not (the first call sizes the set for n_workers and dim), and its thread
 * started. Under the shard's lock: a backup lost here lets the kept
 * answers go at the lanes' next tick. */
void replica_join(struct replica *r, uint32_t rank, uint32_t n_workers,
		  uint64_t dim, uint64_t clock);
/* Queues one frame of worker `rank` (plain payload) for the backup and
 * returns; waits only while the link holds over 64 MiB not
 * sent yet (the backup or its network is slower than the workers). */
void replica_forward(struct replica *r, uint32_t rank, int type,
		     uint16_t flags, const uint8_t *payload, uint32_t len);
/* An answer to worker `rank` is ready: 0 if the backup holds every push
 * of it forwarded so far (or there is no backup), else the ticket the
 * answer waits for, and the link's thread asks the backup. */
uint64_t replica_ticket(struct replica *r, uint32_t rank);
/* The largest ticket of `rank` the backup acknowledged (UINT64_MAX once
 * there is no backup, or no link for rank). */
uint64_t replica_acked(struct replica *r, uint32_t rank);
/* Whether the backup is still in the chain. */
int replica_alive(const struct replica *r);
void replica_free(struct replica *r);

#endif
