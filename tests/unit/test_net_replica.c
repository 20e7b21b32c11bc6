/* test_net_replica.c - chain replication of a shard (net/replica.h).
 *
 * Forward, then acknowledge: a real primary with a scripted backup on a
 * raw socket. The worker pushes three numbered pushes and pulls; the
 * backup must see the link's HELLO marked WIRE_F_REPLICA, the pushes with
 * the worker's own numbers and values, and STATS after them, and the
 * worker's pull must not be answered while the backup sits on the
 * first. A backup whose answer is garbage is lost, with its address in
 * the log, and the primary goes on alone.
 *
 * Take-over: a real backup with a scripted primary. It refuses a worker
 * (WIRE_ERR_STANDBY) before and while a link lives, takes the link's
 * pushes, takes over when the link closes, and then a worker joins with
 * READY saying the last push it holds, pulls their sum, and a link may
 * not come back. A shard that is not a backup refuses a link.
 *
 * Pipelined: a push is acknowledged by the backup without waiting for an
 * answer to need it; while the backup sits on worker 0's STATS, the
 * primary's one lane still serves worker 1 (forwards, acknowledges,
 * answers).
 *
 * A primary gone silent (no answer, connection open): the worker asks
 * the backup every 2 s while it waits; it stays while the backup still
 * has the primary's link, and goes over once the link has closed.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "net_testutil.h"
#include "testutil.h"

#define DIM 100

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* -------------------------------------------- primary, scripted backup */

struct backup_script {
	int lfd;
	int garble;            /* answer the STATS with garbage */
	atomic_int *pulled;    /* set by the worker once its pull returned */
	int hello_flag_ok;
	uint64_t seqs[8];
	float vals[8];
	int n_push;
	int pulled_before_ack; /* the pull came back before our STATS reply */
	int stats_seen;
};

static void *scripted_backup(void *arg)
{
	struct backup_script *sc = arg;
	struct net_test_peer p;
	net_test_peer_init(&p);
	if (net_test_peer_accept(&p, sc->lfd, DIM, 0, 0))
		goto out;
	sc->hello_flag_ok = (p.m.flags & WIRE_F_REPLICA) && p.m.rank == 0;
	while (!net_test_peer_read(&p)) {
		if (p.m.type == WIRE_PUSH && sc->n_push < 8) {
			sc->seqs[sc->n_push] = p.m.seq;
			sc->vals[sc->n_push++] = p.m.n_vals ? p.m.vals[0] : -1;
		} else if (p.m.type == WIRE_STATS && !sc->stats_seen) {
			sc->stats_seen = 1;
			sleep_ms(300); /* the worker's answer must wait */
			sc->pulled_before_ack = atomic_load(sc->pulled);
			if (sc->garble) {
				static const uint8_t junk[16] = "not a frame!";
				if (write(p.fd, junk, sizeof junk) < 0)
					perror("write");
			} else {
				net_test_peer_answer_stats(&p);
			}
		} else if (p.m.type == WIRE_STATS) {
			net_test_peer_answer_stats(&p);
		}
	}
out:
	net_test_peer_free(&p);
	return NULL;
}

struct log_buf {
	pthread_mutex_t mu;
	char text[4096];
};

static void keep_log(void *ctx, const char *line)
{
	struct log_buf *b = ctx;
	pthread_mutex_lock(&b->mu);
	size_t n = strlen(b->text);
	snprintf(b->text + n, sizeof b->text - n, "%s\n", line);
	pthread_mutex_unlock(&b->mu);
}

