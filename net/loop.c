/* loop.c - the io_uring event loop behind a parameter-server shard.
 *
 * Every submission carries a user_data naming the operation, the peer slot
 * and the slot's generation (op << 56 | gen << 32 | slot); handle_cqe()
 * dispatches on the operation, and a completion whose generation no longer
 * matches its slot belongs to a peer already gone and is ignored.
 *
 * Receives land in place: one receive per peer in flight, straight into
 * the peer's frame buffer after the bytes it already holds, so the only
 * copy of a payload is the kernel's (an earlier version received into a
 * shared ring of 16 KiB provided buffers and copied each into the peer's
 * buffer: a second copy of every byte and one completion per 16 KiB).
 * Once a frame's header is in, the receive asks for exactly the rest of
 * that frame with MSG_WAITALL, so a 500 KB push is one completion; never
 * for more than the frame, so it cannot wait for bytes a peer holds back
 * until it has our reply.
 *
 * Frames the owner may take later (ops->later: the shard's pushes) wait
 * while the frames of other peers that are ready now go first (the
 * shard's pulls, whose answers the workers wait for while a push only
 * has to be in before its CLOCK counts). Such a frame stays in its
 * peer's buffer with no receive armed, so the peer's later frames wait
 * behind it and each peer's frames are still taken in the order sent;
 * the loop takes one held frame per round of completions, and waits for
 * the kernel only once none is held. Sends go to the kernel as soon as a
 * completion has queued one, not after the whole batch, so an answer
 * leaves while the frames after it are worked on.
 *
 * Closing a peer: shutdown() makes its pending receive complete, an explicit
 * cancel makes sure of it, and the slot is recycled once no operation of it
 * is in flight (its generation then changes).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/error.h"
#include "net/loop_int.h"

enum op {
	OP_ACCEPT = 1,
	OP_RECV,
	OP_SEND,
	OP_TICK,
	OP_STOP,
	OP_CANCEL,
	OP_WAKE,
};

static inline uint64_t ud(enum op op, uint32_t slot, uint32_t gen)
{
	return (uint64_t)op << 56 | (uint64_t)(gen & 0xffffff) << 32 | slot;
}

/* A receive asks for at least this much room (fewer, larger receives),
 * and a frame's buffer grows ahead of its bytes by at most this much more
 * than has arrived (a header alone cannot make the shard allocate the
 * largest frame). */
#define RECV_MIN (64u << 10)
#define RECV_AHEAD (1u << 20)

/* An SQE, flushing the queue to the kernel first if it is full. */
static struct io_uring_sqe *get_sqe(struct net_loop *l)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);
	if (!sqe) {
		io_uring_submit(&l->ring);
		sqe = io_uring_get_sqe(&l->ring);
	}
	return sqe;
}

static void arm_accept(struct net_loop *l)
{
	struct io_uring_sqe *sqe = get_sqe(l);
	if (!sqe)
		return;
	io_uring_prep_multishot_accept(sqe, l->cfg.listen_fd, NULL, NULL,
				       SOCK_CLOEXEC);
	io_uring_sqe_set_data64(sqe, ud(OP_ACCEPT, 0, 0));
	l->accept_armed = 1;
}

/* Room in p->in for the next receive: the rest of the partial frame
 * (capped at RECV_AHEAD past what has arrived), at least RECV_MIN.
 * @return 0 or -1 out of memory. */
static int recv_room(struct peer *p)
{
	size_t need = p->want;
	if (need > p->in_len + RECV_AHEAD)
		need = p->in_len + RECV_AHEAD;
	if (need < RECV_MIN)
		need = RECV_MIN;
	if (p->in_cap - p->in_len >= need)
		return 0;
	size_t c = p->in_cap ? p->in_cap : RECV_MIN;
	while (c - p->in_len < need)
		c *= 2;
	uint8_t *b = realloc(p->in, c);
	if (!b)
		return -1;
	p->in = b;
	p->in_cap = c;
	return 0;
}

static void arm_recv(struct net_loop *l, uint32_t slot)
{
	struct peer *p = &l->peers[slot];
	struct io_uring_sqe *sqe = get_sqe(l);
	if (!sqe)
		return;
	if (recv_room(p)) {
		net_loop_close(l, slot, 0, "out of memory");
		return;
	}
	/* The rest of a known frame: exactly that, in one completion
	 * (MSG_WAITALL, never past the frame, so it cannot wait for bytes
	 * the peer holds back for our reply); else whatever room there is. */
	size_t room = p->in_cap - p->in_len;
	int whole = p->want && p->want <= room;
	io_uring_prep_recv(sqe, p->fd, p->in + p->in_len,
			   whole ? p->want : room, whole ? MSG_WAITALL : 0);
	io_uring_sqe_set_data64(sqe, ud(OP_RECV, slot, p->gen));
	p->recv_armed = 1;
}

