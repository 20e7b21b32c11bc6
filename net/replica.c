/* replica.c - a primary shard's links to its backup (see replica.h). */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "net/client.h"
#include "net/loop.h"
#include "net/replica.h"

/* A backup not reachable this long is lost (it is started before its
 * primary; one that went away is not waited for). */
#define LINK_RECONNECT_S 2.0
/* Bytes a link may hold not sent yet before a lane waits for room: the
 * workers' frames are not held back while the backup keeps up, and
 * memory stays bounded when it does not. */
#define LINK_QUEUE_MAX ((size_t)64 << 20)

/* A frame queued for the backup: this, then len bytes of payload. */
struct fwd {
	uint32_t len;
	uint16_t flags;
	uint8_t type;
};

struct link {
	struct replica *r;
	uint32_t rank;
	pthread_mutex_t mu;
	pthread_cond_t cv;    /* work for the thread; room or an ack for a
				 lane */
	pthread_t thread;
	int started;
	struct ps_client *c;  /* the thread's once it started */
	/* Under mu: frames queued by the lanes (q), the thread's batch in
	 * flight (spare, swapped with q), pushes queued in all, the largest
	 * ticket an answer waits for, pushes the backup answered after. */
	uint8_t *q, *spare;
	size_t q_len, q_cap, spare_cap;
	uint64_t queued, want, acked;
	int stop;
};

struct replica {
	struct replica_config cfg;
	char addr[300];
	const char **addrs;   /* n_shards times addr, for the client */
	pthread_mutex_t mu;   /* the links' creation */
	struct link *links;
	uint32_t n_workers;
	uint64_t dim;
	atomic_int lost;
};

