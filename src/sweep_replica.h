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
 * scaled by 1 / T (the replicas are averaged: the shared value takes one
 * stable step per round instead of T stale ones), then reloads the shared
 * value. The bias syncs every round; the hot features take turns,
 * BOAR_REP_SYNC_SLICE of them per round. The GPU engine does the same per
 * block (gpu/gpu_linear.cu).
 *
 * AdaGrad sums of replicated coordinates are the thread's own, kept from
 * sweep to sweep and never published: each replica is then AdaGrad over
 * its own rows, as at one thread, and the average of the replicas takes
 * steps of one thread's size. (Sums that counted every thread's rows made
 * each replica's steps, and so the average's, smaller by up to T: a9a at
 * 16 threads lost 6% of its first epoch's training loss.)
 *
 * A slot keeps the value, its value at the last sync and the sum, 16 bytes:
 * four slots per cache line, owned by one thread.
 */
#ifndef BOAR_SWEEP_REPLICA_H
#define BOAR_SWEEP_REPLICA_H

#include <stdint.h>

#include "atomics/atomics.h"

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
	float alpha;                /* 1 / writers */
};

/* Loads slot s's value from the shared weights. */
static inline void boar_rep_load(struct boar_replica *r, uint32_t s,
				 const float *w)
{
	struct boar_rep_slot *p = &r->slot[s];
	p->val = p->start = boar_load_relaxed(&w[r->at[s]]);
}

/* Publishes slot s's change since its last sync and reloads it. */
static inline void boar_rep_sync(struct boar_replica *r, uint32_t s, float *w,
				 int policy)
{
	struct boar_rep_slot *p = &r->slot[s];
	float dv = p->val - p->start;
	if (dv != 0.0f)
		boar_add_policy(policy, &w[r->at[s]], dv * r->alpha);
	boar_rep_load(r, s, w);
}

/* Every slot's value from the shared weights, at the start of a thread's
 * slice (the sums carry over from the thread's last slice). */
static inline void boar_rep_open(struct boar_replica *r, const float *w,
				 int writers)
{
	r->alpha = 1.0f / (float)writers;
	r->next = 0;
	for (uint32_t s = 0; s < r->n; s++)
		boar_rep_load(r, s, w);
}

/* One round: the biases and the next slice of hot features. */
static inline void boar_rep_round(struct boar_replica *r, float *w, int policy)
{
	for (uint32_t s = r->n_hot; s < r->n; s++)
		boar_rep_sync(r, s, w, policy);
	for (uint32_t k = 0; k < BOAR_REP_SYNC_SLICE && k < r->n_hot; k++) {
		boar_rep_sync(r, r->next, w, policy);
		if (++r->next == r->n_hot)
			r->next = 0;
	}
}

/* Every slot, at the end of a slice: the shared model is then complete. */
static inline void boar_rep_close(struct boar_replica *r, float *w, int policy)
{
	for (uint32_t s = 0; s < r->n; s++)
		boar_rep_sync(r, s, w, policy);
}

#endif
