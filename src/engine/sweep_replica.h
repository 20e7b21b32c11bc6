/* sweep_replica.h - a thread's private replica of the hot coordinates.
 *
 * The bias is touched by every row and the most frequent features by a
 * large share of them. Shared, they cost a cache-line transfer between the
 * cores per row, and with T threads each such coordinate takes about p * T
 * steps computed from one stale value (p: the share of rows touching it),
 * which for the bias (p = 1) at 16 threads is an amplified step that throws
 * the in-epoch model around. So each thread trains its own copy of them
 * (plain SGD or AdaGrad, seeing its own steps at once, like one thread) and
 * every BOAR_REP_SYNC_ROWS rows publishes its change since the last sync
 * scaled by 1 / W (the replicas are averaged: the shared value takes one
 * stable step per round instead of W stale ones), then reloads the shared
 * value. W is the number of writers that synced since this thread's last
 * sync, itself included (a shared counter, one atomic add per round): T
 * when every thread runs, 1 when the others are descheduled (on a busy
 * machine), which an average over all T replicas would hold back. Averaging costs speed of learning, though: the shared value moves
 * as one replica does, while T replicas' rows go by. So a bias publishes
 * more than 1 / T of its change when its steps have become small: a round
 * of T stale changes is stable as long as their sum does not overshoot,
 * i.e. alpha * T * min(1, B * eta * kappa) <= 1, with B rows per round,
 * eta the replica's current step size and kappa the loss's largest
 * curvature (boar_rep_bias_alpha). With SGD at eta 0.1 that is 1 / T; with
 * AdaGrad after a few thousand rows, nearly 1 (one thread's speed). The bias syncs every round; the hot features take turns,
 * BOAR_REP_SYNC_SLICE of them per round. The GPU engine does the same per
 * block (gpu/gpu_linear.cu).
 *
 * AdaGrad sums of replicated coordinates are the thread's own, kept from
 * sweep to sweep and never published, and stand for T times as much: the
 * replica steps with eta / sqrt(T * own sum), the step one thread takes
 * after as many rows in all (boar_rep_params). Sums that counted every
 * thread's rows as they came (published at each sync) kept each replica
 * T times behind where one thread would be on the bias and hot features:
 * a9a at 16 threads lost 6% of its first epoch's training loss. Sums of
 * its own rows alone gave each replica steps sqrt(T) too long, and
 * noisier: a 3-class set lost 5% at 4 threads.
 *
 * A slot keeps the value, its value at the last sync and the sum, 16 bytes:
 * four slots per cache line, owned by one thread.
 */
#ifndef BOAR_SWEEP_REPLICA_H
#define BOAR_SWEEP_REPLICA_H

#include <math.h>
#include <stdint.h>

#include "atomics/atomics.h"
#include "boar.h"
#include "coord_update.h"
#include "math/loss.h"

#define BOAR_REP_SYNC_ROWS 64
#define BOAR_REP_SYNC_SLICE 16

struct boar_rep_slot {
	float val, gval; /* this thread's current value and AdaGrad sum */
	float start;     /* the value as loaded at the last sync */
	float unused;
};

struct boar_replica {
	struct boar_rep_slot *slot; /* n slots: n_hot features, then biases */
	const uint64_t *at;         /* slot s lives at w[at[s]], G[at[s]] */
	uint32_t n, n_hot;          /* slots, and of those hot features */
	uint32_t next;              /* the next hot slot to sync */
	float alpha;                /* 1 / threads */
	float round_alpha;          /* 1 / writers of the last round */
	uint64_t *syncs;            /* the shared count of rounds */
	uint64_t last;              /* its value at this thread's last round */
	float eta, kappa;           /* the replica's step size, the loss's
				       largest curvature */
	int adagrad;
};

/* The step parameters of a replica's coordinates (see above): eta over
 * sqrt(T) for AdaGrad, eta itself for SGD (at one thread, the same). */
