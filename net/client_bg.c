/* client_bg.c - a client's background thread (ps_client_start_async): it
 * sends the pushes, clocks and pulls asked ahead that the caller queues,
 * in the order queued, and reads the answers to a pull asked ahead as they
 * come, so that a worker sweeps while its values and deltas cross the
 * links (client.h).
 *
 * The thread runs the client's own code (client.c, client_push.c,
 * client_ahead.c): the same frames, reconnects, resends, failovers,
 * heartbeats and errors as a caller's thread would, one thread at a time.
 * The caller's thread touches the client's state only while the thread
 * has nothing left (client_bg_drain, called by every other request); in
 * between it only queues work and records its own pushes for the pull
 * asked ahead (client_ahead.c), which the thread never reads.
 *
 * Reading an answer while sends wait behind it could deadlock: a shard
 * holds a pull (the SSP rule) until this worker's CLOCK comes, and that
 * CLOCK is queued. So the thread reads an answer only as far as it has
 * come: waiting for a frame's first byte, a job queued wakes it (the wake
 * pipe, recv_all's INTERRUPTED), it runs the job and reads on after.
 * A connection that breaks while an answer is read is left for the
 * caller's collect, which asks again at its clock once the thread has sent
 * everything queued (the answer then holds this worker's pushes, as
 * client.h says); any other failure is the thread's sticky error, which
 * every later call returns (with the shard's name, as the client's errors
 * have).
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "net/client_int.h"

enum job_type { JOB_PUSH, JOB_CLOCK, JOB_AHEAD };

struct job {
	enum job_type type;
	int buf; /* JOB_PUSH: which push buffer */
	const uint64_t *keys;
	uint32_t n;
	uint64_t clock; /* JOB_AHEAD: the clock it is for */
};

/* A push's keys and deltas, copied: the caller may reuse its own. The
 * copy is also the record of the push for a pull asked ahead (pinned:
 * kept until that pull is collected), so a push is copied once. */
struct push_buf {
	uint64_t *keys;
	float *vals;
	uint32_t n, cap;
	int busy, pinned;
	/* ps_client_push_pulled: the pull whose keys these are (n_shards),
	 * as the caller collected it (the thread may have read the next
	 * clock's answers since) */
	struct pulled_ref *pulled;
	int has_pulled;
};

/* What became of a shard's answer to the pull asked ahead. */
enum answer { ANS_NONE, ANS_WAIT, ANS_GOT, ANS_HELD, ANS_LOST };

#define QUEUE 16
/* a push being sent, the next one queued; at most BUFS - 1 pinned */
#define BUFS 3

struct client_bg {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	int wake[2]; /* a byte written per job queued */
	struct job q[QUEUE];
	unsigned head, len;
	int running; /* a job taken off the queue and not finished */
	int stop;
	int rc;      /* the first failure, sticky */
	boar_error err;
	struct push_buf buf[BUFS];
	uint64_t clock;   /* the caller's: the client's once all is sent */
	int asked;        /* the pull ahead queued last went out */
	uint32_t waiting; /* answers still to read */
	uint8_t *answer;  /* enum answer, per shard */
	float *vals;      /* the answers' values, keys' order */
	uint32_t vals_cap;
};

static void drain_pipe(int fd)
{
	uint8_t junk[64];
	while (read(fd, junk, sizeof junk) > 0)
		;
}

/* The first failure: kept, and the work left dropped. Under mu. */
static void fail(struct client_bg *b, int rc, const boar_error *e)
{
	if (!b->rc) {
		b->rc = rc;
		b->err = *e;
	}
	b->len = 0;
	b->waiting = 0;
	for (int i = 0; i < BUFS; i++)
		b->buf[i].busy = b->buf[i].pinned = 0;
	pthread_cond_broadcast(&b->done);
}

/* The sticky error into *err. Under mu. */
static int sticky(const struct client_bg *b, boar_error *err)
{
	if (b->rc && err)
		*err = b->err;
	return b->rc;
}

