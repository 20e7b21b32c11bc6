/* scale_probe.c - what caps the bare Hogwild! loop's speedup on this host.
 *
 * usage: scale_probe THREADS [ROWS [NNZ_PER_ROW [DIM]]]
 *   (defaults 1000000 rows x 40 non-zeros, dim 2^20, uniform ids: the
 *   shape of issue 9's "16 threads at least 10x one thread")
 *
 * Prints, at 1 thread and at THREADS threads, three rates whose ratios
 * split the speedup into its parts:
 *   clock   every thread runs a chain of dependent integer adds (one per
 *           cycle): G adds/s per thread is the core's clock while that
 *           many cores are busy (turbo falls as more cores run; a guest
 *           often has no cpufreq to read it from);
 *   private the bare loop (bench/tools/roofline.c's: logistic SGD, racy
 *           stores) with every thread on its own copy of the model: no
 *           line is shared, so its speedup is what clock and the shared
 *           caches and memory allow;
 *   shared  the same loop on one shared model (Hogwild!): the lines that
 *           every thread writes move between the cores' caches, so shared
 *           against private is the cost of that traffic.
 * Rates are the best of 3 passes, M nnz-updates/s. Data as roofline.c
 * draws it (xorshift per thread, uniform ids, values 1/sqrt(nnz)); the
 * loop and the data are bench/tools/bare_loop.h's, roofline.c's own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bare_loop.h"

#define CLOCK_ADDS 400000000ull

/* G dependent adds per second on each of T threads at once (the mean
 * over the threads; min and max through lo and hi). */
static double clock_ghz(int T, double *lo, double *hi)
{
	double sum = 0, mn = 1e30, mx = 0;
#pragma omp parallel num_threads(T) reduction(+ : sum) reduction(min : mn) \
	reduction(max : mx)
	{
		uint64_t x = (uint64_t)omp_get_thread_num();
#pragma omp barrier
		double t0 = omp_get_wtime();
		for (uint64_t i = 0; i < CLOCK_ADDS; i++)
			__asm__ volatile("add $1, %0" : "+r"(x));
		double g = CLOCK_ADDS / (omp_get_wtime() - t0) / 1e9;
		sum += g;
		mn = g < mn ? g : mn;
		mx = g > mx ? g : mx;
		if (x == 42)
			putchar(' ');
	}
	*lo = mn;
	*hi = mx;
	return sum / T;
}

/* Best of 3 passes, models private or shared; first touched by the
 * threads that use them. */
static double loop_rate(int T, int private_models, const uint32_t *idx,
			const float *val, const float *y, size_t n, size_t k,
			size_t d)
{
	float *models[1024];
	int copies = private_models ? T : 1;
	for (int t = 0; t < copies; t++)
		if (!(models[t] = malloc(d * sizeof(float)))) {
			fprintf(stderr, "scale_probe: out of memory\n");
			exit(1);
		}
#pragma omp parallel num_threads(T)
	{
		int t = omp_get_thread_num();
		if (t < copies)
			memset(models[t], 0, d * sizeof(float));
	}
	for (int t = copies; t < T; t++)
		models[t] = models[0];
	double best = 0;
	for (int rep = 0; rep < 3; rep++) {
		double r = n * k / bare_pass(T, models, idx, val, y, n, k, 0) / 1e6;
		best = r > best ? r : best;
	}
	for (int t = 0; t < copies; t++)
		free(models[t]);
	return best;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: scale_probe THREADS [ROWS [NNZ_PER_ROW [DIM]]]\n");
		return 2;
	}
	int T = atoi(argv[1]);
	size_t n = argc > 2 ? strtoull(argv[2], 0, 10) : 1000000;
	size_t k = argc > 3 ? strtoull(argv[3], 0, 10) : 40;
	size_t d = argc > 4 ? strtoull(argv[4], 0, 10) : 1u << 20;
	if (T < 1 || T > 1024 || !n || !k || !d || d > UINT32_MAX) {
		fprintf(stderr, "scale_probe: bad arguments\n");
		return 2;
	}
	uint32_t *idx = malloc(n * k * sizeof *idx);
	float *val = malloc(n * k * sizeof *val), *y = malloc(n * sizeof *y);
	if (!idx || !val || !y) {
		fprintf(stderr, "scale_probe: out of memory\n");
		return 1;
	}
	bare_draw(idx, val, y, n, k, d, 0, T);
	int counts[2] = {1, T};
	double clk[2], prv[2], shr[2];
	for (int c = 0; c < (T > 1 ? 2 : 1); c++) {
		int t = counts[c];
		double lo, hi;
		clock_ghz(t, &lo, &hi); /* warm-up: the clock ramps up */
		clk[c] = clock_ghz(t, &lo, &hi);
		prv[c] = loop_rate(t, 1, idx, val, y, n, k, d);
		shr[c] = loop_rate(t, 0, idx, val, y, n, k, d);
		printf("threads=%d rows=%zu nnz=%zu dim=%zu: clock %.2f G adds/s "
		       "per thread (%.2f..%.2f); private models %.1f, shared "
		       "model %.1f M nnz-updates/s\n",
		       t, n, k, d, clk[c], lo, hi, prv[c], shr[c]);
	}
	if (T > 1)
		printf("%d threads over 1: clock x%.2f per thread (x%.1f in all), "
		       "private x%.1f, shared x%.1f\n",
		       T, clk[1] / clk[0], T * clk[1] / clk[0], prv[1] / prv[0],
		       shr[1] / shr[0]);
	free(idx);
	free(val);
	free(y);
	return 0;
}