static inline struct coord_params
boar_rep_params(const struct coord_params *cp, struct boar_replica *r,
		int adagrad, float kappa)
{
	struct coord_params p = *cp;
	if (adagrad)
		p.eta *= sqrtf(r->alpha);
	r->eta = p.eta;
	r->adagrad = adagrad;
	r->kappa = kappa;
	return p;
}

/* The largest second derivative of a loss in the margin: p(1 - p) <= 1/4
 * for the logistic and softmax losses (the probabilistic ones), 1 for
 * squared and Huber loss; hinge has none,
 * but its steps do not shrink near the optimum, so it counts as 1. */
static inline float boar_rep_kappa(int loss)
{
	return boar_loss_probabilistic(loss) ? 0.25f : 1.0f;
}

/* The share of a bias's change that it publishes (see above). */
static inline float boar_rep_bias_alpha(const struct boar_replica *r,
					const struct boar_rep_slot *p)
{
	if (r->round_alpha >= 1.0f)
		return 1.0f;
	float eta = r->adagrad ? boar_adagrad_rate(r->eta, p->gval) : r->eta;
	float pull = BOAR_REP_SYNC_ROWS * eta * r->kappa; /* per round */
	return pull >= 1.0f ? r->round_alpha
			    : fminf(1.0f, r->round_alpha / pull);
}

/* Loads slot s's value from the shared weights. */
static inline void boar_rep_load(struct boar_replica *r, uint32_t s,
				 const float *w)
{
	struct boar_rep_slot *p = &r->slot[s];
	p->val = p->start = boar_load_relaxed(&w[r->at[s]]);
}

/* Publishes alpha times slot s's change since its last sync and reloads
 * it. */
static inline void boar_rep_sync(struct boar_replica *r, uint32_t s, float *w,
				 int policy, float alpha)
{
	struct boar_rep_slot *p = &r->slot[s];
	float dv = p->val - p->start;
	if (dv != 0.0f)
		boar_add_policy(policy, &w[r->at[s]], dv * alpha);
	boar_rep_load(r, s, w);
}

/* Every slot's value from the shared weights, at the start of a thread's
 * slice (the sums carry over from the thread's last slice). */
static inline void boar_rep_open(struct boar_replica *r, const float *w,
				 int writers, uint64_t *syncs)
{
	r->alpha = r->round_alpha = 1.0f / (float)writers;
	r->syncs = syncs;
	r->last = __atomic_load_n(syncs, __ATOMIC_RELAXED);
	r->next = 0;
	for (uint32_t s = 0; s < r->n; s++)
		boar_rep_load(r, s, w);
}

/* One round: the biases and the next slice of hot features. */
static inline void boar_rep_round(struct boar_replica *r, float *w, int policy)
{
	uint64_t now = __atomic_add_fetch(r->syncs, 1, __ATOMIC_RELAXED);
	float writers = (float)(now - r->last); /* the others', and this one */
	r->last = now;
	r->round_alpha = writers * r->alpha >= 1.0f ? r->alpha : 1.0f / writers;
	for (uint32_t s = r->n_hot; s < r->n; s++)
		boar_rep_sync(r, s, w, policy,
			      boar_rep_bias_alpha(r, &r->slot[s]));
	for (uint32_t k = 0; k < BOAR_REP_SYNC_SLICE && k < r->n_hot; k++) {
		boar_rep_sync(r, r->next, w, policy, r->round_alpha);
		if (++r->next == r->n_hot)
			r->next = 0;
	}
}

/* Every slot, at the end of a slice: the shared model is then complete. */
static inline void boar_rep_close(struct boar_replica *r, float *w, int policy)
{
	for (uint32_t s = 0; s < r->n; s++)
		boar_rep_sync(r, s, w, policy,
			      s < r->n_hot ? r->round_alpha
					   : boar_rep_bias_alpha(r, &r->slot[s]));
}

#endif