static int run_job(struct ps_client *c, const struct job *j, boar_error *e)
{
	struct client_bg *b = c->bg;
	switch (j->type) {
	case JOB_PUSH: {
		struct push_buf *p = &b->buf[j->buf];
		return client_push_send(c, p->keys, p->vals, p->n,
					p->has_pulled ? p->pulled : NULL, e);
	}
	case JOB_CLOCK:
		return client_clock_send(c, e);
	case JOB_AHEAD: {
		int rc = client_ahead_ask(c, j->keys, j->n, j->clock, e);
		if (rc)
			return rc;
		uint32_t waiting = 0;
		for (uint32_t i = 0; i < c->cfg.n_shards; i++) {
			const struct shard *s = &c->sh[i];
			b->answer[i] = s->ahead_pending ? ANS_WAIT
				       : s->ahead_lost  ? ANS_LOST
							: ANS_NONE;
			waiting += s->ahead_pending;
		}
		pthread_mutex_lock(&b->mu);
		b->waiting = waiting;
		b->asked = 1;
		if (!waiting)
			pthread_cond_broadcast(&b->done);
		pthread_mutex_unlock(&b->mu);
		return 0;
	}
	}
	return 0;
}

/* Whether a byte of s's next frame is there to read. */
static int readable(const struct shard *s)
{
	struct pollfd p = { .fd = s->fd, .events = POLLIN };
	return s->fd < 0 || poll(&p, 1, 0) != 0;
}

/* Where the answers of the pull asked ahead are decoded: the caller's
 * place, or the thread's buffer. */
static float *answers_at(const struct ps_client *c)
{
	return c->ahead.dest ? c->ahead.dest : c->bg->vals;
}

/* Reads the answers of the pull asked ahead, shard by shard, until all
 * came or a job is queued; with only_come, only those that started to
 * come (the caller waits for them, not for the jobs queued). @return 0,
 * INTERRUPTED, or an error. */
static int read_answers(struct ps_client *c, int only_come, boar_error *e)
{
	struct client_bg *b = c->bg;
	for (uint32_t i = 0; i < c->cfg.n_shards; i++) {
		struct shard *s = &c->sh[i];
		if (b->answer[i] != ANS_WAIT ||
		    (only_come && s->ahead_pending && !readable(s)))
			continue;
		/* a job's reconnect since took the request with the old
		 * connection: nothing to read */
		int rc = RETRY;
		const struct pull_arg *p = &c->ahead.arg[i];
		float *vals = answers_at(c);
		c->msg.into = vals + p->a; /* the answer decoded in place */
		c->msg.n_into = p->b - p->a;
		if (s->ahead_pending) {
			c->wake_fd = b->wake[0];
			rc = client_recv_msg(c, s, -1, e);
			c->wake_fd = -1;
		}
		enum answer got = ANS_LOST; /* the caller's collect asks again */
		if (!rc) {
			rc = client_take_pull_reply(c, i, p, vals, e);
			got = c->msg.flags & WIRE_F_HELD ? ANS_HELD : ANS_GOT;
		} else if (rc == RETRY) {
			rc = 0;
		}
		c->msg.into = NULL;
		c->msg.n_into = 0;
		if (rc) /* INTERRUPTED too */
			return rc;
		pthread_mutex_lock(&b->mu);
		b->answer[i] = (uint8_t)got;
		b->waiting--;
		if (!b->waiting)
			pthread_cond_broadcast(&b->done);
		pthread_mutex_unlock(&b->mu);
	}
	return 0;
}

static void *bg_main(void *arg)
{
	struct ps_client *c = arg;
	struct client_bg *b = c->bg;
	for (;;) {
		drain_pipe(b->wake[0]);
		pthread_mutex_lock(&b->mu);
		while (!b->stop && !b->len && !b->waiting)
			pthread_cond_wait(&b->work, &b->mu);
		if (b->stop) {
			pthread_mutex_unlock(&b->mu);
			return NULL;
		}
		boar_error e = { 0 };
		int rc = 0;
		if (b->len && b->waiting) {
			pthread_mutex_unlock(&b->mu);
			rc = read_answers(c, 1, &e);
			pthread_mutex_lock(&b->mu);
			if (rc == INTERRUPTED)
				rc = 0;
		}
		if (!rc && b->len) {
			struct job j = b->q[b->head];
			b->head = (b->head + 1) % QUEUE;
			b->len--;
			b->running = 1;
			pthread_mutex_unlock(&b->mu);
			rc = run_job(c, &j, &e);
			pthread_mutex_lock(&b->mu);
			b->running = 0;
			if (j.type == JOB_PUSH)
				b->buf[j.buf].busy = 0;
		} else if (!rc && b->waiting) {
			pthread_mutex_unlock(&b->mu);
			rc = read_answers(c, 0, &e);
			pthread_mutex_lock(&b->mu);
			if (rc == INTERRUPTED)
				rc = 0;
		}
		if (rc)
			fail(b, rc, &e);
		pthread_cond_broadcast(&b->done);
		pthread_mutex_unlock(&b->mu);
	}
}

