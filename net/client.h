/* client.h - the worker's side of the parameter server (library-internal).
 *
 * A client holds one TCP connection per shard (blocking sockets; a worker
 * talks to a handful of shards and waits for them anyway). Keys are
 * range-partitioned: shard I of S owns [dim*I/S, dim*(I+1)/S), and every
 * call splits its ascending key list at those bounds.
 *
 * Pushes may travel as float16 and through a significance filter: a key's
 * delta is added to a local residual, and only residuals above the
 * threshold are sent (what rounding to float16 loses stays in the residual
 * too), so nothing is lost, only delayed; ps_client_flush sends the rest.
 *
 * When a shard goes away (killed, restarted) the client reconnects with
 * exponential backoff for up to reconnect_timeout seconds, redoes the
 * handshake and repeats the request it was waiting on. Pushes are numbered
 * per shard; a shard that logs them (one with a checkpoint directory,
 * pushlog.h) says in READY which it holds, and the client resends, in
 * order, the ones after it that it kept (those the shard had not answered
 * anything after): nothing is lost or applied twice. To a shard without a
 * log, a push in flight is lost, as is anything it had not checkpointed.
 *
 * Thread rule: one thread per client. With ps_client_start_async the
 * client has a thread of its own besides, which sends pushes and clocks
 * and reads the answers of pulls asked ahead in the background; the
 * caller still calls from one thread.
 */
#ifndef BOAR_NET_CLIENT_H
#define BOAR_NET_CLIENT_H

#include <stdint.h>

#include "boar.h"
#include "net/wire.h"

struct ps_client_config {
	const char *const *addrs;   /* "host:port" of shard 0..n_shards-1 */
	/* NULL, or "host:port" of each shard's backup (NULL or "" for a
	 * shard without one): a connection to a shard that cannot be made
	 * is tried on the other address at once, so when a primary dies
	 * the client goes on with its backup (replica.h), which then holds
	 * every push the primary answered anything after. */
	const char *const *backups;
	uint32_t n_shards;
	uint32_t rank, n_workers;
	uint64_t dim;               /* keys of the model */
	const uint8_t *key;         /* NET_KEY_LEN bytes, or NULL */
	double reconnect_timeout;   /* seconds; 0: 30 */
	/* Push values as float16, each rounded to nearest (2^-12 of it on
	 * average, 2^-25 at most near zero: below a float32 weight's own
	 * step from 0.25 up), a frame with one over 65504 as float32; with
	 * a threshold, what rounding drops stays in the residual. */
	int f16;
	/* The answers to pulls asked ahead (a clock's values, with an
	 * evaluation's keys at an epoch's first) as float16, a shard's
	 * whole answer, where every value is a finite half: half the bytes
	 * of the largest frames a clock waits for. The worker's copy of a
	 * weight is then off by up to 2^-11 of it (2^-25 near zero) until
	 * the next pull, never more, as each clock pulls afresh; what it
	 * pushes, the shards' model, the gather and every other pull stay
	 * float32. */
	int pull_f16;
	float threshold;            /* significance filter; 0: off */
	int threads;                /* for copying and merging a pull's
				       values (the worker's); 0: 1 */
	/* The model starts at zero on every shard (a linear model): a pull
	 * before this worker's first clock and push, where every shard's
	 * READY said so too (clock 0, none of its pushes held), is answered
	 * here with zeros, a value the SSP bound allows at clock 0 whatever
	 * the others pushed since (ps_client_pull). */
	int zero_start;
};

