/* loop_int.h - the event loop's state, shared by loop.c (the loop) and
 * loop_life.c (creating, waking, feeding and freeing it)
 * (library-internal; loop.h is the interface).
 */
#ifndef BOAR_NET_LOOP_INT_H
#define BOAR_NET_LOOP_INT_H

#include <liburing.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "net/loop.h"

enum peer_state { P_FREE = 0, P_OPEN, P_FLUSHING, P_CLOSING };

struct peer {
	int fd;
	int state;
	uint32_t gen;
	int recv_armed;    /* a receive is in flight (into in + in_len) */
	int send_inflight; /* bytes of out being sent, 0 if none */
	uint8_t *in;       /* received bytes: whole frames and a partial one */
	size_t in_len, in_cap;
	size_t want;       /* bytes the partial frame still needs; 0: unknown */
	double partial_since; /* when the first byte of a frame came; 0: none */
	double flush_deadline;
	uint8_t *out;      /* being sent (must not move while in flight) */
	size_t out_len, out_cap;
	size_t out_sent;   /* bytes of out already sent */
	uint8_t *next;     /* queued behind the send in flight */
	size_t next_len, next_cap;
	int held;          /* a whole frame at in + held_off waits (later) */
	size_t held_off;
	char name[64];
};

struct net_loop {
	struct io_uring ring;
	int ring_ok;
	int ring_disabled; /* until the loop's own thread enables it */
	struct net_loop_config cfg;
	struct net_loop_ops ops;
	void *ctx;
	struct peer *peers;
	unsigned n_peers;
	int accept_armed;
	int stop;
	unsigned n_held;   /* peers with a frame held (peer.held) */
	uint32_t held_at;  /* where the search for the next one starts */
	int send_queued;   /* a send was prepared since the last submit */
	struct __kernel_timespec tick_ts;
	uint8_t stop_buf[256]; /* what the stop fd had to say; ignored */
	_Atomic uint64_t bytes_in, bytes_out;
	/* Other threads' way in: an eventfd read through the ring, and the
	 * sockets handed over (net_loop_adopt) waiting to be served. */
	int wake_fd;
	uint64_t wake_buf;
	pthread_mutex_t adopt_mu;
	int *adopt;
	size_t n_adopt, cap_adopt;
};

#endif