static void test_forward_then_ack(int garble)
{
	unsigned bport;
	atomic_int pulled = 0;
	struct backup_script sc = { .lfd = net_test_listen(&bport),
				    .garble = garble, .pulled = &pulled };
	pthread_t t;
	pthread_create(&t, NULL, scripted_backup, &sc);
	char baddr[64];
	snprintf(baddr, sizeof baddr, "127.0.0.1:%u", bport);
	struct log_buf lb = { .mu = PTHREAD_MUTEX_INITIALIZER };
	struct ps_config pc = { .shard = 0, .n_shards = 1,
				.staleness = SSP_INF, .backup = baddr,
				.log = keep_log, .log_ctx = &lb };
	struct net_test_shard sh;
	boar_error err;
	if (net_test_shard_start(&sh, pc)) {
		CHECK(0, "primary did not start");
		return;
	}
	struct ps_client *c = net_test_client(sh.port, 0, 1, DIM, NULL, 5,
					      &err);
	CHECK(c != NULL, "connect: %s", err.message);
	if (c) {
		uint64_t k = 7;
		for (int i = 1; i <= 3; i++) {
			float v = (float)i;
			CHECK(ps_client_push(c, &k, &v, 1, &err) == 0,
			      "push %d", i);
		}
		float got = 0;
		CHECK(ps_client_pull(c, &k, 1, &got, &err) == 0, "pull: %s",
		      err.message);
		atomic_store(&pulled, 1);
		CHECK(got == 6, "pulled %g, want 6", got);
		ps_client_free(c);
	}
	net_test_shard_stop(&sh); /* closes the link: the script ends */
	pthread_join(t, NULL);
	close(sc.lfd);
	CHECK(sc.hello_flag_ok, "the link's HELLO is not marked a replica "
	      "of worker 0");
	/* (a backup lost at its first STATS, which may come after the first
	 * push, gets no more) */
	int want = garble ? sc.n_push : 3;
	CHECK(sc.n_push == want && sc.n_push >= 1 && sc.seqs[0] == 1 &&
	      sc.vals[0] == 1 &&
	      (want < 3 || (sc.seqs[1] == 2 && sc.seqs[2] == 3 &&
			    sc.vals[2] == 3)),
	      "the backup got %d pushes (seqs %llu %llu %llu)", sc.n_push,
	      (unsigned long long)sc.seqs[0], (unsigned long long)sc.seqs[1],
	      (unsigned long long)sc.seqs[2]);
	CHECK(sc.stats_seen, "the primary answered without asking the "
	      "backup");
	CHECK(!sc.pulled_before_ack, "the worker's pull was answered before "
	      "the backup held its pushes");
	if (garble) {
		CHECK(strstr(lb.text, "lost") && strstr(lb.text, baddr),
		      "no line naming the lost backup %s in:\n%s", baddr,
		      lb.text);
	} else {
		CHECK(!strstr(lb.text, "lost"), "backup lost:\n%s", lb.text);
	}
}

/* ------------------------------- pipelined: one lane, two workers */

/* A scripted backup of two links: it sits on rank 0's first STATS until
 * `release` (or 3 s), and answers rank 1's at once. */
struct two_links {
	int lfd;
	struct net_test_peer p[2];
	pthread_t t[2];
	atomic_int stats0_seen, release, timed_out;
};

struct link_arg {
	struct two_links *tl;
	int i;
};

static void *two_links_link(void *arg)
{
	struct link_arg *a = arg;
	struct two_links *tl = a->tl;
	struct net_test_peer *p = &tl->p[a->i];
	int rank = (int)p->m.rank, sat = 0;
	while (!net_test_peer_read(p)) {
		if (p->m.type != WIRE_STATS)
			continue;
		if (rank == 0 && !sat) {
			sat = 1;
			atomic_store(&tl->stats0_seen, 1);
			int ms = 0;
			while (!atomic_load(&tl->release) && ms < 3000) {
				sleep_ms(5);
				ms += 5;
			}
			atomic_store(&tl->timed_out, ms >= 3000);
		}
		net_test_peer_answer_stats(p);
	}
	return NULL;
}

static void *two_links_accept(void *arg)
{
	struct two_links *tl = arg;
	static struct link_arg la[2];
	for (int i = 0; i < 2; i++) {
		if (net_test_peer_accept(&tl->p[i], tl->lfd, DIM, 0, 0))
			return NULL;
		la[i] = (struct link_arg){ tl, i };
		pthread_create(&tl->t[i], NULL, two_links_link, &la[i]);
	}
	return NULL;
}

struct pull_arg {
	struct ps_client *c;
	uint64_t key;
	float got;
	int rc;
	atomic_int done;
};

static void *pull_one(void *arg)
{
	struct pull_arg *a = arg;
	boar_error err;
	a->rc = ps_client_pull(a->c, &a->key, 1, &a->got, &err);
	atomic_store(&a->done, 1);
	return NULL;
}

