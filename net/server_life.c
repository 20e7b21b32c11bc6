/* server_life.c - a shard's life: create (resume from the checkpoint and
 * the push log), run its lanes, checkpoint, report, free. The protocol on
 * the lanes is server.c's; what both share is server_int.h. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "net/checkpoint.h"
#include "net/replica.h"
#include "net/server_int.h"

void ps_logf(struct ps_server *s, const char *fmt, ...)
{
	if (!s->cfg.log)
		return;
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	s->cfg.log(s->cfg.log_ctx, line);
}

/* Every lane stops (from any lane's thread). */
void ps_stop_all(struct ps_server *s)
{
	atomic_store(&s->stopping, 1);
	for (uint32_t i = 0; i < s->n_lanes; i++)
		if (s->lanes[i].loop)
			net_loop_wake(s->lanes[i].loop);
}

/* ------------------------------------------------------------ the shard */

int ps_setup_shard(struct ps_server *s, uint64_t dim, uint32_t n_workers,
		   boar_error *err)
{
	ps_shard_range(dim, s->cfg.shard, s->cfg.n_shards, &s->lo, &s->hi);
	s->dim = dim;
	s->worker_conn = malloc(n_workers * sizeof *s->worker_conn);
	s->last_seq = calloc(n_workers, sizeof *s->last_seq);
	if (shard_w_init(&s->w, s->lo, s->hi) || !s->worker_conn ||
	    !s->last_seq ||
	    ssp_init(&s->ssp, n_workers, s->cfg.staleness,
		     s->cfg.heartbeat_timeout, net_now()))
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	ps_logf(s, "keys [%llu, %llu) in a %s store",
		(unsigned long long)s->lo, (unsigned long long)s->hi,
		shard_w_sparse(&s->w) ? "sparse (only keys pushed)" : "dense");
	for (uint32_t i = 0; i < n_workers; i++)
		s->worker_conn[i] = -1;
	s->n_workers = n_workers;
	s->have_workers = 1;
	return 0;
}

/* Called with s->mu held (or before the lanes run). */
int ps_checkpoint(struct ps_server *s, boar_error *err)
{
	if (!s->cfg.checkpoint_dir || !s->have_workers)
		return 0;
	struct ckpt c = {
		.shard = s->cfg.shard,
		.n_shards = s->cfg.n_shards,
		.dim = s->dim,
		.lo = s->lo,
		.hi = s->hi,
		.n_workers = s->n_workers,
		.max_staleness = s->ssp.max_served,
		.seqs = s->last_seq,
		.pushes = s->st.pushes,
		.w = s->w.w,
	};
	int sparse = shard_w_sparse(&s->w), rc = 0;
	uint64_t clocks[1024], *cl = clocks;
	if (s->n_workers > 1024 &&
	    !(cl = malloc(s->n_workers * sizeof *cl)))
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < s->n_workers; i++)
		cl[i] = s->ssp.w[i].clock |
			(s->ssp.w[i].state >= SSP_DEAD ? CKPT_FINISHED : 0);
	c.clocks = cl;
	shard_w_freeze(&s->w);
	if (sparse && shard_w_export(&s->w, &c.keys, &c.w, &c.n_pairs))
		rc = boar_fail(err, BOAR_ENOMEM, "out of memory");
	if (!rc)
		rc = ckpt_save(s->cfg.checkpoint_dir, &c, err);
	/* what the log held is in the checkpoint now */
	if (!rc && s->logging && pushlog_reset(&s->log))
		rc = boar_fail(err, BOAR_EIO, "%s: %s", s->log.path,
			       strerror(errno));
	shard_w_thaw(&s->w);
	if (sparse && c.keys) {
		free(c.keys);
		free(c.w);
	}
	if (cl != clocks)
		free(cl);
	if (!rc)
		s->dirty = 0;
	return rc;
}

/* ------------------------------------------------------------ lifecycle */

