/* client_int.h - what the client's files share (library-internal):
 * client.c holds the connections, handshake, reconnects and requests,
 * client_push.c the push path (float16, the significance filter, the
 * frames kept for a durable shard), client_ahead.c the pull asked ahead,
 * client_bg.c the background thread, client_life.c a client made and
 * freed, client_replica.c a primary's link to its backup and a worker's
 * failover to a backup. */
#ifndef BOAR_NET_CLIENT_INT_H
#define BOAR_NET_CLIENT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "net/auth.h"
#include "net/client.h"
#include "net/wire.h"

#define RETRY 1 /* internal: the connection broke, reconnect and repeat */
#define INTERRUPTED 2 /* internal: a job came for the background thread
			 before a frame's first byte (client_bg.c) */

struct client_bg;

struct shard {
	char host[256];
	unsigned port;
	/* the backup's address (has_alt), swapped with host/port on every
	 * failover: host/port is the address in use */
	char alt_host[256];
	unsigned alt_port;
	int has_alt;
	int on_alt, ready_on_alt; /* host is the backup; was at the last
				     READY */
	int fd;
	uint64_t lo, hi;
	struct net_session ses; /* with a secret: this connection's tags */
	/* Pushes are numbered per shard. To a shard that logs them
	 * (durable), the ones it has not answered anything after yet are
	 * kept (whole frames, untagged) and resent after a reconnect, from
	 * the one after the last it says it holds. */
	uint64_t seq;
	int durable;
	uint8_t *kept;
	size_t kept_len, kept_cap;
	/* A pull asked a clock ahead (client_ahead.c) is in flight on this
	 * connection (pending), or went with a closed one (lost); kept_ahead
	 * is kept_len when it was asked: an answer given as it arrived
	 * holds none of the pushes kept after that. */
	int ahead_pending, ahead_lost;
	size_t kept_ahead;
	/* Connections made (each one's end bumps it) and PULL frames sent:
	 * a push may name a pull only on the connection that carried it,
	 * fewer than WIRE_PULLS_KEPT pulls after it (the shard keeps no
	 * more). */
	uint64_t gen, n_pulls;
};

/* A pull's part for one shard as that shard keeps it, collected by the
 * caller: the pushes of its keys (ps_client_push_pulled) may then name
 * it instead of carrying them. fp: a fingerprint of its keys, where the
 * full check is on (BOAR_PS_CHECK_PULLED). */
struct pulled_ref {
	int ok;
	uint32_t req, n;
	uint64_t gen, nth;
	uint64_t first, last, fp;
};

/* A pull's part for one shard: keys[a..b), request number, clock. */
struct pull_arg {
	const uint64_t *keys;
	uint32_t a, b;
	uint32_t req;
	uint64_t clock;
	uint64_t gen, nth; /* the connection it went on, its number there */
	/* keys as bits the caller set (ps_client_pull_ahead_bits), or
	 * NULL */
	const uint64_t *bits;
	uint64_t bits_base;
	int f16; /* the answer asked for as float16 (pull_f16) */
};

/* One push recorded while a pull ahead is out: its keys and deltas at
 * k, v (a background thread's push buffer, pinned until the collect), or
 * (k NULL) copied into pk, pv from index at. */
struct own_run {
	const uint64_t *k;
	const float *v;
	uint32_t n, at;
};

/* The pull asked a clock ahead, and this worker's pushes since. */
struct pull_ahead {
	int on;
	const uint64_t *keys;
	uint32_t n;
	const uint64_t *bits;   /* the keys' bits, or NULL
				   (ps_client_pull_ahead_bits) */
	uint64_t bits_base;
	int f16;                /* answers as float16 (cfg.pull_f16) */
	float *dest;            /* the caller's place for the values, or
				   NULL (ps_client_pull_ahead_into) */
	struct pull_arg *arg;   /* n_shards */
	uint64_t *pk;           /* copied pushes' keys and deltas */
	float *pv;
	struct own_run *runs;   /* one per push call */
	uint32_t np, cap, n_runs, runs_cap;
};

