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

struct link {
	pthread_mutex_t mu;
	struct ps_client *c;  /* NULL: not open */
	int dirty;            /* pushes forwarded since the backup last
				 answered */
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

/* A link closes for good. It first asks the backup to stop (if the
 * link still carries anything): a backup dropped from the chain misses
 * what follows, and must not take over when its links close, nor answer
 * a worker's probe (client.h) while this primary serves. Called with the
 * link's lock held. */
static void close_link(struct link *l)
{
	ps_client_stop_link(l->c);
	ps_client_free(l->c);
	l->c = NULL;
}

/* The backup is out of the chain: said once, every link closed as it is
 * next touched. Called with the link's lock held. */
static void lose(struct replica *r, struct link *l, const boar_error *e)
{
	if (!atomic_exchange(&r->lost, 1))
		logf_(r, "backup %s lost (%s): going on without a replica "
			 "(and asking it to stop); pushes acknowledged from "
			 "now on live in this process only",
		      r->addr, e->message[0] ? e->message : "no reason");
	close_link(l);
}

/* The link of rank, locked, or NULL (no backup any more, or no link). */
static struct link *link_of(struct replica *r, uint32_t rank)
{
	if (!r->links || rank >= r->n_workers)
		return NULL;
	struct link *l = &r->links[rank];
	pthread_mutex_lock(&l->mu);
	if (atomic_load(&r->lost) && l->c)
		close_link(l);
	if (!l->c) {
		pthread_mutex_unlock(&l->mu);
		return NULL;
	}
	return l;
}

static int size_links(struct replica *r, uint32_t n_workers, uint64_t dim)
{
	if (r->links)
		return n_workers == r->n_workers && dim == r->dim ? 0 : -1;
	r->links = calloc(n_workers, sizeof *r->links);
	if (!r->links)
		return -1;
	for (uint32_t i = 0; i < n_workers; i++)
		pthread_mutex_init(&r->links[i].mu, NULL);
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
	if (!l->c) {
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
		if (ps_client_link(&cc, r->cfg.shard, clock, &l->c, &e))
			lose(r, l, &e);
	}
	pthread_mutex_unlock(&l->mu);
}

void replica_forward(struct replica *r, uint32_t rank, int type,
		     uint16_t flags, const uint8_t *payload, uint32_t len)
{
	struct link *l = link_of(r, rank);
	if (!l)
		return;
	boar_error e = { 0 };
	if (ps_client_forward(l->c, r->cfg.shard, type, flags, payload, len,
			      &e))
		lose(r, l, &e);
	else if (type == WIRE_PUSH) /* what an answer acknowledges */
		l->dirty = 1;
	pthread_mutex_unlock(&l->mu);
}

void replica_sync(struct replica *r, uint32_t rank)
{
	struct link *l = link_of(r, rank);
	if (!l)
		return;
	if (l->dirty) {
		struct wire_stats st;
		boar_error e = { 0 };
		/* answered after every frame sent before it */
		if (ps_client_stats(l->c, r->cfg.shard, &st, &e))
			lose(r, l, &e);
		else
			l->dirty = 0;
	}
	pthread_mutex_unlock(&l->mu);
}

int replica_alive(const struct replica *r)
{
	return !atomic_load(&r->lost);
}

void replica_free(struct replica *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; r->links && i < r->n_workers; i++) {
		ps_client_free(r->links[i].c);
		pthread_mutex_destroy(&r->links[i].mu);
	}
	free(r->links);
	free(r->addrs);
	pthread_mutex_destroy(&r->mu);
	free(r);
}