/* A forwarded push is asked to be acknowledged at once. While the backup
 * has not acknowledged worker 0's push, worker 0's answer waits, and the
 * shard's one lane serves worker 1 meanwhile: its push, forwarded,
 * acknowledged and answered before worker 0's. */
static void test_pipelined(void)
{
	unsigned bport;
	struct two_links tl = { .lfd = net_test_listen(&bport) };
	net_test_peer_init(&tl.p[0]);
	net_test_peer_init(&tl.p[1]);
	pthread_t at;
	pthread_create(&at, NULL, two_links_accept, &tl);
	char baddr[64];
	snprintf(baddr, sizeof baddr, "127.0.0.1:%u", bport);
	struct ps_config pc = { .shard = 0, .n_shards = 1, .threads = 1,
				.staleness = SSP_INF, .backup = baddr };
	struct net_test_shard sh;
	boar_error err;
	if (net_test_shard_start(&sh, pc)) {
		CHECK(0, "primary did not start");
		return;
	}
	struct ps_client *w0 = net_test_client(sh.port, 0, 2, DIM, NULL, 5,
					       &err);
	struct ps_client *w1 = net_test_client(sh.port, 1, 2, DIM, NULL, 5,
					       &err);
	CHECK(w0 && w1, "connect: %s", err.message);
	pthread_join(at, NULL);
	if (w0 && w1) {
		uint64_t k0 = 7, k1 = 8;
		float one = 1, two = 2, got = 0;
		CHECK(ps_client_push(w0, &k0, &one, 1, &err) == 0, "push 0");
		/* asked at once, before any answer waits for it */
		for (int ms = 0; !atomic_load(&tl.stats0_seen) && ms < 3000;
		     ms += 5)
			sleep_ms(5);
		CHECK(atomic_load(&tl.stats0_seen), "the backup was not asked "
		      "to acknowledge worker 0's push");
		struct pull_arg pa = { .c = w0, .key = k0 };
		pthread_t pt;
		pthread_create(&pt, NULL, pull_one, &pa);
		sleep_ms(50); /* its pull is in, and kept */
		CHECK(ps_client_push(w1, &k1, &two, 1, &err) == 0, "push 1");
		CHECK(ps_client_pull(w1, &k1, 1, &got, &err) == 0, "pull 1: %s",
		      err.message);
		int w0_answered = atomic_load(&pa.done);
		int held = !atomic_load(&tl.release) &&
			   !atomic_load(&tl.timed_out);
		atomic_store(&tl.release, 1);
		pthread_join(pt, NULL);
		CHECK(got == 2, "worker 1 pulled %g, want 2", got);
		CHECK(held, "worker 1's answer waited for the backup's round "
		      "trip of worker 0 (the lane blocked)");
		CHECK(!w0_answered, "worker 0 was answered before the backup "
		      "held its push");
		CHECK(pa.rc == 0 && pa.got == 1, "worker 0 pulled %g (rc %d), "
		      "want 1", pa.got, pa.rc);
	}
	ps_client_free(w0);
	ps_client_free(w1);
	net_test_shard_stop(&sh);
	for (int i = 0; i < 2; i++) {
		if (tl.p[i].fd >= 0)
			pthread_join(tl.t[i], NULL);
		net_test_peer_free(&tl.p[i]);
	}
	close(tl.lfd);
}

/* ---------------------------------------------- backup, scripted primary */

/* HELLO of worker `rank` (of 1), marked a link if `link`; then WELCOME,
 * and READY or ERROR into m. @return the last frame's type, or -1. */
static int hello(int fd, int link, struct wire_msg *m)
{
	struct wire_out o;
	uint8_t n[WIRE_NONCE_LEN] = { 0 };
	wire_out_init(&o);
	wire_begin(&o, WIRE_HELLO, link ? WIRE_F_REPLICA : 0);
	wire_put_u32(&o, 0);
	wire_put_u32(&o, 1);
	wire_put_u64(&o, DIM);
	wire_put_u64(&o, 0);
	wire_put_bytes(&o, n, sizeof n);
	wire_end(&o);
	net_test_send(fd, &o);
	wire_out_free(&o);
	if (net_test_read_frame(fd, m))
		return -1;
	if (m->type == WIRE_WELCOME && net_test_read_frame(fd, m))
		return -1;
	return m->type;
}

