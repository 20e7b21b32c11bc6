/* coherence_probe.c - the host's cores and the shared model's line traffic.
 *
 * usage: coherence_probe topo
 *        coherence_probe loop ROWS NNZ DIM SKEW THREADS VARIANTS
 *   THREADS   a comma list (1,2,4,8,12,16)
 *   VARIANTS  a comma list of: shared private rfo rfo1 delta:B stale:K
 *
 * topo: for every pair of CPUs, two threads pinned one on each: (1) a
 * loop of ten independent add chains, which keeps a core's integer ports
 * busy: two hardware threads of one core share the ports, so each gets
 * about half of what it gets alone, while two cores each keep their rate
 * (the guest's lscpu may not say which of its CPUs share a core on the
 * host); (2) one cache line handed back and forth, the one-way latency
 * between the two CPUs' caches. Prints both as 16 x 16 style matrices.
 *
 * loop: the bare Hogwild! loop (bench/tools/roofline.c's: logistic SGD,
 * eta 0.1, relaxed loads and stores, no bias, each thread a contiguous
 * share of the rows in file order) on boar_generate's data (a hidden
 * model, seed 42: the losses mean something), three passes from a zero
 * model, per variant and thread count; prints the best pass's rate (M
 * nnz-updates/s) and each pass's progressive training loss:
 *   shared   one model for all threads (Hogwild!);
 *   private  each thread its own model (no line shared: the ceiling);
 *   rfo      shared, and each margin load preceded by a prefetch for
 *            writing of the same line, so the line comes exclusive and the
 *            row's later store needs no second transaction (upgrade);
 *   rfo1     shared, the next row's lines prefetched for writing at the
 *            start of each row (one row ahead);
 *   delta:B  shared weights read, each thread's steps kept in a private
 *            dense delta and added to the shared weights every B rows
 *            (bounded-delay Hogwild!: a thread sees its own steps at once);
 *   stale:K  each thread reads and steps a private copy, adds its change
 *            to the shared weights every 64 rows and reloads those
 *            coordinates, and reloads 1/K of its copy besides at each
 *            merge, so no weight is more than K merges stale.
 */
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "boar.h"
#include "data/dataset.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

/* ---- topo ---------------------------------------------------------- */

#define PORT_ITERS 30000000ull
#define PINGS 20000

struct pair_job {
	int cpu, role;
	volatile int *go;
	double rate;              /* adds per ns */
	_Atomic uint64_t *line;   /* ping-pong */
};

static void *port_loop(void *p)
{
	struct pair_job *j = p;
	pin(j->cpu);
	while (!*j->go)
		;
	uint64_t a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0,
		 i = 0, k = 0;
	double t0 = now();
	for (uint64_t n = 0; n < PORT_ITERS; n++)
		__asm__ volatile("add $1,%0\n\tadd $1,%1\n\tadd $1,%2\n\t"
				 "add $1,%3\n\tadd $1,%4\n\tadd $1,%5\n\t"
				 "add $1,%6\n\tadd $1,%7\n\tadd $1,%8\n\t"
				 "add $1,%9"
				 : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e),
				   "+r"(f), "+r"(g), "+r"(h), "+r"(i), "+r"(k));
	j->rate = PORT_ITERS * 10.0 / ((now() - t0) * 1e9);
	return NULL;
}

/* PINGS round trips, or as many as PING_SECONDS allow: where the two
 * CPUs are busy with other work each hand-over waits for the scheduler,
 * and role 0 then stops the game (STOP) and counts what it got. */
#define PING_SECONDS 0.5
#define STOP UINT64_MAX

static void *ping_loop(void *p)
{
	struct pair_job *j = p;
	pin(j->cpu);
	while (!*j->go)
		;
	double t0 = now();
	uint64_t n = 0;
	for (; n < PINGS; n++) {
		uint64_t want = 2 * n + (uint64_t)j->role, v;
		while ((v = atomic_load_explicit(j->line,
						 memory_order_acquire)) != want &&
		       v != STOP)
			;
		if (v == STOP)
			break;
		if (j->role == 0 && n % 256 == 255 && now() - t0 > PING_SECONDS) {
			atomic_store_explicit(j->line, STOP, memory_order_release);
			break;
		}
		atomic_store_explicit(j->line, want + 1, memory_order_release);
	}
	j->rate = (now() - t0) * 1e9 / (2.0 * (n ? n : 1)); /* ns one way */
	return NULL;
}

/* Runs fn on cpu a (and b unless b < 0) at once; thread 0's result. */
static double on_pair(void *(*fn)(void *), int a, int b)
{
	static _Alignas(64) _Atomic uint64_t line;
	volatile int go = 0;
	struct pair_job j[2] = {{a, 0, &go, 0, &line}, {b, 1, &go, 0, &line}};
	pthread_t t[2];
	line = 0;
	int n = b < 0 ? 1 : 2;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, fn, &j[i]);
	go = 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return n == 2 && fn == port_loop ? (j[0].rate < j[1].rate ? j[0].rate : j[1].rate)
					 : j[0].rate;
}

