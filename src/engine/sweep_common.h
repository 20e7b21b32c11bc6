/* sweep_common.h - what every CPU sweep shares: splitting a range of the
 * epoch's order over the threads, and instantiating a sweep body once per
 * (update policy, optimizer, regularizer).
 */
#ifndef BOAR_SWEEP_COMMON_H
#define BOAR_SWEEP_COMMON_H

#include <stdint.h>

#include "atomics/atomics.h"
#include "coord_update.h"

/* A sweep over order[lo..hi) of the epoch; returns its loss sum. */
typedef double (*boar_slice_fn)(const void *args, const uint32_t *order,
				uint64_t lo, uint64_t hi);

/* Cuts [begin, end) into contiguous slices that `threads` threads take in
 * turn (sweep_common.c), and sums their losses; one slice on one thread.
 * Small ranges run on one thread: waking threads for a few dozen rows
 * costs more than it brings. */
double boar_run_slices(int threads, boar_slice_fn fn, const void *args,
		       const uint32_t *order, uint64_t begin, uint64_t end);

/* Defines the twelve variants of BODY(args, order, lo, hi, policy, adagrad,
 * reg) and TABLE[policy][adagrad][reg] pointing at them. */
#define BOAR_SWEEP_VARIANTS(ARGS, BODY, TABLE)                                \
	BOAR_SWEEP_ONE_(ARGS, BODY, TABLE##_a0, BOAR_POLICY_ATOMIC, 0, REG_NONE) \
	BOAR_SWEEP_ONE_(ARGS, BODY, TABLE##_a1, BOAR_POLICY_ATOMIC, 0, REG_L2)   \
	BOAR_SWEEP_ONE_(ARGS, BODY, TABLE##_a2, BOAR_POLICY_ATOMIC, 0, REG_L1)   \
	BOAR_SWEEP_ONE_(ARGS, BODY, TABLE##_a3, BOAR_POLICY_ATOMIC, 1, REG_NONE) \
	BOAR_SWEEP_ONE_(ARGS, BODY, TABLE##_a4, BOAR_POLICY_ATOMIC, 1, REG_L2)   \
	BOAR_SWEEP_ONE_(ARGS, BODY, TABLE##_a5, BOAR_POLICY_ATOMIC, 1, REG_L1)   \
	BOAR_SWEEP_ONE_(ARGS, BODY, TABLE##_r0, BOAR_POLICY_RACY, 0, REG_NONE)   \
	BOAR_SWEEP_ONE_(ARGS, BODY, TABLE##_r1, BOAR_POLICY_RACY, 0, REG_L2)     \
	BOAR_SWEEP_ONE_(ARGS, BODY, TABLE##_r2, BOAR_POLICY_RACY, 0, REG_L1)     \
	BOAR_SWEEP_ONE_(ARGS, BODY, TABLE##_r3, BOAR_POLICY_RACY, 1, REG_NONE)   \
	BOAR_SWEEP_ONE_(ARGS, BODY, TABLE##_r4, BOAR_POLICY_RACY, 1, REG_L2)     \
	BOAR_SWEEP_ONE_(ARGS, BODY, TABLE##_r5, BOAR_POLICY_RACY, 1, REG_L1)     \
	static const boar_slice_fn TABLE[2][2][3] = {                         \
		{{TABLE##_a0, TABLE##_a1, TABLE##_a2},                        \
		 {TABLE##_a3, TABLE##_a4, TABLE##_a5}},                       \
		{{TABLE##_r0, TABLE##_r1, TABLE##_r2},                        \
		 {TABLE##_r3, TABLE##_r4, TABLE##_r5}},                       \
	};

#define BOAR_SWEEP_ONE_(ARGS, BODY, name, policy, adagrad, reg)           \
	static double name(const void *a, const uint32_t *o, uint64_t lo,  \
			   uint64_t hi)                                    \
	{                                                                  \
		return BODY((const ARGS *)a, o, lo, hi, policy, adagrad,   \
			    reg);                                          \
	}

#endif