static void bg_free(struct client_bg *b)
{
	pthread_mutex_destroy(&b->mu);
	pthread_cond_destroy(&b->work);
	pthread_cond_destroy(&b->done);
	close(b->wake[0]);
	close(b->wake[1]);
	for (int i = 0; i < BUFS; i++) {
		free(b->buf[i].keys);
		free(b->buf[i].vals);
		free(b->buf[i].pulled);
	}
	free(b->answer);
	free(b->vals);
	free(b);
}

int ps_client_start_async(struct ps_client *c, boar_error *err)
{
	if (c->bg || c->link)
		return 0;
	struct client_bg *b = calloc(1, sizeof *b);
	if (!b || !(b->answer = calloc(c->cfg.n_shards, 1))) {
		free(b);
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	}
	if (pipe2(b->wake, O_CLOEXEC | O_NONBLOCK)) {
		free(b->answer);
		free(b);
		return boar_fail(err, BOAR_ENET, "no pipe for the client's "
				 "background thread");
	}
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->work, NULL);
	pthread_cond_init(&b->done, NULL);
	b->clock = c->clock;
	c->bg = b;
	if (pthread_create(&b->thread, NULL, bg_main, c)) {
		c->bg = NULL;
		bg_free(b);
		return boar_fail(err, BOAR_ENOMEM,
				 "no background thread for the client");
	}
	return 0;
}

/* Stops the thread where it is (between jobs, or waiting for an
 * answer) and frees it: the client is the caller's again. */
void client_bg_stop(struct ps_client *c)
{
	struct client_bg *b = c->bg;
	if (!b)
		return;
	pthread_mutex_lock(&b->mu);
	b->stop = 1;
	pthread_cond_signal(&b->work);
	pthread_mutex_unlock(&b->mu);
	if (write(b->wake[1], "", 1) < 0) {
		/* full: a byte is there already */
	}
	pthread_join(b->thread, NULL);
	c->bg = NULL;
	c->wake_fd = -1;
	bg_free(b);
}

/* Queues j (waits while the queue is full). Under mu. @return 0 or the
 * sticky error. */
static int put(struct client_bg *b, struct job j, boar_error *err)
{
	while (!b->rc && b->len == QUEUE)
		pthread_cond_wait(&b->done, &b->mu);
	if (b->rc)
		return sticky(b, err);
	b->q[(b->head + b->len) % QUEUE] = j;
	b->len++;
	pthread_cond_signal(&b->work);
	if (write(b->wake[1], "", 1) < 0) {
		/* full: the thread will see the queue anyway */
	}
	return 0;
}

static int grow_buf(struct push_buf *p, uint32_t n)
{
	if (n <= p->cap)
		return 0;
	uint64_t *k = realloc(p->keys, (size_t)n * sizeof *k);
	if (!k)
		return -1;
	p->keys = k;
	float *v = realloc(p->vals, (size_t)n * sizeof *v);
	if (!v)
		return -1;
	p->vals = v;
	p->cap = n;
	return 0;
}

/* A buffer neither being sent nor pinned, or -1. Under mu. */
static int free_buf(const struct client_bg *b)
{
	for (int i = 0; i < BUFS; i++)
		if (!b->buf[i].busy && !b->buf[i].pinned)
			return i;
	return -1;
}

static int pinned(const struct client_bg *b)
{
	int n = 0;
	for (int i = 0; i < BUFS; i++)
		n += b->buf[i].pinned;
	return n;
}

/* keys and deltas into p, on the worker's threads (12 bytes a key: a
 * dense clock's 10 MB took a thread a millisecond or more). */
static void copy_push(struct push_buf *p, const uint64_t *keys,
		      const float *deltas, uint32_t n, int threads)
{
	int parts = threads > 1 && n >= 65536 ? threads : 1;
#pragma omp parallel for num_threads(parts) schedule(static) if (parts > 1)
	for (int t = 0; t < parts; t++) {
		size_t b = (size_t)n * t / parts, e = (size_t)n * (t + 1) / parts;
		memcpy(p->keys + b, keys + b, (e - b) * sizeof *keys);
		memcpy(p->vals + b, deltas + b, (e - b) * sizeof *deltas);
	}
}

