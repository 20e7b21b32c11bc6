/* loop_life.c - an event loop's life around its run (loop.h): created
 * with its ring, peers and wake eventfd, stopped, woken and handed
 * sockets by other threads, asked for its counters, freed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "net/loop_int.h"

double net_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int net_loop_create(const struct net_loop_config *cfg,
		    const struct net_loop_ops *ops, void *ctx,
		    struct net_loop **out, boar_error *err)
{
	struct net_loop *l = calloc(1, sizeof *l);
	int rc;
	if (!l)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	l->cfg = *cfg;
	if (!l->cfg.max_peers)
		l->cfg.max_peers = 1024;
	if (!l->cfg.tick_ms)
		l->cfg.tick_ms = 100;
	if (l->cfg.frame_timeout <= 0)
		l->cfg.frame_timeout = 10;
	if (!l->cfg.max_outbuf)
		l->cfg.max_outbuf = 256u << 20;
	l->ops = *ops;
	l->ctx = ctx;
	l->wake_fd = -1;
	pthread_mutex_init(&l->adopt_mu, NULL);
	l->tick_ts.tv_sec = l->cfg.tick_ms / 1000;
	l->tick_ts.tv_nsec = (long long)(l->cfg.tick_ms % 1000) * 1000000;
	l->n_peers = l->cfg.max_peers;
	l->peers = calloc(l->n_peers, sizeof *l->peers);
	if (!l->peers) {
		rc = boar_fail(err, BOAR_ENOMEM, "out of memory");
		goto err;
	}
	for (unsigned i = 0; i < l->n_peers; i++)
		l->peers[i].fd = -1;

	/* Only the loop's thread submits to its ring and reaps it, so the
	 * kernel may keep completion work until that thread waits
	 * (DEFER_TASKRUN, Linux 6.1) rather than interrupt it for every
	 * arriving segment. The ring starts disabled so that the loop's
	 * thread, not this one, becomes its one submitter (net_loop_run
	 * enables it); a kernel without these flags gets a plain ring. */
	rc = io_uring_queue_init(512, &l->ring, IORING_SETUP_SINGLE_ISSUER |
						      IORING_SETUP_DEFER_TASKRUN |
						      IORING_SETUP_R_DISABLED);
	l->ring_disabled = rc == 0;
	if (rc == -EINVAL)
		rc = io_uring_queue_init(512, &l->ring, 0);
	if (rc < 0) {
		rc = boar_fail(err, BOAR_ENET, "io_uring_queue_init: %s",
			       strerror(-rc));
		goto err;
	}
	l->ring_ok = 1;
	l->wake_fd = eventfd(0, EFD_CLOEXEC);
	if (l->wake_fd < 0) {
		rc = boar_fail(err, BOAR_ENET, "eventfd: %s", strerror(errno));
		goto err;
	}

	*out = l;
	return 0;
err:
	net_loop_free(l);
	return rc;
}

void net_loop_stop(struct net_loop *l)
{
	l->stop = 1;
}

void net_loop_wake(struct net_loop *l)
{
	uint64_t one = 1;
	/* a full counter (never in practice) already means "wake up" */
	if (write(l->wake_fd, &one, sizeof one) < 0)
		return;
}

int net_loop_adopt(struct net_loop *l, int fd)
{
	int rc = 0;
	pthread_mutex_lock(&l->adopt_mu);
	if (l->n_adopt == l->cap_adopt) {
		size_t cap = l->cap_adopt ? 2 * l->cap_adopt : 16;
		int *a = realloc(l->adopt, cap * sizeof *a);
		if (a) {
			l->adopt = a;
			l->cap_adopt = cap;
		}
	}
	if (l->n_adopt < l->cap_adopt)
		l->adopt[l->n_adopt++] = fd;
	else
		rc = -1;
	pthread_mutex_unlock(&l->adopt_mu);
	if (!rc)
		net_loop_wake(l);
	return rc;
}

void net_loop_bytes(const struct net_loop *l, uint64_t *in, uint64_t *out)
{
	*in = atomic_load_explicit(&l->bytes_in, memory_order_relaxed);
	*out = atomic_load_explicit(&l->bytes_out, memory_order_relaxed);
}

const char *net_loop_peer_name(const struct net_loop *l, uint32_t slot)
{
	return slot < l->n_peers ? l->peers[slot].name : "";
}

void net_loop_free(struct net_loop *l)
{
	if (!l)
		return;
	/* Tearing the ring down cancels whatever is in flight, so the
	 * buffers can go after it. */
	if (l->ring_ok)
		io_uring_queue_exit(&l->ring);
	if (l->peers) {
		for (unsigned i = 0; i < l->n_peers; i++) {
			struct peer *p = &l->peers[i];
			if (p->state != P_FREE)
				close(p->fd);
			free(p->in);
			free(p->out);
			free(p->next);
		}
	}
	free(l->peers);
	for (size_t i = 0; i < l->n_adopt; i++)
		close(l->adopt[i]);
	free(l->adopt);
	pthread_mutex_destroy(&l->adopt_mu);
	if (l->wake_fd >= 0)
		close(l->wake_fd);
	free(l);
}
