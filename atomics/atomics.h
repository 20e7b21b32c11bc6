/* atomics.h - the memory primitives of the Hogwild! sweep, named once.
 *
 * Hogwild! lets threads read and write shared weights without locks. To keep
 * that race *defined* (and let ThreadSanitizer flag only the races nobody
 * meant), every shared weight access goes through a relaxed atomic load or
 * store: relaxed because no other memory is published through a weight, so
 * no ordering is needed, only the absence of tearing.
 *
 * Two update policies:
 *  - racy:   load, add, store. Another thread's update landing between our
 *            load and store is lost (the original Hogwild! code does this);
 *  - atomic: compare-and-swap loop. No update is ever lost; costs more under
 *            contention (the cache line must be owned for the CAS).
 *
 * Includes nothing of boar.
 */
#ifndef BOAR_ATOMICS_H
#define BOAR_ATOMICS_H

#include <stdint.h>
#include <string.h>

#define BOAR_CACHE_LINE 64
#define BOAR_ALIGNED_CACHE_LINE __attribute__((aligned(BOAR_CACHE_LINE)))

static inline float boar_load_relaxed(const float *p)
{
	float v;
	__atomic_load(p, &v, __ATOMIC_RELAXED);
	return v;
}

static inline void boar_store_relaxed(float *p, float v)
{
	__atomic_store(p, &v, __ATOMIC_RELAXED);
}

/* Racy add: may lose a concurrent update, never tears a word. */
static inline void boar_add_racy(float *p, float d)
{
	boar_store_relaxed(p, boar_load_relaxed(p) + d);
}

/* Lossless add by compare-and-swap on the float's bit pattern. A failed CAS
 * reloads `old` with the current value, so the loop retries with fresh data.
 * Relaxed: the add itself is all that must be atomic. */
static inline void boar_add_atomic(float *p, float d)
{
	uint32_t old_bits = __atomic_load_n((uint32_t *)p, __ATOMIC_RELAXED);
	uint32_t new_bits;
	do {
		float old_val, new_val;
		memcpy(&old_val, &old_bits, sizeof old_val);
		new_val = old_val + d;
		memcpy(&new_bits, &new_val, sizeof new_bits);
	} while (!__atomic_compare_exchange_n((uint32_t *)p, &old_bits, new_bits,
					      1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
}

/* One compare-and-swap attempt on a float: if *p still holds *expected,
 * store desired and return 1; else load the current value into *expected
 * and return 0. For updates that are not plain adds (e.g. L1 clipping). */
static inline int boar_cas_float(float *p, float *expected, float desired)
{
	uint32_t exp_bits, new_bits;
	memcpy(&exp_bits, expected, sizeof exp_bits);
	memcpy(&new_bits, &desired, sizeof new_bits);
	int ok = __atomic_compare_exchange_n((uint32_t *)p, &exp_bits, new_bits,
					     1, __ATOMIC_RELAXED,
					     __ATOMIC_RELAXED);
	if (!ok)
		memcpy(expected, &exp_bits, sizeof exp_bits);
	return ok;
}

/* Lossless add of a double (used for shared accumulators such as loss sums
 * where contention is rare). */
static inline void boar_add_atomic_double(double *p, double d)
{
	uint64_t old_bits = __atomic_load_n((uint64_t *)p, __ATOMIC_RELAXED);
	uint64_t new_bits;
	do {
		double old_val, new_val;
		memcpy(&old_val, &old_bits, sizeof old_val);
		new_val = old_val + d;
		memcpy(&new_bits, &new_val, sizeof new_bits);
	} while (!__atomic_compare_exchange_n((uint64_t *)p, &old_bits, new_bits,
					      1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
}

/* The update policy as a compile-time constant, so the sweep is instantiated
 * once per policy with no branch in its inner loop. */
enum { BOAR_POLICY_ATOMIC = 0, BOAR_POLICY_RACY = 1 };

static inline __attribute__((always_inline)) void
boar_add_policy(int policy, float *p, float d)
{
	if (policy == BOAR_POLICY_ATOMIC)
		boar_add_atomic(p, d);
	else
		boar_add_racy(p, d);
}

#endif /* BOAR_ATOMICS_H */