/* A fresh connection's HELLO; the code of its ERROR, 0 for READY. */
static int try_join(unsigned port, int link)
{
	int fd;
	boar_error err;
	struct wire_msg m = { 0 };
	if (net_connect("127.0.0.1", port, &fd, &err))
		return -1;
	int type = hello(fd, link, &m);
	int code = type == WIRE_READY ? 0 : type == WIRE_ERROR ? m.code : -1;
	close(fd);
	wire_msg_free(&m);
	return code;
}

static void link_push(int fd, uint64_t seq, float v)
{
	struct wire_out o;
	uint64_t k = 3;
	wire_out_init(&o);
	wire_begin(&o, WIRE_PUSH, 0);
	wire_put_u64(&o, 0);
	wire_put_u64(&o, seq);
	wire_put_keys(&o, &k, 1);
	wire_put_vals(&o, &v, 1, 0);
	wire_end(&o);
	net_test_send(fd, &o);
	wire_out_free(&o);
}

static void test_take_over(void)
{
	struct net_test_shard sh;
	struct ps_config pc = { .shard = 0, .n_shards = 1,
				.staleness = SSP_INF,
				.replica_of = "127.0.0.1:1" };
	boar_error err;
	if (net_test_shard_start(&sh, pc)) {
		CHECK(0, "backup did not start");
		return;
	}
	CHECK_EQ_INT(try_join(sh.port, 0), WIRE_ERR_STANDBY);
	int fd = -1;
	struct wire_msg m = { 0 };
	CHECK(net_connect("127.0.0.1", sh.port, &fd, &err) == 0, "connect");
	CHECK_EQ_INT(hello(fd, 1, &m), WIRE_READY);
	link_push(fd, 1, 1.5f);
	link_push(fd, 2, 2.0f);
	link_push(fd, 2, 2.0f); /* the same push again: applied once */
	struct wire_out o;
	wire_out_init(&o);
	wire_begin(&o, WIRE_STATS, 0);
	wire_put_u32(&o, 5);
	wire_end(&o);
	net_test_send(fd, &o);
	wire_out_free(&o);
	CHECK(net_test_read_frame(fd, &m) == 0 &&
	      m.type == WIRE_STATS_REPLY && m.stats.pushes == 2,
	      "the backup holds %llu pushes, want 2",
	      (unsigned long long)m.stats.pushes);
	CHECK_EQ_INT(try_join(sh.port, 0), WIRE_ERR_STANDBY);
	close(fd); /* the primary dies */
	/* the worker comes over, retrying until the backup took over */
	struct ps_client *c = net_test_client(sh.port, 0, 1, DIM, NULL, 5,
					      &err);
	CHECK(c != NULL, "the worker could not join the backup: %s",
	      err.message);
	if (c) {
		uint64_t k = 3;
		float got = 0;
		CHECK(ps_client_pull(c, &k, 1, &got, &err) == 0, "pull: %s",
		      err.message);
		CHECK(got == 3.5f, "pulled %g from the backup, want 3.5", got);
		float v = 1;
		CHECK(ps_client_push(c, &k, &v, 1, &err) == 0, "push");
		struct wire_stats st;
		CHECK(ps_client_stats(c, 0, &st, &err) == 0 && st.pushes == 3,
		      "after the take-over the backup holds %llu pushes, "
		      "want 3 (the worker numbered on from 2)",
		      (unsigned long long)st.pushes);
		ps_client_free(c);
	}
	CHECK(try_join(sh.port, 1) == BOAR_EPROTO, "a link came back to a "
	      "backup that took over");
	net_test_shard_stop(&sh);
	wire_msg_free(&m);

	/* a link to a shard that is no backup */
	struct ps_config plain = { .shard = 0, .n_shards = 1,
				   .staleness = SSP_INF };
	if (net_test_shard_start(&sh, plain)) {
		CHECK(0, "shard did not start");
		return;
	}
	CHECK(try_join(sh.port, 1) == BOAR_EPROTO, "a plain shard took a "
	      "replica link");
	net_test_shard_stop(&sh);
}

/* ------------------------------------------------- a primary gone silent */

/* A primary that greets its worker, then never answers (stopped, its host
 * hung): it takes frames until the worker closes. */