static void arm_tick(struct net_loop *l)
{
	struct io_uring_sqe *sqe = get_sqe(l);
	if (!sqe)
		return;
	io_uring_prep_timeout(sqe, &l->tick_ts, 0, 0);
	io_uring_sqe_set_data64(sqe, ud(OP_TICK, 0, 0));
}

static void arm_stop(struct net_loop *l)
{
	struct io_uring_sqe *sqe = get_sqe(l);
	if (!sqe)
		return;
	io_uring_prep_read(sqe, l->cfg.stop_fd, l->stop_buf, sizeof l->stop_buf,
			   0);
	io_uring_sqe_set_data64(sqe, ud(OP_STOP, 0, 0));
}

static void arm_wake(struct net_loop *l)
{
	struct io_uring_sqe *sqe = get_sqe(l);
	if (!sqe)
		return;
	io_uring_prep_read(sqe, l->wake_fd, &l->wake_buf, sizeof l->wake_buf,
			   0);
	io_uring_sqe_set_data64(sqe, ud(OP_WAKE, 0, 0));
}

static void arm_send(struct net_loop *l, uint32_t slot)
{
	struct peer *p = &l->peers[slot];
	if (p->send_inflight || !p->out_len)
		return;
	struct io_uring_sqe *sqe = get_sqe(l);
	if (!sqe)
		return;
	size_t n = p->out_len - p->out_sent;
	if (n > (1u << 30))
		n = 1u << 30;
	/* MSG_WAITALL: the kernel keeps sending as the socket drains, so a
	 * 400 KB pull reply is one completion, not one per socket buffer
	 * (kernels before 5.19 may still complete it short: out_sent) */
	io_uring_prep_send(sqe, p->fd, p->out + p->out_sent, n,
			   MSG_NOSIGNAL | MSG_WAITALL);
	io_uring_sqe_set_data64(sqe, ud(OP_SEND, slot, p->gen));
	p->send_inflight = (int)n;
	l->send_queued = 1;
}

static void unhold(struct net_loop *l, struct peer *p)
{
	if (p->held) {
		p->held = 0;
		l->n_held--;
	}
}

/* Recycles the slot once nothing of it is in flight. */
static void maybe_release(struct net_loop *l, uint32_t slot)
{
	struct peer *p = &l->peers[slot];
	if (p->state != P_CLOSING || p->recv_armed || p->send_inflight)
		return;
	unhold(l, p);
	close(p->fd);
	free(p->in);
	free(p->out);
	free(p->next);
	uint32_t gen = p->gen + 1;
	memset(p, 0, sizeof *p);
	p->gen = gen;
	p->fd = -1;
	p->state = P_FREE;
}

static void cancel_recv(struct net_loop *l, uint32_t slot)
{
	struct peer *p = &l->peers[slot];
	if (!p->recv_armed)
		return;
	struct io_uring_sqe *sqe = get_sqe(l);
	if (sqe) {
		io_uring_prep_cancel64(sqe, ud(OP_RECV, slot, p->gen), 0);
		io_uring_sqe_set_data64(sqe, ud(OP_CANCEL, slot, p->gen));
	}
}

/* Stops all traffic of a peer; the slot is released when its operations
 * have completed. */
static void begin_close(struct net_loop *l, uint32_t slot)
{
	struct peer *p = &l->peers[slot];
	p->state = P_CLOSING;
	shutdown(p->fd, SHUT_RDWR);
	cancel_recv(l, slot);
	maybe_release(l, slot);
}

void net_loop_close(struct net_loop *l, uint32_t slot, int flush,
		    const char *why)
{
	if (slot >= l->n_peers)
		return;
	struct peer *p = &l->peers[slot];
	if (p->state != P_OPEN && !(p->state == P_FLUSHING && !flush))
		return;
	if (flush && p->out_len) {
		p->state = P_FLUSHING;
		p->flush_deadline = net_now() + 1.0;
		l->ops.on_close(l->ctx, slot, why ? why : "closed");
		return;
	}
	int was_open = p->state == P_OPEN;
	p->state = P_CLOSING; /* on_close must see the peer as gone */
	if (was_open)
		l->ops.on_close(l->ctx, slot, why ? why : "closed");
	begin_close(l, slot);
}

