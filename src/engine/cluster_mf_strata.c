/* cluster_mf_strata.c - an epoch of matrix factorization in the cluster
 * as DSGD strata (train_cluster_mf.h), where the transport has a
 * barrier (boar_ps_transport.wait_clock).
 *
 * Users and items are cut into W blocks each (W workers; a hash of the
 * seed and the global id, the same in every worker), so a worker's
 * ratings fall into W x W cells (cluster_mf_local.c). An epoch is
 * MF_STRATA_ROUNDS rounds (each sweeping a part of every cell: whole
 * cells one after another fit factors that the next cells undo) of W
 * groups of W clocks: in group g worker r owns the outer side's block
 * o = (r + P[g]) mod W, and in its clock h the cell of the inner side's
 * block (r + Q[h]) mod W (P, Q permutations drawn per epoch from the
 * seed, the same in every worker), so at any clock no two workers touch
 * one item block or one user block: their steps are those of one
 * sequential sweep in some order (Gemulla et al., KDD 2011), whatever
 * part of the file each worker read. The outer side is the items, or the
 * users where the workers hold more shared users than items
 * (cluster_mf_agree.c: a part of a file not grouped by user). What
 * crosses the network:
 *
 * - an outer block's rows (items, or shared users), pulled when the
 *   group starts and pushed (their change) when it ends: each row twice
 *   per round, where clocks of sync_every ratings moved every row a
 *   clock touched both ways every clock;
 * - a cell's inner rows (its shared users, or its items), pulled before
 *   its sweep and pushed after;
 * - the private users, once an epoch for the evaluation and the gather
 *   (train_cluster_mf.c).
 *
 * The ownership hand-over is the barrier: before a group starts, and
 * before a cell with shared users, the worker waits until every worker
 * has ticked as many clocks as it has (so their pushes of the earlier
 * clocks are in). A clock without inner rows to move needs none (its
 * users private, its items the group's), so a worker whose users are
 * all private waits only W times a round.
 */
#include <stdlib.h>

#include "base/error.h"
#include "base/rng.h"
#include "engine.h"
#include "train_cluster_mf.h"
#include "cluster_clock.h"

/* Keys per pull or push call (a frame stays far below the wire's
 * payload limit). */
#define STRATA_BATCH (1u << 20)

static void lap(struct mfc *c, enum boar_ps_phase p)
{
	cluster_lap(c->phase, &c->mark, p);
}

void mf_strata_order(uint32_t W, uint64_t seed, int epoch, uint32_t *P,
		     uint32_t *Q)
{
	for (int side = 0; side < 2; side++) {
		uint32_t *p = side ? Q : P;
		for (uint32_t i = 0; i < W; i++)
			p[i] = i;
		boar_rng r = boar_rng_make(seed, 9 + side, (uint64_t)epoch);
		boar_shuffle_u32(p, W, &r);
	}
}

int mf_barrier(struct mfc *c, boar_error *err)
{
	if (c->t->n_workers < 2 || c->waited == c->ticks)
		return 0;
	int rc = c->wait_clock(c->t->ctx, c->ticks, err);
	if (!rc)
		c->waited = c->ticks;
	return rc;
}

/* rows' keys pulled into the worker's model (push 0), or what changed in
 * them since pushed (push 1); keys, vals, before hold them in between. */
static int move_rows(struct mfc *c, const struct mf_rows *rs, int push,
		     uint64_t *keys, float *vals, float *before,
		     boar_error *err)
{
	const boar_ps_transport *t = c->t;
	uint64_t n = mf_walk(c, rs, push ? WALK_STORE : WALK_KEYS, keys, vals,
			     before);
	lap(c, BOAR_PS_LOCAL);
	int rc = 0;
	for (uint64_t lo = 0; !rc && lo < n; lo += STRATA_BATCH) {
		uint32_t m = n - lo > STRATA_BATCH ? STRATA_BATCH
						   : (uint32_t)(n - lo);
		rc = push ? t->push(t->ctx, keys + lo, vals + lo, m, err)
			  : t->pull(t->ctx, keys + lo, m, vals + lo, err);
	}
	lap(c, push ? BOAR_PS_PUSH : BOAR_PS_PULL);
	if (!rc && !push) {
		mf_walk(c, rs, WALK_LOAD, NULL, vals, before);
		lap(c, BOAR_PS_LOCAL);
	}
	return rc;
}

