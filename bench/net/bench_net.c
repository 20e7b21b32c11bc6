/* bench_net.c - push and pull throughput of one shard, io_uring against a
 * plain blocking-socket server, in the same run on the same machine.
 *
 * For each server (the io_uring shard of net/server.c with --staleness
 * inf, and bench/net/blocking_server.c) and each workload it times C
 * clients (threads, one connection each) doing R pushes or R pulls of B
 * keys, repeated REPS times; the median run is reported as keys/s and
 * bytes/s through the shard (both directions). Pushes are one-way, so a
 * push run ends with a STATS round trip: TCP keeps order, so once it is
 * answered every push before it has been applied. A raw loopback stream
 * (one socket, 1 MiB writes, nothing else) is measured first as the
 * ceiling.
 *
 * A "tags" row gives the bytes/s one thread tags and checks (auth.h) with
 * no network at all. "io_uring+secret" is the same shard with a shared secret: the handshake
 * proves it and (since issue 14) every later frame carries a MAC under a
 * per-connection session key, so its rows next to "io_uring" are the cost
 * of authentication. "io_uring-mt" is the same shard serving from
 * several threads (lanes, server.h): BENCH_SHARD_THREADS of them, default
 * what `boar serve` picks (online CPUs, at most 8).
 *
 * Workloads: "sparse" keys drawn uniformly from 2^24 (gaps of ~170, two
 * varint bytes each) and "dense" runs of consecutive keys (one byte each).
 *
 * usage: bench_net [--quick] > results.csv    (CSV on stdout, notes on
 * stderr)
 */
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench/net/blocking_server.h"
#include "net/auth.h"
#include "net/client.h"
#include "net/loop.h"
#include "net/server.h"
#include "net/ssp.h"

#define DIM (1u << 24)

struct job {
	const char *addr;
	uint32_t rank, n_workers;
	int pull;
	uint32_t batch, rounds;
	int dense;
	double seconds;
	uint64_t bytes;
	int rc;
	pthread_barrier_t *bar;
	const uint8_t *key; /* shared-secret key, or NULL */
};

/* The key of the "io_uring+secret" rows (any 32 bytes will do). */
static uint8_t bench_key[NET_KEY_LEN];

static void make_keys(uint64_t *k, uint32_t n, int dense, unsigned seed)
{
	if (dense) {
		uint64_t start = (uint64_t)(seed * 2654435761u) % (DIM - n);
		for (uint32_t i = 0; i < n; i++)
			k[i] = start + i;
		return;
	}
	/* n sorted distinct keys, spread evenly with a random jitter */
	uint64_t step = DIM / n;
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	for (uint32_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		k[i] = i * step + x % step;
	}
}

static void *client_job(void *arg)
{
	struct job *j = arg;
	boar_error err;
	const char *addrs[1] = { j->addr };
	struct ps_client_config cc = {
		.addrs = addrs,
		.n_shards = 1,
		.rank = j->rank,
		.n_workers = j->n_workers,
		.dim = DIM,
		.key = j->key,
	};
	struct ps_client *c;
	uint64_t *keys = malloc(j->batch * sizeof *keys);
	float *vals = malloc(j->batch * sizeof *vals);
	for (uint32_t i = 0; i < j->batch; i++)
		vals[i] = 1e-3f * (float)(i % 7);
	j->rc = ps_client_connect(&cc, &c, &err);
	pthread_barrier_wait(j->bar);
	if (j->rc) {
		fprintf(stderr, "connect: %s\n", err.message);
		free(keys);
		free(vals);
		return NULL;
	}
	struct ps_client_counters before, after;
	ps_client_get_counters(c, &before);
	double t0 = net_now();
	for (uint32_t r = 0; r < j->rounds && !j->rc; r++) {
		make_keys(keys, j->batch, j->dense, r * 131 + j->rank);
		j->rc = j->pull ? ps_client_pull(c, keys, j->batch, vals, &err)
				: ps_client_push(c, keys, vals, j->batch, &err);
	}
	struct wire_stats st;
	if (!j->rc && !j->pull)
		j->rc = ps_client_stats(c, 0, &st, &err);
	j->seconds = net_now() - t0;
	ps_client_get_counters(c, &after);
	j->bytes = after.bytes_sent + after.bytes_recv - before.bytes_sent -
		   before.bytes_recv;
	if (j->rc)
		fprintf(stderr, "client: %s\n", err.message);
	ps_client_free(c);
	free(keys);
	free(vals);
	return NULL;
}

struct uring_shard {
	struct ps_server *s;
	pthread_t t;
	int stop;
};

