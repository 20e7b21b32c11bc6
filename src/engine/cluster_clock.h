/* cluster_clock.h - the cluster drivers' (linear and MF) one clock: a
 * monotonic time in seconds, and the time since the last mark charged to
 * one of a worker's phases (boar_ps_phase, reported in its stats). */
#ifndef BOAR_ENGINE_CLUSTER_CLOCK_H
#define BOAR_ENGINE_CLUSTER_CLOCK_H

#include <time.h>

#include "boar.h"

static inline double cluster_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline void cluster_lap(double phase[BOAR_PS_PHASES], double *mark,
			       enum boar_ps_phase p)
{
	double t = cluster_now_s();
	phase[p] += t - *mark;
	*mark = t;
}

#endif