/* Outer block o's rows: its items, or (outer_users) its shared users. */
static struct mf_rows outer_rows(const struct mfc *c, uint32_t o)
{
	const struct mf_local *l = &c->l;
	struct mf_rows rs = {0};
	if (c->outer_users) {
		rs.u = l->bu + l->bu_at[o];
		rs.nu = l->bu_at[o + 1] - l->bu_at[o];
	} else {
		rs.i = l->bi + l->bi_at[o];
		rs.ni = l->bi_at[o + 1] - l->bi_at[o];
	}
	return rs;
}

/* Cell k's rows of the inner side: its shared users, or its items. */
static struct mf_rows inner_rows(const struct mfc *c, uint64_t k)
{
	const struct mf_local *l = &c->l;
	struct mf_rows rs = {0};
	if (c->outer_users) {
		rs.i = l->ci + l->ci_at[k];
		rs.ni = l->ci_at[k + 1] - l->ci_at[k];
	} else {
		rs.u = l->cu + l->cu_at[k];
		rs.nu = l->cu_at[k + 1] - l->cu_at[k];
	}
	return rs;
}

/* Cell k: its inner rows in (after the barrier), its sweep, their
 * changes out. */
static int run_cell(struct mfc *c, int epoch, uint64_t k, double eta,
		    double *loss, boar_error *err)
{
	struct mf_rows in = inner_rows(c, k);
	int moves = in.nu + in.ni > 0, rc = 0;
	if (moves) {
		rc = mf_barrier(c, err);
		lap(c, BOAR_PS_CLOCK);
		if (rc || (rc = move_rows(c, &in, 0, c->keys, c->vals,
					  c->before, err)))
			return rc;
	}
	if ((rc = mf_sweep_block(c, k, epoch, eta, loss, err)))
		return rc;
	if (moves)
		rc = move_rows(c, &in, 1, c->keys, c->vals, c->before, err);
	return rc;
}

/* The clock's end: the worker's count of ticks follows the transport's. */
static int tick(struct mfc *c, uint64_t k, boar_error *err)
{
	int rc = c->t->clock(c->t->ctx, c->l.at[k + 1] - c->l.at[k], err);
	if (!rc)
		c->ticks++;
	lap(c, BOAR_PS_CLOCK);
	return rc;
}

/* A group of round j: outer block o in, its W cells' j-th parts, o out. */
static int run_group(struct mfc *c, int epoch, uint32_t j, uint32_t o,
		     const uint32_t *Q, int last, double eta, double *loss,
		     boar_error *err)
{
	uint32_t W = c->l.blocks, r = c->t->rank;
	struct mf_rows out = outer_rows(c, o);
	c->mark = cluster_now_s();
	int rc = mf_barrier(c, err);
	lap(c, BOAR_PS_CLOCK);
	if (!rc)
		rc = move_rows(c, &out, 0, c->bkeys, c->bvals, c->bbefore, err);
	for (uint32_t h = 0; !rc && h < W; h++) {
		uint32_t q = (r + Q[h]) % W;
		/* cell b*W + a of user block a, item block b; its part j */
		uint64_t cell = c->outer_users ? (uint64_t)q * W + o
					       : (uint64_t)o * W + q;
		uint64_t k = cell * c->l.rounds + j;
		rc = run_cell(c, epoch, k, eta, loss, err);
		if (!rc && h + 1 == W)
			rc = move_rows(c, &out, 1, c->bkeys, c->bvals,
				       c->bbefore, err);
		/* the private rows once an epoch, before its last tick */
		if (!rc && h + 1 == W && last && mf_private_travels(c))
			rc = mf_push_private(c, err);
		lap(c, BOAR_PS_PUSH);
		if (!rc)
			rc = tick(c, k, err);
	}
	return rc;
}

int mf_strata_epoch(struct mfc *c, int epoch, double eta, double *loss,
		    boar_error *err)
{
	uint32_t W = c->l.blocks, r = c->t->rank, R = c->l.rounds;
	uint32_t *P = malloc(2 * (uint64_t)W * sizeof *P), *Q = P + W;
	if (!P)
		return boar_fail(err, BOAR_ENOMEM, "out of memory");
	int rc = 0;
	for (uint32_t j = 0; !rc && j < R; j++) {
		/* a fresh order per round, the same in every worker */
		mf_strata_order(W, c->o.seed, (epoch - 1) * (int)R + (int)j + 1,
				P, Q);
		for (uint32_t g = 0; !rc && g < W; g++)
			rc = run_group(c, epoch, j, (r + P[g]) % W, Q,
				       j + 1 == R && g + 1 == W, eta, loss, err);
	}
	free(P);
	return rc;
}