static void logf_(struct replica *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void logf_(struct replica *r, const char *fmt, ...)
{
	if (!r->cfg.log)
		return;
	char line[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	r->cfg.log(r->cfg.log_ctx, line);
}

int replica_create(const struct replica_config *cfg, struct replica **out,
		   boar_error *err)
{
	char host[256];
	unsigned port;
	if (net_split_hostport(cfg->addr, host, sizeof host, &port) || !port)
		return boar_fail(err, BOAR_EINVAL,
				 "backup '%s' is not HOST:PORT", cfg->addr);
	struct replica *r = calloc(1, sizeof *r);
	if (!r || !(r->addrs = calloc(cfg->n_shards, sizeof *r->addrs))) {
		free(r);
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	}
	r->cfg = *cfg;
	snprintf(r->addr, sizeof r->addr, "%s", cfg->addr);
	for (uint32_t i = 0; i < cfg->n_shards; i++)
		r->addrs[i] = r->addr;
	pthread_mutex_init(&r->mu, NULL);
	*out = r;
	return 0;
}

static void notify(struct replica *r, uint32_t rank)
{
	if (r->cfg.acked)
		r->cfg.acked(r->cfg.ctx, rank);
}

/* The backup is out of the chain: said once; every link's thread closes
 * its link and ends, every waiting lane goes on, every kept answer may
 * go (with wake, the lanes are told; else their next tick sends them:
 * a caller under the shard's lock, which cfg.acked takes). Called with
 * none of the replica's locks held. */
static void lose(struct replica *r, const boar_error *e, int wake)
{
	if (atomic_exchange(&r->lost, 1))
		return;
	logf_(r, "backup %s lost (%s): going on without a replica (and "
		 "asking it to stop); pushes acknowledged from now on live "
		 "in this process only",
	      r->addr, e->message[0] ? e->message : "no reason");
	for (uint32_t i = 0; r->links && i < r->n_workers; i++) {
		pthread_mutex_lock(&r->links[i].mu);
		pthread_cond_broadcast(&r->links[i].cv);
		pthread_mutex_unlock(&r->links[i].mu);
	}
	if (wake)
		notify(r, UINT32_MAX);
}

/* Sends a batch of queued frames, in order. @return 0 or a code (*e). */
static int send_batch(struct link *l, const uint8_t *b, size_t n,
		      boar_error *e)
{
	for (size_t at = 0; at < n;) {
		struct fwd f;
		memcpy(&f, b + at, sizeof f);
		at += sizeof f;
		int rc = ps_client_forward(l->c, l->r->cfg.shard, f.type,
					   f.flags, b + at, f.len, e);
		if (rc)
			return rc;
		at += f.len;
	}
	return 0;
}

/* A link's thread: sends what the lanes queued, then, if it sent pushes
 * since, one STATS, whose reply acknowledges every push sent before it
 * (the backup handles a link's frames in order). Ends when the replica
 * is freed (after sending what was queued) or the backup is lost. */
static void *link_main(void *arg)
{
	struct link *l = arg;
	struct replica *r = l->r;
	uint64_t sent = 0; /* pushes sent */
	boar_error e = { 0 };
	int rc = 0;
	pthread_mutex_lock(&l->mu);
	while (!rc && !atomic_load(&r->lost)) {
		if (l->q_len) {
			uint8_t *b = l->q;
			size_t n = l->q_len, cap = l->q_cap;
			uint64_t upto = l->queued;
			l->q = l->spare;
			l->q_cap = l->spare_cap;
			l->q_len = 0;
			l->spare = b;
			l->spare_cap = cap;
			pthread_cond_broadcast(&l->cv); /* room */
			pthread_mutex_unlock(&l->mu);
			rc = send_batch(l, b, n, &e);
			pthread_mutex_lock(&l->mu);
			sent = upto;
		} else if (l->stop) {
			break; /* nobody waits for an answer any more */
		} else if (sent > l->acked) {
			/* asked at once, not when an answer is ready: the
			 * reply is then often in before the worker's next
			 * request, and its answer need not wait */
			uint64_t upto = sent;
			struct wire_stats st;
			pthread_mutex_unlock(&l->mu);
			rc = ps_client_stats(l->c, r->cfg.shard, &st, &e);
			pthread_mutex_lock(&l->mu);
			if (!rc) {
				int waited = l->want > l->acked;
				l->acked = upto;
				pthread_cond_broadcast(&l->cv);
				pthread_mutex_unlock(&l->mu);
				if (waited) /* an answer was kept for it */
					notify(r, l->rank);
				pthread_mutex_lock(&l->mu);
			}
		} else {
			pthread_cond_wait(&l->cv, &l->mu);
		}
	}
	pthread_mutex_unlock(&l->mu);
	if (rc)
		lose(r, &e, 1);
	if (atomic_load(&r->lost)) { /* it misses what follows: stop it */
		ps_client_stop_link(l->c);
		ps_client_free(l->c);
		l->c = NULL;
	}
	return NULL;
}

static int size_links(struct replica *r, uint32_t n_workers, uint64_t dim)
{
	if (r->links)
		return n_workers == r->n_workers && dim == r->dim ? 0 : -1;
	r->links = calloc(n_workers, sizeof *r->links);
	if (!r->links)
		return -1;
	for (uint32_t i = 0; i < n_workers; i++) {
		struct link *l = &r->links[i];
		l->r = r;
		l->rank = i;
		pthread_mutex_init(&l->mu, NULL);
		pthread_cond_init(&l->cv, NULL);
	}
	r->n_workers = n_workers;
	r->dim = dim;
	return 0;
}

void replica_join(struct replica *r, uint32_t rank, uint32_t n_workers,
		  uint64_t dim, uint64_t clock)
{
	if (atomic_load(&r->lost))
		return;
	pthread_mutex_lock(&r->mu);
	int bad = size_links(r, n_workers, dim);
	pthread_mutex_unlock(&r->mu);
	if (bad || rank >= r->n_workers)
		return; /* the shard refuses such a worker anyway */
	struct link *l = &r->links[rank];
	pthread_mutex_lock(&l->mu);
	if (l->started || l->stop) {
		pthread_mutex_unlock(&l->mu);
		return;
	}
	struct ps_client_config cc = {
		.addrs = r->addrs,
		.n_shards = r->cfg.n_shards,
		.rank = rank,
		.n_workers = n_workers,
		.dim = dim,
		.key = r->cfg.key,
		.reconnect_timeout = LINK_RECONNECT_S,
	};
	boar_error e = { 0 };
	int rc = ps_client_link(&cc, r->cfg.shard, clock, &l->c, &e);
	if (!rc && pthread_create(&l->thread, NULL, link_main, l))
		rc = boar_fail(&e, BOAR_ENOMEM, "no thread for the link");
	l->started = !rc;
	pthread_mutex_unlock(&l->mu);
	if (rc) /* under the shard's lock (join) */
		lose(r, &e, 0);
}

/* The link of rank, locked, or NULL (no backup any more, or no link). */
static struct link *link_of(struct replica *r, uint32_t rank)
{
	if (atomic_load(&r->lost) || !r->links || rank >= r->n_workers)
		return NULL;
	struct link *l = &r->links[rank];
	pthread_mutex_lock(&l->mu);
	if (!l->started || l->stop) {
		pthread_mutex_unlock(&l->mu);
		return NULL;
	}
	return l;
}

static int queue_grow(struct link *l, size_t n)
{
	if (l->q_cap - l->q_len >= n)
		return 0;
	size_t cap = l->q_cap ? l->q_cap : 1u << 16;
	while (cap - l->q_len < n)
		cap *= 2;
	uint8_t *b = realloc(l->q, cap);
	if (!b)
		return -1;
	l->q = b;
	l->q_cap = cap;
	return 0;
}

void replica_forward(struct replica *r, uint32_t rank, int type,
		     uint16_t flags, const uint8_t *payload, uint32_t len)
{
	struct link *l = link_of(r, rank);
	if (!l)
		return;
	while (l->q_len > LINK_QUEUE_MAX && !atomic_load(&r->lost))
		pthread_cond_wait(&l->cv, &l->mu);
	struct fwd f = { .len = len, .flags = flags, .type = (uint8_t)type };
	int oom = !atomic_load(&r->lost) && queue_grow(l, sizeof f + len);
	if (!oom && !atomic_load(&r->lost)) {
		memcpy(l->q + l->q_len, &f, sizeof f);
		memcpy(l->q + l->q_len + sizeof f, payload, len);
		l->q_len += sizeof f + len;
		l->queued += type == WIRE_PUSH; /* what an answer acknowledges */
		pthread_cond_signal(&l->cv);
	}
	pthread_mutex_unlock(&l->mu);
	if (oom) {
		boar_error e;
		boar_fail(&e, BOAR_ENOMEM, "out of memory for the frames to "
					   "forward");
		lose(r, &e, 1);
	}
}

uint64_t replica_ticket(struct replica *r, uint32_t rank)
{
	struct link *l = link_of(r, rank);
	if (!l)
		return 0;
	uint64_t t = l->queued > l->acked ? l->queued : 0;
	if (t > l->want) /* the thread has them queued, or asks already */
		l->want = t;
	pthread_mutex_unlock(&l->mu);
	return t;
}

uint64_t replica_acked(struct replica *r, uint32_t rank)
{
	struct link *l = link_of(r, rank);
	if (!l)
		return UINT64_MAX;
	uint64_t a = l->acked;
	pthread_mutex_unlock(&l->mu);
	return a;
}

int replica_alive(const struct replica *r)
{
	return !atomic_load(&r->lost);
}

void replica_free(struct replica *r)
{
	if (!r)
		return;
	/* each thread sends what was queued (a SHUTDOWN the workers sent,
	 * say) and ends */
	for (uint32_t i = 0; r->links && i < r->n_workers; i++) {
		struct link *l = &r->links[i];
		pthread_mutex_lock(&l->mu);
		l->stop = 1;
		pthread_cond_broadcast(&l->cv);
		pthread_mutex_unlock(&l->mu);
	}
	for (uint32_t i = 0; r->links && i < r->n_workers; i++) {
		struct link *l = &r->links[i];
		if (l->started)
			pthread_join(l->thread, NULL);
		ps_client_free(l->c);
		free(l->q);
		free(l->spare);
		pthread_cond_destroy(&l->cv);
		pthread_mutex_destroy(&l->mu);
	}
	free(r->links);
	free(r->addrs);
	pthread_mutex_destroy(&r->mu);
	free(r);
}