struct ps_client {
	struct ps_client_config cfg;
	int link;              /* a primary's link to its backup (replica.c):
				  HELLO marked WIRE_F_REPLICA, only shard
				  `only` connected */
	uint32_t only;
	uint8_t key[NET_KEY_LEN];
	int auth;
	struct shard *sh;
	uint64_t clock;
	uint32_t req;
	float *res;            /* filter residuals (dim), or NULL */
	uint64_t *kbuf;        /* push scratch */
	float *vbuf;
	uint32_t buf_cap;
	uint8_t *in;
	size_t in_cap;
	struct wire_out out;
	struct wire_msg msg;
	struct ps_client_counters n;
	struct pull_ahead ahead;
	/* With a background thread (ps_client_start_async): it owns every
	 * field above but cfg, ahead's pushes recorded and keys_offered while
	 * it has work; the caller's thread touches them only when it is idle
	 * (client_bg_drain). wake_fd: while the thread waits for a frame, a
	 * job queued makes it let go (INTERRUPTED), else -1. */
	struct client_bg *bg;
	int wake_fd;
	/* The caller's: the pull last collected, per shard (n_shards), and
	 * the one before it (n_shards more: a clock's push may follow the
	 * next clock's pull collected early, pull_ahead_ready), for pushes
	 * without keys; those off (keyed_only: BOAR_PS_KEYED_PUSH=1),
	 * their keys compared in full (check_pulled: BOAR_PS_CHECK_PULLED=1),
	 * and every frame's keys as a list, never a bitmap (key_lists:
	 * BOAR_PS_KEY_LISTS=1): debugging aids read when the client is
	 * made. */
	struct pulled_ref *pulled;
	int keyed_only, check_pulled, key_lists;
};

/* Whether a frame sends keys[0..n) as a bitmap (WIRE_F_BITS): where
 * that is smaller, unless BOAR_PS_KEY_LISTS asked for lists. */
static inline int client_keys_as_bits(const struct ps_client *c,
				      const uint64_t *keys, uint32_t n)
{
	return !c->key_lists && wire_keys_as_bits(keys, n);
}

/* Closes s's connection (its session and a pull ahead on it go too). */
void client_drop_fd(struct shard *s);
/* One whole frame from s into c->msg (timeout_s < 0: none); an ERROR
 * frame becomes its code. @return 0, RETRY, or a code (*err). */
int client_recv_msg(struct ps_client *c, struct shard *s, double timeout_s,
		    boar_error *err);
/* A client of cfg, not connected yet (*out freed on error); shard i
 * connected with backoff, on its backup too. @return 0 or a code. */
int client_new(const struct ps_client_config *cfg, struct ps_client **out,
	       boar_error *err);
int client_connect_shard(struct ps_client *c, uint32_t i, boar_error *err);
/* client_replica.c: HELLO with a fresh nonce into c->out (@return 0 or
 * -1); whether s's backup took over (answers HELLO with WELCOME); the
 * other address into use; READY came (a failover if through the other
 * address than the last READY, timed since `started`). */
int client_put_hello(struct ps_client *c, uint8_t nonce[WIRE_NONCE_LEN]);
int client_backup_took_over(struct ps_client *c, const struct shard *s);
void client_switch_address(struct shard *s);
void client_count_failover(struct ps_client *c, struct shard *s,
			   double started);
/* Sends the frame in c->out to s (tagged). @return 0, RETRY, or a code. */
int client_send_out(struct ps_client *c, struct shard *s);
/* Reconnects shard i (backoff, handshake, resend, clock sync). */
int client_reconnect(struct ps_client *c, uint32_t i, boar_error *err);
/* Sends the frame build() puts in c->out to shard i and reads its reply
 * of type `expect`, reconnecting and repeating as needed (build() runs
 * again after a reconnect: the handshake reuses c->out). @return 0 or a
 * code (*err). */
int client_transact(struct ps_client *c, uint32_t i, int expect,
		    void (*build)(struct ps_client *, uint32_t, void *),
		    void *arg, boar_error *err);
/* A request while a pull ahead waits would read its answer as its own:
 * @return BOAR_EINVAL (*err) then, else 0. */
int client_ahead_busy(const struct ps_client *c, boar_error *err);
/* Asks every shard for its part of keys[0..n) at `clock`, into
 * arg[n_shards]; f16: the answers as float16 where they fit.
 * @return 0 or an error code (*err). */