/* The pull a push names into p (NULL: none). @return 0 or -1 out of
 * memory. */
static int set_pulled(struct push_buf *p, const struct pulled_ref *pulled,
		      uint32_t n_shards)
{
	p->has_pulled = pulled != NULL;
	if (!pulled)
		return 0;
	if (!p->pulled && !(p->pulled = malloc(n_shards * sizeof *p->pulled)))
		return -1;
	memcpy(p->pulled, pulled, n_shards * sizeof *p->pulled);
	return 0;
}

int client_bg_push(struct ps_client *c, const uint64_t *keys,
		   const float *deltas, uint32_t n,
		   const struct pulled_ref *pulled, boar_error *err)
{
	struct client_bg *b = c->bg;
	struct push_buf *q = b->buf;
	pthread_mutex_lock(&b->mu);
	/* BUFS - 1 buffers at most are pinned (by the pull ahead still
	 * out), so another comes free once sent */
	int k;
	while (!b->rc && (k = free_buf(b)) < 0)
		pthread_cond_wait(&b->done, &b->mu);
	if (b->rc) {
		int rc = sticky(b, err);
		pthread_mutex_unlock(&b->mu);
		return rc;
	}
	int pin = c->ahead.on && pinned(b) < BUFS - 1;
	q[k].busy = 1;
	q[k].pinned = pin;
	pthread_mutex_unlock(&b->mu);
	/* the buffer is ours until queued: the thread reads only queued
	 * ones */
	struct push_buf *p = &q[k];
	int rc = grow_buf(p, n) || set_pulled(p, pulled, c->cfg.n_shards)
			 ? boar_fail(err, BOAR_ENOMEM, "out of memory")
			 : 0;
	if (!rc) {
		copy_push(p, keys, deltas, n, c->cfg.threads);
		p->n = n;
	}
	/* pushes beyond the pins (none in the drivers) are recorded by a
	 * copy of their own */
	if (!rc && c->ahead.on &&
	    (pin ? client_ahead_record_ref(c, p->keys, p->vals, n)
		 : client_ahead_record(c, keys, deltas, n)))
		rc = boar_fail(err, BOAR_ENOMEM, "out of memory");
	pthread_mutex_lock(&b->mu);
	if (rc)
		p->busy = p->pinned = 0;
	else
		rc = put(b, (struct job){ .type = JOB_PUSH, .buf = k }, err);
	pthread_mutex_unlock(&b->mu);
	return rc;
}

/* The pull ahead is collected: its record of the pushes goes, and the
 * buffer it pinned may take the next push. */
static void unpin(struct client_bg *b)
{
	pthread_mutex_lock(&b->mu);
	for (int i = 0; i < BUFS; i++)
		b->buf[i].pinned = 0;
	pthread_cond_broadcast(&b->done);
	pthread_mutex_unlock(&b->mu);
}

int client_bg_clock(struct ps_client *c, boar_error *err)
{
	struct client_bg *b = c->bg;
	pthread_mutex_lock(&b->mu);
	int rc = put(b, (struct job){ .type = JOB_CLOCK }, err);
	if (!rc)
		b->clock++;
	pthread_mutex_unlock(&b->mu);
	return rc;
}

/* The pull ahead j goes before every job still queued (the pushes and
 * clocks of the clock before, which a shard would apply before it could
 * answer): the pushes it jumps over are recorded as sent after it, by
 * reference where a pin is left, and it carries the caller's next clock
 * (the CLOCKs it jumps over have not moved the client's). Under mu, with
 * room in the queue. @return 0 or -1 out of memory. */
static int put_first(struct ps_client *c, struct job j)
{
	struct client_bg *b = c->bg;
	for (unsigned i = 0; i < b->len; i++) {
		const struct job *q = &b->q[(b->head + i) % QUEUE];
		struct push_buf *p = &b->buf[q->buf];
		if (q->type != JOB_PUSH)
			continue;
		int pin = !p->pinned && pinned(b) < BUFS - 1;
		if (pin ? client_ahead_record_ref(c, p->keys, p->vals, p->n)
			: client_ahead_record(c, p->keys, p->vals, p->n))
			return -1;
		p->pinned |= pin;
	}
	b->head = (b->head + QUEUE - 1) % QUEUE;
	b->q[b->head] = j;
	b->len++;
	pthread_cond_signal(&b->work);
	if (write(b->wake[1], "", 1) < 0) {
		/* full: the thread will see the queue anyway */
	}
	return 0;
}

