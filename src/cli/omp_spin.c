/* omp_spin.c - how long a cluster worker's idle OpenMP threads spin.
 *
 * A worker's training threads go idle between its parallel regions and at
 * their ends (the last slice of a sweep, a pull waiting for the shards).
 * libgomp lets idle threads spin before they sleep, by default for a
 * count of 300000 pauses: milliseconds. On one machine that is right;
 * a cluster worker shares its cores with its client's thread (the sends
 * and reads of a clock's pushes and pulls), the kernel's network
 * processing and, often, a shard on the same host, and spinning threads
 * take their cores from exactly the work they are waiting for. Measured
 * (bench/RESULTS-net.md, "A cluster worker's idle threads"): 4 "machines"
 * of 4 cores, each a shard and a 3-thread worker, weak-scaled, 5 epochs:
 * worker 0 waited 0.77-0.87 s for pulls with a spin count of 10000 or
 * 1000 against 1.10-1.18 s at libgomp's default, and the 4 workers
 * reached their loss in 1.92-2.06 s against 2.10-2.22 s; one worker
 * alone and strong scaling (1 against 4 workers) did not change.
 * OMP_WAIT_POLICY=passive (no spinning) cut the wait further but slowed
 * one worker alone by 12%.
 *
 * libgomp reads its settings once, as it starts, before main: so a
 * worker (run_worker, once the options say it is one) that finds neither
 * OMP_WAIT_POLICY nor GOMP_SPINCOUNT set sets the count and starts
 * itself again (exec, a few milliseconds, before it has read or printed
 * anything), never over the user's own setting. (A function in the
 * executable's .preinit_array runs before libgomp does, but glibc has not
 * set up the environment by then, and what it sets is lost.)
 */
#include <stdlib.h>
#include <unistd.h>

#include "common.h"
#include "omp_spin.h"

/* Idle pauses before a thread sleeps: about half a millisecond. */
#define CLUSTER_SPIN "10000"

void cli_omp_spin_default(void)
{
	if (!cli_argv || getenv("OMP_WAIT_POLICY") ||
	    getenv("GOMP_SPINCOUNT") ||
	    setenv("GOMP_SPINCOUNT", CLUSTER_SPIN, 0))
		return;
	execv("/proc/self/exe", cli_argv);
	/* no /proc: the worker runs with libgomp's own default */
	unsetenv("GOMP_SPINCOUNT");
}

const char *cli_omp_spin(void)
{
	return getenv("GOMP_SPINCOUNT");
}
