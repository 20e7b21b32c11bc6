/* membw.c - how much of the host's memory bandwidth one core keeps while
 * other cores use theirs: the resource that the "machines" of
 * bench/net/shaped.sh (cores of one host, in network namespaces) share
 * and separate machines would not.
 *
 * usage: membw [MIB_PER_THREAD [SECONDS]]   (defaults 64 MiB, 0.5 s)
 *
 * Each thread is pinned to one of the cores this process may run on and
 * streams over a buffer of its own, larger than a core's share of the
 * caches: it reads a word of each line and writes the next word (a
 * read-modify-write stream, as the per-key passes of a cluster clock
 * are). Printed for 1 thread alone and beside others doing the
 * same (1, 2, 4, ... busy cores, then all): the first thread's GB/s, the
 * sum over all, and the first thread's rate against its rate alone. A chain of dependent integer adds beside
 * the same numbers of busy cores is the control: a core's clock, which
 * a host that lowers it as more cores run would also show.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS 256
#define LINE 64

struct worker {
	pthread_t tid;
	int cpu;
	int mem; /* stream (1) or add chain (0) */
	size_t bytes;
	double rate; /* bytes/s or adds/s */
	int failed;  /* its buffer could not be allocated */
};

static volatile int go, stop;
static double seconds_each = 0.5;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static void *work(void *p)
{
	struct worker *w = p;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	uint64_t *b = NULL, words = w->bytes / 8, passes = 0, acc = 1;
	if (w->mem) {
		if (!(b = malloc(w->bytes))) {
			w->failed = 1;
			return NULL;
		}
		memset(b, 1, w->bytes); /* the pages are touched before timing */
	}
	while (!go)
		;
	double t0 = now_s();
	while (!stop) {
		if (w->mem) {
			for (uint64_t i = 0; i + 1 < words; i += LINE / 8) {
				acc += b[i];
				b[i + 1] = acc;
			}
		} else {
			for (int i = 0; i < 1 << 20; i++)
				__asm__ volatile("add $1, %0" : "+r"(acc));
		}
		passes++;
	}
	double t = now_s() - t0;
	w->rate = (w->mem ? (double)passes * (double)w->bytes
			  : (double)passes * (double)(1 << 20)) / t;
	free(b);
	return NULL;
}

/* The first thread's rate and the sum, n threads of kind mem.
 * @return 0, or -1 (a thread not started, a buffer not allocated). */
static int run(const int *cpus, int n, int mem, size_t bytes, double *first,
	       double *sum)
{
	static struct worker w[MAX_THREADS];
	go = stop = 0;
	for (int i = 0; i < n; i++) {
		w[i] = (struct worker){ .cpu = cpus[i], .mem = mem, .bytes = bytes };
		if (pthread_create(&w[i].tid, NULL, work, &w[i]))
			return -1;
	}
	struct timespec warm = { 0, 200000000 }, span;
	nanosleep(&warm, NULL); /* the buffers are allocated and touched */
	go = 1;
	span.tv_sec = (time_t)seconds_each;
	span.tv_nsec = (long)((seconds_each - (double)span.tv_sec) * 1e9);
	nanosleep(&span, NULL);
	stop = 1;
	*sum = 0;
	int failed = 0;
	for (int i = 0; i < n; i++) {
		pthread_join(w[i].tid, NULL);
		*sum += w[i].rate;
		failed |= w[i].failed;
	}
	*first = w[0].rate;
	return failed ? -1 : 0;
}

static int cannot(size_t mib)
{
	fprintf(stderr, "membw: cannot start the threads or allocate %zu MiB "
			"for each\n", mib);
	return 1;
}

int main(int argc, char **argv)
{
	char *end = "";
	size_t mib = argc > 1 ? strtoul(argv[1], &end, 10) : 64;
	int bad = *end != '\0' || !mib || mib > (SIZE_MAX >> 20);
	if (argc > 2) {
		seconds_each = strtod(argv[2], &end);
		bad |= *end != '\0' || !(seconds_each > 0 && seconds_each < 3600);
	}
	if (bad || argc > 3) {
		fprintf(stderr, "usage: membw [MIB_PER_THREAD [SECONDS]] "
				"(MiB at least 1, seconds in (0, 3600))\n");
		return 2;
	}
	cpu_set_t set;
	int cpus[MAX_THREADS], n = 0;
	if (sched_getaffinity(0, sizeof set, &set)) {
		perror("membw: sched_getaffinity");
		return 1;
	}
	for (int c = 0; c < CPU_SETSIZE && n < MAX_THREADS; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	double alone_m = 0, alone_a = 0, f, sum;
	/* a first point untimed (the first one ran slower: clocks ramping),
	 * before anything is printed */
	if (run(cpus, 1, 1, mib << 20, &f, &sum) || run(cpus, 1, 0, 0, &f, &sum))
		return cannot(mib);
	printf("# %d cores, %zu MiB a thread, %.2f s a point\n", n, mib,
	       seconds_each);
	printf("busy_cores,stream_first_GBps,stream_sum_GBps,stream_vs_alone,"
	       "adds_first_G,adds_vs_alone\n");
	for (int k = 1; k <= n; k = k < n && 2 * k > n ? n : 2 * k) {
		double fm, sm, fa, sa;
		if (run(cpus, k, 1, mib << 20, &fm, &sm) ||
		    run(cpus, k, 0, 0, &fa, &sa))
			return cannot(mib);
		if (k == 1) {
			alone_m = fm;
			alone_a = fa;
		}
		printf("%d,%.2f,%.2f,%.3f,%.3f,%.3f\n", k, fm / 1e9, sm / 1e9,
		       fm / alone_m, fa / 1e9, fa / alone_a);
		if (k == n)
			break;
	}
	return 0;
}