static void *uring_run(void *arg)
{
	struct uring_shard *u = arg;
	boar_error err;
	if (ps_server_run(u->s, &err))
		fprintf(stderr, "shard: %s\n", err.message);
	return NULL;
}

static int listen_any(unsigned *port)
{
	int fd;
	boar_error err;
	if (net_listen("127.0.0.1", 0, &fd, &err))
		return -1;
	*port = net_bound_port(fd);
	return fd;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static unsigned shard_threads(void)
{
	const char *e = getenv("BENCH_SHARD_THREADS");
	if (e && atoi(e) > 0)
		return (unsigned)atoi(e);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 8 ? 8 : (unsigned)n;
}

/* One measurement: C clients against a fresh server of the given kind
 * (uring 3: io_uring with several threads, 2: io_uring with a secret,
 * 1: io_uring, 0: blocking). */
static int measure(int uring, uint32_t clients, int pull, int dense,
		   uint32_t batch, uint32_t rounds, double *keys_s,
		   double *bytes_s)
{
	unsigned port;
	int fd = listen_any(&port);
	if (fd < 0)
		return -1;
	struct uring_shard u = { 0 };
	struct blocking_server *b = NULL;
	if (uring) {
		boar_error err;
		u.stop = eventfd(0, EFD_CLOEXEC);
		struct ps_config pc = {
			.shard = 0,
			.n_shards = 1,
			.listen_fd = fd,
			.stop_fd = u.stop,
			.dim = DIM,
			.staleness = SSP_INF,
			.heartbeat_timeout = 60,
			.key = uring == 2 ? bench_key : NULL,
			.threads = uring == 3 ? shard_threads() : 1,
		};
		if (ps_server_create(&pc, &u.s, &err)) {
			fprintf(stderr, "shard: %s\n", err.message);
			return -1;
		}
		pthread_create(&u.t, NULL, uring_run, &u);
	} else {
		b = blocking_server_start(fd, DIM);
	}
	char addr[64];
	snprintf(addr, sizeof addr, "127.0.0.1:%u", port);
	struct job jobs[8];
	pthread_t t[8];
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, clients);
	for (uint32_t i = 0; i < clients; i++) {
		jobs[i] = (struct job){ addr, i, clients, pull, batch, rounds,
					dense, 0, 0, 0, &bar,
					uring == 2 ? bench_key : NULL };
		pthread_create(&t[i], NULL, client_job, &jobs[i]);
	}
	double secs = 0, bytes = 0;
	int rc = 0;
	for (uint32_t i = 0; i < clients; i++) {
		pthread_join(t[i], NULL);
		if (jobs[i].seconds > secs)
			secs = jobs[i].seconds;
		bytes += (double)jobs[i].bytes;
		rc |= jobs[i].rc;
	}
	pthread_barrier_destroy(&bar);
	if (uring) {
		uint64_t one = 1;
		if (write(u.stop, &one, sizeof one) < 0)
			perror("write");
		pthread_join(u.t, NULL);
		ps_server_free(u.s);
		close(u.stop);
	} else {
		blocking_server_stop(b);
	}
	close(fd);
	*keys_s = (double)clients * batch * rounds / secs;
	*bytes_s = bytes / secs;
	return rc;
}

struct sink {
	int fd;
	uint64_t got;
};

static void *sink_run(void *arg)
{
	struct sink *s = arg;
	static char buf[1 << 20];
	ssize_t k;
	while ((k = read(s->fd, buf, sizeof buf)) > 0)
		s->got += (uint64_t)k;
	return NULL;
}

/* Bytes/s one loopback TCP stream carries with nothing else going on. */
static double loopback_ceiling(uint64_t total)
{
	unsigned port;
	int lfd = listen_any(&port), cfd;
	boar_error err;
	if (lfd < 0 || net_connect("127.0.0.1", port, &cfd, &err))
		return 0;
	struct sink s = { accept(lfd, NULL, NULL), 0 };
	pthread_t t;
	pthread_create(&t, NULL, sink_run, &s);
	static char buf[1 << 20];
	memset(buf, 1, sizeof buf);
	double t0 = net_now();
	for (uint64_t sent = 0; sent < total;) {
		ssize_t k = write(cfd, buf, sizeof buf);
		if (k <= 0)
			break;
		sent += (uint64_t)k;
	}
	close(cfd);
	pthread_join(t, NULL);
	double secs = net_now() - t0;
	close(s.fd);
	close(lfd);
	return (double)s.got / secs;
}

/* Thread CPU seconds: the tag rate is CPU work, timed apart from whatever
 * else the machine runs. */
static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Bytes per CPU second one thread tags (sender) and checks (receiver) in
 * 1 MiB frames: the price of authentication per byte, apart from the
 * network. */
