/* sweep_mf.c - the Hogwild! sweep of matrix factorization on threads.
 *
 * A rating (u, i, r) touches one user row P[u], one item row Q[i] and their
 * biases: e = mu + bu + bi + P[u].Q[i] - r, then both rows step against the
 * error with L2 on what they touch (the usual per-rating regularization of
 * LIBMF and cuMF), both from the old values. Ratings arrive packed in the
 * blocks in a random order (engine.c), so the only random accesses are
 * the factor rows, prefetched a few ratings ahead.
 *
 * Update policies: atomic adds each coordinate's delta by compare-and-swap.
 * Racy copies the two rows with plain vector loads, computes, and stores them
 * back whole: this is the one place the intended Hogwild! race is not
 * spelled with relaxed atomics, because those cannot be vectorized and a
 * rank-16 row is one AVX-512 register; the function is excluded from
 * ThreadSanitizer so it reports only races nobody meant. A torn row (one
 * thread's new p with another's new q) is the same lost update the racy
 * policy already allows.
 *
 * The rank is a compile-time constant for the common ranks (16, 32, 64,
 * 128), so those loops are fully unrolled vector code.
 *
 * The step's math (loss and error, gradients, AdaGrad's per-row sums, the
 * projection of non-negative MF) is math/mf_step.h's, shared with the GPU
 * kernel.
 */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "atomics/atomics.h"
#include "data/dataset.h"
#include "engine.h"
#include "math/mf_step.h"
#include "model/model.h"
#include "sweep_common.h"

#define MAX_RANK_ON_STACK 1024
#define PREFETCH_RATINGS 6

/* Rounds of the grid's strata per epoch. Swept whole, one stratum after
 * another, a cell's users and items trained on that cell alone for
 * 1/G^2 of the epoch: the G cells of the first stratum each fitted
 * factors of their own (a factorization is only defined up to a rotation,
 * and theirs differ), which the next strata, pairing those users with
 * other items, then had to undo. On 9M ratings (20000 x 10000, rank 16,
 * bench/targets.sh) the test RMSE after 3 epochs was 0.066 on 2 threads,
 * 0.33 on 4 and 0.80 on 16 (1 thread with a 4 x 4 grid: 0.33, so the
 * order, not the race); in 4 rounds of quarter cells 0.066 at any grid
 * (bench/RESULTS-cores.md; 2 rounds left 16 threads at 0.068). */
#define MF_ROUNDS 4

struct mf_args {
	const struct boar_triplet *trips;
	const uint32_t *block_order;
	const uint64_t *block_start;
	float *P, *Q, *bu, *bi;
	float *Gu, *Gi; /* AdaGrad row sums or NULL */
	float mu;
	struct coord_params cp; /* eta, l2 (the users'), optimizer */
	float l2_item;
	int nonneg;             /* project the factors onto >= 0 */
	int loss;               /* enum boar_mf_loss (the model's) */
	uint32_t rank;
};

static inline __attribute__((always_inline)) void
load_row(float *dst, const float *src, uint32_t k, int policy)
{
	if (policy == BOAR_POLICY_RACY) {
		memcpy(dst, src, k * sizeof *dst);
		return;
	}
	for (uint32_t f = 0; f < k; f++)
		dst[f] = boar_load_relaxed(&src[f]);
}

static inline __attribute__((always_inline)) void
store_row(float *dst, const float *old, const float *new_vals, uint32_t k,
	  int policy)
{
	if (policy == BOAR_POLICY_RACY) {
		memcpy(dst, new_vals, k * sizeof *dst);
		return;
	}
	for (uint32_t f = 0; f < k; f++)
		boar_add_atomic(&dst[f], new_vals[f] - old[f]);
}

/* One step on rating t; returns its loss. p, q, np, nq are scratch rows
 * of at least k floats. */
