/* loop.h - one io_uring event loop serving framed peers (library-internal).
 *
 * A loop owns one ring, driven by one thread: a multishot accept on the
 * listening socket, one receive per peer into that peer's frame buffer
 * (whole frames in place, no second copy), one send in flight per peer, a
 * periodic timeout and an optional "stop" file descriptor (a signalfd or
 * eventfd) read through the ring, so nothing ever blocks outside io_uring_submit_and_wait(). No epoll,
 * no thread per connection.
 *
 * Bytes received gather per peer into whole frames (wire.h) and are
 * handed to ops->on_frame one at a time. A peer is dropped, without
 * disturbing the others, when its header is bad, its frame is larger than
 * ops->max_payload allows, a frame stays incomplete for longer than
 * frame_timeout, or it does not read what we send (max_outbuf).
 *
 * Peers are named by an id that stays valid until on_close has been called
 * for it; a send to a closed id is ignored. Thread rule: every function here
 * must be called from the loop's thread (callbacks included), except
 * net_loop_wake and net_loop_adopt (any thread), net_loop_bytes (any
 * thread, approximate while running) and net_loop_free after net_loop_run
 * returned.
 *
 * Several loops serve one shard from several threads: one accepts and
 * hands connections to the others (ops->route, net_loop_adopt); a loop
 * wakes another (net_loop_wake -> ops->on_wake on that loop's thread)
 * when something it must act on changed, e.g. a clock its parked pulls
 * wait for.
 */
#ifndef BOAR_NET_LOOP_H
#define BOAR_NET_LOOP_H

#include <stddef.h>
#include <stdint.h>

#include "boar.h"
#include "net/wire.h"

struct net_loop;

struct net_loop_ops {
	/* A peer connected; return non-zero to refuse it. */
	int (*on_open)(void *ctx, uint32_t id);
	/* One whole frame; payload holds h->length bytes. Return 0, or
	 * non-zero to drop the peer. */
	int (*on_frame)(void *ctx, uint32_t id, const struct wire_hdr *h,
			const uint8_t *payload);
	/* The peer is gone (called once per id that was opened). */
	void (*on_close)(void *ctx, uint32_t id, const char *why);
	/* Every tick_ms, with a monotonic clock in seconds. */
	void (*on_tick)(void *ctx, double now);
	/* The largest payload this peer may send now. */
	uint32_t (*max_payload)(void *ctx, uint32_t id);
	/* Optional: another thread called net_loop_wake. */
	void (*on_wake)(void *ctx);
	/* Optional: a connection was accepted; return 1 if it was handed
	 * elsewhere (net_loop_adopt on another loop), 0 to serve it here. */
	int (*route)(void *ctx, int fd);
	/* Optional: 1 if this whole frame may wait until the frames of the
	 * other peers that are ready now have been taken (the peer's later
	 * frames wait behind it); h is the header as received (not yet
	 * authenticated: it may only choose the order). */
	int (*later)(void *ctx, uint32_t id, const struct wire_hdr *h);
};

struct net_loop_config {
	int listen_fd;        /* listening TCP socket (not closed by the
				 loop), or -1: only adopted peers */
	int stop_fd;          /* readable -> run returns; -1 for none */
	unsigned max_peers;   /* 0: 1024 */
	unsigned tick_ms;     /* 0: 100 */
	double frame_timeout; /* seconds a frame may stay partial; 0: 10 */
	size_t max_outbuf;    /* bytes queued to one peer; 0: 256 MiB */
};

int net_loop_create(const struct net_loop_config *cfg,
		    const struct net_loop_ops *ops, void *ctx,
		    struct net_loop **out, boar_error *err);

/* Runs until the stop fd is readable or net_loop_stop() is called.
 * @return 0, or BOAR_ENET with *err on a ring failure. */
int net_loop_run(struct net_loop *l, boar_error *err);

void net_loop_stop(struct net_loop *l);

/* From any thread: ops->on_wake runs soon on the loop's thread. */
void net_loop_wake(struct net_loop *l);
/* From any thread: the loop serves the connected socket fd as a new peer
 * (and closes it). @return 0, or -1 (out of memory; fd not taken). */
int net_loop_adopt(struct net_loop *l, int fd);

/* Queues len bytes (whole frames) to the peer. @return 0, or -1 if the
 * peer is closed or its queue is over max_outbuf (it is then dropped). */
int net_loop_send(struct net_loop *l, uint32_t id, const void *buf,
		  size_t len);

/* Queues the frames built in o (as net_loop_send), without copying them
 * when nothing else is queued to the peer: o's buffer is handed over and
 * o gets another, empty. o is reset either way. */
int net_loop_send_out(struct net_loop *l, uint32_t id, struct wire_out *o);

/* Drops a peer now; with flush, after what was queued has been sent
 * (at most one more tick's worth of waiting). */
void net_loop_close(struct net_loop *l, uint32_t id, int flush,
		    const char *why);

/* Total bytes received and sent by all peers. */
void net_loop_bytes(const struct net_loop *l, uint64_t *in, uint64_t *out);

/* The peer's address as "ip:port" (empty if unknown). */
const char *net_loop_peer_name(const struct net_loop *l, uint32_t id);

void net_loop_free(struct net_loop *l);

/* A monotonic clock in seconds. */
double net_now(void);

/* ---- socket helpers shared by the shard and the client (sock.c) */

/* Parses "HOST:PORT" (HOST may be a name or a [v6] literal; PORT 0 lets
 * the kernel choose when listening). */
int net_split_hostport(const char *s, char *host, size_t hostlen,
		       unsigned *port);
/* Listens on host:port (SO_REUSEADDR). @return 0 and *fd, or BOAR_ENET. */
int net_listen(const char *host, unsigned port, int *fd, boar_error *err);
/* Connects (blocking, with TCP_NODELAY). @return 0 and *fd, or BOAR_ENET. */
int net_connect(const char *host, unsigned port, int *fd, boar_error *err);
/* The port a socket is bound to (what port 0 got), 0 if unknown. */
unsigned net_bound_port(int fd);
/* Whether host names only loopback addresses. */
int net_host_is_loopback(const char *host);

#endif
