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
 * value. AdaGrad sums are published unscaled, so they count every row as at
 * one thread. The bias syncs every round; the hot features take turns,
 * BOAR_REP_SYNC_SLICE of them per round. The GPU engine does the same per
 * block (gpu/gpu_linear.cu).
 *
 * A slot keeps the value and AdaGrad sum side by side with their values at
 * the last sync, 16 bytes: four slots per cache line, owned by one thread.
 */
#ifndef BOAR_SWEEP_REPLICA_H
#define BOAR_SWEEP_REPLICA_H

#include <stdint.h>

#include "atomics/atomics.h"

#define BOAR_REP_SYNC_ROWS 64
#define BOAR_REP_SYNC_SLICE 16

struct boar_rep_slot {
	float val, gval;     /* this thread's current value and AdaGrad sum */
	float start, gstart; /* both as loaded at the last sync */
};

struct boar_replica {
	struct boar_rep_slot *slot; /* n slots: n_hot features, then biases */
	const uint64_t *at;         /* slot s lives at w[at[s]], G[at[s]] */
	uint32_t n, n_hot;          /* slots, and of those hot features */
	uint32_t next;              /* the next hot slot to sync */
	float alpha;                /* 1 / writers */
};

/* Loads slot s from the shared weights (and sums, G non-NULL). */
static inline void boar_rep_load(struct boar_replica *r, uint32_t s,
				 const float *w, const float *G)
{
	struct boar_rep_slot *p = &r->slot[s];
	p->val = p->start = boar_load_relaxed(&w[r->at[s]]);
	p->gval = p->gstart = G ? boar_load_relaxed(&G[r->at[s]]) : 0.0f;
}

/* Publishes slot s's change since its last sync and reloads it. */
static inline void boar_rep_sync(struct boar_replica *r, uint32_t s, float *w,
				 float *G, int policy)
{
	struct boar_rep_slot *p = &r->slot[s];
	float dv = p->val - p->start, dg = p->gval - p->gstart;
	if (dv != 0.0f)
		boar_add_policy(policy, &w[r->at[s]], dv * r->alpha);
	if (G && dg != 0.0f)
		boar_add_racy(&G[r->at[s]], dg);
	boar_rep_load(r, s, w, G);
}

/* Every slot from the shared state, at the start of a thread's slice. */
static inline void boar_rep_open(struct boar_replica *r, const float *w,
				 const float *G, int writers)
{
	r->alpha = 1.0f / (float)writers;
	r->next = 0;
	for (uint32_t s = 0; s < r->n; s++)
		boar_rep_load(r, s, w, G);
}

/* One round: the biases and the next slice of hot features. */
static inline void boar_rep_round(struct boar_replica *r, float *w, float *G,
				  int policy)
{
	for (uint32_t s = r->n_hot; s < r->n; s++)
		boar_rep_sync(r, s, w, G, policy);
	for (uint32_t k = 0; k < BOAR_REP_SYNC_SLICE && k < r->n_hot; k++) {
		boar_rep_sync(r, r->next, w, G, policy);
		if (++r->next == r->n_hot)
			r->next = 0;
	}
}

/* Every slot, at the end of a slice: the shared model is then complete. */
static inline void boar_rep_close(struct boar_replica *r, float *w, float *G,
				  int policy)
{
	for (uint32_t s = 0; s < r->n; s++)
		boar_rep_sync(r, s, w, G, policy);
}

#endif