static inline __attribute__((always_inline)) double
rating_step(const struct mf_args *a, const struct boar_triplet *t, uint32_t k,
	    float *p, float *q, float *np, float *nq, int policy, int adagrad)
{
	const float l2u = a->cp.l2, l2i = a->l2_item;
	const int nonneg = a->nonneg;
	float *pu = &a->P[(uint64_t)t->user * k];
	float *qi = &a->Q[(uint64_t)t->item * k];
	load_row(p, pu, k, policy);
	load_row(q, qi, k, policy);
	/* omp simd lets the sums run in vector lanes (a fixed order for a
	 * given rank, so one-thread runs stay reproducible); a plain loop is
	 * one chain of k dependent adds. */
	float dot = 0;
#pragma omp simd reduction(+ : dot)
	for (uint32_t f = 0; f < k; f++)
		dot += p[f] * q[f];
	float bu_v = a->bu ? boar_load_relaxed(&a->bu[t->user]) : 0.0f;
	float bi_v = a->bi ? boar_load_relaxed(&a->bi[t->item]) : 0.0f;
	float e, loss = boar_mf_loss(a->loss, a->mu, bu_v, bi_v, dot,
				     t->rating, &e);

	float eta_u = a->cp.eta, eta_i = a->cp.eta;
	if (adagrad) {
		float su = 0, si = 0;
#pragma omp simd reduction(+ : su, si)
		for (uint32_t f = 0; f < k; f++) {
			float gu = boar_mf_grad(e, q[f], p[f], l2u);
			float gi = boar_mf_grad(e, p[f], q[f], l2i);
			su += gu * gu;
			si += gi * gi;
		}
		float *Gu = &a->Gu[t->user], *Gi = &a->Gi[t->item];
		float acc_u = boar_load_relaxed(Gu), acc_i = boar_load_relaxed(Gi);
		float dacc_u, dacc_i;
		eta_u = boar_mf_rate(&a->cp, 1, su, k, acc_u, &dacc_u);
		eta_i = boar_mf_rate(&a->cp, 1, si, k, acc_i, &dacc_i);
		boar_store_relaxed(Gu, acc_u + dacc_u);
		boar_store_relaxed(Gi, acc_i + dacc_i);
	}
	for (uint32_t f = 0; f < k; f++) {
		np[f] = boar_mf_project(
			p[f] - eta_u * boar_mf_grad(e, q[f], p[f], l2u), nonneg);
		nq[f] = boar_mf_project(
			q[f] - eta_i * boar_mf_grad(e, p[f], q[f], l2i), nonneg);
	}
	store_row(pu, p, np, k, policy);
	store_row(qi, q, nq, k, policy);
	if (a->bu) {
		float nbu = bu_v - eta_u * boar_mf_grad(e, 1.0f, bu_v, l2u);
		float nbi = bi_v - eta_i * boar_mf_grad(e, 1.0f, bi_v, l2i);
		boar_add_policy(policy, &a->bu[t->user], nbu - bu_v);
		boar_add_policy(policy, &a->bi[t->item], nbi - bi_v);
	}
	return loss;
}

/* Blocks at positions [bbegin, bend) of the block order. RANK: the rank as
 * a constant, or 0 to use a->rank. */
static inline __attribute__((always_inline)) double
sweep_body(const struct mf_args *a, uint64_t bbegin, uint64_t bend, int policy,
	   int adagrad, uint32_t RANK)
{
	const uint32_t k = RANK ? RANK : a->rank;
	float p[MAX_RANK_ON_STACK], q[MAX_RANK_ON_STACK];
	float np[MAX_RANK_ON_STACK], nq[MAX_RANK_ON_STACK];
	double loss_sum = 0;

	for (uint64_t b = bbegin; b < bend; b++) {
		uint64_t lo = a->block_start[a->block_order[b]];
		uint64_t hi = a->block_start[a->block_order[b] + 1];
		/* The next block starts somewhere random: ask for its first
		 * lines now, the hardware prefetcher takes over from there. */
		if (b + 1 < bend) {
			const char *next = (const char *)&a->trips
				[a->block_start[a->block_order[b + 1]]];
			for (int l = 0; l < 4; l++)
				__builtin_prefetch(next + 64 * l);
		}
		for (uint64_t i = lo; i < hi; i++) {
			if (i + PREFETCH_RATINGS < hi) {
				const struct boar_triplet *tn =
					&a->trips[i + PREFETCH_RATINGS];
				__builtin_prefetch(&a->P[(uint64_t)tn->user * k], 1);
				__builtin_prefetch(&a->Q[(uint64_t)tn->item * k], 1);
			}
			loss_sum += rating_step(a, &a->trips[i], k, p, q, np,
						nq, policy, adagrad);
		}
	}
	return loss_sum;
}