/* The answers' values land in the caller's place (ps_client_pull_ahead_into)
 * or in b->vals, the keys' order: grown here, in the caller's thread,
 * while no answer is awaited (the collect before this one waited for all
 * of them). */
int client_bg_ahead(struct ps_client *c, const uint64_t *keys, uint32_t n,
		    boar_error *err)
{
	struct client_bg *b = c->bg;
	if (!c->ahead.dest && n > b->vals_cap) {
		float *v = realloc(b->vals, (size_t)n * sizeof *v);
		if (!v)
			return boar_fail(err, BOAR_ENOMEM, "out of memory");
		b->vals = v;
		b->vals_cap = n;
	}
	pthread_mutex_lock(&b->mu);
	while (!b->rc && b->len == QUEUE)
		pthread_cond_wait(&b->done, &b->mu);
	int rc = sticky(b, err);
	if (!rc) {
		b->asked = 0;
		struct job j = { .type = JOB_AHEAD, .keys = keys, .n = n,
				 .clock = b->clock + 1 };
		if (put_first(c, j))
			rc = boar_fail(err, BOAR_ENOMEM, "out of memory");
	}
	pthread_mutex_unlock(&b->mu);
	return rc;
}

int client_bg_drain(const struct ps_client *c, boar_error *err)
{
	struct client_bg *b = c->bg;
	if (!b)
		return 0;
	pthread_mutex_lock(&b->mu);
	while (!b->rc && (b->len || b->running || b->waiting))
		pthread_cond_wait(&b->done, &b->mu);
	int rc = sticky(b, err);
	pthread_mutex_unlock(&b->mu);
	return rc;
}

int client_bg_ahead_ready(const struct ps_client *c)
{
	struct client_bg *b = c->bg;
	pthread_mutex_lock(&b->mu);
	int ready = !b->rc && b->asked && !b->waiting;
	for (uint32_t i = 0; ready && i < c->cfg.n_shards; i++)
		ready = b->answer[i] == ANS_GOT || b->answer[i] == ANS_NONE;
	pthread_mutex_unlock(&b->mu);
	return ready;
}

/* Waits for the answers only (pushes and clocks queued before may still
 * be on their way: the answers either came before them, and the client
 * adds its own recorded pushes, or were held for this worker's clock and
 * count them). A shard whose connection broke is asked again, as the
 * client does without the thread, once everything queued is sent. */
int client_bg_collect(struct ps_client *c, const uint64_t *keys, uint32_t n,
		      float *vals, boar_error *err)
{
	struct client_bg *b = c->bg;
	struct pull_ahead *a = &c->ahead;
	pthread_mutex_lock(&b->mu);
	while (!b->rc && (!b->asked || b->waiting))
		pthread_cond_wait(&b->done, &b->mu);
	int rc = sticky(b, err), lost = 0;
	pthread_mutex_unlock(&b->mu);
	a->on = 0;
	if (rc) {
		unpin(b);
		client_forget_pulled(c);
		return rc;
	}
	for (uint32_t i = 0; i < c->cfg.n_shards; i++)
		lost |= b->answer[i] == ANS_LOST;
	if (lost && (rc = client_bg_drain(c, err)))
		return rc;
	int added = 0;
	for (uint32_t i = 0; !rc && i < c->cfg.n_shards; i++) {
		struct pull_arg *p = &a->arg[i];
		int redone;
		added |= b->answer[i] == ANS_GOT;
		switch (b->answer[i]) {
		case ANS_GOT:
		case ANS_HELD: /* a held answer counts the pushes already */
			client_ahead_finish_vals(a, keys, p->a, p->b,
						 answers_at(c),
						 vals, b->answer[i] == ANS_GOT,
						 c->cfg.threads);
			break;
		case ANS_LOST:
			rc = client_pull_reply(c, i, p, vals, &redone, err);
			c->sh[i].ahead_pending = c->sh[i].ahead_lost = 0;
			break;
		default:
			break;
		}
	}
	if (added)
		c->n.keys_added += client_ahead_own_keys(a);
	unpin(b);
	if (!rc) {
		c->n.keys_pulled += n;
		client_note_pulled(c, a->arg);
	} else {
		client_forget_pulled(c);
	}
	return rc;
}