static int create_lanes(struct ps_server *s, boar_error *err)
{
	s->lanes = calloc(s->n_lanes, sizeof *s->lanes);
	if (!s->lanes)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < s->n_lanes; i++) {
		struct lane *ln = &s->lanes[i];
		ln->s = s;
		ln->idx = i;
		wire_out_init(&ln->out);
		/* a push is applied from its frame (on_push) before the
		 * loop reads on */
		ln->msg.borrow_push_vals = 1;
		ln->conns = calloc(s->n_conns, sizeof *ln->conns);
		if (!ln->conns)
			return boar_fail(err, BOAR_ENOMEM, "out of memory");
		struct net_loop_config lc = {
			.listen_fd = i ? -1 : s->cfg.listen_fd,
			.stop_fd = i ? -1 : s->cfg.stop_fd,
			.max_peers = s->n_conns,
			.tick_ms = 100,
			.frame_timeout = 10,
		};
		struct net_loop_ops ops = ps_lane_ops;
		if (i || s->n_lanes == 1)
			ops.route = NULL; /* only lane 0 deals */
		int rc = net_loop_create(&lc, &ops, ln, &ln->loop, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* Resumes from the checkpoint in cfg->checkpoint_dir, if there is one. */
static int resume(struct ps_server *s, boar_error *err)
{
	const struct ps_config *cfg = &s->cfg;
	struct ckpt c;
	int rc = ckpt_load(cfg->checkpoint_dir, cfg->shard, cfg->n_shards, &c,
			   err);
	if (rc)
		return rc < 0 ? rc : 0; /* an error, or no checkpoint yet */
	if (cfg->dim && cfg->dim != c.dim) {
		ckpt_free(&c);
		return boar_fail(err, BOAR_EMISMATCH,
				 "checkpoint has %llu keys, ps_config.dim "
				 "says %llu",
				 (unsigned long long)c.dim,
				 (unsigned long long)cfg->dim);
	}
	rc = ps_setup_shard(s, c.dim, c.n_workers, err);
	if (!rc && shard_w_load(&s->w, c.keys, c.w,
				c.keys ? c.n_pairs : c.hi - c.lo))
		rc = boar_fail(err, BOAR_ENOMEM, "out of memory");
	if (!rc) {
		/* Everyone is away until they reconnect: they keep their
		 * clocks and have a heartbeat timeout to come back. */
		double now = net_now();
		for (uint32_t i = 0; i < c.n_workers; i++) {
			uint64_t k = c.clocks[i];
			s->ssp.w[i].state =
				k & CKPT_FINISHED ? SSP_DONE : SSP_AWAY;
			s->ssp.w[i].clock = k & ~CKPT_FINISHED;
			s->ssp.w[i].since = now;
		}
		s->ssp.max_served = c.max_staleness;
		memcpy(s->last_seq, c.seqs, c.n_workers * sizeof *s->last_seq);
		s->st.pushes = c.pushes;
		ps_logf(s, "resumed from checkpoint: %llu keys [%llu, %llu), "
			 "%u workers",
		      (unsigned long long)c.dim, (unsigned long long)c.lo,
		      (unsigned long long)c.hi, c.n_workers);
	}
	ckpt_free(&c);
	return rc;
}

/* One record of the push log, replayed onto the checkpoint it follows
 * (checked like a frame from a peer: the file is not trusted either). */
static int replay_record(void *ctx, int kind, uint16_t flags, uint32_t rank,
			 uint64_t a, const uint8_t *payload, uint32_t len)
{
	struct ps_server *s = ctx;
	if (!s->have_workers || rank >= s->n_workers)
		return -1;
	struct ssp_worker *w = &s->ssp.w[rank];
	if (kind == PUSHLOG_CLOCK || kind == PUSHLOG_DONE) {
		if (a >= 1ull << 48)
			return -1;
		if (a > w->clock)
			w->clock = a;
		if (kind == PUSHLOG_DONE)
			w->state = SSP_DONE;
		return 0;
	}
	struct wire_hdr h = { WIRE_VERSION, WIRE_PUSH, flags, len };
	struct wire_msg *m = &s->replay_msg;
	/* a logged push carries its keys, as a list or a bitmap (a shard
	 * that logs takes no push that names a pull) */
	if (kind != PUSHLOG_PUSH || (flags & ~(WIRE_F_ALL & ~WIRE_F_PULLED)) ||
	    wire_decode(&h, payload, m) || m->seq != a)
		return -1;
	struct key_span ks = key_span_of(m);
	if (!in_range(s, &ks) || !all_finite(m->push_vals, m->n_vals))
		return -1;
	if (shard_w_add(&s->w, &ks, m->push_vals))
		return -1; /* out of memory for a sparse store */
	if (a > s->last_seq[rank])
		s->last_seq[rank] = a;
	s->st.pushes++;
	s->st.keys_pushed += m->n_keys;
	s->dirty = 1;
	return 0;
}

/* Replays the push log onto the checkpoint and keeps it open. */
static int open_log(struct ps_server *s, boar_error *err)
{
	uint64_t n;
	int rc = pushlog_open(&s->log, s->cfg.checkpoint_dir, s->cfg.shard,
			      s->cfg.n_shards, replay_record, s, &n, err);
	if (rc)
		return rc;
	s->logging = 1;
	if (s->log.cut)
		ps_logf(s, "%s: cut %llu bytes of a torn or damaged last record",
		      s->log.path, (unsigned long long)s->log.cut);
	if (n)
		ps_logf(s, "replayed %llu records of the push log (%llu pushes "
			 "in all)",
		      (unsigned long long)n, (unsigned long long)s->st.pushes);
	return 0;
}

int ps_server_create(const struct ps_config *cfg, struct ps_server **out,
		     boar_error *err)
{
	struct ps_server *s = calloc(1, sizeof *s);
	int rc;
	if (!s)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	s->cfg = *cfg;
	if (s->cfg.heartbeat_timeout <= 0)
		s->cfg.heartbeat_timeout = 10;
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	/* recursive: closing a peer under s->mu calls on_close */
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&s->mu, &ma);
	pthread_mutexattr_destroy(&ma);
	if (!s->cfg.n_shards || s->cfg.shard >= s->cfg.n_shards) {
		rc = boar_fail(err, BOAR_EINVAL, "shard %u of %u", cfg->shard,
			       cfg->n_shards);
		goto err;
	}
	if (cfg->threads > PS_MAX_THREADS) {
		rc = boar_fail(err, BOAR_EINVAL, "%u threads (at most %u)",
			       cfg->threads, PS_MAX_THREADS);
		goto err;
	}
	if (cfg->key) {
		memcpy(s->key, cfg->key, NET_KEY_LEN);
		s->auth = 1;
	}
	s->n_conns = 1024;
	s->n_lanes = cfg->threads ? cfg->threads : 1;
	if ((cfg->checkpoint_dir &&
	     ((rc = resume(s, err)) < 0 || (rc = open_log(s, err)))) ||
	    (rc = ps_replica_create(s, err)))
		goto err;
	if (!s->have_workers && cfg->dim)
		ps_shard_range(cfg->dim, cfg->shard, cfg->n_shards, &s->lo,
			       &s->hi);
	if ((rc = create_lanes(s, err)))
		goto err;
	s->next_ckpt = net_now() + s->cfg.checkpoint_every;
	*out = s;
	return 0;
err:
	ps_server_free(s);
	return rc;
}

static void *lane_main(void *arg)
{
	struct lane *ln = arg;
	ln->rc = net_loop_run(ln->loop, &ln->err);
	if (ln->rc)
		ps_stop_all(ln->s);
	return NULL;
}

int ps_server_run(struct ps_server *s, boar_error *err)
{
	int rc = 0;
	for (uint32_t i = 1; i < s->n_lanes && !rc; i++) {
		if (pthread_create(&s->lanes[i].thread, NULL, lane_main,
				   &s->lanes[i]))
			rc = boar_fail(err, BOAR_ENOMEM,
				       "cannot start shard thread %u", i);
		else
			s->lanes[i].started = 1;
	}
	if (!rc)
		rc = net_loop_run(s->lanes[0].loop, err);
	ps_stop_all(s);
	for (uint32_t i = 1; i < s->n_lanes; i++) {
		struct lane *ln = &s->lanes[i];
		if (!ln->started)
			continue;
		pthread_join(ln->thread, NULL);
		ln->started = 0;
		if (!rc && ln->rc) {
			rc = ln->rc;
			if (err)
				*err = ln->err;
		}
	}
	if (!rc && s->fatal) {
		if (err)
			*err = s->fatal_err;
		rc = s->fatal_err.code;
	}
	/* Always try to leave a checkpoint behind, even after an error. */
	boar_error e2;
	int crc = ps_checkpoint(s, rc ? &e2 : err);
	return rc ? rc : crc;
}

void ps_server_stats(const struct ps_server *cs, struct wire_stats *out)
{
	struct ps_server *s = (struct ps_server *)cs; /* for the mutex */
	LOCK(s);
	*out = s->st;
	out->max_staleness = s->ssp.max_served;
	out->bytes_in = out->bytes_out = 0;
	for (uint32_t i = 0; s->lanes && i < s->n_lanes; i++) {
		uint64_t in, o;
		if (!s->lanes[i].loop)
			continue;
		net_loop_bytes(s->lanes[i].loop, &in, &o);
		out->bytes_in += in;
		out->bytes_out += o;
	}
	if (s->have_workers) {
		uint64_t m = ssp_min_clock(&s->ssp);
		out->min_clock = m;
		out->live_workers = ssp_live(&s->ssp);
		out->dropped_workers = s->ssp.dropped;
	}
	UNLOCK(s);
}

void ps_server_free(struct ps_server *s)
{
	if (!s)
		return;
	/* first: its links' threads send what was queued and wake lanes */
	replica_free(s->rep);
	s->rep = NULL;
	for (uint32_t i = 0; s->lanes && i < s->n_lanes; i++) {
		struct lane *ln = &s->lanes[i];
		net_loop_free(ln->loop);
		if (ln->conns)
			for (unsigned k = 0; k < s->n_conns; k++) {
				net_session_end(&ln->conns[k].ses);
				kept_pulls_free(&ln->conns[k].pulls);
				ps_replica_drop_held(ln, k);
			}
		free(ln->conns);
		wire_msg_free(&ln->msg);
		wire_out_free(&ln->out);
	}
	free(s->lanes);
	for (size_t i = 0; i < s->n_pend; i++)
		free(s->pend[i].ks.a);
	free(s->pend);
	shard_w_free(&s->w);
	free(s->worker_conn);
	free(s->last_seq);
	if (s->logging)
		pushlog_close(&s->log);
	wire_msg_free(&s->replay_msg);
	if (s->have_workers)
		ssp_free(&s->ssp);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