/* The slices are block positions; the row order is unused. */
#define RACY_VARIANT(name, adagrad, rank)                                     \
	__attribute__((no_sanitize("thread"))) static double name(           \
		const void *a, const uint32_t *o, uint64_t b, uint64_t e)    \
	{                                                                     \
		return sweep_body(a, b, e, BOAR_POLICY_RACY, adagrad, rank);  \
	}
#define ATOMIC_VARIANT(name, adagrad)                                         \
	static double name(const void *a, const uint32_t *o, uint64_t b,     \
			   uint64_t e)                                        \
	{                                                                     \
		return sweep_body(a, b, e, BOAR_POLICY_ATOMIC, adagrad, 0);   \
	}
RACY_VARIANT(racy_sgd_16, 0, 16)
RACY_VARIANT(racy_sgd_32, 0, 32)
RACY_VARIANT(racy_sgd_64, 0, 64)
RACY_VARIANT(racy_sgd_128, 0, 128)
RACY_VARIANT(racy_sgd_any, 0, 0)
RACY_VARIANT(racy_ada_16, 1, 16)
RACY_VARIANT(racy_ada_32, 1, 32)
RACY_VARIANT(racy_ada_64, 1, 64)
RACY_VARIANT(racy_ada_128, 1, 128)
RACY_VARIANT(racy_ada_any, 1, 0)
ATOMIC_VARIANT(atomic_sgd, 0)
ATOMIC_VARIANT(atomic_ada, 1)

static boar_slice_fn pick(int atomic, int ada, uint32_t rank)
{
	static const boar_slice_fn racy[2][5] = {
		{racy_sgd_16, racy_sgd_32, racy_sgd_64, racy_sgd_128, racy_sgd_any},
		{racy_ada_16, racy_ada_32, racy_ada_64, racy_ada_128, racy_ada_any},
	};
	if (atomic)
		return ada ? atomic_ada : atomic_sgd;
	int slot = rank == 16 ? 0 : rank == 32 ? 1 : rank == 64 ? 2
		 : rank == 128 ? 3 : 4;
	return racy[ada][slot];
}

double boar_sweep_mf(struct boar_engine *e, uint64_t begin, uint64_t end,
		     float eta)
{
	struct boar_model *m = e->m;
	struct mf_args a = {
		.trips = e->trips, .block_order = e->block_order,
		.block_start = e->block_start,
		.P = m->P, .Q = m->Q, .bu = m->has_bias ? m->bu : 0,
		.bi = m->has_bias ? m->bi : 0,
		.Gu = e->accum, .Gi = e->accum ? e->accum + m->dim : 0,
		.mu = m->has_bias ? m->mu : 0.0f,
		.cp = {.eta = eta, .l2 = (float)e->o.l2_user,
		       .opt = e->o.optimizer},
		.l2_item = (float)e->o.l2_item, .nonneg = e->o.mf_nonneg,
		.loss = m->mf_loss,
		.rank = m->rank,
	};
	boar_slice_fn fn = pick(e->o.update == BOAR_UPDATE_ATOMIC,
			   boar_opt_accumulates(e->o.optimizer), m->rank);
	if (e->grid <= 1)
		return boar_run_slices(e->threads, fn, &a, NULL, 0, e->n_blocks);
	/* Stratum s: grid row r sweeps cell (r, r + s mod G); the rows of a
	 * stratum share no user or item, so the threads never collide. Each
	 * cell is swept in MF_ROUNDS parts, round k sweeping every cell's
	 * k-th part, its strata starting at diagonal k (see MF_ROUNDS). */
	uint32_t G = e->grid;
	double total = 0;
#pragma omp parallel num_threads(G) reduction(+ : total)
	{
		uint32_t t = (uint32_t)omp_get_thread_num();
		uint32_t nt = (uint32_t)omp_get_num_threads();
		for (uint32_t k = 0; k < MF_ROUNDS; k++)
			for (uint32_t s = 0; s < G; s++) {
				for (uint32_t r = t; r < G; r += nt) {
					uint32_t c = r * G + (r + s + k) % G;
					uint64_t lo = e->cell_block[c];
					uint64_t n = e->cell_block[c + 1] - lo;
					total += fn(&a, NULL,
						    lo + n * k / MF_ROUNDS,
						    lo + n * (k + 1) / MF_ROUNDS);
				}
#pragma omp barrier
			}
	}
	return total;
}