static void *silent_primary(void *arg)
{
	int lfd = *(int *)arg;
	struct net_test_peer p;
	net_test_peer_init(&p);
	if (!net_test_peer_accept(&p, lfd, DIM, 0, 0))
		while (!net_test_peer_read(&p))
			;
	net_test_peer_free(&p);
	return NULL;
}

struct link_script {
	unsigned port;   /* the backup's */
	int hold_ms;     /* the link lives this long after the push */
	int ok;
};

/* The silent primary's link to the backup: one push (seq 1, 2.5 to key
 * 3), answered, kept open hold_ms, then closed: the backup's heartbeat
 * timeout would close it so for a hung primary. */
static void *link_then_close(void *arg)
{
	struct link_script *ls = arg;
	int fd;
	boar_error err;
	struct wire_msg m = { 0 };
	struct wire_out o;
	wire_out_init(&o);
	if (!net_connect("127.0.0.1", ls->port, &fd, &err)) {
		if (hello(fd, 1, &m) == WIRE_READY) {
			link_push(fd, 1, 2.5f);
			wire_begin(&o, WIRE_STATS, 0);
			wire_put_u32(&o, 1);
			wire_end(&o);
			net_test_send(fd, &o);
			ls->ok = !net_test_read_frame(fd, &m) &&
				 m.type == WIRE_STATS_REPLY;
			sleep_ms(ls->hold_ms);
		}
		close(fd);
	}
	wire_out_free(&o);
	wire_msg_free(&m);
	return NULL;
}

static void test_silent_primary(void)
{
	struct net_test_shard bk;
	struct ps_config pc = { .shard = 0, .n_shards = 1,
				.staleness = SSP_INF,
				.replica_of = "127.0.0.1:1" };
	if (net_test_shard_start(&bk, pc)) {
		CHECK(0, "backup did not start");
		return;
	}
	/* the link outlives the worker's first probe (2 s): the backup says
	 * "not yet" to it, and the worker keeps waiting on its primary */
	struct link_script ls = { .port = bk.port, .hold_ms = 3000 };
	pthread_t lt, pt;
	pthread_create(&lt, NULL, link_then_close, &ls);
	unsigned pport;
	int plfd = net_test_listen(&pport);
	pthread_create(&pt, NULL, silent_primary, &plfd);
	sleep_ms(200); /* the link is in */
	char pa[64], ba[64];
	snprintf(pa, sizeof pa, "127.0.0.1:%u", pport);
	snprintf(ba, sizeof ba, "127.0.0.1:%u", bk.port);
	const char *addrs[1] = { pa }, *backups[1] = { ba };
	struct ps_client_config cc = { .addrs = addrs, .backups = backups,
				       .n_shards = 1, .rank = 0,
				       .n_workers = 1, .dim = DIM,
				       .reconnect_timeout = 5 };
	struct ps_client *c = NULL;
	boar_error err;
	CHECK(ps_client_connect(&cc, &c, &err) == 0, "connect: %s",
	      err.message);
	if (c) {
		uint64_t k = 3;
		float got = 0;
		double t0 = net_now();
		CHECK(ps_client_pull(c, &k, 1, &got, &err) == 0, "pull: %s",
		      err.message);
		double waited = net_now() - t0;
		CHECK(got == 2.5f, "pulled %g, want the backup's 2.5", got);
		CHECK(waited > 2.5, "the worker left its primary after %.2f s, "
		      "while the backup still had the primary's link", waited);
		struct ps_client_counters n;
		ps_client_get_counters(c, &n);
		CHECK(n.failovers == 1, "%llu failovers, want 1",
		      (unsigned long long)n.failovers);
		ps_client_free(c);
	}
	pthread_join(lt, NULL);
	CHECK(ls.ok, "the link's exchange broke off");
	shutdown(plfd, SHUT_RDWR);
	pthread_join(pt, NULL);
	close(plfd);
	net_test_shard_stop(&bk);
}

int main(void)
{
	if (!net_test_loopback())
		TEST_SKIP("no loopback networking");
	test_forward_then_ack(0);
	test_forward_then_ack(1);
	test_pipelined();
	test_take_over();
	test_silent_primary();
	return TEST_RESULT();
}