/* Two growable byte blocks trade places (nothing is copied). */
static void swap_bufs(uint8_t **a, size_t *a_cap, uint8_t **b, size_t *b_cap)
{
	uint8_t *t = *a;
	size_t c = *a_cap;
	*a = *b;
	*a_cap = *b_cap;
	*b = t;
	*b_cap = c;
}

/* Appends to a growable byte block. @return 0 or -1 out of memory. */
static int append(uint8_t **buf, size_t *len, size_t *cap, const void *src,
		  size_t n)
{
	if (*cap - *len < n) {
		size_t c = *cap ? *cap : 4096;
		while (c - *len < n)
			c *= 2;
		uint8_t *b = realloc(*buf, c);
		if (!b)
			return -1;
		*buf = b;
		*cap = c;
	}
	memcpy(*buf + *len, src, n);
	*len += n;
	return 0;
}

int net_loop_send(struct net_loop *l, uint32_t slot, const void *buf,
		  size_t len)
{
	if (slot >= l->n_peers || l->peers[slot].state != P_OPEN)
		return -1;
	struct peer *p = &l->peers[slot];
	if (p->out_len + p->next_len + len > l->cfg.max_outbuf) {
		net_loop_close(l, slot, 0, "peer does not read its replies");
		return -1;
	}
	/* While a send is in flight the kernel reads p->out, which therefore
	 * must not move: new bytes wait in p->next until it completes. */
	int rc = p->send_inflight
			 ? append(&p->next, &p->next_len, &p->next_cap, buf, len)
			 : append(&p->out, &p->out_len, &p->out_cap, buf, len);
	if (rc) {
		net_loop_close(l, slot, 0, "out of memory");
		return -1;
	}
	arm_send(l, slot);
	return 0;
}

int net_loop_send_out(struct net_loop *l, uint32_t slot, struct wire_out *o)
{
	if (slot >= l->n_peers || l->peers[slot].state != P_OPEN) {
		wire_out_reset(o);
		return -1;
	}
	struct peer *p = &l->peers[slot];
	if (p->send_inflight || p->out_len || o->len > l->cfg.max_outbuf) {
		int rc = net_loop_send(l, slot, o->buf, o->len);
		wire_out_reset(o);
		return rc;
	}
	/* Nothing queued: the frames' buffer becomes the peer's send
	 * buffer, and the peer's (empty) one is the caller's next. */
	swap_bufs(&p->out, &p->out_cap, &o->buf, &o->cap);
	p->out_len = o->len;
	wire_out_reset(o);
	arm_send(l, slot);
	return 0;
}

/* ------------------------------------------------------------ handlers */

/* A connected socket becomes a peer of this loop. */
static void serve_fd(struct net_loop *l, int fd)
{
	uint32_t slot;
	for (slot = 0; slot < l->n_peers; slot++)
		if (l->peers[slot].state == P_FREE)
			break;
	if (slot == l->n_peers) {
		close(fd); /* full: refuse, the others carry on */
		return;
	}
	struct peer *p = &l->peers[slot];
	p->fd = fd;
	p->state = P_OPEN;
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	if (!getpeername(fd, (struct sockaddr *)&ss, &sl)) {
		char ip[INET6_ADDRSTRLEN] = "";
		unsigned port = 0;
		if (ss.ss_family == AF_INET) {
			struct sockaddr_in *a = (struct sockaddr_in *)&ss;
			inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
			port = ntohs(a->sin_port);
		} else if (ss.ss_family == AF_INET6) {
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
			inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof ip);
			port = ntohs(a->sin6_port);
		}
		snprintf(p->name, sizeof p->name, "%s:%u", ip, port);
	}
	if (l->ops.on_open(l->ctx, slot)) {
		p->state = P_CLOSING;
		maybe_release(l, slot);
		return;
	}
	arm_recv(l, slot);
}

static void handle_accept(struct net_loop *l, struct io_uring_cqe *cqe)
{
	if (!(cqe->flags & IORING_CQE_F_MORE))
		l->accept_armed = 0;
	if (cqe->res < 0)
		return; /* EMFILE and friends: re-armed below */
	if (l->ops.route && l->ops.route(l->ctx, cqe->res))
		return;
	serve_fd(l, cqe->res);
}