struct ps_client_counters {
	uint64_t bytes_sent, bytes_recv;
	uint64_t push_bytes;    /* bytes of PUSH frames, headers included */
	uint64_t keys_pushed;   /* keys that travelled in pushes */
	uint64_t keys_offered;  /* keys handed to ps_client_push */
	uint64_t keys_keyless;  /* keys pushed without their key list (the
				   shard had it from the pull) */
	uint64_t keys_pulled;
	uint64_t keys_pulled_bits; /* keys asked for as a bitmap (WIRE_F_BITS,
				      a dense pull), counted as sent */
	uint64_t keys_bits_given; /* of those, keys whose words the caller
				     set (ps_client_pull_ahead_bits) */
	uint64_t keys_pushed_bits; /* keys pushed as a bitmap (a dense push
				      that carries its keys) */
	uint64_t keys_pulled_f16; /* keys answered as float16 (pull_f16) */
	uint64_t keys_added;    /* keys of this worker's own pushes added to
				   the answers of pulls asked before them */
	uint64_t max_staleness; /* largest gap a pull reply reported */
	uint64_t reconnects;
	uint64_t resent;        /* push frames sent again after a reconnect */
	uint64_t failovers;     /* reconnects that ended on the other address
				   (a shard's backup, or back) */
	double failover_s;      /* the longest of them: from the start of the
				   reconnect to READY from the other address */
};

struct ps_client;

/* Connects to every shard (retrying while they start up) and does the
 * handshake. @return 0 and *out, or BOAR_ENET / BOAR_EAUTH / ... */
int ps_client_connect(const struct ps_client_config *c,
		      struct ps_client **out, boar_error *err);
/* A primary shard's link to its backup on behalf of worker `rank`
 * (replica.c): connects to cfg->addrs[shard] only, with a HELLO marked
 * WIRE_F_REPLICA announcing `clock`; the frames it forwards
 * (ps_client_forward) are kept until the backup answers something after
 * them (ps_client_stats), and resent after a reconnect. */
int ps_client_link(const struct ps_client_config *cfg, uint32_t shard,
		   uint64_t clock, struct ps_client **out, boar_error *err);
/* A link sends one frame of its worker as it came (type, flags, plain
 * payload): PUSH, CLOCK, DONE, HEARTBEAT or SHUTDOWN. */
int ps_client_forward(struct ps_client *c, uint32_t shard, int type,
		      uint16_t flags, const uint8_t *payload, uint32_t len,
		      boar_error *err);
/* Asks the backup on a link's connection to stop (one SHUTDOWN, no
 * reconnect, errors ignored): its primary dropped it from the chain. */
void ps_client_stop_link(struct ps_client *c);
/* From now on ps_client_push, ps_client_clock and ps_client_pull_ahead
 * queue their work for a background thread and return (push copies the
 * deltas), in the order called; the thread sends it and reads the answers
 * of a pull asked ahead as they come, so ps_client_pull_collect finds them
 * read and decoded. Every other call waits first until the thread has
 * sent everything queued. Reconnects, resends and failovers are the
 * thread's then; a failure it meets (a shard gone past the reconnect
 * timeout, a malformed or unauthentic frame, out of memory) is returned,
 * with its message, by the next call and every one after it. (Not for a
 * link.) @return 0 or BOAR_ENOMEM / BOAR_ENET. */
int ps_client_start_async(struct ps_client *c, boar_error *err);
/* Values of keys[0..n) (strictly ascending) at the current clock; waits as
 * long as the shards' SSP rule says. */
int ps_client_pull(struct ps_client *c, const uint64_t *keys, uint32_t n,
		   float *vals, boar_error *err);
/* Asks now for the values of keys[0..n) (strictly ascending) at the next
 * clock, to be collected by ps_client_pull_collect after this clock's
 * pushes and ps_client_clock: the shards answer while the worker sweeps.
 * The values collected are those of a pull at the next clock (the SSP
 * bound of that clock holds) with this worker's pushes in between counted
 * once: a shard either answered as the request came, and the client adds
 * those pushes itself, or held the answer until this worker's clock got
 * there (WIRE_F_HELD), or the connection broke and the client asked again.
 * keys must stay valid until collected; no other request may come in
 * between. */
int ps_client_pull_ahead(struct ps_client *c, const uint64_t *keys,
			 uint32_t n, boar_error *err);
/* ps_client_pull_ahead with the place the values go, vals[n], which the
 * caller leaves alone until it collects them into the same vals: the
 * background thread decodes each shard's answer there as it comes (no
 * buffer of its own, no copy at the collect). vals NULL: as
 * ps_client_pull_ahead. */