static double tag_rate(uint64_t total)
{
	static uint8_t body[1 << 20];
	uint8_t nc[WIRE_NONCE_LEN] = { 1 }, ns[WIRE_NONCE_LEN] = { 2 };
	struct net_session tx, rx;
	net_session_start(&tx, bench_key, 0, nc, ns);
	net_session_start(&rx, bench_key, 1, nc, ns);
	struct wire_out o;
	wire_out_init(&o);
	double secs = 0;
	uint64_t done = 0;
	while (done < total) {
		wire_out_reset(&o);
		wire_begin(&o, WIRE_HEARTBEAT, 0);
		wire_put_bytes(&o, body, sizeof body);
		wire_end(&o);
		double t0 = cpu_now();
		if (net_seal(&tx, &o) ||
		    net_unseal(&rx, o.buf, o.buf + WIRE_HDR_LEN,
			       (uint32_t)(o.len - WIRE_HDR_LEN)) < 0) {
			fprintf(stderr, "tag check failed\n");
			break;
		}
		secs += cpu_now() - t0;
		done += o.len;
	}
	wire_out_free(&o);
	return secs > 0 ? (double)done / secs : 0;
}

/* Whether name starts with one of the ';'-separated prefixes in only. */
static int selected(const char *only, const char *name)
{
	for (const char *p = only; *p;) {
		size_t n = strcspn(p, ";");
		if (n && !strncmp(name, p, n))
			return 1;
		p += n + (p[n] == ';');
	}
	return 0;
}

int main(int argc, char **argv)
{
	int quick = argc > 1 && !strcmp(argv[1], "--quick");
	int reps = quick ? 3 : 5, quick_ceiling = 0;
	/* BENCH_ONLY=io_uring,push,dense: just the rows starting so; several
	 * prefixes separated by ';'. The ceiling and tag rows are then
	 * shorter (they are context, not the point of such a run). */
	const char *only = getenv("BENCH_ONLY");
	if (only)
		quick_ceiling = 1;
	static const char secret[] = "bench_net shared secret, 32 bytes";
	net_auth_key(secret, sizeof secret - 1, bench_key);
	double ceiling = loopback_ceiling(quick || quick_ceiling ? 1ull << 29
								 : 4ull << 30);
	printf("server,op,keys,clients,batch,keys_per_s,bytes_per_s,"
	       "bytes_per_key,loopback_fraction\n");
	printf("loopback,stream,-,1,-,-,%.0f,-,1\n", ceiling);
	/* tag + check of the same bytes, one thread (not a server row) */
	printf("tags,seal+unseal,-,1,-,-,%.0f,-,-\n",
	       tag_rate(quick || quick_ceiling ? 1ull << 28 : 1ull << 30));
	fflush(stdout);
	static const struct {
		int dense;
		uint32_t batch, rounds;
	} loads[] = { { 0, 100000, 40 }, { 1, 100000, 40 }, { 0, 1000, 2000 } };
	for (size_t l = 0; l < sizeof loads / sizeof loads[0]; l++)
		for (uint32_t clients = 1; clients <= 8; clients *= clients < 2 ? 2 : 4)
			for (int pull = 0; pull <= 1; pull++)
				for (int uring = 3; uring >= 0; uring--) {
					double ks[7], bs[7];
					uint32_t rounds = loads[l].rounds;
					char name[64];
					const char *server =
						uring == 3   ? "io_uring-mt"
						: uring == 2 ? "io_uring+secret"
						: uring == 1 ? "io_uring"
							     : "blocking";
					snprintf(name, sizeof name, "%s,%s,%s,%u",
						 server,
						 pull ? "pull" : "push",
						 loads[l].dense ? "dense" : "sparse",
						 clients);
					if (only && !selected(only, name))
						continue;
					if (quick)
						rounds /= 4;
					for (int r = 0; r < reps; r++)
						if (measure(uring, clients, pull,
							    loads[l].dense,
							    loads[l].batch,
							    rounds, &ks[r],
							    &bs[r]))
							return 1;
					qsort(ks, (size_t)reps, sizeof *ks, cmp_d);
					qsort(bs, (size_t)reps, sizeof *bs, cmp_d);
					double k = ks[reps / 2], b = bs[reps / 2];
					printf("%s,%s,%s,%u,%u,%.0f,%.0f,%.2f,%.3f\n",
					       server,
					       pull ? "pull" : "push",
					       loads[l].dense ? "dense" : "sparse",
					       clients, loads[l].batch, k, b,
					       b / k, ceiling > 0 ? b / ceiling : 0);
					fflush(stdout);
				}
	return 0;
}