/* Another thread woke us: serve the sockets it handed over, then tell
 * the owner. */
static void handle_wake(struct net_loop *l)
{
	for (;;) {
		int fd = -1;
		pthread_mutex_lock(&l->adopt_mu);
		if (l->n_adopt)
			fd = l->adopt[--l->n_adopt];
		pthread_mutex_unlock(&l->adopt_mu);
		if (fd < 0)
			break;
		serve_fd(l, fd);
	}
	if (l->ops.on_wake)
		l->ops.on_wake(l->ctx);
	arm_wake(l);
}

/* Hands every whole frame in the peer's buffer to on_frame, keeps the
 * partial one at the front and notes how much of it is missing; from the
 * held frame on (resume: taken without asking ops->later again). A frame
 * the owner takes later stops it: the frame and what follows stay in the
 * buffer, held. */
static void deliver(struct net_loop *l, uint32_t slot, int resume)
{
	struct peer *p = &l->peers[slot];
	size_t off = resume ? p->held_off : 0;
	unhold(l, p);
	p->want = 0;
	while (p->state == P_OPEN && p->in_len - off >= WIRE_HDR_LEN) {
		struct wire_hdr h;
		uint32_t max = l->ops.max_payload(l->ctx, slot);
		if (wire_parse_header(p->in + off, max, &h)) {
			net_loop_close(l, slot, 0,
				       "bad frame header (garbage, wrong "
				       "version or oversized frame)");
			return;
		}
		if (p->in_len - off - WIRE_HDR_LEN < h.length) {
			p->want = WIRE_HDR_LEN + h.length - (p->in_len - off);
			break;
		}
		if (!resume && l->ops.later && l->ops.later(l->ctx, slot, &h)) {
			p->held = 1;
			p->held_off = off;
			p->partial_since = 0; /* waiting on us, not on the peer */
			l->n_held++;
			return;
		}
		resume = 0;
		const uint8_t *payload = p->in + off + WIRE_HDR_LEN;
		off += WIRE_HDR_LEN + h.length;
		if (l->ops.on_frame(l->ctx, slot, &h, payload)) {
			net_loop_close(l, slot, 1, "protocol error");
			return;
		}
	}
	if (p->state != P_OPEN)
		return;
	if (off) { /* only a partial frame's head moves, never a whole one */
		memmove(p->in, p->in + off, p->in_len - off);
		p->in_len -= off;
	}
	p->partial_since = p->in_len ? (off || !p->partial_since
						? net_now()
						: p->partial_since)
				     : 0;
}

/* Bytes arrived straight into p->in (no reassembly copy): deliver what is
 * whole and receive again. */
static void handle_recv(struct net_loop *l, uint32_t slot,
			struct io_uring_cqe *cqe)
{
	struct peer *p = &l->peers[slot];
	p->recv_armed = 0;
	if (cqe->res > 0)
		atomic_fetch_add_explicit(&l->bytes_in, (uint64_t)cqe->res,
					  memory_order_relaxed);
	if (p->state == P_OPEN) {
		if (cqe->res == 0) {
			net_loop_close(l, slot, 0, "peer closed the connection");
		} else if (cqe->res < 0 && cqe->res != -EINTR &&
			   cqe->res != -EAGAIN) {
			net_loop_close(l, slot, 0, strerror(-cqe->res));
		} else {
			if (cqe->res > 0) {
				p->in_len += (size_t)cqe->res;
				deliver(l, slot, 0);
			}
			if (p->state == P_OPEN && !p->held)
				arm_recv(l, slot);
		}
	}
	maybe_release(l, slot);
}

static void handle_send(struct net_loop *l, uint32_t slot,
			struct io_uring_cqe *cqe)
{
	struct peer *p = &l->peers[slot];
	p->send_inflight = 0;
	if (cqe->res < 0) {
		if (p->state == P_OPEN)
			net_loop_close(l, slot, 0, strerror(-cqe->res));
		else if (p->state == P_FLUSHING)
			begin_close(l, slot);
		maybe_release(l, slot);
		return;
	}
	size_t n = (size_t)cqe->res;
	atomic_fetch_add_explicit(&l->bytes_out, n, memory_order_relaxed);
	p->out_sent += n;
	if (p->out_sent == p->out_len) {
		/* all sent: what queued behind it becomes the next send (the
		 * two buffers swap; nothing is copied) */
		swap_bufs(&p->out, &p->out_cap, &p->next, &p->next_cap);
		p->out_len = p->next_len;
		p->next_len = 0;
		p->out_sent = 0;
	}
	if (p->state == P_FLUSHING && !p->out_len) {
		begin_close(l, slot);
		return;
	}
	if (p->state == P_OPEN || p->state == P_FLUSHING)
		arm_send(l, slot);
	maybe_release(l, slot);
}

