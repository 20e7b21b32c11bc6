/* bare_loop.h - the bare Hogwild! loop for sparse logistic regression and
 * its synthetic data, shared by bench/tools/roofline.c (the ceiling an
 * engine's rate is reported against) and bench/scale_probe.c (what caps
 * its speedup), so both time the very same loop.
 *
 * Header only (static functions), so roofline.c still builds alone from
 * its folder: cc -O3 -march=native -fopenmp roofline.c -o roofline -lm
 */
#ifndef BOAR_BENCH_BARE_LOOP_H
#define BOAR_BENCH_BARE_LOOP_H

#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <stdint.h>

static inline uint64_t bare_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static inline float bare_load(const float *p)
{
	float v;
	__atomic_load(p, &v, __ATOMIC_RELAXED);
	return v;
}

/* racy: relaxed word loads and stores (updates may be lost, never torn) */
static inline void bare_add_racy(float *p, float d)
{
	float v = bare_load(p) + d;
	__atomic_store(p, &v, __ATOMIC_RELAXED);
}

/* cas: compare-and-swap add (no update is lost) */
static inline void bare_add_cas(float *p, float d)
{
	union { float f; uint32_t u; } old, new;
	old.u = __atomic_load_n((uint32_t *)p, __ATOMIC_RELAXED);
	do {
		new.f = old.f + d;
	} while (!__atomic_compare_exchange_n((uint32_t *)p, &old.u, new.u, 1,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

/* n rows of k non-zeros below d and their +-1 labels, drawn on T threads
 * (xorshift per thread, rows split statically): ids uniform (skew 0) or
 * d * u^(1+skew), values 1/sqrt(k). */
static void bare_draw(uint32_t *idx, float *val, float *y, size_t n,
		      size_t k, size_t d, double skew, int T)
{
#pragma omp parallel num_threads(T)
	{
		uint64_t s = 0x9E3779B97F4A7C15ULL * (uint64_t)(omp_get_thread_num() + 1);
#pragma omp for schedule(static)
		for (size_t i = 0; i < n; i++) {
			y[i] = (bare_next(&s) & 1) ? 1.f : -1.f;
			for (size_t j = 0; j < k; j++) {
				double u = (bare_next(&s) >> 11) * 0x1.0p-53;
				size_t f = (size_t)(d * (skew > 0 ? pow(u, 1 + skew) : u));
				idx[i * k + j] = (uint32_t)(f < d ? f : d - 1);
				val[i * k + j] = 1.f / sqrtf((float)k);
			}
		}
	}
}

/* One pass of logistic SGD (step 0.1) over the n rows on T threads, rows
 * split statically; thread t updates models[t] (all one pointer for a
 * shared model). @return the seconds it took. */
static double bare_pass(int T, float *const *models, const uint32_t *idx,
			const float *val, const float *y, size_t n, size_t k,
			int cas)
{
	double t0 = omp_get_wtime();
#pragma omp parallel num_threads(T)
	{
		float *w = models[omp_get_thread_num()];
#pragma omp for schedule(static)
		for (size_t i = 0; i < n; i++) {
			const uint32_t *ix = idx + i * k;
			const float *vx = val + i * k;
			float dot = 0;
			for (size_t j = 0; j < k; j++)
				dot += bare_load(&w[ix[j]]) * vx[j];
			float g = 0.1f * y[i] / (1.f + expf(y[i] * dot));
			for (size_t j = 0; j < k; j++) {
				if (cas)
					bare_add_cas(&w[ix[j]], g * vx[j]);
				else
					bare_add_racy(&w[ix[j]], g * vx[j]);
			}
		}
	}
	return omp_get_wtime() - t0;
}

#endif
