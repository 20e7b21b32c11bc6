/* sweep_common.c - running a sweep's slices on the engine's threads. */
#include <omp.h>

#include "sweep_common.h"

double boar_run_slices(int threads, boar_slice_fn fn, const void *args,
		       const uint32_t *order, uint64_t begin, uint64_t end)
{
	uint64_t n = end - begin;
	double total = 0;
	if (threads > 1 && n < (uint64_t)threads * 64)
		threads = 1;
#pragma omp parallel num_threads(threads) reduction(+ : total)
	{
		int t = omp_get_thread_num(), nt = omp_get_num_threads();
		uint64_t lo = begin + n * t / nt, hi = begin + n * (t + 1) / nt;
		total += fn(args, order, lo, hi);
	}
	return total;
}
