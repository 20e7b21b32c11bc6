/* server_int.h - what a shard's two files share (library-internal):
 * server.c speaks the protocol on the lanes, server_life.c creates, runs,
 * checkpoints, resumes and frees the shard. See server.c for the threads
 * and the locks. */
#ifndef BOAR_NET_SERVER_INT_H
#define BOAR_NET_SERVER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "net/auth.h"
#include "net/kept_pulls.h"
#include "net/loop.h"
#include "net/pushlog.h"
#include "net/server.h"
#include "net/shard_w.h"
#include "net/ssp.h"
#include "net/wire.h"

#define HANDSHAKE_TIMEOUT 5.0

enum conn_state { C_NONE = 0, C_NEW, C_CHALLENGED, C_READY };

struct conn {
	int state;
	int rank;          /* worker rank once HELLO came, else -1 */
	double opened;
	uint64_t dim;         /* from its HELLO */
	uint32_t n_workers;
	uint64_t join_clock;
	uint8_t nonce_c[WIRE_NONCE_LEN], nonce_s[WIRE_NONCE_LEN];
	struct net_session ses; /* on from a good AUTH: frames carry tags */
	char name[64];     /* the peer's address, for other lanes' logs */
	int replica;       /* a primary's link (HELLO with WIRE_F_REPLICA) */
	/* a primary's answers to this worker waiting for its backup
	 * (replica_shard.c), in order; the lane's alone */
	struct held_answer *held;
	uint32_t n_held, cap_held;
	/* its last pulls' keys, for pushes that name a pull instead of
	 * carrying keys (WIRE_F_PULLED); the lane's alone */
	struct kept_pulls pulls;
};

struct pend {
	uint32_t lane;
	uint32_t slot;
	uint8_t type;      /* WIRE_PULL or WIRE_GATHER */
	uint8_t f16;
	uint32_t req;
	uint64_t clock;    /* PULL */
	uint64_t lo;       /* GATHER */
	uint32_t count;    /* GATHER */
	struct key_span ks; /* PULL: its keys (the lane's message's, or a
			       copy of them once parked) */
};

/* One thread of the shard: a loop and its connections. Only this lane's
 * thread touches msg, out and (outside s->mu) its conns' sessions. */
struct lane {
	struct ps_server *s;
	uint32_t idx;
	struct net_loop *loop;
	struct conn *conns;
	struct wire_msg msg;
	struct wire_out out;
	pthread_t thread;
	int started;
	int rc;
	boar_error err;
	uint32_t n_holding;    /* conns with answers held (replica_shard.c) */
};

struct ps_server {
	struct ps_config cfg;
	uint8_t key[NET_KEY_LEN];
	int auth;
	struct lane *lanes;
	uint32_t n_lanes;
	unsigned n_conns;     /* per lane */
	uint32_t next_lane;   /* lane 0 deals connections out in turn */
	pthread_mutex_t mu;   /* everything below but the weights */
	atomic_int stopping;
	/* the shard */
	uint64_t dim, lo, hi;
	struct shard_w w;
	int have_workers;     /* the clock table is set up */
	uint32_t n_workers;
	struct ssp ssp;
	int64_t *worker_conn; /* rank -> lane * n_conns + slot, -1 if none */
	/* parked requests */
	struct pend *pend;
	size_t n_pend, cap_pend;
	struct wire_stats st;
	/* with a checkpoint directory: the push log (pushlog.h) and the last
	 * push seq applied per worker, so a push resent after a reconnect is
	 * applied once */
	struct pushlog log;
	int logging;
	uint64_t *last_seq;
	uint64_t dup_pushes;
	struct wire_msg replay_msg;
	double next_ckpt;
	int dirty;            /* pushes since the last checkpoint */
	/* chain replication (replica_shard.c): a primary's links to its
	 * backup; a backup's count of its primary's live links, and when
	 * it took over */
	struct replica *rep;
	uint32_t links;
	int had_links, promoted;
	double gone_at;
	int said_back, said_pull;
	int fatal;
	boar_error fatal_err;
};

#define LOCK(s) pthread_mutex_lock(&(s)->mu)
#define UNLOCK(s) pthread_mutex_unlock(&(s)->mu)

static inline int64_t gid(const struct lane *ln, uint32_t slot)
{
	return (int64_t)ln->idx * ln->s->n_conns + slot;
}

/* Pushes kept for a resend (a push log, a backup) must be whole: such a
 * shard takes no push that names a pull, and keeps no pulls' keys. */
static inline int keeps_pushes(const struct ps_server *s)
{
	return s->logging || s->rep;
}

static inline int in_range(const struct ps_server *s,
			   const struct key_span *ks)
{
	/* keys are ascending: checking the ends checks them all */
	return !ks->n ||
	       (key_span_first(ks) >= s->lo && key_span_last(ks) < s->hi);
}

/* 1 if no pushed value is an infinity or a NaN (an exponent of all ones
 * marks both). Branch-free, so the compiler vectorizes it: the early-exit
 * isfinite() loop took ~5% of a shard lane's time on dense pushes. */
static inline int all_finite(const void *v, uint32_t n)
{
	uint32_t bad = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t b;
		memcpy(&b, (const char *)v + 4 * (size_t)i, sizeof b);
		bad |= (b & 0x7f800000u) == 0x7f800000u;
	}
	return !bad;
}


/* server_life.c */
void ps_logf(struct ps_server *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ps_stop_all(struct ps_server *s);
int ps_setup_shard(struct ps_server *s, uint64_t dim, uint32_t n_workers,
		   boar_error *err);
int ps_checkpoint(struct ps_server *s, boar_error *err);

/* replica_shard.c: chain replication's part in a shard's protocol */
int ps_replica_create(struct ps_server *s, boar_error *err);
/* on_hello (s->mu held): 0, or an ERROR code and *why to refuse with */
int ps_replica_admit(struct ps_server *s, struct conn *c,
		     const struct wire_msg *m, const char **why);
/* join (s->mu held): the peer is in */
void ps_replica_joined(struct ps_server *s, const struct conn *c);
/* on_close (s->mu held), before the connection forgets its state */
void ps_replica_closed(struct ps_server *s, const struct conn *c);
/* a frame of a joined worker was taken: to the backup */
void ps_replica_forward(struct ps_server *s, const struct conn *c,
			const struct wire_hdr *h, const uint8_t *payload);
/* The answer in ln->out to the peer on slot is ready: 1 if it was kept
 * (ln->out emptied) until the backup holds the pushes it acknowledges,
 * 0 to send it now; a backup that took over times its first answers. */
int ps_replica_hold(struct lane *ln, uint32_t slot);
/* Sends the kept answers of this lane's peers that the backup now
 * allows (on_wake, on_tick). */
void ps_replica_release(struct lane *ln);
/* Forgets a peer's kept answers (it closes, or is refused). */
void ps_replica_drop_held(struct lane *ln, uint32_t slot);

/* server.c: seals (if the peer has a session) and sends the frame built
 * in o to a peer of the lane, now */
void ps_send_out(struct lane *ln, uint32_t slot, struct wire_out *o);

/* server.c: the callbacks of every lane's loop, and lane 0's dealer */
extern const struct net_loop_ops ps_lane_ops;
int ps_lane_route(void *ctx, int fd);

#endif