/* Prints an n x n matrix m of the CPUs cpu[], rows labelled by CPU. */
static void print_matrix(const char *title, int n, const int *cpu,
			 double m[64][64])
{
	printf("%s\n", title);
	for (int a = 0; a < n; a++) {
		printf("%3d:", cpu[a]);
		for (int b = 0; b < n; b++)
			printf(" %4.0f", m[a][b]);
		printf("\n");
	}
}

static int topo(void)
{
	/* the CPUs this process may run on (a container's cpuset may be
	 * fewer than the machine's): pinning to any other would fail */
	cpu_set_t allowed;
	int cpu[64], n = 0;
	if (sched_getaffinity(0, sizeof allowed, &allowed))
		return 1;
	for (int c = 0; c < CPU_SETSIZE && n < 64; c++)
		if (CPU_ISSET(c, &allowed))
			cpu[n++] = c;
	double solo[64];
	printf("cpus:");
	for (int a = 0; a < n; a++)
		printf(" %d", cpu[a]);
	printf("\nports: adds/ns alone per CPU:");
	for (int a = 0; a < n; a++) { /* the best of 3: the first may wait for the clock */
		for (int rep = 0; rep < 3; rep++) {
			double r = on_pair(port_loop, cpu[a], -1);
			solo[a] = rep && solo[a] > r ? solo[a] : r;
		}
		printf(" %.2f", solo[a]);
	}
	printf("\n");
	static double port[64][64], lat[64][64];
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++) {
			double lo = solo[a] < solo[b] ? solo[a] : solo[b];
			port[a][b] = port[b][a] =
				100 * on_pair(port_loop, cpu[a], cpu[b]) / lo;
			lat[a][b] = lat[b][a] = on_pair(ping_loop, cpu[a], cpu[b]);
		}
	print_matrix("ports: the slower of two at once over the slower alone "
		     "(x100; ~50: one core's two hardware threads)", n, cpu, port);
	print_matrix("line latency, one way, ns", n, cpu, lat);
	return 0;
}

/* ---- loop ---------------------------------------------------------- */

enum { SHARED, PRIVATE, RFO, RFO1, DELTA, STALE };

struct data {
	const uint64_t *rp;
	const uint32_t *idx;
	const float *val;
	const float *y; /* +1 / -1 */
	uint64_t n, dim, max_nnz; /* rows, dimension, most non-zeros in a row */
};

struct thread_state {
	float *w;       /* the weights this thread reads (private copy or shared) */
	float *delta;   /* delta, stale: this thread's change since its merge */
	uint32_t *touched;
	uint64_t n_touched, refresh_at;
};

static inline void add_racy(float *p, float d)
{
	float v = *(volatile float *)p + d;
	*(volatile float *)p = v;
}

static inline float logistic_step(float m, float y, double *loss)
{
	float z = y * m;
	*loss += z > 0 ? log1pf(expf(-z)) : -z + log1pf(expf(z));
	return 0.1f * y / (1.f + expf(z));
}

/* Adds a thread's change to the shared weights and takes their values
 * back (stale: into its copy). */
static void merge(struct thread_state *s, float *shared, int stale)
{
	for (uint64_t t = 0; t < s->n_touched; t++) {
		uint32_t j = s->touched[t];
		float d = s->delta[j];
		if (d == 0)
			continue;
		__builtin_prefetch(&shared[j], 1);
		float v = *(volatile float *)&shared[j] + d;
		*(volatile float *)&shared[j] = v;
		s->delta[j] = 0;
		if (stale)
			s->w[j] = v;
	}
	s->n_touched = 0;
}

static double one_pass(int variant, int param, const struct data *D,
		       float *shared, struct thread_state *st, int T)
{
	double loss = 0;
#pragma omp parallel num_threads(T) reduction(+ : loss)
	{
		struct thread_state *s = &st[omp_get_thread_num()];
		float *w = variant == PRIVATE || variant == STALE ? s->w : shared;
		int since = 0;
		const int every = variant == DELTA ? param : 64;
#pragma omp for schedule(static)
		for (uint64_t r = 0; r < D->n; r++) {
			uint64_t lo = D->rp[r], hi = D->rp[r + 1];
			const uint32_t *ix = D->idx;
			const float *vx = D->val;
			if (variant == RFO1 && r + 1 < D->n)
				for (uint64_t k = hi; k < D->rp[r + 2]; k++)
					__builtin_prefetch(&w[ix[k]], 1);
			float m = 0;
			for (uint64_t k = lo; k < hi; k++) {
				if (variant == RFO)
					__builtin_prefetch(&w[ix[k]], 1);
				m += *(volatile float *)&w[ix[k]] * vx[k];
				if (variant == DELTA)
					m += s->delta[ix[k]] * vx[k];
			}
			float g = logistic_step(m, D->y[r], &loss);
			if (variant == DELTA || variant == STALE) {
				for (uint64_t k = lo; k < hi; k++) {
					uint32_t j = ix[k];
					if (s->delta[j] == 0)
						s->touched[s->n_touched++] = j;
					s->delta[j] += g * vx[k];
					if (variant == STALE)
						w[j] += g * vx[k];
				}
				if (++since == every) {
					since = 0;
					merge(s, shared, variant == STALE);
					if (variant == STALE) {
						uint64_t step = (D->dim + param - 1) / param;
						uint64_t a = s->refresh_at, b = a + step;
						if (b > D->dim)
							b = D->dim;
						for (uint64_t j = a; j < b; j++)
							if (s->delta[j] == 0)
								w[j] = *(volatile float *)&shared[j];
						s->refresh_at = b == D->dim ? 0 : b;
					}
				}
			} else {
				for (uint64_t k = lo; k < hi; k++)
					add_racy(&w[ix[k]], g * vx[k]);
			}
		}
		if (variant == DELTA || variant == STALE)
			merge(s, shared, variant == STALE);
	}
	return loss / D->n;
}