static void handle_tick(struct net_loop *l)
{
	double now = net_now();
	for (uint32_t s = 0; s < l->n_peers; s++) {
		struct peer *p = &l->peers[s];
		if (p->state == P_OPEN && p->partial_since &&
		    now - p->partial_since > l->cfg.frame_timeout)
			net_loop_close(l, s, 0, "slow peer: frame incomplete");
		else if (p->state == P_FLUSHING && now > p->flush_deadline)
			begin_close(l, s);
	}
	l->ops.on_tick(l->ctx, now);
	if (!l->accept_armed && l->cfg.listen_fd >= 0)
		arm_accept(l);
	arm_tick(l);
}

static void handle_cqe(struct net_loop *l, struct io_uring_cqe *cqe)
{
	uint64_t u = io_uring_cqe_get_data64(cqe);
	enum op op = (enum op)(u >> 56);
	uint32_t slot = (uint32_t)u;
	uint32_t gen = (uint32_t)(u >> 32) & 0xffffff;

	switch (op) {
	case OP_ACCEPT:
		handle_accept(l, cqe);
		break;
	case OP_TICK:
		handle_tick(l);
		break;
	case OP_STOP:
		l->stop = 1;
		break;
	case OP_RECV:
	case OP_SEND:
		if (slot >= l->n_peers ||
		    (l->peers[slot].gen & 0xffffff) != gen ||
		    l->peers[slot].state == P_FREE)
			break; /* a completion of a peer already released */
		if (op == OP_RECV)
			handle_recv(l, slot, cqe);
		else
			handle_send(l, slot, cqe);
		break;
	case OP_WAKE:
		handle_wake(l);
		break;
	case OP_CANCEL:
		break;
	}
}

/* Takes the next held frame (peers in turn) and what follows it in its
 * peer's buffer, then receives for that peer again. */
static void resume_held(struct net_loop *l)
{
	for (uint32_t k = 0; k < l->n_peers; k++) {
		uint32_t slot = (l->held_at + k) % l->n_peers;
		struct peer *p = &l->peers[slot];
		if (!p->held)
			continue;
		l->held_at = slot + 1;
		deliver(l, slot, 1);
		if (p->state == P_OPEN && !p->held)
			arm_recv(l, slot);
		maybe_release(l, slot);
		return;
	}
}

/* ------------------------------------------------------------- the loop */

int net_loop_run(struct net_loop *l, boar_error *err)
{
	if (l->ring_disabled) {
		/* the system call: liburing 2.3 declares a wrapper it lacks */
		if (syscall(__NR_io_uring_register, l->ring.ring_fd,
			    IORING_REGISTER_ENABLE_RINGS, NULL, 0) < 0)
			return boar_fail(err, BOAR_ENET,
					 "enabling the io_uring ring: %s",
					 strerror(errno));
		l->ring_disabled = 0;
	}
	if (l->cfg.listen_fd >= 0)
		arm_accept(l);
	arm_tick(l);
	arm_wake(l);
	if (l->cfg.stop_fd >= 0)
		arm_stop(l);
	while (!l->stop) {
		/* with a frame held, only what has completed: the held frame
		 * is taken after it */
		l->send_queued = 0;
		int rc = l->n_held ? io_uring_submit_and_get_events(&l->ring)
				   : io_uring_submit_and_wait(&l->ring, 1);
		if (rc < 0 && rc != -EINTR && rc != -ETIME && rc != -EBUSY)
			return boar_fail(err, BOAR_ENET,
					 "io_uring_submit_and_wait: %s",
					 strerror(-rc));
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0;
		io_uring_for_each_cqe(&l->ring, head, cqe)
		{
			handle_cqe(l, cqe);
			seen++;
			if (l->send_queued) { /* an answer leaves now */
				io_uring_submit(&l->ring);
				l->send_queued = 0;
			}
		}
		io_uring_cq_advance(&l->ring, seen);
		if (l->n_held && !l->stop)
			resume_held(l);
	}
	io_uring_submit(&l->ring);
	return 0;
}