int ps_client_pull_ahead_into(struct ps_client *c, const uint64_t *keys,
			      uint32_t n, float *vals, boar_error *err);
/* ps_client_pull_ahead_into with the keys also as bits the caller set
 * (boar_ps_transport.pull_ahead_bits: bit i of bits[w] set exactly for
 * the keys bits_base + 64 w + i of keys[0..n), bits_base a multiple of
 * 64), left alone as keys are until the collect: a shard's request that
 * goes as a bitmap takes its words from there (shifted to its first
 * key), not a bit set a key on the thread that sends it. */
int ps_client_pull_ahead_bits(struct ps_client *c, const uint64_t *keys,
			      uint32_t n, const uint64_t *bits,
			      uint64_t bits_base, float *vals,
			      boar_error *err);
/* The values asked for by ps_client_pull_ahead (the same keys, n). */
int ps_client_pull_collect(struct ps_client *c, const uint64_t *keys,
			   uint32_t n, float *vals, boar_error *err);
/* Whether a pull ahead waits to be collected. */
int ps_client_ahead_pending(const struct ps_client *c);
/* Whether the pull asked ahead may be collected at once, before this
 * clock's pushes (boar_ps_transport.pull_ahead_ready): the background
 * thread read every shard's answer, and none was held for this worker's
 * clock (those count pushes the caller is yet to make) or lost with its
 * connection. Without the thread, 0. */
int ps_client_ahead_ready(const struct ps_client *c);
/* Adds deltas[i] to keys[i] (strictly ascending) on the shards. */
int ps_client_push(struct ps_client *c, const uint64_t *keys,
		   const float *deltas, uint32_t n, boar_error *err);
/* ps_client_push of the keys of the pull collected last (ps_client_pull
 * or ps_client_pull_collect), in that order: keys must be that pull's
 * keys exactly (the caller's contract: checked cheaply, per shard the
 * count and the first and last key, and in full with the environment
 * variable BOAR_PS_CHECK_PULLED=1, a debugging aid). A shard's part then
 * travels without its keys (WIRE_F_PULLED: the shard kept them from the
 * pull) where that is safe: the same connection carried the pull, fewer
 * than WIRE_PULLS_KEPT pulls ago; no residual filter (a threshold)
 * drops keys; the shard keeps no pushes for a resend (a
 * resend after a reconnect or failover goes to a connection that never
 * saw the pull). Else, and with BOAR_PS_KEYED_PUSH=1 (a debugging aid),
 * it is an ordinary push. The shard applies either the same. */
int ps_client_push_pulled(struct ps_client *c, const uint64_t *keys,
			  const float *deltas, uint32_t n, boar_error *err);
/* ps_client_push_pulled of the keys of the pull collected before the
 * last (the last being the next clock's, collected before this clock's
 * push: boar_ps_transport.pull_ahead_ready), with its contract. */
int ps_client_push_pulled_before(struct ps_client *c, const uint64_t *keys,
				 const float *deltas, uint32_t n,
				 boar_error *err);
/* Sends every residual the filter held back. */
int ps_client_flush(struct ps_client *c, boar_error *err);
/* Finishes the current clock (after its pushes). */
int ps_client_clock(struct ps_client *c, boar_error *err);
uint64_t ps_client_current_clock(const struct ps_client *c);
/* Training is over for this worker. */
int ps_client_done(struct ps_client *c, boar_error *err);
/* The whole model, once every worker is done or dropped: w[dim]. */
int ps_client_gather(struct ps_client *c, float *w, boar_error *err);
int ps_client_stats(struct ps_client *c, uint32_t shard,
		    struct wire_stats *out, boar_error *err);
/* Asks every shard to checkpoint and exit. */
int ps_client_shutdown(struct ps_client *c, boar_error *err);
void ps_client_get_counters(const struct ps_client *c,
			    struct ps_client_counters *out);
void ps_client_free(struct ps_client *c);

#endif
