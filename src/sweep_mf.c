/* sweep_mf.c - the Hogwild! sweep of matrix factorization on threads.
 *
 * A rating (u, i, r) touches one user row P[u], one item row Q[i] and their
 * biases: e = mu + bu + bi + P[u].Q[i] - r, then both rows step against the
 * error with L2 on what they touch (the usual per-rating regularization of
 * LIBMF and cuMF). Rows are copied into locals with relaxed loads, updated
 * from the old values, and written back by the update policy: racy stores
 * the new values, atomic adds the deltas by compare-and-swap.
 *
 * AdaGrad keeps one sum per user row and per item row (the mean squared
 * gradient component of that row, as LIBMF does): rank-fold less state than
 * per-coordinate sums, and the row's components share a scale anyway.
 */
#include <math.h>
#include <omp.h>

#include "atomics/atomics.h"
#include "dataset.h"
#include "engine.h"
#include "model.h"

#define MAX_RANK_ON_STACK 1024
#define ADAGRAD_EPS 1e-6f

struct mf_args {
	const uint32_t *user, *item;
	const float *rating;
	float *P, *Q, *bu, *bi;
	float *Gu, *Gi; /* AdaGrad row sums or NULL */
	float mu, eta, l2;
	uint32_t rank;
};

static inline __attribute__((always_inline)) void
write_row(float *dst, const float *old, const float *new_vals, uint32_t k,
	  int policy)
{
	for (uint32_t f = 0; f < k; f++) {
		if (policy == BOAR_POLICY_RACY)
			boar_store_relaxed(&dst[f], new_vals[f]);
		else
			boar_add_atomic(&dst[f], new_vals[f] - old[f]);
	}
}

static inline __attribute__((always_inline)) double
sweep_body(const struct mf_args *a, const uint32_t *order, uint64_t begin,
	   uint64_t end, int policy, int adagrad)
{
	uint32_t k = a->rank;
	float p[MAX_RANK_ON_STACK], q[MAX_RANK_ON_STACK];
	float np[MAX_RANK_ON_STACK], nq[MAX_RANK_ON_STACK];
	double loss_sum = 0;

	for (uint64_t i = begin; i < end; i++) {
		if (i + 4 < end) {
			uint32_t rn = order[i + 4];
			__builtin_prefetch(&a->P[(uint64_t)a->user[rn] * k], 1);
			__builtin_prefetch(&a->Q[(uint64_t)a->item[rn] * k], 1);
		}
		uint32_t r = order[i];
		float *pu = &a->P[(uint64_t)a->user[r] * k];
		float *qi = &a->Q[(uint64_t)a->item[r] * k];
		float *bu = a->bu ? &a->bu[a->user[r]] : 0;
		float *bi = a->bi ? &a->bi[a->item[r]] : 0;
		float dot = 0;
		for (uint32_t f = 0; f < k; f++) {
			p[f] = boar_load_relaxed(&pu[f]);
			q[f] = boar_load_relaxed(&qi[f]);
		}
		for (uint32_t f = 0; f < k; f++)
			dot += p[f] * q[f];
		float bu_v = bu ? boar_load_relaxed(bu) : 0.0f;
		float bi_v = bi ? boar_load_relaxed(bi) : 0.0f;
		float e = a->mu + bu_v + bi_v + dot - a->rating[r];
		loss_sum += (double)e * e;

		float eta_u = a->eta, eta_i = a->eta, l2 = a->l2;
		if (adagrad) {
			float su = 0, si = 0;
			for (uint32_t f = 0; f < k; f++) {
				float gu = e * q[f] + l2 * p[f];
				float gi = e * p[f] + l2 * q[f];
				su += gu * gu;
				si += gi * gi;
			}
			float *Gu = &a->Gu[a->user[r]], *Gi = &a->Gi[a->item[r]];
			float acc_u = boar_load_relaxed(Gu) + su / k;
			float acc_i = boar_load_relaxed(Gi) + si / k;
			boar_store_relaxed(Gu, acc_u);
			boar_store_relaxed(Gi, acc_i);
			eta_u = a->eta / (sqrtf(acc_u) + ADAGRAD_EPS);
			eta_i = a->eta / (sqrtf(acc_i) + ADAGRAD_EPS);
		}
		for (uint32_t f = 0; f < k; f++) {
			np[f] = p[f] - eta_u * (e * q[f] + l2 * p[f]);
			nq[f] = q[f] - eta_i * (e * p[f] + l2 * q[f]);
		}
		write_row(pu, p, np, k, policy);
		write_row(qi, q, nq, k, policy);
		if (bu) {
			float nbu = bu_v - eta_u * (e + l2 * bu_v);
			float nbi = bi_v - eta_i * (e + l2 * bi_v);
			write_row(bu, &bu_v, &nbu, 1, policy);
			write_row(bi, &bi_v, &nbi, 1, policy);
		}
	}
	return loss_sum;
}

#define SWEEP_VARIANT(name, policy, adagrad)                               \
	static double name(const struct mf_args *a, const uint32_t *o,     \
			   uint64_t b, uint64_t e)                         \
	{                                                                  \
		return sweep_body(a, o, b, e, policy, adagrad);            \
	}
SWEEP_VARIANT(atomic_sgd, BOAR_POLICY_ATOMIC, 0)
SWEEP_VARIANT(atomic_ada, BOAR_POLICY_ATOMIC, 1)
SWEEP_VARIANT(racy_sgd, BOAR_POLICY_RACY, 0)
SWEEP_VARIANT(racy_ada, BOAR_POLICY_RACY, 1)

typedef double (*sweep_fn)(const struct mf_args *, const uint32_t *, uint64_t,
			   uint64_t);

double boar_sweep_mf(struct boar_engine *e, const uint32_t *order,
		     uint64_t begin, uint64_t end, float eta)
{
	const struct boar_dataset *d = e->d;
	struct boar_model *m = e->m;
	struct mf_args a = {
		.user = d->user, .item = d->item, .rating = d->label,
		.P = m->P, .Q = m->Q, .bu = m->has_bias ? m->bu : 0,
		.bi = m->has_bias ? m->bi : 0,
		.Gu = e->accum, .Gi = e->accum ? e->accum + m->dim : 0,
		.mu = m->has_bias ? m->mu : 0.0f, .eta = eta,
		.l2 = (float)e->o.l2, .rank = m->rank,
	};
	int ada = e->o.optimizer == BOAR_OPT_ADAGRAD;
	sweep_fn fn = e->o.update == BOAR_UPDATE_ATOMIC
			      ? (ada ? atomic_ada : atomic_sgd)
			      : (ada ? racy_ada : racy_sgd);
	int threads = e->threads;
	uint64_t n = end - begin;
	double total = 0;
	if (threads > 1 && n < (uint64_t)threads * 64)
		threads = 1;
#pragma omp parallel num_threads(threads) reduction(+ : total)
	{
		int t = omp_get_thread_num(), nt = omp_get_num_threads();
		uint64_t lo = begin + n * t / nt, hi = begin + n * (t + 1) / nt;
		total += fn(&a, order, lo, hi);
	}
	return total;
}