static void run_variant(const char *name, const struct data *D, int T)
{
	int variant, param = 0;
	if (!strcmp(name, "shared"))
		variant = SHARED;
	else if (!strcmp(name, "private"))
		variant = PRIVATE;
	else if (!strcmp(name, "rfo"))
		variant = RFO;
	else if (!strcmp(name, "rfo1"))
		variant = RFO1;
	else if (sscanf(name, "delta:%d", &param) == 1 && param > 0)
		variant = DELTA;
	else if (sscanf(name, "stale:%d", &param) == 1 && param > 0)
		variant = STALE;
	else {
		fprintf(stderr, "coherence_probe: unknown variant '%s'\n", name);
		exit(2);
	}
	size_t bytes = D->dim * sizeof(float);
	float *shared = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
	struct thread_state *st = calloc((size_t)T, sizeof *st);
	if (!shared || !st)
		exit(1);
	memset(shared, 0, bytes);
#pragma omp parallel num_threads(T)
	{
		struct thread_state *s = &st[omp_get_thread_num()];
		if (variant == PRIVATE || variant == STALE)
			s->w = calloc(D->dim, sizeof(float));
		if (variant == DELTA || variant == STALE) {
			s->delta = calloc(D->dim, sizeof(float));
			s->touched = malloc(sizeof(uint32_t) * D->max_nnz *
					    (size_t)(variant == DELTA ? param : 64));
		}
	}
	double best = 0, loss[3];
	for (int p = 0; p < 3; p++) {
		double t0 = omp_get_wtime();
		loss[p] = one_pass(variant, param, D, shared, st, T);
		double rate = D->rp[D->n] / (omp_get_wtime() - t0) / 1e6;
		best = rate > best ? rate : best;
	}
	printf("threads=%d variant=%s dim=%llu: %.1f M nnz-updates/s (best of 3; "
	       "progressive loss %.4f %.4f %.4f)\n",
	       T, name, (unsigned long long)D->dim, best, loss[0], loss[1],
	       loss[2]);
	fflush(stdout);
	for (int t = 0; t < T; t++) {
		free(st[t].w);
		free(st[t].delta);
		free(st[t].touched);
	}
	free(st);
	free(shared);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "topo"))
		return topo();
	if (argc < 8 || strcmp(argv[1], "loop")) {
		fprintf(stderr, "usage: coherence_probe topo | loop ROWS NNZ DIM "
				"SKEW THREADS VARIANTS\n");
		return 2;
	}
	boar_gen_options g;
	boar_gen_options_default(&g);
	g.task = BOAR_TASK_LINEAR;
	g.rows = strtoull(argv[2], NULL, 10);
	g.nnz_per_row = (uint32_t)strtoul(argv[3], NULL, 10);
	g.features = (uint32_t)strtoul(argv[4], NULL, 10);
	g.skew = atof(argv[5]);
	g.seed = 42;
	boar_error err;
	boar_dataset *ds;
	if (boar_generate(&g, &ds, &err)) {
		fprintf(stderr, "coherence_probe: %s\n", err.message);
		return 1;
	}
	float *y = malloc(ds->n_rows * sizeof *y);
	if (!y)
		return 1;
	for (uint64_t r = 0; r < ds->n_rows; r++)
		y[r] = boar_label_sign(ds->label[r]);
	struct data D = {ds->row_ptr, ds->idx, ds->val, y, ds->n_rows, ds->dim, 0};
	for (uint64_t r = 0; r < ds->n_rows; r++)
		if (ds->row_ptr[r + 1] - ds->row_ptr[r] > D.max_nnz)
			D.max_nnz = ds->row_ptr[r + 1] - ds->row_ptr[r];
	char threads[256], variants[256], *s1, *s2;
	snprintf(threads, sizeof threads, "%s", argv[6]);
	for (char *t = strtok_r(threads, ",", &s1); t; t = strtok_r(NULL, ",", &s1)) {
		snprintf(variants, sizeof variants, "%s", argv[7]);
		for (char *v = strtok_r(variants, ",", &s2); v;
		     v = strtok_r(NULL, ",", &s2))
			run_variant(v, &D, atoi(t));
	}
	free(y);
	boar_dataset_free(ds);
	return 0;
}
