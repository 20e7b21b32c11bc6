/* sweep_common.c - running a sweep's slices on the engine's threads.
 *
 * The range is cut into up to SLICES_PER_THREAD slices per thread (none
 * under SLICE_MIN_ROWS rows, and at least one per thread) that the threads
 * take in turn as they finish (dynamic schedule), not one equal share
 * each: with equal shares the sweep waits for its slowest thread (a core
 * busy with other work, a virtual CPU descheduled). On a 16-core Xeon
 * (bench/RESULTS-cores.md, one run) 16 threads swept a 2^20 model at
 * 1366 M updates/s with equal shares and 1645 with four slices per thread
 * taken in turn, a 2^26 model at 1063 and 1663; eight per thread bound
 * the wait for the last slice to an eighth of a share. Each slice is a
 * contiguous run of the epoch's order, as a thread's share was, and opens
 * and closes the thread's replica (sweep_replica.h) as a share did.
 *
 * With more than two threads the team is pinned, spread over the places
 * (cores, or what OMP_PLACES names): a thread that stays on its core keeps
 * its replica and its recent weights in that core's caches, and two
 * threads never share a core while another idles. OMP_PROC_BIND=false
 * turns the pinning off. Two threads are left to the scheduler: on a small
 * shared machine it can move a thread off a core that another program is
 * using.
 */
#include <omp.h>

#include "sweep_common.h"

#define SLICES_PER_THREAD 8
#define SLICE_MIN_ROWS 1024

/* How many slices [begin, end) is cut into. */
static int64_t slices_for(int threads, uint64_t n)
{
	const uint64_t per = SLICES_PER_THREAD;
	if (threads <= 1)
		return 1;
	uint64_t s = n / SLICE_MIN_ROWS;
	if (s > (uint64_t)threads * per)
		s = (uint64_t)threads * per;
	return s < (uint64_t)threads ? threads : (int64_t)s;
}

double boar_run_slices(int threads, boar_slice_fn fn, const void *args,
		       const uint32_t *order, uint64_t begin, uint64_t end)
{
	uint64_t n = end - begin;
	double total = 0;
	if (threads > 1 && n < (uint64_t)threads * 64)
		threads = 1;
	const int64_t ns = slices_for(threads, n);
#define SLICE_(c) fn(args, order, begin + n * (uint64_t)(c) / (uint64_t)ns, \
		     begin + n * (uint64_t)((c) + 1) / (uint64_t)ns)
	if (threads > 2) {
#pragma omp parallel for num_threads(threads) proc_bind(spread) schedule(dynamic, 1) reduction(+ : total)
		for (int64_t c = 0; c < ns; c++)
			total += SLICE_(c);
	} else {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(+ : total)
		for (int64_t c = 0; c < ns; c++)
			total += SLICE_(c);
	}
#undef SLICE_
	return total;
}
