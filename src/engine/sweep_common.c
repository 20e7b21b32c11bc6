/* sweep_common.c - running a sweep's slices on the engine's threads.
 *
 * With more than two threads the team is pinned, spread over the places
 * (cores, or what OMP_PLACES names): a thread that stays on its core keeps
 * its replica (sweep_replica.h) and its recent weights in that core's
 * caches, and two threads never share a core while another idles.
 * OMP_PROC_BIND=false turns the pinning off. Two threads are left to the
 * scheduler: on a small shared machine it can move a thread off a core
 * that another program is using.
 */
#include <omp.h>

#include "sweep_common.h"

static double run_slice(boar_slice_fn fn, const void *args,
			const uint32_t *order, uint64_t begin, uint64_t n)
{
	int t = omp_get_thread_num(), nt = omp_get_num_threads();
	uint64_t lo = begin + n * t / nt, hi = begin + n * (t + 1) / nt;
	return fn(args, order, lo, hi);
}

double boar_run_slices(int threads, boar_slice_fn fn, const void *args,
		       const uint32_t *order, uint64_t begin, uint64_t end)
{
	uint64_t n = end - begin;
	double total = 0;
	if (threads > 1 && n < (uint64_t)threads * 64)
		threads = 1;
	if (threads > 2) {
#pragma omp parallel num_threads(threads) proc_bind(spread) reduction(+ : total)
		total += run_slice(fn, args, order, begin, n);
	} else {
#pragma omp parallel num_threads(threads) reduction(+ : total)
		total += run_slice(fn, args, order, begin, n);
	}
	return total;
}