int client_pull_send(struct ps_client *c, const uint64_t *keys, uint32_t n,
		     uint64_t clock, const uint64_t *bits, uint64_t bits_base,
		     int f16, struct pull_arg *arg, boar_error *err);
/* Shard i's answer to arg into vals; after a broken or lost connection
 * asks again at the current clock (*redone = 1: the answer then holds
 * every push sent before). @return 0 or an error code (*err). */
int client_pull_reply(struct ps_client *c, uint32_t i, struct pull_arg *arg,
		      float *vals, int *redone, boar_error *err);
/* Checks c->msg is shard i's answer to p and copies its values into
 * vals + p->a. @return 0 or BOAR_EPROTO naming the shard. */
int client_take_pull_reply(struct ps_client *c, uint32_t i,
			   const struct pull_arg *p, float *vals,
			   boar_error *err);
/* The pull ahead's requests for keys[0..n) at `clock` (the caller's
 * next) into c->ahead.arg (allocated), its shards marked pending or
 * lost. */
int client_ahead_ask(struct ps_client *c, const uint64_t *keys, uint32_t n,
		     uint64_t clock, boar_error *err);
/* The keys of the recorded pushes (counted once a collect added them:
 * keys_added). */
uint64_t client_ahead_own_keys(const struct pull_ahead *a);
/* Adds the recorded pushes to vals of keys[lo..hi). */
void client_ahead_add_own(const struct pull_ahead *a, const uint64_t *keys,
			  uint32_t lo, uint32_t hi, float *vals);
/* vals[lo..hi) = from[lo..hi) plus the recorded pushes (from may be
 * vals), on up to `threads` threads. */
void client_ahead_finish_vals(const struct pull_ahead *a,
			      const uint64_t *keys, uint32_t lo, uint32_t hi,
			      const float *from, float *vals, int add_own,
			      int threads);
/* A push's frames, unrecorded (ps_client_push less the bookkeeping);
 * pulled (NULL, or n_shards): the pull whose keys these are, per shard,
 * for the parts that may name it instead of carrying their keys. */
int client_push_send(struct ps_client *c, const uint64_t *keys,
		     const float *deltas, uint32_t n,
		     const struct pulled_ref *pulled, boar_error *err);
/* client_push.c: the pull of keys[0..n) just collected (arg[n_shards])
 * noted as the one pushes may name (ps_client_push_pulled), the one
 * noted before it kept as the one before; both forgotten (none may)
 * after a pull that failed or went to no shard. */
void client_note_pulled(struct ps_client *c, const struct pull_arg *arg);
void client_forget_pulled(struct ps_client *c);
/* ps_client_clock's work: the clock ticked and sent to every shard. */
int client_clock_send(struct ps_client *c, boar_error *err);

/* client_bg.c: the background thread. The queueing calls return the
 * first error the thread met (sticky); collect waits only for the
 * answers, drain for the thread to have nothing left. */
int client_bg_push(struct ps_client *c, const uint64_t *keys,
		   const float *deltas, uint32_t n,
		   const struct pulled_ref *pulled, boar_error *err);
int client_bg_clock(struct ps_client *c, boar_error *err);
int client_bg_ahead(struct ps_client *c, const uint64_t *keys, uint32_t n,
		    boar_error *err);
int client_bg_collect(struct ps_client *c, const uint64_t *keys, uint32_t n,
		      float *vals, boar_error *err);
int client_bg_ahead_ready(const struct ps_client *c);
int client_bg_drain(const struct ps_client *c, boar_error *err);
void client_bg_stop(struct ps_client *c);

/* Records a push made while a pull ahead is in flight: copied, or (ref)
 * by reference to arrays that stay as they are until the collect.
 * @return 0 or -1 out of memory. */
int client_ahead_record(struct ps_client *c, const uint64_t *keys,
			const float *deltas, uint32_t n);
int client_ahead_record_ref(struct ps_client *c, const uint64_t *keys,
			    const float *deltas, uint32_t n);
/* Index of the first key >= bound in keys[lo..n). */
uint32_t client_lower_bound(const uint64_t *keys, uint32_t lo, uint32_t n,
			    uint64_t bound);

#endif
